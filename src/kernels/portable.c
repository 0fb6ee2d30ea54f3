/* The portable kernels: plain C, always built, and what every non-x86 machine runs. Lookup tables
 * for sources of at most 8 bits (unrolled scalar loops; sub-byte sources through tables of whole
 * source bytes) and 64 KiB tables of 16-bit codes, and element loops written for the
 * auto-vectoriser (see portable.h): widening floats, integer <-> integer, integer -> float. The
 * narrowing kernels (floats -> narrow floats and integers, float64 -> float32 in integer
 * arithmetic) live in portable_narrow.c, float64 -> float32 by the hardware in portable_f64.c,
 * the rounding integer -> float kernels in portable_int_float.c, the float -> integer kernels
 * (float64 -> every integer, the others -> 32/64 bits) in portable_fint.c. At the end: the
 * registry entries of the portable families, in the finder's order. */
#include "kernels.h"
#include "portable.h"
#include "scalar.h"

#include <string.h>

#define INLINE DT_PINLINE
#define MASK DT_PMASK
/* a 64-bit mask widened from a 32-bit one (gcc vectorises the sign extension, not a 64-bit
 * select on a 32-bit condition) */
#define MASK64(c) ((uint64_t)(int64_t)(int32_t)DT_PMASK(c))



#if !defined(DT_LE)
/* a little-endian 16-bit code at p */
static inline uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
#endif
/* a native 16-bit value at p */
static inline unsigned ld16n(const uint8_t *p)
{
    uint16_t u;
    memcpy(&u, p, 2);
    return u;
}

/* ---- lookup tables: 8-bit sources ----------------------------------------------------------- */
/* t: 256 entries of W bytes; src: n bytes (codes, or whole bytes of a packed source through an
 * expanded table). In place (W == 1) reads each group of 8 before writing it. */
DT_NOVEC static void lut_w1(uint8_t *d, const uint8_t *s, const uint8_t *t, size_t n)
{
    size_t i = 0;
#if defined(DT_LE)
    for (; i + 8 <= n; i += 8) { /* one 8-byte load, 8 lookups, one 8-byte store */
        uint64_t w;
        memcpy(&w, s + i, 8);
#define B_(j) ((uint64_t)t[(w >> (8 * j)) & 0xFF] << (8 * j))
        const uint64_t o = B_(0) | B_(1) | B_(2) | B_(3) | B_(4) | B_(5) | B_(6) | B_(7);
#undef B_
        memcpy(d + i, &o, 8);
    }
#endif
    for (; i < n; i++)
        d[i] = t[s[i]];
}
/* 2- and 4-byte entries: assembled into 8-byte stores; 8-byte entries: a plain loop. Entries
 * are read with memcpy (the tables are bytes), which compiles to plain loads. */
static inline uint64_t ent2(const uint8_t *t, unsigned c)
{
    uint16_t v;
    memcpy(&v, t + 2 * c, 2);
    return v;
}
static inline uint64_t ent4(const uint8_t *t, unsigned c)
{
    uint32_t v;
    memcpy(&v, t + 4 * c, 4);
    return v;
}
DT_NOVEC static void lut_w2(uint8_t *d, const uint8_t *s, const uint8_t *t, size_t n)
{
    size_t i = 0;
#if defined(DT_LE)
    for (; i + 4 <= n; i += 4) {
        const uint64_t o = ent2(t, s[i]) | ent2(t, s[i + 1]) << 16 | ent2(t, s[i + 2]) << 32 |
                           ent2(t, s[i + 3]) << 48;
        memcpy(d + 2 * i, &o, 8);
    }
#endif
    for (; i < n; i++)
        memcpy(d + 2 * i, t + 2 * s[i], 2);
}
DT_NOVEC static void lut_w4(uint8_t *d, const uint8_t *s, const uint8_t *t, size_t n)
{
    size_t i = 0;
#if defined(DT_LE)
    for (; i + 2 <= n; i += 2) {
        const uint64_t o = ent4(t, s[i]) | ent4(t, s[i + 1]) << 32;
        memcpy(d + 4 * i, &o, 8);
    }
#endif
    for (; i < n; i++)
        memcpy(d + 4 * i, t + 4 * s[i], 4);
}
static void lut_w8(uint8_t *d, const uint8_t *s, const uint8_t *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        memcpy(d + 8 * i, t + 8 * s[i], 8);
}

typedef void (*lut_fn)(uint8_t *, const uint8_t *, const uint8_t *, size_t);
static lut_fn lut_of(size_t w) { return w == 1 ? lut_w1 : w == 2 ? lut_w2 : w == 4 ? lut_w4 : lut_w8; }

/* The lookups write the destination directly (8-byte stores at any address). */
#define LUT_RUN(W)                                                                              \
    static void table8_w##W(const dt_kernel *k, void *dst, const void *src, size_t begin,       \
                            size_t end)                                                         \
    {                                                                                           \
        const uint8_t *s = (const uint8_t *)src + begin;                                        \
        uint8_t *d = (uint8_t *)dst + begin * W;                                                \
        const size_t n = end - begin;                                                           \
        for (size_t i = 0; i < n; i += DT_PBLOCK) {                                             \
            const size_t m = n - i < DT_PBLOCK ? n - i : DT_PBLOCK;                             \
            dt_prefetch_span(s + i, m);                                                         \
            lut_w##W(d + i * W, s + i, (const uint8_t *)k->table, m);                           \
        }                                                                                       \
    }
LUT_RUN(1)
LUT_RUN(2)
LUT_RUN(4)
LUT_RUN(8)

/* 8-bit source -> packed destination of db = 1, 2 or 4 bits: output bytes from 8/db codes each
 * (built as independent bytes: no serial chain), 8 per store, assembled in a register (bytes
 * stored one by one and reloaded as a word ran 10-17% slower here). begin is a multiple of 8; the
 * last byte's padding codes are 0. Loads bound these loops (the code's, then its entry's). From
 * about a million elements a pair table (below) halves the lookups; below that, 1- and 2-bit
 * codes go through copies of the table shifted to each position of a byte (k->local): a code
 * costs one lookup and one OR (1.15-1.25x faster here with clang, 1.05x with gcc). */
/* the shift of byte j of a native 8-byte word */
#if defined(DT_LE)
#define WORD_SHIFT(j) (8 * (j))
#else
#define WORD_SHIFT(j) (56 - 8 * (j))
#endif
/* elements [i, end) by output bytes through the 256-entry table t (padding codes 0) */
static inline void table8_tail(uint8_t *d, const uint8_t *s, const uint8_t *t, size_t i,
                               size_t end, unsigned db)
{
    for (; i < end; i += 8 / db) {
        unsigned byte = 0;
        for (unsigned j = 0; j < 8 / db && i + j < end; j++)
            byte |= (unsigned)t[s[i + j]] << (j * db);
        d[i / (8 / db)] = (uint8_t)byte;
    }
}
/* x: the 8/db copies of the 256-entry table t, copy j shifted left by j * db bits */
static void shifted_tables(uint8_t *x, const uint8_t *t, unsigned db)
{
    for (unsigned j = 0; j < 8 / db; j++)
        for (unsigned c = 0; c < 256; c += 8) {
            uint64_t w;
            memcpy(&w, t + c, 8);
            w <<= j * db; /* codes below 2^db: each stays within its byte */
            memcpy(x + 256 * j + c, &w, 8);
        }
}
/* entry c of the copy shifted by j codes */
#define SHX(j, c) ((unsigned)x[256 * (j) + (c)])
DT_NOVEC static inline uint64_t pack_byte1(const uint8_t *x, const uint8_t *p)
{
    return ((SHX(0, p[0]) | SHX(1, p[1])) | (SHX(2, p[2]) | SHX(3, p[3]))) |
           ((SHX(4, p[4]) | SHX(5, p[5])) | (SHX(6, p[6]) | SHX(7, p[7])));
}
DT_NOVEC static inline uint64_t pack_byte2(const uint8_t *x, const uint8_t *p)
{
#if defined(DT_LE)
    const unsigned a = ld16n(p); /* codes 0 and 1 by one load: 1.05-1.1x faster here */
    return (SHX(0, a & 255) | SHX(1, a >> 8)) | (SHX(2, p[2]) | SHX(3, p[3]));
#else
    return (SHX(0, p[0]) | SHX(1, p[1])) | (SHX(2, p[2]) | SHX(3, p[3]));
#endif
}
/* 4-bit codes through the table itself (shifted copies measured no faster) */
DT_NOVEC static inline uint64_t pack_byte4(const uint8_t *t, const uint8_t *p)
{
    return (uint64_t)(t[p[0]] | t[p[1]] << 4);
}
#define TABLE8_SUB(DB, TAB)                                                                     \
    DT_NOVEC static void table8_sub##DB(const dt_kernel *k, void *dst, const void *src,         \
                                        size_t begin, size_t end)                               \
    {                                                                                           \
        const uint8_t *s = src, *x = TAB;                                                       \
        uint8_t *d = dst;                                                                       \
        enum { PER = 8 / DB };                                                                  \
        size_t i = begin;                                                                       \
        for (; i + 8 * PER <= end; i += 8 * PER) {                                              \
            const uint8_t *p = s + i;                                                           \
            dt_pprefetch_step(p, 8 * PER);                                                      \
            uint64_t o = 0;                                                                     \
            for (unsigned j = 0; j < 8; j++)                                                    \
                o |= pack_byte##DB(x, p + j * PER) << WORD_SHIFT(j);                            \
            memcpy(d + i / PER, &o, 8);                                                         \
        }                                                                                       \
        table8_tail(d, s, k->table, i, end, DB);                                                \
    }
