/* dtcast diff A B (docs/files.md, "dtcast diff"): two tensor files compared tensor by tensor,
 * across dtypes and layouts. A and B are two .npy files, two .safetensors files, or two
 * checkpoints (a sharded checkpoint's index or a model folder). A side holding scaled quantized
 * tensors (files/quant_layout.h) is dequantized on the fly to float32, as `dtcast dequantize
 * --to float32` would write it. Streamed: both inputs are read once, block by block; each block
 * is decoded to float64 (complex128) with dtcast_convert and compared; memory stays bounded
 * whatever the sizes. This file fills a result; it never prints. Not part of the installed API.
 *
 * Figures (per tensor present on both sides with the same shape; "values" are elements, or the
 * real and imaginary parts of complex elements, counted separately, in C order):
 *   a pair (a, b) is "finite" when both values are finite;
 *   equal:   a == b (so +0 == -0), both NaN, or the same infinity;
 *   close:   equal, or finite and |b - a| <= atol + rtol * |a| (A is the reference; computed in
 *            float64 as rtol * |a| then + atol);
 *   max abs error: the largest fl(|b - a|) over the finite pairs, at the first value index
 *            where it occurs;
 *   max rel error: the largest fl(|b - a| / |a|) over the finite pairs with a != 0, first index;
 *   SQNR:    10 log10(sum a^2 / sum (b - a)^2) over the finite pairs, in dB (signal = A); +inf
 *            when the sum of squared errors is 0, -inf when only the signal is 0, NaN when there
 *            is no finite pair. The sums are long double, added block by block (a different
 *            order than numpy's pairwise sum: equal to ~1e-12 relative).
 *   NaN, +Inf, -Inf counts of each side. */
#ifndef DTCAST_FILES_DIFF_H
#define DTCAST_FILES_DIFF_H

#include "files/progress.h"
#include "files/tensor.h"

#include <stddef.h>
#include <stdint.h>

typedef struct dt_diff_options {
    double atol, rtol;  /* the closeness bound above; 0, 0: values must be equal */
    int no_dequantize;  /* compare scaled quantized tensors as stored, not dequantized */
    unsigned threads;   /* 0: one per CPU (at most 32) */
    /* Called (on the calling thread) after each tensor with the elements of both sides done so
     * far and their total; a nonzero return cancels the diff ("cancelled", DTCAST_ERR_IO). */
    dt_progress_fn progress;
    void *progress_ctx;
} dt_diff_options;

void dt_diff_options_init(dt_diff_options *o);

typedef enum dt_diff_state {
    DT_DIFF_COMPARED = 0, /* on both sides with the same shape: the values were compared */
    DT_DIFF_MISSING,      /* in A only */
    DT_DIFF_EXTRA,        /* in B only */
    DT_DIFF_SHAPE,        /* on both sides, the shapes differ: not compared */
    DT_DIFF_UNCOMPARABLE  /* strings against anything: not compared (note says why) */
} dt_diff_state;

/* "compared", "missing", "extra", "shape", "uncomparable". */
const char *dt_diff_state_name(dt_diff_state s);

typedef struct dt_diff_side {
    int present;
    dtcast_type type;       /* the stored dtype (a quantized tensor: its codes' element type) */
    const char *layout;     /* NULL, or the quantized layout dequantized ("fp8-block", ...) */
    int ndim;
    int64_t dims[DT_MAX_DIMS];
    uint64_t count;         /* elements */
    uint64_t nan, posinf, neginf; /* over its values (compared tensors only) */
} dt_diff_side;

/* One largest error: the error, the value index and the two values; has == 0 when no value
 * qualified. */
typedef struct dt_diff_worst {
    int has;
    double error;
    uint64_t index;
    double a, b;
} dt_diff_worst;

typedef struct dt_diff_tensor {
    char *name;
    dt_diff_state state;
    dt_diff_side a, b;
    int parts;              /* 2 when compared as complex (either side complex), else 1 */
    int identical;          /* same dtype, shape, no dequantization, and the same bytes */
    uint64_t values;        /* compared values (elements * parts) */
    uint64_t finite;        /* finite pairs */
    uint64_t unequal;       /* values not equal */
    uint64_t not_close;     /* values not close (== unequal when atol == rtol == 0) */
    uint64_t nonfinite_mismatch; /* not equal where either side is NaN or Inf */
    int has_first_not_close;
    uint64_t first_not_close;
    dt_diff_worst max_abs, max_rel;
    long double sum_a2, sum_err2;
    double sqnr_db;
    char note[160];
} dt_diff_tensor;

typedef struct dt_diff_result {
    size_t n;
    dt_diff_tensor *t;      /* sorted by name (bytes) */
    size_t *worst;          /* t's indices, worst first (docs/files.md, "dtcast diff") */
    size_t missing, extra, shape, uncomparable, compared, not_close, identical;
    int ok;                 /* everything present on both sides, same shapes, all close */
    double atol, rtol;
} dt_diff_result;

/* Compares a with b. On error (unreadable or malformed input, a value it cannot decode, out of
 * memory) the result is empty (safe to free) and err names the file, tensor and byte. */
dtcast_status dt_diff_run(const char *a, const char *b, const dt_diff_options *o,
                          dt_diff_result *r, dt_io_error *err);
void dt_diff_result_free(dt_diff_result *r);

/* The result as one JSON object (docs/files.md, "dtcast diff"), malloc'd, NUL-terminated; NULL
 * when out of memory. Non-finite numbers are the strings "inf", "-inf" and "nan". */
char *dt_diff_json(const dt_diff_result *r);

/* value index -> multi-index of a tensor of ndim dims (elements; parts split the index). */
void dt_diff_unravel(uint64_t index, int parts, int ndim, const int64_t *dims, int64_t *out,
                     int *part);

#endif /* DTCAST_FILES_DIFF_H */
