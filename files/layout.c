/* File layouts <-> dtcast's layout (layout.h). */
#include "files/layout.h"
#include "files/safetensors.h"

#include <stdio.h>
#include <string.h>

unsigned dt_stride_bits(dtcast_type type)
{
    size_t bytes = 0; /* eight elements always fill whole bytes */
    if (type == DTCAST_STRING || dtcast_storage_size(type, 8, &bytes, NULL) != DTCAST_OK)
        return 0;
    return (unsigned)bytes;
}

dtcast_type dt_part_type(const dtcast_info *info)
{
    if (info->kind != DTCAST_KIND_COMPLEX)
        return info->type;
    if (info->bits == 32) /* complex32 or bcomplex32 */
        return info->exponent_bits == 8 ? DTCAST_BFLOAT16 : DTCAST_FLOAT16;
    return info->bits == 64 ? DTCAST_FLOAT32 : DTCAST_FLOAT64;
}

dtcast_status dt_native_bytes(dtcast_type type, uint64_t count, uint64_t *bytes)
{
    uint64_t bits, stride = dt_stride_bits(type);
    if (stride == 0 || __builtin_mul_overflow(count, stride, &bits) || bits + 7 < bits)
        return DTCAST_ERR_SIZE_OVERFLOW;
    *bytes = (bits + 7) / 8;
    return DTCAST_OK;
}

dtcast_status dt_layout_bytes(const dt_layout *l, uint64_t count, uint64_t *bytes)
{
    switch (l->store) {
    case DT_STORE_BYTE_EACH:
        *bytes = count;
        return DTCAST_OK;
    case DT_STORE_F6_PACKED:
        if (count > UINT64_MAX / 6)
            return DTCAST_ERR_SIZE_OVERFLOW;
        *bytes = (count * 6 + 7) / 8;
        return DTCAST_OK;
    default:
        return dt_native_bytes(l->type, count, bytes);
    }
}

int dt_layout_is_native(const dt_layout *l)
{
    return l->store == DT_STORE_NATIVE ||
           (l->store == DT_STORE_SWAPPED && dt_stride_bits(l->type) <= 8);
}

/* Bytes reversed together for a big-endian element: complex parts separately. */
static unsigned swap_unit(dtcast_type type)
{
    unsigned bytes = dt_stride_bits(type) / 8;
    dtcast_info info;
    if (dtcast_type_info(type, &info, NULL) == DTCAST_OK && info.kind == DTCAST_KIND_COMPLEX)
        bytes /= 2;
    return bytes;
}

static void swap_copy(uint8_t *dst, const uint8_t *src, size_t n, unsigned unit)
{
    for (size_t at = 0; at + unit <= n; at += unit)
        for (unsigned i = 0; i < unit; i++)
            dst[at + i] = src[at + unit - 1 - i];
}

/* One element per byte -> packed; each byte must hold a code: bits above the element's width
 * zero, or for signed types all copies of the sign bit (ml_dtypes keeps int4 sign-extended). */
static dtcast_status byte_each_load(dtcast_type type, uint8_t *dst, const uint8_t *src,
                                    size_t count, uint64_t first, dt_io_error *err)
{
    unsigned bits = dt_stride_bits(type), per = 8 / bits, mask = (1u << bits) - 1;
    dtcast_info info;
    int is_signed = dtcast_type_info(type, &info, NULL) == DTCAST_OK && info.kind == DTCAST_KIND_SIGNED;
    memset(dst, 0, (count + per - 1) / per);
    for (size_t i = 0; i < count; i++) {
        unsigned b = src[i], high = b & ~mask;
        int sign = (b >> (bits - 1)) & 1;
        if (high != 0 && !(is_signed && sign && high == (0xFFu & ~mask)))
            return dt_io_fail(err, DTCAST_ERR_BAD_FILE,
                              "element %llu is byte 0x%02x, not a %s code (%s is stored one "
                              "element per byte, in the low %u bits)",
                              (unsigned long long)(first + i), b, dtcast_type_name(type),
                              dtcast_type_name(type), bits);
        dst[i / per] |= (uint8_t)((b & mask) << (i % per * bits));
    }
    return DTCAST_OK;
}

static void byte_each_store(dtcast_type type, uint8_t *dst, const uint8_t *src, size_t count)
{
    unsigned bits = dt_stride_bits(type), per = 8 / bits, mask = (1u << bits) - 1;
    for (size_t i = 0; i < count; i++)
        dst[i] = (uint8_t)(src[i / per] >> (i % per * bits) & mask);
}

dtcast_status dt_layout_load(const dt_layout *l, void *dst, const void *src, size_t count,
                             uint64_t first, dt_io_error *err)
{
    uint64_t bytes = 0;
    switch (l->store) {
    case DT_STORE_BYTE_EACH:
        return byte_each_load(l->type, dst, src, count, first, err);
    case DT_STORE_F6_PACKED:
        dt_st_f6_from_bytes(dst, src, count); /* safetensors' F6 bit stream */
        return DTCAST_OK;
    case DT_STORE_SWAPPED:
        if (dt_native_bytes(l->type, count, &bytes) == DTCAST_OK) {
            unsigned unit = swap_unit(l->type);
            if (unit > 1) {
                swap_copy(dst, src, (size_t)bytes, unit);
                return DTCAST_OK;
            }
        }
        break;
    case DT_STORE_NATIVE:
        break;
    }
    if (dt_native_bytes(l->type, count, &bytes) == DTCAST_OK && bytes)
        memcpy(dst, src, (size_t)bytes);
    return DTCAST_OK;
}

void dt_layout_store(const dt_layout *l, void *dst, const void *src, size_t count)
{
    uint64_t bytes = 0;
    switch (l->store) {
    case DT_STORE_BYTE_EACH:
        byte_each_store(l->type, dst, src, count);
        return;
    case DT_STORE_F6_PACKED:
        dt_st_f6_to_bytes(dst, src, count);
        return;
    case DT_STORE_SWAPPED:
        if (dt_native_bytes(l->type, count, &bytes) == DTCAST_OK && swap_unit(l->type) > 1) {
            swap_copy(dst, src, (size_t)bytes, swap_unit(l->type));
            return;
        }
        break;
    case DT_STORE_NATIVE:
        break;
    }
    if (dt_native_bytes(l->type, count, &bytes) == DTCAST_OK && bytes)
        memcpy(dst, src, (size_t)bytes);
}
