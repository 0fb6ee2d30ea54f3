/* AVX2 + F16C kernels: the narrowing template with 8 lanes (integer -> integer: in
 * kernels_avx2_int.c). Compiled for the target through function attributes only. */
#if defined(__x86_64__) && defined(__GNUC__)
#include "kernels_x86.h"

bool dt_find_avx2(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                  size_t count)
{
    (void)count;
    if (dt_table_find_avx2(k, df, sf, r, count)) /* <= 8-bit sources: kernels_avx2_table.c */
        return true;
    k->fn = dt_int_pick_avx2(df, sf, r);
    if (k->fn)
        return true;
    k->fn = dt_cvt_pick_avx2(df, sf, r); /* integer <-> float, float64 <-> float32: kernels_avx2_cvt.c */
    if (k->fn)
        return true;
    if (sf->type == DTCAST_FLOAT32 && df->type == DTCAST_BFLOAT16) {
        k->fn = f32_bf16_pick_avx2(r->round);
        if (k->fn)
            return true;
    }
    dt_kernel_fn f = narrow_pick_avx2(df, sf, r);
    if (f && dt_narrow_setup(&k->n, df, dt_format_of(DTCAST_FLOAT32), r)) {
        k->fn = f;
        k->compute_bound = true; /* the template */
        return true;
    }
    return false;
}
#endif
