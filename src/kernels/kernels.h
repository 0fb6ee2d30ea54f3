/* Fast paths: conversions that give exactly the reference path's bits, faster. */
#ifndef DTCAST_KERNELS_H
#define DTCAST_KERNELS_H

#include "internal.h"

/* ---- instruction sets ------------------------------------------------------------------------ */
typedef enum dt_isa {
    DT_ISA_PORTABLE = 0, /* plain C, always built and tested */
    DT_ISA_SSE2 = 1,     /* x86-64 baseline: runs the portable kernels (compiled with SSE2) */
    DT_ISA_AVX2 = 2,     /* AVX2 + F16C + FMA */
    DT_ISA_AVX512 = 3    /* AVX-512 F/BW/VL/DQ/VBMI (+ BF16 where present) */
} dt_isa;

/* Best ISA this CPU (and OS, via xgetbv) supports. */
dt_isa dt_isa_detected(void);
/* ISA the kernels use: min(detected, DTCAST_ISA env var, dt_isa_pin). */
dt_isa dt_isa_active(void);
/* Pins the ISA for tests (-1 unpins). Not meant to race with running conversions. */
void dt_isa_pin(int isa);
const char *dt_isa_name(dt_isa isa);
/* Tests: when set, 16-bit sources never use a 64 KiB table (so the computed kernels run). */
void dt_tables16_disable(bool off);
bool dt_tables16_disabled(void);

/* ---- rounding modes --------------------------------------------------------------------------- */
/* The kernels' one numbering of the rounding modes: dtcast_round less DTCAST_ROUND_RNE (the rules
 * never hold DTCAST_ROUND_DEFAULT), so that a mode indexes a row of per-mode kernels. */
enum { M_RNE, M_RNA, M_FLOOR, M_CEIL, M_TRUNC, M_ODD, M_MODES };
_Static_assert(DTCAST_ROUND_ODD - DTCAST_ROUND_RNE == M_ODD, "the modes keep their order");
/* The kernel mode of a rule set's rounding, or -1 for a mode the kernels do not know. */
static inline int dt_mode_of(dtcast_round round)
{
    const unsigned m = (unsigned)round - (unsigned)DTCAST_ROUND_RNE;
    return m < M_MODES ? (int)m : -1;
}

/* ---- kernels --------------------------------------------------------------------------------- */
typedef struct dt_kernel dt_kernel;
typedef void (*dt_kernel_fn)(const dt_kernel *k, void *dst, const void *src, size_t begin,
                             size_t end);

/* Rounding constants of a float-bits -> narrow code conversion (see kernels_tmpl.h). The lanes
 * hold a float format of Ml significand bits and bias Bl (float32, or the 16-bit source); the
 * target has M significand bits and bias B. */
typedef struct dt_narrow {
    uint32_t s1;       /* shift of a lane whose clamped exponent is 0: ec_hi + Ml - M */
    uint32_t ec_hi;    /* the lane exponent is clamped to [1, ec_hi] (max(1, 1 + Bl - B)) */
    uint32_t up;       /* B - Bl when the target's bias is the larger, else 0 */
    uint32_t maxc;     /* largest finite magnitude code */
    uint32_t ovf[2];   /* magnitude code on overflow, by sign (+, -) */
    uint32_t inf[2];   /* magnitude code of an infinite input, by sign */
    uint32_t nan[2];   /* whole code of a NaN input, by sign */
    uint32_t sign;     /* the sign bit of the target (0: the target ignores the sign) */
    uint32_t keep_neg_zero; /* all ones when -0 exists, else 0 */
    /* a float without a sign bit (float8e5m3fnu; dt_narrow_setup_unsigned): all ones, and the
     * whole codes of a negative nonzero finite input and of -Inf (docs/conversion.md) */
    uint32_t no_sign, neg_fin, neg_inf;
    /* integer targets */
    uint32_t imask;    /* 2^bits - 1 */
    uint32_t imax;     /* largest positive value */
    uint32_t imin_mag; /* magnitude of the most negative value (0 for unsigned) */
    uint32_t isat;     /* all ones for the saturating policy */
} dt_narrow;

