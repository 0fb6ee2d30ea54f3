/* Dequantization of whole blocks in one pass (fused_dequant_avx2.c): the codes are decoded in
 * registers, multiplied by their block's factor and rounded to the output, with no float32
 * buffer in between. The bytes are those of dt_emit_values followed by dt_store_scaled. */
#ifndef DTCAST_QUANT_FUSED_DEQUANT_H
#define DTCAST_QUANT_FUSED_DEQUANT_H

#include "quant.h"

/* y's flat elements [f, f + n) (n <= DT_QCHUNK) = fl32(value of code f + i × k[i / B]), stored as
 * s's type, float32 or bfloat16 (nearest even, NaN 0x7FC0 | sign). codes is the whole code
 * tensor (q's layout). Returns false, having written nothing, where there is no fused kernel:
 * not AVX2, the simple path, another output or code type, float6_packed, B or n not multiples
 * of 16, a factor the kernel cannot take exactly (see the .c), a streamed y not 16-aligned. */
bool dt_fused_dequant(const dt_storer *s, const dt_quant *q, const uint8_t *codes, size_t f,
                      size_t n, size_t B, const float *k);

#endif /* DTCAST_QUANT_FUSED_DEQUANT_H */
