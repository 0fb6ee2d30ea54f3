/* Pair tables: sources of at most 8 bits into destinations of at most 8 bits, two source bytes
 * per lookup. The lookups of the 256-entry tables cost two loads per element (the code, then its
 * entry), and loads are what bound them; a table of 65536 entries indexed by a 16-bit load of
 * two source bytes gives the output bits of all their elements (2 to 16 of them) in one entry
 * (tables.c builds it from the 256-entry one): a quarter of the loads per element. Its 64 or
 * 128 KiB outgrow L1: where two random bytes index it, most lookups wait for L2. Measured here
 * (16 Mi elements, against the byte tables in the same run): packed sources into narrower packed
 * ones 1.7-2.6x faster (their byte tables need a lookup per source byte and a byte store per
 * output byte); bool and float6 sources (1 and 6 bits a byte: 4 and 4096 entries in use)
 * 1.1-1.2x; uniformly random 8-bit codes 1.3x slower into 8 bits, and 4 -> 4 or 2 -> 2 bits
 * 1.3x slower: those keep the byte tables (on AMD Zen; on the Intel Xeon, 2 MiB of L2 per core,
 * random 8-bit codes into 8 bits ran 1.1-1.25x faster through the pair table: the profile's
 * pair8, mempath.c, within half the tables' budget, tables.c). 8-bit codes into packed 1/2/4-bit targets use the
 * pair tables through their own kernels (portable.c, table8_pair*: 1.3-1.5x faster than the
 * byte tables from 1 Mi elements on). */
#include "kernels.h"
#include "portable.h"

#include <string.h>

/* the entry of the two source bytes at p (a native 16-bit load: tables.c indexes in that order) */
static inline const uint8_t *ent(const uint8_t *t, const uint8_t *p, unsigned eb)
{
    uint16_t x;
    memcpy(&x, p, 2);
    return t + (size_t)x * eb;
}
static inline uint64_t e8(const uint8_t *t, const uint8_t *p) { return *ent(t, p, 1); }
static inline uint64_t e16(const uint8_t *t, const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, ent(t, p, 2), 2);
    return v;
}

/* Elements [begin, end) by 8-byte output words, OUT = the source bytes a word takes; the rest
 * by the 256-entry table (dt_ptable_tail). */
#define PAIR_RUN(name, OUT, WORD)                                                               \
    DT_NOVEC static void name(const dt_kernel *k, void *dst, const void *src, size_t begin,     \
                              size_t end)                                                       \
    {                                                                                           \
        const uint8_t *s = src, *t;                                                             \
        uint8_t *d = dst;                                                                       \
        memcpy(&t, k->local, sizeof t);                                                         \
        const size_t sb = (size_t)k->sf->stride_bits, db = (size_t)k->df->stride_bits;         \
        const size_t per = (size_t)OUT * 8 / sb; /* elements per word */                       \
        size_t i = begin;                                                                       \
        for (; i + per <= end; i += per) {                                                      \
            const uint8_t *p = s + i * sb / 8;                                                  \
            dt_pprefetch_step(p, per * sb / 8);                                                 \
            const uint64_t o = WORD;                                                            \
            memcpy(d + i * db / 8, &o, 8);                                                      \
        }                                                                                       \
        dt_ptable_tail(k, d, s, i, end);                                                        \
    }
#if defined(DT_LE)
/* entries of 16 bits: 2 output bytes each (8 -> 8 bits) */
PAIR_RUN(pair16, 8,
         e16(t, p) | e16(t, p + 2) << 16 | e16(t, p + 4) << 32 | e16(t, p + 6) << 48)
/* of 8 bits: one output byte (8 -> 4 bits, 4 -> 2, 2 -> 1) */
PAIR_RUN(pair8, 16,
         (e8(t, p) | e8(t, p + 2) << 8 | e8(t, p + 4) << 16 | e8(t, p + 6) << 24) |
             (e8(t, p + 8) << 32 | e8(t, p + 10) << 40 | e8(t, p + 12) << 48 | e8(t, p + 14) << 56))
/* of 4 bits: two per output byte (8 -> 2 bits, 4 -> 1) */
#define B4(j) ((e8(t, p + 4 * (j)) | e8(t, p + 4 * (j) + 2) << 4) << (8 * (j)))
PAIR_RUN(pair4, 32, (B4(0) | B4(1)) | (B4(2) | B4(3)) | (B4(4) | B4(5)) | (B4(6) | B4(7)))
/* of 2 bits: four per output byte (8 -> 1 bit) */
#define B2(j)                                                                                   \
    (((e8(t, p + 8 * (j)) | e8(t, p + 8 * (j) + 2) << 2) |                                      \
      (e8(t, p + 8 * (j) + 4) << 4 | e8(t, p + 8 * (j) + 6) << 6)) << (8 * (j)))
PAIR_RUN(pair2, 64, (B2(0) | B2(1)) | (B2(2) | B2(3)) | (B2(4) | B2(5)) | (B2(6) | B2(7)))
#endif

bool dt_ppair_find(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                   size_t count)
{
#if defined(DT_LE)
    const unsigned eb = dt_table_pair_bits(df, sf);
    /* bool data is 0 or 1; other 8-bit codes where the CPU's profile says (mempath.c: some) */
    const bool some = sf->stride_bits == 8 && eb == 16 && dt_mempath_get()->pair8 &&
                      sf->tc != DT_TC_BOOL && sf->bits > 6;
    const bool few_codes = sf->stride_bits == 8 && (sf->tc == DT_TC_BOOL || sf->bits <= 6 || some);
    const bool packed = sf->stride_bits < 8 && eb <= 8;
    /* a table costs ~50 us to build: worth it from about a million elements */
    if (!eb || !(few_codes || packed) || k->table == k->local ||
        (count < ((size_t)1 << 20) && !dt_table_pair_ready(df, sf, r)))
        return false;
    const void *t = some ? dt_table_pair_get_some(df, sf, r) : dt_table_pair_get(df, sf, r);
    if (!t)
        return false;
    memcpy(k->local, &t, sizeof t);
    k->fn = eb == 16 ? pair16 : eb == 8 ? pair8 : eb == 4 ? pair4 : pair2;
    return true;
#else
    (void)k, (void)df, (void)sf, (void)r, (void)count;
    return false;
#endif
}