struct dt_kernel {
    dt_kernel_fn fn;
    bool stream;       /* a large output: blocks go through L1 and streaming stores (stream.c) */
    bool nt_capable;   /* set by the entry: the kernel can store non-temporally itself */
    bool nt;           /* set by the finder: ...and does, instead of stream's L1 blocks */
    bool compute_bound; /* set by the finder: the kernel runs near its compute limit, not memory's */
    const void *table; /* a lookup table, when the kernel uses one */
    const dt_format *df, *sf;
    dt_rules r;
    dt_narrow n;
    struct dt_chain *chain; /* a composed kernel's steps (compose.c), owned: dt_kernel_release */
    const struct dt_kernel_entry *entry; /* the registry entry that set it up (NULL: a chain) */
    _Alignas(64) uint8_t local[256 * 8]; /* a 256-entry table when the cache is full */
};

/* Fills *k with a kernel converting sf -> df under r bit-identically to dt_decode/dt_encode and
 * returns true, or returns false when there is none (then the reference path runs). count is
 * the number of elements to convert (kernels whose set-up costs more than that are skipped). */
bool dt_kernel_find(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                    size_t count);
/* ---- the registry (registry.c) --------------------------------------------------------------
 * Every kernel family is an entry: its instruction set and a set-up that accepts a pair under
 * given rules (filling k: the function, its tables and constants) or declines it. The finder
 * walks the entries best instruction set first and takes the first that accepts; the tests call
 * every entry directly against the reference path; the benchmark times every entry. */
typedef bool (*dt_kernel_setup)(dt_kernel *k, const dt_format *df, const dt_format *sf,
                                const dt_rules *r, size_t count);
typedef struct dt_kernel_entry {
    const char *name; /* "avx2 narrow: float32/16/bfloat16 -> narrow floats, ints" */
    dt_isa isa;
    dt_kernel_setup setup;
} dt_kernel_entry;
/* Entries in the finder's order; NULL past the end. */
const dt_kernel_entry *dt_registry_entry(size_t i);
/* Sets k up by entry e alone (the instruction set is not checked): false if e declines. */
bool dt_registry_setup(const dt_kernel_entry *e, dt_kernel *k, const dt_format *df,
                       const dt_format *sf, const dt_rules *r, size_t count);
/* The first entry of an instruction set in [lo, hi] that accepts the pair (runs nothing). */
bool dt_registry_find(dt_kernel *k, dt_isa lo, dt_isa hi, const dt_format *df,
                      const dt_format *sf, const dt_rules *r, size_t count);
/* Each file's entries, ending with {NULL} */
extern const dt_kernel_entry dt_entries_portable[];
#if defined(__x86_64__) && defined(__GNUC__)
extern const dt_kernel_entry dt_entries_avx2[], dt_entries_avx512[], dt_entries_avx512bf16[],
    dt_entries_avx512fp16[];
/* complex_x86.c: the real -> complex step of compose.c (parts of 16, 32 or 64 bits) for isa
 * (AVX2 or better; NULL below) */
dt_kernel_fn dt_to_complex_x86(dt_isa isa, int part_bits);
/* ... and the complex -> real step: the real parts */
dt_kernel_fn dt_real_part_x86(dt_isa isa, int part_bits);
#endif
/* The entries of DTCAST_ROUND_STOCHASTIC (portable_stochastic.c, stochastic_avx2.c,
 * stochastic_avx512.c): they take such rules only, and every other entry is never shown them
 * (dt_registry_setup), so a kernel that knows nothing of the mode never sees it. */