TABLE8_SUB(1, k->local)
TABLE8_SUB(2, k->local)
TABLE8_SUB(4, k->table)
#undef SHX

/* Pair tables (tables.c; the address in k->local): entry x holds the codes of source bytes
 * x & 255 (first in memory) and x >> 8 at db-bit steps, so one lookup serves two codes. Their
 * 64 KiB outgrow L1, yet on random codes they ran 1.3-1.5x faster here than the byte tables
 * (16 Mi elements: 0.27-0.30 -> 0.20-0.21 ns per element; the build costs ~40 us). */
static inline unsigned pair_ent(const uint8_t *x, const uint8_t *p)
{
#if defined(DT_LE)
    return x[ld16n(p)];
#else
    return x[rd16(p)];
#endif
}
DT_NOVEC static inline uint64_t pair_byte1(const uint8_t *x, const uint8_t *p)
{
    return (pair_ent(x, p) | pair_ent(x, p + 2) << 2) |
           (pair_ent(x, p + 4) << 4 | pair_ent(x, p + 6) << 6);
}
DT_NOVEC static inline uint64_t pair_byte2(const uint8_t *x, const uint8_t *p)
{
    return pair_ent(x, p) | pair_ent(x, p + 2) << 4;
}
DT_NOVEC static inline uint64_t pair_byte4(const uint8_t *x, const uint8_t *p)
{
    return pair_ent(x, p);
}
#define PB(DB, j) (pair_byte##DB(x, p + (j) * PER) << WORD_SHIFT(j))
#define TABLE8_PAIR(DB)                                                                         \
    DT_NOVEC static void table8_pair##DB(const dt_kernel *k, void *dst, const void *src,        \
                                         size_t begin, size_t end)                              \
    {                                                                                           \
        const uint8_t *s = src, *x;                                                             \
        uint8_t *d = dst;                                                                       \
        memcpy(&x, k->local, sizeof x);                                                         \
        enum { PER = 8 / DB };                                                                  \
        size_t i = begin;                                                                       \
        for (; i + 8 * PER <= end; i += 8 * PER) {                                              \
            const uint8_t *p = s + i;                                                           \
            dt_pprefetch_step(p, 8 * PER);                                                      \
            const uint64_t o = ((PB(DB, 0) | PB(DB, 1)) | (PB(DB, 2) | PB(DB, 3))) |            \
                               ((PB(DB, 4) | PB(DB, 5)) | (PB(DB, 6) | PB(DB, 7)));             \
            memcpy(d + i / PER, &o, 8);                                                         \
        }                                                                                       \
        table8_tail(d, s, k->table, i, end, DB);                                                \
    }
TABLE8_PAIR(1)
TABLE8_PAIR(2)
TABLE8_PAIR(4)
#undef PB

/* ---- lookup tables: packed sources (1, 2 or 4 bits) ------------------------------------------ */
/* An expanded table (in the kernel's local bytes) maps each whole source byte to the output of
 * its 8/sb elements: eb = (8/sb) * (destination bits) / 8 bytes when that is 1, 2, 4 or 8. So a
 * source byte costs one lookup. Elements of a partial last source byte go one at a time. */
static unsigned sub_code(const uint8_t *s, size_t i, unsigned sb)
{
    const unsigned per = 8 / sb;
    return (s[i / per] >> ((i % per) * sb)) & ((1u << sb) - 1);
}

/* Elements [i, end) one at a time through the base table; i starts a destination byte (a
 * packed destination's bytes are built whole, the padding codes 0). */
DT_NOVEC void dt_ptable_tail(const dt_kernel *k, uint8_t *d, const uint8_t *s, size_t i,
                             size_t end)
{
    const unsigned sb = (unsigned)k->sf->stride_bits, db = (unsigned)k->df->stride_bits;
    const uint8_t *t = k->table;
    if (db >= 8) {
        for (; i < end; i++)
            memcpy(d + i * (db / 8), t + (size_t)sub_code(s, i, sb) * (db / 8), db / 8);
        return;
    }
    const unsigned per = 8 / db;
    for (; i < end; i += per) {
        unsigned byte = 0;
        for (unsigned j = 0; j < per && i + j < end; j++)
            byte |= (unsigned)t[sub_code(s, i + j, sb)] << (j * db);
        d[i / per] = (uint8_t)byte;
    }
}

static void table_sub_expanded(const dt_kernel *k, void *dst, const void *src, size_t begin,
                               size_t end)
{
    const unsigned sb = (unsigned)k->sf->stride_bits, db = (unsigned)k->df->stride_bits;
    const size_t per = 8 / sb, eb = per * db / 8; /* expanded entry bytes */
    const uint8_t *s = src;
    uint8_t *d = dst;
    const size_t whole = (end - begin) / per; /* begin is a multiple of 8, so of per */
    const size_t b0 = begin / per;
    const lut_fn f = lut_of(eb); /* (dst bytes per source byte: eb) */
    for (size_t j = 0; j < whole; j += DT_PBLOCK) {
        const size_t m = whole - j < DT_PBLOCK ? whole - j : DT_PBLOCK;
        dt_prefetch_span(s + b0 + j, m);
        f(d + (b0 + j) * eb, s + b0 + j, k->local, m);
    }
    dt_ptable_tail(k, d, s, begin + whole * per, end);
}

/* Packed source and packed destination with fewer than 8 output bits per source byte
 * (4 -> 2, 4 -> 1, 2 -> 1 bits): EBITS = 2 or 4 output bits per source byte, so one output byte
 * from 8 / EBITS source bytes through the expanded table. */
#define SUB_PACK(SB, DB)                                                                        \
    DT_NOVEC static void table_pack##SB##_##DB(const dt_kernel *k, void *dst, const void *src, \
                                               size_t begin, size_t end)                        \
    {                                                                                           \
        enum { PER = 8 / SB, EBITS = PER * DB, GROUP = 8 / EBITS, ELEMS = GROUP * PER };        \
        const uint8_t *s = src, *x = k->local;                                                  \
        uint8_t *d = dst;                                                                       \
        size_t i = begin;                                                                       \
        for (; i + ELEMS <= end; i += ELEMS) {                                                  \
            const uint8_t *p = s + i / PER;                                                     \
            unsigned byte = x[p[0]] | x[p[1]] << EBITS;                                         \
            if (GROUP == 4)                                                                     \
                byte |= (x[p[2 % GROUP]] << (2 * EBITS % 8)) | (x[p[3 % GROUP]] << (3 * EBITS % 8)); \
            d[i * DB / 8] = (uint8_t)byte;                                                      \
        }                                                                                       \
        dt_ptable_tail(k, d, s, i, end);                                                        \
    }
SUB_PACK(4, 2)
SUB_PACK(4, 1)
SUB_PACK(2, 1)

/* Packed source (SB bits), whole-byte destination of W bytes with no expanded table: each source
 * byte's 8/SB elements through the base table, constant sizes throughout. */
#define SUB_PLAIN(SB, W)                                                                        \
    DT_NOVEC static void table_sub##SB##_w##W(const dt_kernel *k, void *dst, const void *src,  \
                                     size_t begin, size_t end)                                  \
    {                                                                                           \
        const uint8_t *s = src, *t = k->table;                                                  \
        uint8_t *d = dst;                                                                       \
        enum { PER = 8 / SB, MSK = (1 << SB) - 1 };                                             \
        size_t i = begin;                                                                       \
        for (; i + PER <= end; i += PER) {                                                      \
            const unsigned byte = s[i / PER];                                                   \
            for (unsigned j = 0; j < PER; j++)                                                  \
                memcpy(d + W * (i + j), t + W * ((byte >> (j * SB)) & MSK), W);                 \
        }                                                                                       \
        dt_ptable_tail(k, d, s, i, end);                                                        \
    }
SUB_PLAIN(1, 1) SUB_PLAIN(1, 2) SUB_PLAIN(1, 4) SUB_PLAIN(1, 8)
SUB_PLAIN(2, 1) SUB_PLAIN(2, 2) SUB_PLAIN(2, 4) SUB_PLAIN(2, 8)
SUB_PLAIN(4, 1) SUB_PLAIN(4, 2) SUB_PLAIN(4, 4) SUB_PLAIN(4, 8)
/* [log2 of source bits][log2 of destination bytes] */
static const dt_kernel_fn sub_plain[3][4] = {
    {table_sub1_w1, table_sub1_w2, table_sub1_w4, table_sub1_w8},
    {table_sub2_w1, table_sub2_w2, table_sub2_w4, table_sub2_w8},
    {table_sub4_w1, table_sub4_w2, table_sub4_w4, table_sub4_w8},
};
static int log2_small(unsigned x) { return x >= 8 ? 3 : x >= 4 ? 2 : x >= 2 ? 1 : 0; }

/* Packed source into a packed destination without an expanded table: one element at a time. */
static void table_sub_any(const dt_kernel *k, void *dst, const void *src, size_t begin,
                          size_t end)
{
    dt_ptable_tail(k, dst, src, begin, end);
}

