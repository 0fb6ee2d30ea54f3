/* The 64 integer -> integer kernels of one instruction set, one per (source, destination),
 * instantiated from the including file's loop
 *     II_LOOP(dst, src, begin, end, sw, ss, dw, ds, sat)
 * (sw/dw: source and destination bits, ss/ds: signed, sat: the saturating policy), which is
 * chosen at run time. Defines ii_fns[source][destination], both indexed by int_index. Included
 * by kernels_avx512.c and kernels_avx2_int.c after their FN and loop. */
#define II_FN(sw, ss, dw, ds)                                                                   \
    static FN void ii_##sw##_##ss##_##dw##_##ds(const dt_kernel *k, void *dst, const void *src, \
                                                size_t b, size_t e)                             \
    {                                                                                           \
        if (k->r.saturate_int)                                                                  \
            II_LOOP(dst, src, b, e, sw, ss, dw, ds, 1);                                         \
        else                                                                                    \
            II_LOOP(dst, src, b, e, sw, ss, dw, ds, 0);                                         \
    }
#define II_DST(sw, ss)                                                                          \
    II_FN(sw, ss, 8, 1) II_FN(sw, ss, 8, 0) II_FN(sw, ss, 16, 1) II_FN(sw, ss, 16, 0)           \
    II_FN(sw, ss, 32, 1) II_FN(sw, ss, 32, 0) II_FN(sw, ss, 64, 1) II_FN(sw, ss, 64, 0)
II_DST(8, 1) II_DST(8, 0) II_DST(16, 1) II_DST(16, 0) II_DST(32, 1) II_DST(32, 0) II_DST(64, 1)
II_DST(64, 0)
#define II_ROW(sw, ss)                                                                          \
    {ii_##sw##_##ss##_8_1, ii_##sw##_##ss##_8_0, ii_##sw##_##ss##_16_1, ii_##sw##_##ss##_16_0,  \
     ii_##sw##_##ss##_32_1, ii_##sw##_##ss##_32_0, ii_##sw##_##ss##_64_1, ii_##sw##_##ss##_64_0}
/* [source][destination] by int_index */
static const dt_kernel_fn ii_fns[8][8] = {II_ROW(8, 1),  II_ROW(8, 0),  II_ROW(16, 1),
                                          II_ROW(16, 0), II_ROW(32, 1), II_ROW(32, 0),
                                          II_ROW(64, 1), II_ROW(64, 0)};

/* 0..7 for int8, uint8, int16, uint16, int32, uint32, int64, uint64; -1 otherwise */
static int int_index(const dt_format *f)
{
    if ((f->tc != DT_TC_SINT && f->tc != DT_TC_UINT) || f->bits != f->stride_bits)
        return -1;
    const int u = f->tc == DT_TC_UINT;
    switch (f->bits) {
    case 8: return 0 + u;
    case 16: return 2 + u;
    case 32: return 4 + u;
    case 64: return 6 + u;
    default: return -1;
    }
}
