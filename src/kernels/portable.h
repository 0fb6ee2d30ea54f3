/* The portable kernels' shared pieces (portable*.c): plain C
 * that gcc and clang vectorise (see the Makefile's PORTABLE_OPT). Every element loop is
 * branch-free over the format parameters: selects, shifts by loop invariants, and float
 * arithmetic only where it is exact (so the caller's rounding mode and flush-to-zero settings
 * never matter: no operand and no result of a float operation here is subnormal, except where a
 * flushed result is harmless and said so). The exceptions read the environment at each call and
 * never depend on it: portable_f64.c converts in a rounding mode it sets, where nothing is
 * flushed; portable_int_float.c uses the hardware's conversion where it rounds to nearest
 * (tests/test_fenv.c runs the kernels under every mode and flushing setting a caller can set). */
#ifndef DTCAST_KERNELS_PORTABLE_H
#define DTCAST_KERNELS_PORTABLE_H

#include "kernels.h"
#include "scalar.h" /* dt_f32_of_bits and the other bit casts */

#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define DT_LE 1 /* little-endian: codes can be assembled into wide words and stored at once */
#endif
/* 64-bit elements as two 32-bit halves, in memory order (gcc vectorises 32-bit lanes with
 * interleaved loads and stores; selects between 64-bit values on 32-bit conditions it does not) */
#if defined(DT_LE)
#define HALF_LO 0
#define HALF_HI 1
#else
#define HALF_LO 1
#define HALF_HI 0
#endif

/* Table lookups are scalar: gcc's vectorised version of them (element loads, lane inserts) is
 * slower here than the plain loads and 8-byte stores. */
#if defined(__GNUC__) && !defined(__clang__)
#define DT_NOVEC __attribute__((optimize("no-tree-vectorize")))
#else
#define DT_NOVEC
#endif

/* Elements per block: each kernel converts a block into a local array, then copies it out, so the
 * loops see no aliasing and an in-place call reads each block whole before writing it. */
#define DT_PBLOCK 256

#define DT_PINLINE static inline __attribute__((always_inline))
/* Conditions as all-ones masks: gcc vectorises these, not 0/1 values combined with & (it turns
 * those into bool arithmetic, which it does not vectorise). */
#define DT_PMASK(c) ((c) ? ~0u : 0u)
#define DT_PMASK64(c) ((c) ? ~UINT64_C(0) : UINT64_C(0))
/* The software prefetch of a loop whose iterations read step bytes from p on (kernels.h's
 * dt_prefetch_span), issued once per 64-byte line: the table loops without it ran 1.3-1.5x
 * slower out of L2 on the Intel Xeon (BENCHMARKS.md, issue 32). */
DT_PINLINE void dt_pprefetch_step(const uint8_t *p, size_t step)
{
    if (step >= 64 || ((uintptr_t)p & 63) < step)
        dt_prefetch_span(p, step);
}
/* m ? a : b for a mask m, bitwise: chains of these stay branch-free (chains of ?: can become
 * multi-way branches that gcc then cannot if-convert). */
DT_PINLINE uint32_t dt_psel(uint32_t m, uint32_t a, uint32_t b) { return (a & m) | (b & ~m); }
DT_PINLINE uint64_t dt_psel64(uint64_t m, uint64_t a, uint64_t b) { return (a & m) | (b & ~m); }


/* The rounding of a normal-range result of the narrowing kernels (portable_narrow.c,
 * portable_int_float.c): vn, the target's biased exponent above the significand, shifted right
 * by d and rounded per mode (M_*); hm1 = 2^(d-1) - 1, dmask = 2^d - 1, negm all ones for a
 * negative value. A carry moves into the exponent. */
DT_PINLINE uint32_t dt_pround_shift(uint32_t vn, uint32_t d, uint32_t hm1, uint32_t dmask,
                                    uint32_t negm, int mode)
{
    switch (mode) {
    case M_RNE: return (vn + hm1 + ((vn >> d) & 1)) >> d;
    case M_RNA: return (vn + hm1 + 1) >> d;
    case M_FLOOR: return (vn + (dmask & negm)) >> d;
    case M_CEIL: return (vn + (dmask & ~negm)) >> d;
    case M_TRUNC: return vn >> d;
    default: return (vn >> d) | (DT_PMASK((vn & dmask) != 0) & 1);
    }
}