/* Fills the expanded table of a packed source into x: entry v holds the outputs of the 8/sb
 * codes of source byte v (whole-byte destinations: their bytes in order; packed ones: their
 * codes at db-bit steps). Returns its entry bytes (or bits, when below 8, through *bits). */
static void expand_table(uint8_t *x, const uint8_t *t, unsigned sb, unsigned db)
{
    const unsigned per = 8 / sb, mask = (1u << sb) - 1;
    if (db >= 8) {
        const size_t w = db / 8, eb = per * w;
        for (unsigned v = 0; v < 256; v++)
            for (unsigned j = 0; j < per; j++)
                memcpy(x + v * eb + j * w, t + ((v >> (j * sb)) & mask) * w, w);
        return;
    }
    const unsigned ebits = per * db;
    const size_t eb = ebits >= 8 ? ebits / 8 : 1;
    for (unsigned v = 0; v < 256; v++) {
        uint64_t e = 0;
        for (unsigned j = 0; j < per; j++)
            e |= (uint64_t)t[(v >> (j * sb)) & mask] << (j * db);
        for (size_t b = 0; b < eb; b++) /* little-endian bytes of the packed stream */
            x[v * eb + b] = (uint8_t)(e >> (8 * b));
    }
}

/* ---- 64 KiB tables: 16-bit indices -> destinations of at most 8 bits ------------------------ */
/* d[i] = t[x[i]] for n native 16-bit indices x (as bytes: memcpy loads, any alignment): 8
 * lookups per 8-byte store. */
DT_NOVEC static void lut16(uint8_t *d, const uint8_t *x, const uint8_t *t, size_t n)
{
#define X16(j) ((uint64_t)t[ld16n(x + 2 * (i + (j)))] << (8 * (j)))
    size_t i = 0;
#if defined(DT_LE)
    for (; i + 8 <= n; i += 8) {
        const uint64_t o = (X16(0) | X16(1)) | (X16(2) | X16(3)) | (X16(4) | X16(5)) | (X16(6) | X16(7));
        memcpy(d + i, &o, 8);
    }
#endif
    for (; i < n; i++)
        d[i] = (uint8_t)X16(0);
#undef X16
}

/* Codes of n elements (n: a multiple of 8, or the last block) from native 16-bit indices x into
 * d at element i0: bytes directly, packed codes through a block (padding codes 0). */
static void lut16_store(uint8_t *d, size_t i0, const uint8_t *x, const uint8_t *t, size_t n,
                        unsigned db)
{
    if (db == 8) {
        lut16(d + i0, x, t, n);
        return;
    }
    _Alignas(64) uint8_t codes[DT_PBLOCK], packed[DT_PBLOCK];
    const size_t n8 = (n + 7) & ~(size_t)7;
    lut16(codes, x, t, n);
    memset(codes + n, 0, n8 - n);
    dt_ppack(packed, codes, n8 * db / 8, (int)db);
    memcpy(d + i0 * db / 8, packed, (n * db + 7) / 8);
}

/* 16-bit sources (little-endian) through their table. In place, each group of 8 is read before
 * its 8 bytes (at or below them) are written. */
static void table16_run(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    const uint8_t *s = (const uint8_t *)src + 2 * begin, *t = k->table;
    uint8_t *d = (uint8_t *)dst + begin * (size_t)k->df->stride_bits / 8;
    const unsigned db = (unsigned)k->df->stride_bits;
    const size_t n = end - begin;
    for (size_t i = 0; i < n; i += DT_PBLOCK) {
        const size_t m = n - i < DT_PBLOCK ? n - i : DT_PBLOCK;
        dt_prefetch_span(s + 2 * i, 2 * m);
#if defined(DT_LE)
        lut16_store(d, i, s + 2 * i, t, m, db);
#else
        uint16_t x[DT_PBLOCK];
        for (size_t j = 0; j < m; j++)
            x[j] = (uint16_t)rd16(s + 2 * (i + j));
        lut16_store(d, i, (const uint8_t *)x, t, m, db);
#endif
    }
}

/* 16-bit sources into 16-bit destinations through a table of 65536 2-byte entries (128 KiB:
 * beyond L1, so random codes wait for L2, still 2-4x the computed kernels here): 4 lookups per
 * 8-byte store. In place, each group of 4 is read before it is written. */
DT_NOVEC static void table16_w2_run(const dt_kernel *k, void *dst, const void *src, size_t begin,
                                    size_t end)
{
    const uint8_t *s = (const uint8_t *)src + 2 * begin, *t = k->table;
    uint8_t *d = (uint8_t *)dst + 2 * begin;
    const size_t n = end - begin;
    for (size_t i0 = 0; i0 < n; i0 += DT_PBLOCK) {
        const size_t m = n - i0 < DT_PBLOCK ? n - i0 : DT_PBLOCK;
        dt_prefetch_span(s + 2 * i0, 2 * m);
        size_t i = i0;
#if defined(DT_LE)
        for (; i + 4 <= i0 + m; i += 4) {
            const uint64_t o = ent2(t, ld16n(s + 2 * i)) | ent2(t, ld16n(s + 2 * i + 2)) << 16 |
                               ent2(t, ld16n(s + 2 * i + 4)) << 32 |
                               ent2(t, ld16n(s + 2 * i + 6)) << 48;
            memcpy(d + 2 * i, &o, 8);
        }
        for (; i < i0 + m; i++)
            memcpy(d + 2 * i, t + 2 * (size_t)ld16n(s + 2 * i), 2);
#else
        for (; i < i0 + m; i++)
            memcpy(d + 2 * i, t + 2 * (size_t)rd16(s + 2 * i), 2);
#endif
    }
}

/* float32 and float64 -> floats of at most 8 bits and 6 significant bits, and float8e8m0 (from
 * float32): the value rounded to odd into bfloat16, then the bfloat16 table. Rounding to odd
 * at 8 >= p + 2 bits, then once to p bits, is the single correct rounding; the odd bit keeps a
 * NaN a NaN, and no finite value becomes Inf. Each source's block of bfloat16 codes: */
static void bf16_odd_f32(uint16_t *o, const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t x;
        memcpy(&x, s + 4 * i, 4);
        o[i] = (uint16_t)((x >> 16) | (((x & 0xFFFFu) + 0xFFFFu) >> 16)); /* | low half != 0 */
    }
}
/* A float64 magnitude of float32's normal range (its words, the sign cleared): the exponent
 * rebiased above the top 7 significand bits, the 45 others as the sticky bit. */
INLINE uint32_t bf16_odd_of_double(uint32_t ahi, uint32_t lo)
{
    return ((ahi - (896u << 20)) >> 13) | (MASK(((ahi & 0x1FFFu) | lo) != 0) & 1);
}
/* float64: below float32's normal range a tiny nonzero stands in (no target here but e8m0
 * resolves below 2^-126; e8m0 is left to the narrowing kernels), above it the largest finite */
static void bf16_odd_f64(uint16_t *o, const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t hi, lo;
        memcpy(&lo, s + 8 * i + 4 * HALF_LO, 4);
        memcpy(&hi, s + 8 * i + 4 * HALF_HI, 4);
        const uint32_t ahi = hi & 0x7FFFFFFFu, e = ahi >> 20;
        uint32_t b = dt_psel(MASK(e < 897), MASK((ahi | lo) != 0) & 1, bf16_odd_of_double(ahi, lo));
        b = dt_psel(MASK(e > 1150), 0x7F7Fu, b);
        b = dt_psel(MASK(e == 2047), dt_psel(MASK(((ahi & 0xFFFFFu) | lo) != 0), 0x7FC0u, 0x7F80u), b);
        o[i] = (uint16_t)((hi >> 16 & 0x8000u) | b);
    }
}
#define ODD16_RUN(name, SBYTES, IDX)                                                            \
    static void name(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end) \
    {                                                                                           \
        const uint8_t *s = (const uint8_t *)src + SBYTES * begin, *t = k->table;                \
        uint8_t *d = (uint8_t *)dst + begin * (size_t)k->df->stride_bits / 8;                   \
        const unsigned db = (unsigned)k->df->stride_bits;                                       \
        const size_t n = end - begin;                                                           \
        for (size_t i = 0; i < n; i += DT_PBLOCK) {                                             \
            const size_t m = n - i < DT_PBLOCK ? n - i : DT_PBLOCK;                             \
            uint16_t x[DT_PBLOCK];                                                              \
            dt_prefetch_span(s + SBYTES * i, SBYTES * m);                                       \
            IDX(x, s + SBYTES * i, m);                                                          \
            lut16_store(d, i, (const uint8_t *)x, t, m, db);                                    \
        }                                                                                       \
    }
ODD16_RUN(f32_table16_run, 4, bf16_odd_f32)
ODD16_RUN(f64_table16_run, 8, bf16_odd_f64)

/* Integers of one width whose bits do not change (wrap between signed and unsigned, or the same
 * type): a copy. */
static void copy_run(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    const size_t w = (size_t)k->df->stride_bits / 8;
    memmove((uint8_t *)dst + w * begin, (const uint8_t *)src + w * begin, w * (end - begin));
}