extern const dt_kernel_entry dt_entries_stochastic[];
#if defined(__x86_64__) && defined(__GNUC__)
extern const dt_kernel_entry dt_entries_stochastic_avx2[], dt_entries_stochastic_avx512[];
extern const dt_kernel_entry dt_entries_widen8_avx2[]; /* widen_f8_avx2.c */
#endif
bool dt_entry_is_stochastic(const dt_kernel_entry *e);

/* Step i of a chain (NULL past the last, or when k is no chain). */
const dt_kernel *dt_kernel_step(const dt_kernel *k, int i);
/* Frees what dt_kernel_find allocated (a composed kernel's steps); k may be reused after. */
void dt_kernel_release(dt_kernel *k);
/* One kernel for the pair of an instruction set in [lo, active], never a chain (the steps of a
 * chain). */
bool dt_kernel_find_direct(dt_kernel *k, const dt_format *df, const dt_format *sf,
                           const dt_rules *r, size_t count, dt_isa lo);
/* A chain of kernels through an exact or odd-rounded lane, and complex as real parts
 * (compose.c); false when no chain covers the pair. */
bool dt_kernel_find_chain(dt_kernel *k, const dt_format *df, const dt_format *sf,
                          const dt_rules *r, size_t count, dt_isa step_isa);
/* float32 -> float16 in rne, float64 -> floats of at most 16 bits and float8e8m0 by the float
 * unit, where the environment rounds to nearest and flushes nothing (else the narrowing kernel)
 * (portable_fpu.c): fills k and returns true, or returns false. complex128 -> the same targets
 * (the real parts) too: the registry never offers complex pairs; compose.c asks for them. */
bool dt_pfpu_find(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r);
/* Whether a chain of vector kernels beats one kernel for the pair under r on isa (compose.c). */
bool dt_chain_preferred(const dt_format *df, const dt_format *sf, const dt_rules *r, dt_isa isa);

/* Converts elements [begin, end); begin is a multiple of 8 (so packed outputs never share a
 * byte between two calls). Padding bits after the last element are the caller's business.
 * In place (dst == src, destination not wider) works: every block reads before it writes. */
void dt_kernel_run_stream(const dt_kernel *k, void *dst, const void *src, size_t begin,
                          size_t end);
static inline void dt_kernel_run(const dt_kernel *k, void *dst, const void *src, size_t begin,
                                 size_t end)
{
    if (k->stream)
        dt_kernel_run_stream(k, dst, src, begin, end);
    else
        k->fn(k, dst, src, begin, end);
}
/* Whether count elements of sf -> df by a kernel (compute-bound or not) make an output to stream
 * (stream.c). */
bool dt_stream_wanted(const dt_format *df, const dt_format *sf, bool compute_bound, size_t count);
/* n bytes from an L1 buffer to dst: aligned 64-byte lines with non-temporal stores, the ends
 * with ordinary ones (memcpy where there are none); dt_stream_fence() before other threads
 * read them */
void dt_copy_stream(void *dst, const void *src, size_t n);
void dt_stream_fence(void);
/* Tests: the output size from which kernels stream (0: the default). Not meant to race. */
void dt_stream_threshold_set(size_t bytes);

/* A block body that takes its rounding mode as a run-time argument (kernels_tmpl.h,
 * portable_narrow.c): one out-of-line copy (gcc would otherwise clone it once per constant mode
 * its callers pass, undoing the sharing). */
#if defined(__clang__)
#define DT_NOCLONE __attribute__((noinline))
#else
#define DT_NOCLONE __attribute__((noinline, noclone))
#endif

/* ---- the memory path (mempath.c, stream.c) ------------------------------------------------- */
/* The CPU's maker and model (cpuid leaves 0 and 1; all zero off x86). */
typedef enum dt_cpu_vendor { DT_CPU_OTHER, DT_CPU_INTEL, DT_CPU_AMD } dt_cpu_vendor;
typedef struct dt_cpu_id {
    dt_cpu_vendor vendor;
    unsigned family, model; /* with the extended fields folded in, as the vendors number them */
} dt_cpu_id;
dt_cpu_id dt_cpu_id_get(void);

