/* AVX2 + F16C kernels: the narrowing template with 8 lanes, float32 -> bfloat16; and the AVX2
 * registry entries, in the finder's order (the other families live in kernels_avx2_*.c).
 * Compiled for the target through function attributes only. */
#if defined(__x86_64__) && defined(__GNUC__)
#include "kernels_x86.h"

/* integer <-> integer (kernels_avx2_int.c) */
static bool e_int(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                  size_t count)
{
    (void)count;
    k->fn = dt_int_pick_avx2(df, sf, r);
    return k->fn != NULL;
}

/* integer <-> float, float64 <-> float32 (kernels_avx2_cvt.c) */
static bool e_cvt(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                  size_t count)
{
    (void)count;
    k->fn = dt_cvt_pick_avx2(df, sf, r);
    return k->fn != NULL;
}

/* float32 -> bfloat16 on the bits, every mode */
static bool e_bf16(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                   size_t count)
{
    (void)count;
    if (sf->type == DTCAST_FLOAT32 && df->type == DTCAST_BFLOAT16)
        k->fn = f32_bf16_pick_avx2(dt_mode_of(r->round));
    return k->fn != NULL;
}

/* the narrowing template on 16 lanes of 16 bits (kernels_avx2w.c) */
static bool e_narrow16(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                       size_t count)
{
    (void)count;
    k->compute_bound = true;
    return dt_narrow16_setup_avx2(k, df, sf, r);
}

/* the narrowing template on 8 lanes of 32 bits */
static bool e_narrow(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                     size_t count)
{
    (void)count;
    const dt_format *lane;
    const int m = dt_mode_of(r->round);
    if (dt_narrow16_pick_avx2(df, sf, r, &lane) || dt_cvt_pick_avx2(df, sf, r))
        return false; /* the 16-bit lanes' pairs; float16/bfloat16 -> 16/32-bit integers (the
                       * int <-> float entry) */
    if (sf->type == DTCAST_FLOAT32 && ((df->type == DTCAST_FLOAT16 && m != M_RNA && m != M_ODD) ||
                                       df->type == DTCAST_BFLOAT16))
        return false; /* F16C's (dt_half_find_avx2), e_bf16's */
    if ((sf->type == DTCAST_BFLOAT16 && df->type == DTCAST_FLOAT16 && m != M_RNA && m != M_ODD) ||
        (sf->type == DTCAST_FLOAT16 && df->type == DTCAST_BFLOAT16))
        return false; /* F16C's too (dt_half_find_avx2) */
    k->fn = narrow_pick_avx2(df, sf, r);
    k->compute_bound = true;
    return k->fn && dt_narrow_setup_unsigned(&k->n, df, dt_format_of(DTCAST_FLOAT32), r);
}

const dt_kernel_entry dt_entries_avx2[] = {
    {"avx2 table: <= 8-bit sources into every width", DT_ISA_AVX2, dt_table_find_avx2},
    {"avx2 float32 <-> float16, bfloat16 <-> float16, bfloat16 -> float32, 8/16-bit ints -> float16/bfloat16",
     DT_ISA_AVX2, dt_half_find_avx2},
    {"avx2 int64/uint64 -> float16/bfloat16 (F16C)", DT_ISA_AVX2, dt_i64_half_find_avx2},
    {"avx2 int32/uint32 -> float16/bfloat16 (F16C)", DT_ISA_AVX2, dt_i32_half_find_avx2},
    {"avx2 float16/bfloat16 -> 8/64-bit integers", DT_ISA_AVX2, dt_half_int_find_avx2},
    {"avx2 integers: int <-> int", DT_ISA_AVX2, e_int},
    {"avx2 int <-> float, float64 <-> float32", DT_ISA_AVX2, e_cvt},
    {"avx2 float32 -> bfloat16", DT_ISA_AVX2, e_bf16},
    {"avx2 narrow template, 16-bit lanes", DT_ISA_AVX2, e_narrow16},
    {"avx2 narrow template, 32-bit lanes", DT_ISA_AVX2, e_narrow},
    {NULL, DT_ISA_PORTABLE, NULL},
};
#endif
