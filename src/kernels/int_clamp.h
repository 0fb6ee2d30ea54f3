/* Saturation of integer lanes to a destination's range, written once for every instruction set
 * from the including file's vector type II_V and its W-bit-lane helpers vset, vmax_s, vmin_s
 * and vmin_u (included by kernels_avx512.c and kernels_avx2_int.c). x holds the exact source
 * values (sw bits, signed when ss) in W-bit lanes; the destination has dw bits, signed when ds. */
static FN DT_INLINE II_V int_clamp(II_V x, int W, int sw, int ss, int dw, int ds)
{
    /* largest values: 2^(w-1) - 1 signed, 2^w - 1 unsigned (shifts of 0..57: defined) */
    const uint64_t smax = ss ? (UINT64_MAX >> (65 - sw)) : (UINT64_MAX >> (64 - sw));
    const uint64_t dmax = ds ? (UINT64_MAX >> (65 - dw)) : (UINT64_MAX >> (64 - dw));
    if (ss) {
        if (!ds) /* negative -> 0 */
            x = vmax_s(x, vset(W, 0), W);
        else if (dw < sw) /* below the destination's min: ~dmax = -2^(dw-1) in two's complement */
            x = vmax_s(x, vset(W, ~dmax), W);
        if (dmax < smax)
            x = vmin_s(x, vset(W, dmax), W);
    } else if (dmax < smax) { /* unsigned source: only the top can be out of range */
        x = vmin_u(x, vset(W, dmax), W);
    }
    return x;
}