/* How large conversions meet memory, chosen once for the CPU (mempath.c: the profiles, each
 * backed by a same-run A/B in BENCHMARKS.md; DTCAST_MEMPATH overrides them for such runs). */
#define DT_STREAM_BLOCK_MAX 16384
typedef struct dt_mempath {
    const char *name;
    uint32_t prefetch_ahead; /* bytes ahead of a streaming loop's reads that it prefetches */
    size_t stream_min;       /* output bytes from which a conversion streams its output */
    uint32_t block_narrow;   /* output bytes per streamed block, narrowing kernels (L1) */
    uint32_t block_wide;     /* ... and kernels whose output is at least as wide as their input */
    uint8_t copy_width;      /* bytes per non-temporal store of the block copy: 16, 32 or 64 */
    bool direct;             /* kernels that can store non-temporally themselves do so */
    uint32_t prefetch_far;   /* a second prefetch this far ahead, into L2 (0: none) */
    bool pair8;              /* portable 8-bit -> 8-bit tables: the 64 Ki-entry pair table
                              * (portable_pair.c; two codes a lookup, from L2) */
} dt_mempath;
const dt_mempath *dt_mempath_get(void);
/* Tests: runs with *m instead (NULL: the CPU's profile again); a copy_width the CPU lacks is
 * the caller's error. Not meant to race with running conversions. */
void dt_mempath_set(const dt_mempath *m);
/* Applies a DTCAST_MEMPATH text ("copy=64,narrow=4096"; see dtcast.1) to *m: the fields it
 * names with valid values; anything else is ignored. */
void dt_mempath_parse(dt_mempath *m, const char *text);

/* Software prefetch of the source, dt_prefetch_ahead bytes (the profile's) ahead of a streaming
 * loop: one per 64-byte line that an iteration reads (the hardware prefetchers alone left
 * single-core streaming 10-40% short of it on AMD Zen, as glibc's large memcpy also
 * prefetches). Prefetches never fault; the address is formed as an integer, so running past
 * the buffer is harmless. Set before any kernel is found (dt_kernel_find). */
extern uint32_t dt_prefetch_ahead, dt_prefetch_far;
static inline void dt_prefetch_span(const void *p, size_t bytes)
{
    const uintptr_t a = (uintptr_t)p + dt_prefetch_ahead, f = (uintptr_t)p + dt_prefetch_far;
    for (size_t o = 0; o < bytes; o += 64) {
        __builtin_prefetch((const void *)(a + o), 0, 3); /* prefetcht0: into L1 */
        if (dt_prefetch_far)
            __builtin_prefetch((const void *)(f + o), 0, 1); /* prefetcht2: into L2 */
    }
}

/* ---- lookup tables (tables.c) ---------------------------------------------------------------- */
/* Table of output codes for every code of an 8-bit-or-narrower source (256 entries of the
 * destination's storage width: 1, 2, 4 or 8 bytes), or of a 16-bit source into a destination of
 * at most 16 bits (65536 entries of 1 or 2 bytes). Built with dt_decode/dt_encode, cached; NULL
 * when the cache is full. */
const void *dt_table_get(const dt_format *df, const dt_format *sf, const dt_rules *r);
/* Builds a 256-entry table into buf (256 * 8 bytes) and returns buf. */
const void *dt_table_build_into(uint8_t *buf, const dt_format *df, const dt_format *sf,
                                const dt_rules *r);
/* Whether dt_table_get would return a table that already exists (no build cost). */
bool dt_table_ready(const dt_format *df, const dt_format *sf, const dt_rules *r);
/* The rules that matter for a destination: others are reset so that equal tables share. */
void dt_rules_normalize(const dt_format *df, const dt_rules *r, dt_rules *out);

