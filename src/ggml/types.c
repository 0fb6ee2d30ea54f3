/* ggml's types as data (ggml.h's enum ggml_type, ggml.c's type_traits), and the binary16
 * conversions ggml's quantizers round their scales with. */
#include "ggml.h"
#include "../internal.h"

#include <ctype.h>
#include <string.h>

#define Q(t) dt_ggml_quantize_##t
#define D(t) dt_ggml_dequantize_##t

/* The removed codes 4, 5 (Q4_2, Q4_3), 31-33 (Q4_0_4_4, Q4_0_4_8, Q4_0_8_8) and 36-38
 * (IQ4_NL_4_4 ...) have no entry: files holding them are refused. IQ quantization (a grid
 * search that needs an importance matrix for IQ1/IQ2) is not dtcast's. */
static const dt_ggml_traits traits[DT_GGML_TYPE_COUNT] = {
    [0] = {"F32", 1, 4, DTCAST_FLOAT32, NULL, NULL, false},
    [1] = {"F16", 1, 2, DTCAST_FLOAT16, NULL, NULL, false},
    [2] = {"Q4_0", 32, 18, DTCAST_UNDEFINED, Q(q4_0), D(q4_0), false},
    [3] = {"Q4_1", 32, 20, DTCAST_UNDEFINED, Q(q4_1), D(q4_1), true},
    [6] = {"Q5_0", 32, 22, DTCAST_UNDEFINED, Q(q5_0), D(q5_0), false},
    [7] = {"Q5_1", 32, 24, DTCAST_UNDEFINED, Q(q5_1), D(q5_1), true},
    [8] = {"Q8_0", 32, 34, DTCAST_UNDEFINED, Q(q8_0), D(q8_0), false},
    [9] = {"Q8_1", 32, 36, DTCAST_UNDEFINED, Q(q8_1), D(q8_1), false},
    [10] = {"Q2_K", 256, 84, DTCAST_UNDEFINED, Q(q2_K), D(q2_K), true},
    [11] = {"Q3_K", 256, 110, DTCAST_UNDEFINED, Q(q3_K), D(q3_K), false},
    [12] = {"Q4_K", 256, 144, DTCAST_UNDEFINED, Q(q4_K), D(q4_K), true},
    [13] = {"Q5_K", 256, 176, DTCAST_UNDEFINED, Q(q5_K), D(q5_K), true},
    [14] = {"Q6_K", 256, 210, DTCAST_UNDEFINED, Q(q6_K), D(q6_K), false},
    [15] = {"Q8_K", 256, 292, DTCAST_UNDEFINED, Q(q8_K), D(q8_K), true},
    [16] = {"IQ2_XXS", 256, 66, DTCAST_UNDEFINED, NULL, D(iq2_xxs), false},
    [17] = {"IQ2_XS", 256, 74, DTCAST_UNDEFINED, NULL, D(iq2_xs), false},
    [18] = {"IQ3_XXS", 256, 98, DTCAST_UNDEFINED, NULL, D(iq3_xxs), false},
    [19] = {"IQ1_S", 256, 50, DTCAST_UNDEFINED, NULL, D(iq1_s), false},
    [20] = {"IQ4_NL", 32, 18, DTCAST_UNDEFINED, NULL, D(iq4_nl), false},
    [21] = {"IQ3_S", 256, 110, DTCAST_UNDEFINED, NULL, D(iq3_s), false},
    [22] = {"IQ2_S", 256, 82, DTCAST_UNDEFINED, NULL, D(iq2_s), false},
    [23] = {"IQ4_XS", 256, 136, DTCAST_UNDEFINED, NULL, D(iq4_xs), false},
    [24] = {"I8", 1, 1, DTCAST_INT8, NULL, NULL, false},
    [25] = {"I16", 1, 2, DTCAST_INT16, NULL, NULL, false},
    [26] = {"I32", 1, 4, DTCAST_INT32, NULL, NULL, false},
    [27] = {"I64", 1, 8, DTCAST_INT64, NULL, NULL, false},
    [28] = {"F64", 1, 8, DTCAST_FLOAT64, NULL, NULL, false},
    [29] = {"IQ1_M", 256, 56, DTCAST_UNDEFINED, NULL, D(iq1_m), false},
    [30] = {"BF16", 1, 2, DTCAST_BFLOAT16, NULL, NULL, false},
    [34] = {"TQ1_0", 256, 54, DTCAST_UNDEFINED, Q(tq1_0), D(tq1_0), false},
    [35] = {"TQ2_0", 256, 66, DTCAST_UNDEFINED, Q(tq2_0), D(tq2_0), false},
    [39] = {"MXFP4", 32, 17, DTCAST_UNDEFINED, Q(mxfp4), D(mxfp4), false},
    [40] = {"NVFP4", 64, 36, DTCAST_UNDEFINED, Q(nvfp4), D(nvfp4), false},
    [41] = {"Q1_0", 128, 18, DTCAST_UNDEFINED, Q(q1_0), D(q1_0), false},
    [42] = {"Q2_0", 64, 18, DTCAST_UNDEFINED, Q(q2_0), D(q2_0), false},
};