/* ---- element loops ---------------------------------------------------------------------------- */
/* Blocks of the source are read into the loop directly and written from a local array: the
 * loop sees no aliasing, and an in-place call reads each block whole before writing it. */
#define BLOCK_LOOP(STYPE, DTYPE, EXPR)                                                          \
    const uint8_t *s_ = (const uint8_t *)src + begin * sizeof(STYPE);                           \
    uint8_t *d_ = (uint8_t *)dst + begin * sizeof(DTYPE);                                       \
    _Alignas(64) DTYPE out_[DT_PBLOCK];                                                         \
    const size_t n_ = end - begin;                                                              \
    for (size_t i0 = 0; i0 < n_; i0 += DT_PBLOCK) {                                             \
        const size_t m_ = n_ - i0 < DT_PBLOCK ? n_ - i0 : DT_PBLOCK;                            \
        dt_prefetch_span(s_ + i0 * sizeof(STYPE), m_ * sizeof(STYPE));                          \
        for (size_t i = 0; i < m_; i++) {                                                       \
            STYPE x;                                                                            \
            memcpy(&x, s_ + (i0 + i) * sizeof(STYPE), sizeof x);                                \
            out_[i] = (EXPR);                                                                   \
        }                                                                                       \
        memcpy(d_ + i0 * sizeof(DTYPE), out_, m_ * sizeof(DTYPE));                              \
    }

#define SIMPLE_KERNEL(name, STYPE, DTYPE, EXPR)                                                 \
    static void name(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end) \
    {                                                                                           \
        (void)k;                                                                                \
        BLOCK_LOOP(STYPE, DTYPE, EXPR)                                                          \
    }

/* ---- widening floats (exact; NaN canonical, as scalar.h) ------------------------------------- */
/* float16 -> float32: a subnormal is em * 2^-24: the float of em, scaled
 * (exact; a difference would give -0 for +0 when the caller rounds downward). */
INLINE uint32_t f16_f32(uint32_t h, uint32_t inf)
{
    const uint32_t em = h & 0x7FFFu, s = (h & 0x8000u) << 16, o = em << 13;
    const uint32_t sub = dt_bits_of_f32((float)(int32_t)em * 0x1p-24f);
    uint32_t r = dt_psel(MASK((int32_t)em < 0x0400), sub, o + (112u << 23));
    r = dt_psel(MASK((int32_t)em >= 0x7C00), dt_psel(MASK(em == 0x7C00u), inf, 0x7FC00000u), r);
    return s | r;
}
INLINE uint32_t bf16_f32(uint32_t b, uint32_t inf)
{
    const uint32_t a = b & 0x7FFFu, s = (b & 0x8000u) << 16;
    uint32_t r = dt_psel(MASK((int32_t)a > 0x7F80), 0x7FC00000u, a << 16);
    return s | dt_psel(MASK(a == 0x7F80u), inf, r);
}
/* A kernel whose element (source x, of STYPE) gives a 64-bit result as halves hi and lo: BODY
 * sets them. */
#define HALVES_KERNEL(name, STYPE, BODY)                                                        \
    static void name(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end) \
    {                                                                                           \
        (void)k;                                                                                \
        const uint8_t *s_ = (const uint8_t *)src + begin * sizeof(STYPE);                       \
        uint8_t *d_ = (uint8_t *)dst + begin * 8;                                               \
        _Alignas(64) uint32_t out_[2 * DT_PBLOCK];                                              \
        const size_t n_ = end - begin;                                                          \
        for (size_t i0 = 0; i0 < n_; i0 += DT_PBLOCK) {                                         \
            const size_t m_ = n_ - i0 < DT_PBLOCK ? n_ - i0 : DT_PBLOCK;                        \
            dt_prefetch_span(s_ + i0 * sizeof(STYPE), m_ * sizeof(STYPE));                      \
            for (size_t i = 0; i < m_; i++) {                                                   \
                STYPE x;                                                                        \
                memcpy(&x, s_ + (i0 + i) * sizeof(STYPE), sizeof x);                            \
                uint32_t hi, lo;                                                                \
                BODY;                                                                           \
                out_[2 * i + HALF_LO] = lo;                                                     \
                out_[2 * i + HALF_HI] = hi;                                                     \
            }                                                                                   \
            memcpy(d_ + i0 * 8, out_, m_ * 8);                                                  \
        }                                                                                       \
    }

/* float32 -> float64 as halves: a subnormal through the exact product a * 2^-149 (a normal
 * float64). inf_hi/inf_lo: the result of an infinite input (Inf or, saturating, the largest
 * finite number). */
INLINE void f32_f64(uint32_t *hi, uint32_t *lo, uint32_t x, uint32_t inf_hi, uint32_t inf_lo)
{
    const uint32_t a = x & 0x7FFFFFFFu;
    const uint64_t sub = dt_bits_of_f64((double)(int32_t)a * 0x1p-149);
    const uint32_t issub = MASK((int32_t)a < 0x800000), big = MASK((int32_t)a >= 0x7F800000);
    const uint32_t isinf = MASK(a == 0x7F800000u);
    uint32_t h = dt_psel(issub, (uint32_t)(sub >> 32), (a >> 3) + ((1023u - 127u) << 20));
    uint32_t l = dt_psel(issub, (uint32_t)sub, a << 29);
    h = dt_psel(big, dt_psel(isinf, inf_hi, 0x7FF80000u), h);
    l = dt_psel(big, isinf & inf_lo, l);
    *hi = (x & 0x80000000u) | h;
    *lo = l;
}
#define INF32 0x7F800000u
#define MAX32 0x7F7FFFFFu
#define INF64 0x7FF00000u, 0
#define MAX64 0x7FEFFFFFu, 0xFFFFFFFFu
SIMPLE_KERNEL(w_f16_f32, uint16_t, uint32_t, f16_f32(x, INF32))
SIMPLE_KERNEL(w_bf16_f32, uint16_t, uint32_t, bf16_f32(x, INF32))
HALVES_KERNEL(w_f32_f64, uint32_t, f32_f64(&hi, &lo, x, INF64))
/* float16 -> float64: its float32 is never subnormal, so the hardware conversion is exact in every
 * floating-point mode */
SIMPLE_KERNEL(w_f16_f64, uint16_t, double, (double)dt_f32_of_bits(f16_f32(x, INF32)))
HALVES_KERNEL(w_bf16_f64, uint16_t, f32_f64(&hi, &lo, bf16_f32(x, INF32), INF64))
/* saturate: an infinite input becomes the largest finite number of its sign */
SIMPLE_KERNEL(w_f16_f32_sat, uint16_t, uint32_t, f16_f32(x, MAX32))
SIMPLE_KERNEL(w_bf16_f32_sat, uint16_t, uint32_t, bf16_f32(x, MAX32))
HALVES_KERNEL(w_f32_f64_sat, uint32_t, f32_f64(&hi, &lo, x, MAX64))
HALVES_KERNEL(w_f16_f64_sat, uint16_t, f32_f64(&hi, &lo, f16_f32(x, INF32), MAX64))
HALVES_KERNEL(w_bf16_f64_sat, uint16_t, f32_f64(&hi, &lo, bf16_f32(x, INF32), MAX64))

/* ---- integers -> integers ---------------------------------------------------------------------- */
/* Wrap keeps the low bits (sign- or zero-extended when widening). Saturate clamps: sources of
 * 16 and 32 bits in their own 32-bit domain (clamps that vectorise everywhere), 64-bit sources
 * through their 32-bit halves (no 64-bit compare on SSE2). Storage types are unsigned. */
#define II_WRAP(S, STYPE, W, DTYPE) SIMPLE_KERNEL(ii_wrap_##S##_##W, STYPE, DTYPE, (DTYPE)x)

/* the clamp of a signed 32-bit value v to [lo, hi], and of an unsigned one to hi (parameters,
 * so no comparison is against its own type's limits) */