/* The constants of a narrowing kernel (portable_narrow.c), kept in the kernel's local bytes. */
typedef struct dt_pnarrow dt_pnarrow;
typedef void (*dt_pblock_fn)(void *out, const uint8_t *src, size_t n, const dt_pnarrow *p);
struct dt_pnarrow {
    dt_pblock_fn block; /* codes of n <= DT_PBLOCK elements into out (uint8/16/32 array) */
    int obits;          /* the destination's stride bits */
    int sbytes;         /* source bytes per element */
    /* float targets */
    uint32_t d, hm1, dmask; /* the shift of a normal result (23 - M), 2^(d-1) - 1, 2^d - 1 */
    uint32_t vn_off;        /* (ec_hi - 1) << 23: a - vn_off keeps the target's exponent */
    uint32_t ksub;          /* (B + M - 1) << 23: a + ksub is |x| in units of the subnormal quantum */
    int32_t sub_lim;        /* lane exponents below it give target subnormals (0: none) */
    int32_t maxc;
    uint32_t ovf0, ovfx, inf0, infx, nan0, nanx; /* by sign: c0, c0 ^ c1 */
    uint32_t sign;                               /* the target's sign bit */
    /* integer targets */
    uint32_t imask, imax, isat;
    uint32_t limf0, limfx; /* the limits as float bits, by sign (saturating targets of <= 16 bits) */
    dt_pblock_fn inner;    /* portable_fpu.c: the float32 block after the float64 step */
    dt_pblock_fn outer;    /* portable_fpu.c: the float64 block after gathering complex128 parts */
};

/* The portable narrowing kernel for sf -> df under r (float32/float16/bfloat16/float64 sources),
 * its constants written into *p; NULL when there is none. */
dt_kernel_fn dt_pnarrow_pick(const dt_format *df, const dt_format *sf, const dt_rules *r,
                             dt_pnarrow *p);

/* Runs the narrowing kernel of constants *p (its block function) over elements [begin, end)
 * (portable_narrow.c). */
void dt_pnarrow_run(const dt_pnarrow *p, void *dst, const void *src, size_t begin, size_t end);
/* dt_pfpu_find (portable_fpu.c): in kernels.h, as compose.c calls it too. */

/* Packs codes c (one per byte, within obits = 1, 2 or 4 bits) into bytes of packed output, element
 * 2k in the low nibble as ONNX (portable_narrow.c). */
void dt_ppack(uint8_t *o, const uint8_t *c, size_t bytes, int obits);
/* float64 -> float32 under r (portable_narrow.c). */
void dt_pf64_f32(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end);
/* The same by the hardware's conversion in a rounding mode it sets, where the environment does
 * not flush subnormals (else, and for ties away from zero, dt_pf64_f32) (portable_f64.c). */
void dt_pf64_f32_fenv(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end);
/* Integers of 32 or 64 bits (sf) -> float32, float64, floats of at most 16 bits and float8e8m0
 * (df) under r (portable_int_float.c): fills k (its function, constants in k->local) and returns
 * true, or returns false. */
bool dt_pint_float_find(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r);

/* The float -> integer kernel for sf -> df under r (portable_fint.c): float64 into every
 * integer, float32/bfloat16/float16 into integers of 32 and 64 bits; fills k (its constants in
 * k->local) and returns true, or returns false. */
bool dt_pfloat_int_find(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r);

/* Pair tables (tables.c): 65536 entries indexed by two source bytes (the first in the low byte),
 * each the output of their elements at the destination's bits, packed, in 1 byte (<= 8 bits) or
 * 2; cached like the 256-entry tables (NULL when the cache is full). Their entries' bits for
 * sf -> df (2, 4, 8 or 16), or 0 when there is no pair table (more bits, or a side above 8). */
unsigned dt_table_pair_bits(const dt_format *df, const dt_format *sf);
const void *dt_table_pair_get(const dt_format *df, const dt_format *sf, const dt_rules *r);
/* The same for a pair table that is only somewhat faster than the byte table (8-bit codes into 8
 * bits, portable_pair.c): built while the pair tables fill at most half their budget, so that a
 * process converting many pairs keeps room for the much faster ones (NULL beyond). */
const void *dt_table_pair_get_some(const dt_format *df, const dt_format *sf, const dt_rules *r);
bool dt_table_pair_ready(const dt_format *df, const dt_format *sf, const dt_rules *r);
/* The pair-table kernel of a source of at most 8 bits whose 256-entry table is k->table (not in
 * k->local), for count elements (portable_pair.c): fills k (the pair table's address in
 * k->local) and returns true, or returns false. */
bool dt_ppair_find(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                   size_t count);
/* Elements [i, end) one at a time through the 256-entry table k->table; i starts a destination
 * byte (portable.c). */
void dt_ptable_tail(const dt_kernel *k, uint8_t *d, const uint8_t *s, size_t i, size_t end);

#endif