/* ---- per-ISA finders ------------------------------------------------------------------------- */
/* The constants for df under r on lanes holding the float format lane (float32 or the 16-bit
 * source); false when the template has no such conversion. */
bool dt_narrow_setup(dt_narrow *n, const dt_format *df, const dt_format *lane, const dt_rules *r);
/* The same, and floats without a sign bit too (no_sign: kernels_tmpl.h's narrowing template
 * gives their negative inputs neg_fin / neg_inf; the portable kernels have no such step). */
bool dt_narrow_setup_unsigned(dt_narrow *n, const dt_format *df, const dt_format *lane,
                              const dt_rules *r);
#if defined(__x86_64__) && defined(__GNUC__)
#define DT_HAVE_X86 1
bool dt_cpu_has_avx512bf16(void);
/* AVX512-FP16 (vcvtpd2ph and the other float16 instructions; kernels_avx512fp16.c) */
bool dt_cpu_has_avx512fp16(void);
/* float32 <-> float16, bfloat16 -> float32, 8- and 16-bit integers -> float16/bfloat16, with F16C
 * (kernels_avx2_half.c) */
bool dt_half_find_avx2(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                       size_t count);
/* int64/uint64 -> float16/bfloat16 in one pass on AVX2 (kernels_avx2_half.c) */
bool dt_i64_half_find_avx2(dt_kernel *k, const dt_format *df, const dt_format *sf,
                           const dt_rules *r, size_t count);
/* int32/uint32 -> float16/bfloat16 in one pass on AVX2 (kernels_avx2_half.c) */
bool dt_i32_half_find_avx2(dt_kernel *k, const dt_format *df, const dt_format *sf,
                           const dt_rules *r, size_t count);
/* float16/bfloat16 -> 8- and 64-bit integers through float32 lanes on AVX2 (kernels_avx2_hint.c) */
bool dt_half_int_find_avx2(dt_kernel *k, const dt_format *df, const dt_format *sf,
                           const dt_rules *r, size_t count);
/* integer -> integer on AVX2 (kernels_avx2_int.c), or NULL */
dt_kernel_fn dt_int_pick_avx2(const dt_format *df, const dt_format *sf, const dt_rules *r);
/* integer <-> float32/float64, float64 <-> float32, float16/bfloat16 -> float64 on AVX2
 * (kernels_avx2_cvt.c), or NULL */
dt_kernel_fn dt_cvt_pick_avx2(const dt_format *df, const dt_format *sf, const dt_rules *r);
/* sources of <= 8 bits into every real destination through lookup tables on AVX2
 * (kernels_avx2_table.c): fills *k and returns true, or false */
bool dt_table_find_avx2(dt_kernel *k, const dt_format *df, const dt_format *sf, const dt_rules *r,
                        size_t count);
/* float16/bfloat16/float32/float64 -> 4/8-bit floats and integers on 32 lanes of 16 bits
 * (kernels_avx512w.c), or NULL when not covered; its constants: dt_narrow_setup with *lane. */
dt_kernel_fn dt_narrow16_pick_avx512(const dt_format *df, const dt_format *sf, const dt_rules *r,
                                     const dt_format **lane);
/* float16/bfloat16/int16/uint16 -> 1/2/4/8-bit floats, float8e8m0 and integers, float32 and
 * int32/uint32 -> 4/6/8-bit floats (int32/uint32: float8e8m0 too) on 16 lanes of 16 bits
 * (kernels_avx2w.c), or NULL when not covered; its constants: dt_narrow_setup with *lane. */
dt_kernel_fn dt_narrow16_pick_avx2(const dt_format *df, const dt_format *sf, const dt_rules *r,
                                   const dt_format **lane);
/* Sets k up with that kernel and its constants (dt_narrow_setup, and k->local for float4e2m1),
 * or returns false. */
bool dt_narrow16_setup_avx2(dt_kernel *k, const dt_format *df, const dt_format *sf,
                            const dt_rules *r);
#endif

#endif