INLINE int32_t CLAMP_S(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : v > hi ? hi : v; }
INLINE uint32_t CLAMP_U(uint32_t v, uint32_t hi) { return v > hi ? hi : v; }
/* limits of destination D inside the 32-bit domain of a signed / unsigned source */
#define S_LO_i8 INT8_MIN
#define S_HI_i8 INT8_MAX
#define S_LO_u8 0
#define S_HI_u8 UINT8_MAX
#define S_LO_i16 INT16_MIN
#define S_HI_i16 INT16_MAX
#define S_LO_u16 0
#define S_HI_u16 UINT16_MAX
#define S_LO_i32 INT32_MIN
#define S_HI_i32 INT32_MAX
#define S_LO_u32 0
#define S_HI_u32 INT32_MAX
#define S_LO_i64 INT32_MIN
#define S_HI_i64 INT32_MAX
#define S_LO_u64 0
#define S_HI_u64 INT32_MAX
#define U_HI_i8 UINT32_C(0x7F)
#define U_HI_u8 UINT32_C(0xFF)
#define U_HI_i16 UINT32_C(0x7FFF)
#define U_HI_u16 UINT32_C(0xFFFF)
#define U_HI_i32 UINT32_C(0x7FFFFFFF)
#define U_HI_u32 UINT32_MAX
#define U_HI_i64 UINT32_MAX
#define U_HI_u64 UINT32_MAX
#define II_SAT_S(S, STYPE, D, DTYPE)                                                            \
    SIMPLE_KERNEL(ii_sat_##S##_##D, STYPE, DTYPE,                                               \
                  (DTYPE)(int64_t)CLAMP_S((int32_t)(STYPE)x, (int32_t)S_LO_##D,                 \
                                          (int32_t)S_HI_##D))
#define II_SAT_U(S, STYPE, D, DTYPE)                                                            \
    SIMPLE_KERNEL(ii_sat_##S##_##D, STYPE, DTYPE, (DTYPE)CLAMP_U((uint32_t)x, U_HI_##D))

/* 64-bit sources: v = hi * 2^32 + lo, loaded as halves; destinations of at most 32 bits (the
 * code, masked to its bits) or of 64 bits (the halves, in place). */
INLINE uint32_t sat_s64(uint32_t hi, uint32_t lo, int dbits, int ds)
{
    const int32_t shi = (int32_t)hi;
    if (!ds && dbits == 32) /* [0, 2^32 - 1] */
        return dt_psel(MASK(shi < 0), 0, dt_psel(MASK(hi != 0), UINT32_MAX, lo));
    /* the destination's range lies within int32: in int32 when the value does */
    const int32_t dlo = ds ? (int32_t)(-(INT64_C(1) << (dbits - 1))) : 0;
    const int32_t dhi = ds ? (int32_t)((INT64_C(1) << (dbits - 1)) - 1)
                           : (int32_t)((INT64_C(1) << dbits) - 1);
    const int32_t v = (int32_t)lo;
    const uint32_t fits = MASK(shi == (v >> 31));
    const uint32_t c = (uint32_t)CLAMP_S(v, dlo, dhi);
    return dt_psel(fits, c, dt_psel(MASK(shi < 0), (uint32_t)dlo, (uint32_t)dhi)) &
           (uint32_t)(dbits == 32 ? UINT32_MAX : (UINT32_C(1) << dbits) - 1);
}
INLINE uint32_t sat_u64(uint32_t hi, uint32_t lo, int dbits, int ds)
{
    const uint32_t dhi = (uint32_t)((UINT64_C(1) << (dbits - ds)) - 1);
    return dt_psel(MASK(hi != 0), dhi, CLAMP_U(lo, dhi));
}
#define SAT64_KERNEL(name, DTYPE, EXPR)                                                         \
    static void name(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end) \
    {                                                                                           \
        (void)k;                                                                                \
        const uint8_t *s_ = (const uint8_t *)src + begin * 8;                                   \
        uint8_t *d_ = (uint8_t *)dst + begin * sizeof(DTYPE);                                   \
        _Alignas(64) DTYPE out_[DT_PBLOCK];                                                     \
        const size_t n_ = end - begin;                                                          \
        for (size_t i0 = 0; i0 < n_; i0 += DT_PBLOCK) {                                         \
            const size_t m_ = n_ - i0 < DT_PBLOCK ? n_ - i0 : DT_PBLOCK;                        \
            dt_prefetch_span(s_ + i0 * 8, m_ * 8);                                              \
            for (size_t i = 0; i < m_; i++) {                                                   \
                uint32_t hi, lo;                                                                \
                memcpy(&lo, s_ + (i0 + i) * 8 + 4 * HALF_LO, 4);                                \
                memcpy(&hi, s_ + (i0 + i) * 8 + 4 * HALF_HI, 4);                                \
                out_[i] = (DTYPE)(EXPR);                                                        \
            }                                                                                   \
            memcpy(d_ + i0 * sizeof(DTYPE), out_, m_ * sizeof(DTYPE));                          \
        }                                                                                       \
    }
#define DBITS_i8 8
#define DBITS_u8 8
#define DBITS_i16 16
#define DBITS_u16 16
#define DBITS_i32 32
#define DBITS_u32 32
#define DS_i8 1
#define DS_u8 0
#define DS_i16 1
#define DS_u16 0
#define DS_i32 1
#define DS_u32 0
/* int64 -> uint64: negative -> 0; uint64 -> int64: above INT64_MAX -> INT64_MAX */
HALVES_KERNEL(ii_sat_i64_u64, uint64_t,
              const uint32_t neg = MASK((int32_t)(uint32_t)(x >> 32) < 0);
              hi = (uint32_t)(x >> 32) & ~neg; lo = (uint32_t)x & ~neg)
HALVES_KERNEL(ii_sat_u64_i64, uint64_t,
              const uint32_t big = MASK((int32_t)(uint32_t)(x >> 32) < 0);
              hi = ((uint32_t)(x >> 32) & ~big) | (big & 0x7FFFFFFFu); lo = (uint32_t)x | big)
#define II_SAT_S64(S, STYPE, D, DTYPE) II_SAT_S64_##D(S, STYPE, D, DTYPE)
#define II_SAT_U64(S, STYPE, D, DTYPE) II_SAT_U64_##D(S, STYPE, D, DTYPE)
#define II_SAT_S64_N(D, DTYPE) SAT64_KERNEL(ii_sat_i64_##D, DTYPE, sat_s64(hi, lo, DBITS_##D, DS_##D))
#define II_SAT_U64_N(D, DTYPE) SAT64_KERNEL(ii_sat_u64_##D, DTYPE, sat_u64(hi, lo, DBITS_##D, DS_##D))
#define II_SAT_S64_i8(S, STYPE, D, DTYPE) II_SAT_S64_N(D, DTYPE)
#define II_SAT_S64_u8 II_SAT_S64_i8
#define II_SAT_S64_i16 II_SAT_S64_i8
#define II_SAT_S64_u16 II_SAT_S64_i8
#define II_SAT_S64_i32 II_SAT_S64_i8
#define II_SAT_S64_u32 II_SAT_S64_i8
#define II_SAT_S64_u64(S, STYPE, D, DTYPE)
#define II_SAT_U64_i8(S, STYPE, D, DTYPE) II_SAT_U64_N(D, DTYPE)
#define II_SAT_U64_u8 II_SAT_U64_i8
#define II_SAT_U64_i16 II_SAT_U64_i8
#define II_SAT_U64_u16 II_SAT_U64_i8
#define II_SAT_U64_i32 II_SAT_U64_i8
#define II_SAT_U64_u32 II_SAT_U64_i8
#define II_SAT_U64_i64(S, STYPE, D, DTYPE)

/* Wrap: into each other width (the low bits, or the source sign- or zero-extended; one width is
 * a copy: copy_run). Saturate: into each other type (the same type is no conversion). */
#define II_WRAPS(S, STYPE, A, TA, B, TB, C, TC)                                                 \
    II_WRAP(S, STYPE, A, TA) II_WRAP(S, STYPE, B, TB) II_WRAP(S, STYPE, C, TC)
#define II_SATS(S, STYPE, SAT, A, B, C, D, E, F, G)                                             \
    SAT(S, STYPE, A, DTYPE_##A) SAT(S, STYPE, B, DTYPE_##B) SAT(S, STYPE, C, DTYPE_##C)          \
    SAT(S, STYPE, D, DTYPE_##D) SAT(S, STYPE, E, DTYPE_##E) SAT(S, STYPE, F, DTYPE_##F)          \
    SAT(S, STYPE, G, DTYPE_##G)
#define DTYPE_i8 uint8_t
#define DTYPE_u8 uint8_t
#define DTYPE_i16 uint16_t
#define DTYPE_u16 uint16_t
#define DTYPE_i32 uint32_t
#define DTYPE_u32 uint32_t
#define DTYPE_i64 uint64_t
#define DTYPE_u64 uint64_t
II_WRAPS(i8, int8_t, 16, uint16_t, 32, uint32_t, 64, uint64_t)
II_WRAPS(u8, uint8_t, 16, uint16_t, 32, uint32_t, 64, uint64_t)
II_WRAPS(i16, int16_t, 8, uint8_t, 32, uint32_t, 64, uint64_t)
II_WRAPS(u16, uint16_t, 8, uint8_t, 32, uint32_t, 64, uint64_t)
II_WRAPS(i32, int32_t, 8, uint8_t, 16, uint16_t, 64, uint64_t)
II_WRAPS(u32, uint32_t, 8, uint8_t, 16, uint16_t, 64, uint64_t)
II_WRAPS(i64, int64_t, 8, uint8_t, 16, uint16_t, 32, uint32_t)
II_WRAPS(u64, uint64_t, 8, uint8_t, 16, uint16_t, 32, uint32_t)
II_SATS(i8, int8_t, II_SAT_S, u8, i16, u16, i32, u32, i64, u64)
II_SATS(u8, uint8_t, II_SAT_U, i8, i16, u16, i32, u32, i64, u64)
II_SATS(i16, int16_t, II_SAT_S, i8, u8, u16, i32, u32, i64, u64)
II_SATS(u16, uint16_t, II_SAT_U, i8, u8, i16, i32, u32, i64, u64)
II_SATS(i32, int32_t, II_SAT_S, i8, u8, i16, u16, u32, i64, u64)
II_SATS(u32, uint32_t, II_SAT_U, i8, u8, i16, u16, i32, i64, u64)
II_SATS(i64, int64_t, II_SAT_S64, i8, u8, i16, u16, i32, u32, u64)
II_SATS(u64, uint64_t, II_SAT_U64, i8, u8, i16, u16, i32, u32, i64)

/* [source][log2 of destination bytes], by int_slot() */
static const dt_kernel_fn ii_wrap[8][4] = {
    {NULL, ii_wrap_i8_16, ii_wrap_i8_32, ii_wrap_i8_64},
    {NULL, ii_wrap_u8_16, ii_wrap_u8_32, ii_wrap_u8_64},
    {ii_wrap_i16_8, NULL, ii_wrap_i16_32, ii_wrap_i16_64},
    {ii_wrap_u16_8, NULL, ii_wrap_u16_32, ii_wrap_u16_64},
    {ii_wrap_i32_8, ii_wrap_i32_16, NULL, ii_wrap_i32_64},
    {ii_wrap_u32_8, ii_wrap_u32_16, NULL, ii_wrap_u32_64},
    {ii_wrap_i64_8, ii_wrap_i64_16, ii_wrap_i64_32, NULL},
    {ii_wrap_u64_8, ii_wrap_u64_16, ii_wrap_u64_32, NULL},
};
/* [source][destination], by int_slot() */
static const dt_kernel_fn ii_sat[8][8] = {
    {NULL, ii_sat_i8_u8, ii_sat_i8_i16, ii_sat_i8_u16, ii_sat_i8_i32, ii_sat_i8_u32,
     ii_sat_i8_i64, ii_sat_i8_u64},
    {ii_sat_u8_i8, NULL, ii_sat_u8_i16, ii_sat_u8_u16, ii_sat_u8_i32, ii_sat_u8_u32,
     ii_sat_u8_i64, ii_sat_u8_u64},
    {ii_sat_i16_i8, ii_sat_i16_u8, NULL, ii_sat_i16_u16, ii_sat_i16_i32, ii_sat_i16_u32,
     ii_sat_i16_i64, ii_sat_i16_u64},
    {ii_sat_u16_i8, ii_sat_u16_u8, ii_sat_u16_i16, NULL, ii_sat_u16_i32, ii_sat_u16_u32,
     ii_sat_u16_i64, ii_sat_u16_u64},
    {ii_sat_i32_i8, ii_sat_i32_u8, ii_sat_i32_i16, ii_sat_i32_u16, NULL, ii_sat_i32_u32,
     ii_sat_i32_i64, ii_sat_i32_u64},
    {ii_sat_u32_i8, ii_sat_u32_u8, ii_sat_u32_i16, ii_sat_u32_u16, ii_sat_u32_i32, NULL,
     ii_sat_u32_i64, ii_sat_u32_u64},
    {ii_sat_i64_i8, ii_sat_i64_u8, ii_sat_i64_i16, ii_sat_i64_u16, ii_sat_i64_i32, ii_sat_i64_u32,
     NULL, ii_sat_i64_u64},
    {ii_sat_u64_i8, ii_sat_u64_u8, ii_sat_u64_i16, ii_sat_u64_u16, ii_sat_u64_i32, ii_sat_u64_u32,
     ii_sat_u64_i64, NULL},
};

/* Integers -> packed integers of 1, 2 or 4 bits (int4, uint4, int2, uint2, uint1): the codes of
 * a block (wrapped: the low bits; saturated: clamped first), then packed. */
#define ISUB_KERNEL(S, STYPE, CODE)                                                             \
    static void isub_##S(const dt_kernel *k, void *dst, const void *src, size_t begin,          \
                         size_t end)                                                            \
    {                                                                                           \
        const int db = k->df->stride_bits, bits = k->df->bits, ds = k->df->tc == DT_TC_SINT;   \
        const int32_t lo = ds ? -(1 << (bits - 1)) : 0;                                         \
        const int32_t hi = ds ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;                        \
        const uint32_t mask = (1u << bits) - 1, satm = k->r.saturate_int ? ~0u : 0;            \
        (void)lo, (void)hi, (void)ds;                                                           \
        const uint8_t *s = (const uint8_t *)src + begin * sizeof(STYPE);                        \
        uint8_t *d = (uint8_t *)dst + begin * (size_t)db / 8;                                   \
        _Alignas(64) uint8_t codes[DT_PBLOCK], packed[DT_PBLOCK];                               \
        const size_t n = end - begin;                                                           \
        for (size_t i0 = 0; i0 < n; i0 += DT_PBLOCK) {                                          \
            const size_t m = n - i0 < DT_PBLOCK ? n - i0 : DT_PBLOCK;                           \
            const uint8_t *p = s + i0 * sizeof(STYPE);                                          \
            for (size_t i = 0; i < m; i++) {                                                    \
                STYPE x;                                                                        \
                memcpy(&x, p + i * sizeof(STYPE), sizeof x);                                   \
                codes[i] = (uint8_t)((CODE)&mask);                                              \
            }                                                                                   \
            const size_t m8 = (m + 7) & ~(size_t)7;                                             \
            memset(codes + m, 0, m8 - m);                                                       \
            dt_ppack(packed, codes, m8 * (size_t)db / 8, db);                                   \
            memcpy(d + i0 * (size_t)db / 8, packed, (m * (size_t)db + 7) / 8);                  \
        }                                                                                       \
    }
#define ISUB_S(x) dt_psel(satm, (uint32_t)CLAMP_S((int32_t)(x), lo, hi), (uint32_t)(x))
#define ISUB_U(x) dt_psel(satm, CLAMP_U((uint32_t)(x), (uint32_t)hi), (uint32_t)(x))
/* 64-bit sources: the clamp through the halves (sat_s64 / sat_u64 with run-time limits) */
INLINE uint32_t code_s64(uint64_t x, uint32_t satm, int bits, int ds)
{
    return dt_psel(satm, sat_s64((uint32_t)(x >> 32), (uint32_t)x, bits, ds), (uint32_t)x);
}
INLINE uint32_t code_u64(uint64_t x, uint32_t satm, int bits, int ds)
{
    return dt_psel(satm, sat_u64((uint32_t)(x >> 32), (uint32_t)x, bits, ds), (uint32_t)x);
}
ISUB_KERNEL(i8, int8_t, ISUB_S(x))
ISUB_KERNEL(u8, uint8_t, ISUB_U(x))
ISUB_KERNEL(i16, int16_t, ISUB_S(x))
ISUB_KERNEL(u16, uint16_t, ISUB_U(x))
ISUB_KERNEL(i32, int32_t, ISUB_S(x))
ISUB_KERNEL(u32, uint32_t, ISUB_U(x))
ISUB_KERNEL(i64, uint64_t, code_s64(x, satm, bits, ds))
ISUB_KERNEL(u64, uint64_t, code_u64(x, satm, bits, ds))
static const dt_kernel_fn isub_fns[8] = {isub_i8,  isub_u8,  isub_i16, isub_u16,
                                         isub_i32, isub_u32, isub_i64, isub_u64};

/* Wrapping into packed integers keeps the low bits, and dt_ppack takes them from each code byte
 * as it is: whole blocks of 8-bit sources are packed straight from the source; wider sources
 * through their low bytes (a truncation the compiler vectorises). */
#define ISUBW_KERNEL(W, STYPE)                                                                  \
    static void isubw_##W(const dt_kernel *k, void *dst, const void *src, size_t begin,         \
                          size_t end)                                                           \
    {                                                                                           \
        const int db = k->df->stride_bits;                                                      \
        const uint8_t *s = (const uint8_t *)src + begin * sizeof(STYPE);                        \
        uint8_t *d = (uint8_t *)dst + begin * (size_t)db / 8;                                   \
        _Alignas(64) uint8_t codes[DT_PBLOCK], packed[DT_PBLOCK];                               \
        const size_t n = end - begin;                                                           \
        for (size_t i0 = 0; i0 < n; i0 += DT_PBLOCK) {                                          \
            const size_t m = n - i0 < DT_PBLOCK ? n - i0 : DT_PBLOCK;                           \
            const uint8_t *p = s + i0 * sizeof(STYPE);                                          \
            if (sizeof(STYPE) == 1 && m % 8 == 0) {                                             \
                dt_ppack(d + i0 * (size_t)db / 8, p, m * (size_t)db / 8, db);                   \
                continue;                                                                       \
            }                                                                                   \
            for (size_t i = 0; i < m; i++) {                                                    \
                STYPE x;                                                                        \
                memcpy(&x, p + i * sizeof(STYPE), sizeof x);                                   \
                codes[i] = (uint8_t)x;                                                          \
            }                                                                                   \
            const size_t m8 = (m + 7) & ~(size_t)7;                                             \
            memset(codes + m, 0, m8 - m);                                                       \
            dt_ppack(packed, codes, m8 * (size_t)db / 8, db);                                   \
            memcpy(d + i0 * (size_t)db / 8, packed, (m * (size_t)db + 7) / 8);                  \
        }                                                                                       \
    }
ISUBW_KERNEL(8, uint8_t)
ISUBW_KERNEL(16, uint16_t)
ISUBW_KERNEL(32, uint32_t)
ISUBW_KERNEL(64, uint64_t)
static const dt_kernel_fn isubw_fns[4] = {isubw_8, isubw_16, isubw_32, isubw_64};

/* Integers -> bool: nonzero (the signedness does not matter) */
SIMPLE_KERNEL(ib_8, uint8_t, uint8_t, (uint8_t)(MASK(x != 0) & 1))
SIMPLE_KERNEL(ib_16, uint16_t, uint8_t, (uint8_t)(MASK(x != 0) & 1))
SIMPLE_KERNEL(ib_32, uint32_t, uint8_t, (uint8_t)(MASK(x != 0) & 1))
SIMPLE_KERNEL(ib_64, uint64_t, uint8_t, (uint8_t)(MASK(((uint32_t)(x >> 32) | (uint32_t)x) != 0) & 1))
static const dt_kernel_fn ib_fns[4] = {ib_8, ib_16, ib_32, ib_64};

/* Packed integers of one width, wrapping (int4 <-> uint4, int2 <-> uint2): the same bits, the
 * last byte's padding codes cleared. */
static void pcopy_run(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end)
{
    const size_t sb = (size_t)k->sf->stride_bits, bits = (end - begin) * sb;
    uint8_t *d = (uint8_t *)dst + begin * sb / 8;
    const uint8_t *s = (const uint8_t *)src + begin * sb / 8;
    memmove(d, s, bits / 8);
    if (bits % 8) /* the codes of a partial last byte, padding 0 */
        d[bits / 8] = (uint8_t)(s[bits / 8] & ((1u << (bits % 8)) - 1));
}

/* 0..7 for int8, uint8, int16, uint16, int32, uint32, int64, uint64; -1 otherwise */
static int int_slot(const dt_format *f)
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

/* ---- integers -> floats (exact ones; the rounding ones are in portable_int_float.c) --------- */
/* 8-bit integers are exact in every float of at least 8 significant bits: float16 and bfloat16
 * from the float32 bits (rebiased; truncated) */
INLINE uint32_t small_f16(float f)
{
    const uint32_t b = dt_bits_of_f32(f), a = b & 0x7FFFFFFFu;
    return ((b >> 16) & 0x8000u) | (((a >> 13) - (112u << 10)) & MASK(a != 0));
}
SIMPLE_KERNEL(if_i8_f32, int8_t, float, (float)x)
SIMPLE_KERNEL(if_u8_f32, uint8_t, float, (float)x)
SIMPLE_KERNEL(if_i8_f64, int8_t, double, (double)x)
SIMPLE_KERNEL(if_u8_f64, uint8_t, double, (double)x)
SIMPLE_KERNEL(if_i8_f16, int8_t, uint16_t, (uint16_t)small_f16((float)x))
SIMPLE_KERNEL(if_u8_f16, uint8_t, uint16_t, (uint16_t)small_f16((float)x))
SIMPLE_KERNEL(if_i8_bf16, int8_t, uint16_t, (uint16_t)(dt_bits_of_f32((float)x) >> 16))
SIMPLE_KERNEL(if_u8_bf16, uint8_t, uint16_t, (uint16_t)(dt_bits_of_f32((float)x) >> 16))
SIMPLE_KERNEL(if_i16_f32, int16_t, float, (float)x)
SIMPLE_KERNEL(if_u16_f32, uint16_t, float, (float)x)
SIMPLE_KERNEL(if_i16_f64, int16_t, double, (double)x)
SIMPLE_KERNEL(if_u16_f64, uint16_t, double, (double)x)
SIMPLE_KERNEL(if_i32_f64, int32_t, double, (double)x)
/* (clang converts uint32 as (2^52 + x) - 2^52: -0 for 0 when the caller rounds downward) */
SIMPLE_KERNEL(if_u32_f64, uint32_t, uint64_t, dt_bits_of_f64((double)x) & DT_PMASK64(x != 0))

/* ---- parameters of the narrowing template ---------------------------------------------------- */
static bool narrow_setup(dt_narrow *n, const dt_format *df, const dt_format *lane,
                         const dt_rules *r, bool allow_unsigned)
{
    memset(n, 0, sizeof *n);
    if (df->tc == DT_TC_BOOL)
        return true;
    if (df->tc == DT_TC_SINT || df->tc == DT_TC_UINT) {
        const bool sg = df->tc == DT_TC_SINT;
        n->imask = df->bits >= 32 ? 0xFFFFFFFFu : (1u << df->bits) - 1;
        n->imax = sg ? n->imask >> 1 : n->imask;
        n->imin_mag = sg ? (n->imask >> 1) + 1 : 0;
        n->isat = r->saturate_int ? ~0u : 0;
        return true;
    }
    if (df->tc == DT_TC_E8M0) {
        n->maxc = (r->saturate_float || dt_mag_down(r->round, false)) ? 0xFE : 0xFF;
        return true;
    }
    /* a float without a sign bit (float8e5m3fnu) takes a negative value to NaN or 0: only the
     * template's callers know that step (dt_narrow_setup_unsigned) */
    const bool no_sign = !dt_float_has_sign(df);
    if (df->tc != DT_TC_FLOAT || df->bits > 16 || df->man_bits >= lane->man_bits ||
        (no_sign && !allow_unsigned))
        return false;
    n->ec_hi = (uint32_t)(df->bias <= lane->bias ? 1 + lane->bias - df->bias : 1);
    n->up = (uint32_t)(df->bias > lane->bias ? df->bias - lane->bias : 0);
    n->s1 = n->ec_hi + (uint32_t)(lane->man_bits - df->man_bits);
    n->maxc = (uint32_t)dt_float_max_code(df);
    n->sign = no_sign ? 0 : 1u << (df->bits - 1);
    n->keep_neg_zero = dt_float_has_neg_zero(df) ? ~0u : 0;
    if (no_sign) { /* the codes of -1 and -Inf stand for every negative finite value and -Inf */
        dt_value v;
        n->no_sign = ~0u;
        dt_decode(dt_format_of(DTCAST_FLOAT32), 0xBF800000u, &v);
        n->neg_fin = (uint32_t)dt_encode(df, &v, r);
        dt_decode(dt_format_of(DTCAST_FLOAT32), 0xFF800000u, &v);
        n->neg_inf = (uint32_t)dt_encode(df, &v, r);
    }
    for (int neg = 0; neg < 2; neg++) {
        /* fnuz NaN 0x80 is the sign bit alone: as a "magnitude" it survives the sign OR */
        const uint32_t nan_mag = dt_float_has_nan(df)
                                     ? (uint32_t)dt_float_nan_code(df, true) & (n->sign | (n->sign - 1))
                                     : 0;
        const uint32_t nan_or_inf =
            dt_float_has_inf(df) ? (uint32_t)dt_float_inf_code(df, false)
            : dt_float_has_nan(df) ? (df->nan == DT_NAN_FNUZ ? n->sign : nan_mag & (n->sign - 1))
                                   : n->maxc;
        n->ovf[neg] = (r->saturate_float || dt_mag_down(r->round, neg)) ? n->maxc : nan_or_inf;
        n->inf[neg] = r->saturate_float ? n->maxc : nan_or_inf;
        if (dt_float_has_nan(df))
            n->nan[neg] = (uint32_t)dt_float_nan_code(df, neg);
        else if (r->nan_as_max)
            n->nan[neg] = n->maxc;
        else
            n->nan[neg] = neg ? 0 : n->sign; /* float4e2m1: +NaN -> 0x8, -NaN -> 0x0 */
    }
    return true;
}

bool dt_narrow_setup(dt_narrow *n, const dt_format *df, const dt_format *lane, const dt_rules *r)
{
    return narrow_setup(n, df, lane, r, false);
}

bool dt_narrow_setup_unsigned(dt_narrow *n, const dt_format *df, const dt_format *lane,
                              const dt_rules *r)
{
    return narrow_setup(n, df, lane, r, true);
}

/* ---- the portable kernel of a pair --------------------------------------------------------- */
#define SET(f)                                                                                  \
    do {                                                                                        \
        k->fn = (f);                                                                            \
        return true;                                                                            \
    } while (0)

/* The kernel of a source of at most 8 bits, given its 256-entry table k->table. */
static bool find_table8(dt_kernel *k, const dt_format *df, const dt_format *sf,
                        const dt_rules *r, size_t count)
{
    if (dt_ppair_find(k, df, sf, r, count))
        return true;
    const unsigned sb = (unsigned)sf->stride_bits, db = (unsigned)df->stride_bits;
    if (sb == 8) {
        if (db < 8) {
            /* a pair table costs ~40 us to build: worth it from about a million elements */
            const void *pair = NULL;
            if (k->table != k->local &&
                (count >= ((size_t)1 << 20) || dt_table_pair_ready(df, sf, r)))
                pair = dt_table_pair_get(df, sf, r);
            if (pair) {
                memcpy(k->local, &pair, sizeof pair);
                SET(db == 4 ? table8_pair4 : db == 2 ? table8_pair2 : table8_pair1);
            }
            if (db == 4)
                SET(table8_sub4);
            if (k->table == k->local) /* no room for the shifted copies: the cache is full */
                SET(table_sub_any);
            shifted_tables(k->local, k->table, db);
            SET(db == 2 ? table8_sub2 : table8_sub1);
        }
        static const dt_kernel_fn whole[4] = {table8_w1, table8_w2, table8_w4, table8_w8};
        const unsigned w = db / 8;
        SET(whole[w == 1 ? 0 : w == 2 ? 1 : w == 4 ? 2 : 3]);
    }
    const unsigned per = 8 / sb, ebits = per * db;
    /* an expanded table of whole source bytes, in the local bytes (unless the base table is
     * there already: the table cache was full) */
    if (k->table != k->local && ebits <= 64) {
        expand_table(k->local, k->table, sb, db);
        if (ebits >= 8)
            SET(table_sub_expanded);
        SET(sb == 2 ? table_pack2_1 : db == 2 ? table_pack4_2 : table_pack4_1);
    }
    if (db >= 8)
        SET(sub_plain[log2_small(sb)][log2_small(db / 8)]);
    SET(table_sub_any);
}

/* ---- the registry entries, in the finder's order ------------------------------------------- */
static bool is_int(const dt_format *f) { return f->tc == DT_TC_SINT || f->tc == DT_TC_UINT; }

/* integers of one width whose bits do not change */
static bool e_copy(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                   size_t count)
{
    (void)count;
    k->compute_bound = true;
    if (is_int(sf) && is_int(df) && sf->stride_bits == df->stride_bits &&
        (!r->saturate_int || sf == df))
        SET(sf->stride_bits >= 8 ? copy_run : pcopy_run);
    return false;
}

/* integers -> integers (packed ones too), integers -> bool */
static bool e_int(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                  size_t count)
{
    (void)count;
    const int is = int_slot(sf), id = int_slot(df);
    k->compute_bound = true;
    if (is >= 0 && id >= 0)
        k->fn = r->saturate_int ? ii_sat[is][id] : ii_wrap[is][id / 2];
    else if (is >= 0 && is_int(df) && df->stride_bits < 8)
        k->fn = r->saturate_int ? isub_fns[is] : isubw_fns[is / 2];
    else if (is >= 0 && df->tc == DT_TC_BOOL)
        k->fn = ib_fns[is / 2];
    return k->fn != NULL;
}

/* 8-bit integers -> floats: exact */
static bool e_int8_float(dt_kernel *k, const dt_format *df, const dt_format *sf,
                         const dt_rules *r, size_t count)
{
    (void)r, (void)count;
    const int is = int_slot(sf);
    k->compute_bound = true;
    if (is != 0 && is != 1)
        return false;
    switch (df->type) {
    case DTCAST_FLOAT32: SET(is ? if_u8_f32 : if_i8_f32);
    case DTCAST_FLOAT64: SET(is ? if_u8_f64 : if_i8_f64);
    case DTCAST_FLOAT16: SET(is ? if_u8_f16 : if_i8_f16);
    case DTCAST_BFLOAT16: SET(is ? if_u8_bf16 : if_i8_bf16);
    default: return false;
    }
}

/* Lookup tables: sources of at most 8 bits through a 256-entry table (or a pair table:
 * portable_pair.c); 16-bit sources into targets of at most 8 bits through the 64 KiB table once
 * built, into 16 bits through 128 KiB (they beat the computed kernels here, about 2x), except
 * float16/bfloat16 -> bool (the narrowing kernels'); float32 and float64 into narrow floats
 * through bfloat16 rounded to odd and its table (about 2x the narrowing kernels). One entry: the
 * cache of tables, once full,
 * gives no 64 KiB table, and the tests then see none. */
static bool e_table(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                    size_t count)
{
    k->compute_bound = true;
    if (sf->stride_bits <= 8) {
        k->table = dt_table_get(df, sf, r);
        if (!k->table && count >= 256) /* the cache is full: this call's own table */
            k->table = dt_table_build_into(k->local, df, sf, r);
        return k->table && find_table8(k, df, sf, r, count);
    }
    /* float32 and float64 through bfloat16 rounded to odd (ODD16_RUN) */
    const dtcast_type s = sf->type;
    const bool few = (df->tc == DT_TC_FLOAT && df->man_bits <= 5) ||
                     (df->tc == DT_TC_E8M0 && s != DTCAST_FLOAT64);
    const dt_kernel_fn odd = !few ? NULL
                             : s == DTCAST_FLOAT32 ? f32_table16_run
                             : s == DTCAST_FLOAT64 ? f64_table16_run : NULL;
    const dt_format *ts = odd ? dt_format_of(DTCAST_BFLOAT16) : sf;
    /* 16 -> 16 bits: 128 KiB built from about a million elements (the build costs ~1 ms); a
     * float without a sign bit (float8e5m3fnu) has no narrowing kernel to fall back on, only the
     * reference path (10x slower): its table is built at the first call, whatever the count */
    const bool w2 = sf->stride_bits == 16 && df->stride_bits == 16;
    const bool only_tables = df->tc == DT_TC_FLOAT && !dt_float_has_sign(df);
    if ((sf->stride_bits != 16 && !odd) || (df->stride_bits > 8 && !w2) ||
        dt_tables16_disabled() || (df->tc == DT_TC_BOOL && sf->tc == DT_TC_FLOAT) ||
        (count < (w2 ? (size_t)1 << 20 : 16384) && !only_tables && !dt_table_ready(df, ts, r)))
        return false;
    k->table = dt_table_get(df, ts, r);
    if (k->table)
        SET(w2 ? table16_w2_run : odd ? odd : table16_run);
    return false;
}

/* floats -> narrow floats, e8m0, integers of 1..16 bits, bool (portable_narrow.c) */
static bool e_narrow(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                     size_t count)
{
    (void)count;
    dt_pnarrow pn;
    k->compute_bound = true;
    k->fn = dt_pnarrow_pick(df, sf, r, &pn);
    _Static_assert(sizeof pn <= sizeof k->local, "the constants fit the kernel's bytes");
    memcpy(k->local, &pn, sizeof pn);
    return k->fn != NULL;
}

/* float32 -> float16 in rne, float64 -> narrow floats by the float unit (portable_fpu.c) */
static bool e_fpu(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                   size_t count)
{
    (void)count;
    k->compute_bound = true;
    return dt_pfpu_find(k, df, sf, r);
}

/* float16/bfloat16/float32 -> wider floats (exact), float64 -> float32 */
static bool e_float(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                    size_t count)
{
    (void)count;
    const dtcast_type s = sf->type, d = df->type;
    const bool sat = r->saturate_float;
    k->compute_bound = true;
    if (d == DTCAST_FLOAT32 && s == DTCAST_FLOAT16)
        SET(sat ? w_f16_f32_sat : w_f16_f32);
    if (d == DTCAST_FLOAT32 && s == DTCAST_BFLOAT16)
        SET(sat ? w_bf16_f32_sat : w_bf16_f32);
    if (d == DTCAST_FLOAT64 && s == DTCAST_FLOAT32)
        SET(sat ? w_f32_f64_sat : w_f32_f64);
    if (d == DTCAST_FLOAT64 && s == DTCAST_FLOAT16)
        SET(sat ? w_f16_f64_sat : w_f16_f64);
    if (d == DTCAST_FLOAT64 && s == DTCAST_BFLOAT16)
        SET(sat ? w_bf16_f64_sat : w_bf16_f64);
    if (d == DTCAST_FLOAT32 && s == DTCAST_FLOAT64)
        SET(dt_pf64_f32_fenv);
    return false;
}

/* integers of 16 bits and more -> float32/float64: exact ones here; 32- and 64-bit ones into
 * every float of at most 64 bits, float8e8m0 (portable_int_float.c) */
static bool e_int_float(dt_kernel *k, const dt_format *df, const dt_format *sf,
                        const dt_rules *r, size_t count)
{
    (void)count;
    const int is = int_slot(sf);
    const dtcast_type d = df->type;
    k->compute_bound = true;
    if ((is == 2 || is == 3) && (d == DTCAST_FLOAT32 || d == DTCAST_FLOAT64)) {
        static const dt_kernel_fn exact[2][2] = {{if_i16_f32, if_i16_f64}, {if_u16_f32, if_u16_f64}};
        SET(exact[is - 2][d == DTCAST_FLOAT64]);
    }
    if ((is == 4 || is == 5) && d == DTCAST_FLOAT64)
        SET(is == 4 ? if_i32_f64 : if_u32_f64);
    return dt_pint_float_find(k, df, sf, r);
}

/* float64 -> integers, float32/bfloat16/float16 -> 32- and 64-bit integers
 * (portable_fint.c) */
static bool e_float_int(dt_kernel *k, const dt_format *df, const dt_format *sf,
                        const dt_rules *r, size_t count)
{
    (void)count;
    k->compute_bound = true;
    return dt_pfloat_int_find(k, df, sf, r);
}

const dt_kernel_entry dt_entries_portable[] = {
    {"portable integers: same-width copy", DT_ISA_PORTABLE, e_copy},
    {"portable integers: int <-> int, into packed ints and bool", DT_ISA_PORTABLE, e_int},
    {"portable 8-bit integers -> floats", DT_ISA_PORTABLE, e_int8_float},
    {"portable tables: <= 8-bit sources, 16-bit ones into <= 8 bits", DT_ISA_PORTABLE, e_table},
    {"portable float32 -> float16, float64 -> narrow floats by the float unit", DT_ISA_PORTABLE, e_fpu},
    {"portable narrowing: floats -> narrow floats, ints of <= 16 bits", DT_ISA_PORTABLE, e_narrow},
    {"portable float widenings, float64 -> float32", DT_ISA_PORTABLE, e_float},
    {"portable int -> float", DT_ISA_PORTABLE, e_int_float},
    {"portable float -> int", DT_ISA_PORTABLE, e_float_int},
    {NULL, DT_ISA_PORTABLE, NULL},
};