const dt_ggml_traits *dt_ggml_traits_of(uint32_t code)
{
    return code < DT_GGML_TYPE_COUNT && traits[code].name ? &traits[code] : NULL;
}

/* ---- binary16 -------------------------------------------------------------------------------- *
 *
 *   binary32   s eeeeeeee mmmmmmmmmmmmmmmmmmmmmmm      bias 127
 *   binary16   s    eeeee mmmmmmmmmm                   bias 15
 *
 * Normal results (2^-14 <= |x| < 65520): the 13 low mantissa bits go, rounded to nearest even
 * by adding 0xFFF plus the lowest kept bit; a carry out of the mantissa bumps the exponent, as it
 * should. The exponent is rebased by subtracting (127 - 15) << 23 before the shift. Below 2^-14
 * the result is the integer nearest |x| * 2^24 (units of the smallest subnormal, 2^-24). */
uint16_t dt_ggml_fp16(float x)
{
    const uint32_t u = dt_ggml_bits_of(x);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    const uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u)
        return (uint16_t)(sign | 0x7E00u); /* NaN: ggml drops the payload */
    if (a >= 0x477FF000u)                  /* >= 65520 = 65504 + half an ulp: a tie goes up */
        return (uint16_t)(sign | 0x7C00u);
    if (a >= 0x38800000u) { /* >= 2^-14: normal */
        const uint32_t r = a + 0x0FFFu + ((a >> 13) & 1u);
        return (uint16_t)(sign | ((r - 0x38000000u) >> 13));
    }
    /* subnormal (or zero): |x| = m * 2^(e - 150), so |x| * 2^24 = m / 2^(126 - e) */
    const uint32_t e = a >> 23;
    if (e < 102) /* |x| < 2^-25: rounds to zero (2^-25 itself is a tie to the even 0) */
        return sign;
    const uint32_t m = (a & 0x007FFFFFu) | 0x00800000u;
    const uint32_t shift = 126 - e; /* 14 .. 24 */
    const uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
    return (uint16_t)(sign | (q + (rem > half || (rem == half && (q & 1u)))));
}

float dt_ggml_fp16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0x1F) /* Inf; NaN quieted, its payload kept (shifted), as ggml converts it */
        return dt_ggml_f32_of(sign | 0x7F800000u | (m ? 0x00400000u : 0u) | m << 13);
    if (e != 0)
        return dt_ggml_f32_of(sign | (e + 112) << 23 | m << 13);
    /* zero and subnormals: m * 2^-24, exact in binary32 */
    const float v = (float)m * 0x1p-24f;
    return sign ? -v : v;
}

/* ---- the public table ------------------------------------------------------------------------- */
const char *dtcast_ggml_type_name(int code)
{
    const dt_ggml_traits *t = code >= 0 ? dt_ggml_traits_of((uint32_t)code) : NULL;
    return t ? t->name : NULL;
}

int dtcast_ggml_type_from_name(const char *name)
{
    if (!name)
        return -1;
    for (int c = 0; c < DT_GGML_TYPE_COUNT; c++) {
        const char *n = traits[c].name;
        if (!n)
            continue;
        size_t i = 0;
        while (n[i] && name[i] && toupper((unsigned char)name[i]) == n[i])
            i++;
        if (!n[i] && !name[i])
            return c;
    }
    return -1;
}

int64_t dtcast_ggml_block_size(int code)
{
    const dt_ggml_traits *t = code >= 0 ? dt_ggml_traits_of((uint32_t)code) : NULL;
    return t ? t->block : 0;
}

size_t dtcast_ggml_type_size(int code)
{
    const dt_ggml_traits *t = code >= 0 ? dt_ggml_traits_of((uint32_t)code) : NULL;
    return t ? t->bytes : 0;
}

int dtcast_ggml_support(int code)
{
    const dt_ggml_traits *t = code >= 0 ? dt_ggml_traits_of((uint32_t)code) : NULL;
    if (!t)
        return 0;
    if (t->block == 1)
        return dt_format_of(t->plain)->tc == DT_TC_FLOAT ? 3 : 0;
    return (t->quantize ? 1 : 0) | (t->dequantize ? 2 : 0);
}
