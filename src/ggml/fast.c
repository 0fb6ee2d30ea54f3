/* The fast paths of ggml's block functions (ggml.h, "the fast paths"): the one list and the
 * selection. */
#include "ggml.h"
#include "../kernels/kernels.h"
#include "../quant/quant.h"

/* the prototypes of the listed functions: each .inc's companion header */
#include "fast_dequant.h"
#include "fast_input.h"
#include "fast_kquants.h"
#include "fast_simple.h"

const dt_ggml_fast dt_ggml_fast_list[] = {
#define DT_GGML_FAST(code, isa, q, d) {code, isa, q, d, #q " / " #d},
#include "fast_simple.inc"
#include "fast_kquants.inc"
#include "fast_dequant.inc"
#undef DT_GGML_FAST
    {0, 0, NULL, NULL, NULL}};
const size_t dt_ggml_fast_count = sizeof dt_ggml_fast_list / sizeof *dt_ggml_fast_list - 1;

static const dt_ggml_fast *best(uint32_t code, int want_quantize)
{
    if (dt_quant_simple())
        return NULL;
    const int active = (int)dt_isa_active();
    const dt_ggml_fast *pick = NULL;
    for (size_t i = 0; i < dt_ggml_fast_count; i++) {
        const dt_ggml_fast *f = &dt_ggml_fast_list[i];
        if (f->code != code || f->isa > active || !(want_quantize ? (void *)f->quantize
                                                                  : (void *)f->dequantize))
            continue;
        if (!pick || f->isa > pick->isa)
            pick = f;
    }
    return pick;
}

dt_ggml_quantize_fn dt_ggml_quantizer(uint32_t code)
{
    const dt_ggml_fast *f = best(code, 1);
    const dt_ggml_traits *t = dt_ggml_traits_of(code);
    return f ? f->quantize : t ? t->quantize : NULL;
}

dt_ggml_dequantize_fn dt_ggml_dequantizer(uint32_t code)
{
    const dt_ggml_fast *f = best(code, 0);
    const dt_ggml_traits *t = dt_ggml_traits_of(code);
    return f ? f->dequantize : t ? t->dequantize : NULL;
}

dt_ggml_input_fn dt_ggml_input(dtcast_type t)
{
    if (dt_quant_simple())
        return NULL;
#if defined(__x86_64__) && defined(__GNUC__)
    const dt_isa isa = dt_isa_active();
    if (isa >= DT_ISA_AVX512)
        return t == DTCAST_FLOAT32    ? dt_ggml_input_f32_avx512
               : t == DTCAST_BFLOAT16 ? dt_ggml_input_bf16_avx512
               : t == DTCAST_FLOAT16  ? dt_ggml_input_f16_avx512 : NULL;
    if (isa >= DT_ISA_AVX2)
        return t == DTCAST_FLOAT32    ? dt_ggml_input_f32_avx2
               : t == DTCAST_BFLOAT16 ? dt_ggml_input_bf16_avx2
               : t == DTCAST_FLOAT16  ? dt_ggml_input_f16_avx2 : NULL;
#endif
    (void)t;
    return NULL;
}
