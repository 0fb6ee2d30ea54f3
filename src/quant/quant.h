/* What the quantization files share: checking the dtcast_tensor arguments of the public calls,
 * the resolved parameters of one call, the element step (float32 -> codes through the
 * conversion kernels) and the per-row packing of the codes. */
#ifndef DTCAST_QUANT_H
#define DTCAST_QUANT_H

#include "../internal.h"
#include "../kernels/kernels.h"

/* Checks an input tensor named `what` ("x", "scale", ...): not NULL, 0 <= ndim <= DTCAST_MAX_DIMS,
 * no negative dimension, the element count fits, data not NULL when there are elements, and
 * bytes >= the storage the shape needs in t->type (packed over the flattened tensor). Sets
 * *count. */
dtcast_status dt_tensor_input(const dtcast_tensor *t, const char *what, size_t *count,
                              dtcast_error *error);

/* Checks that an output `what` has room: data not NULL (when need > 0) and bytes >= need. */
dtcast_status dt_tensor_room(const dtcast_tensor *t, const char *what, size_t need,
                             dtcast_error *error);

/* ---- parameters (params.c) ------------------------------------------------------------------ */
/* Copies *p (NULL: the defaults) into *out as dt_options_read does for options. */
dtcast_status dt_quant_params_read(const dtcast_quant_params *p, dtcast_quant_params *out,
                                   dtcast_error *error);

/* ---- one call, resolved (layout.c) ---------------------------------------------------------- */
/* Elements per chunk of the fast paths: the float32 values of a chunk (8 KiB), their scaled
 * copies and the codes stay in L1. */
#define DT_QCHUNK 2048

typedef struct dt_quant {
    dtcast_quant_params p; /* read, every default resolved (variant, element, block, round) */
    const dt_format *ef;   /* code type, one element per byte for float6 */
    int code_bits;         /* bits of a code in the layout: 4, 6 (float6_packed) or 8 */
    dtcast_type xtype;     /* the high-precision side: x (quantize) or y (dequantize) */
    dtcast_type scale_type;
    int ndim;
    int64_t shape[DTCAST_MAX_DIMS];
    size_t count;     /* elements of x */
    size_t K;         /* last dimension (1 for ndim 0): the rows the codes are packed in */
    size_t rows;      /* count / K (0 when count is 0) */
    size_t row_bytes; /* ceil(K * code_bits / 8) */
    size_t code_bytes;
    /* blocks: MX along axis (outer O, length D, inner I); NVFP4, FP8_BLOCK and ABSMAX
     * along the last axes */
    size_t O, D, I, B, nb; /* nb = ceil(D / B) blocks per (outer, inner) line */
    size_t N, R, tr, tc;   /* FP8_BLOCK: rows N of the last two axes, tile rows R; tiles */
    size_t batch;          /* FP8_BLOCK: count / (N * K) */
    int sndim;
    int64_t sshape[DTCAST_MAX_DIMS];
    size_t scount; /* scales */
    size_t scale_bytes;
    bool has_global;
    unsigned threads;
    bool avx2;   /* the AVX2 vector steps */
    bool simple; /* the deliberately simple path (tests): scalar, per element, exact encoder */
} dt_quant;

/* Resolves p against x's type and shape (quantize) or y's type and codes' shape (dequantize):
 * fills *q or fails naming what is wrong. */
dtcast_status dt_quant_resolve(dt_quant *q, const dtcast_quant_params *p, dtcast_type xtype,
                               int ndim, const int64_t *shape, dtcast_type code_type,
                               dtcast_type scales_type, dtcast_error *error);
/* Fills the type/ndim/shape/bytes of the three outputs of a quantization q describes. */
void dt_quant_describe(const dt_quant *q, dtcast_tensor *codes, dtcast_tensor *scales,
                       dtcast_tensor *global_scale);

/* ---- conversions of small arrays (layout.c) -------------------------------------------------- */
/* n elements src -> dst (packed as dtcast_convert packs, from element 0) by a kernel found once,
 * or by the exact encoder when there is none or `exact` is asked for. */
typedef struct dt_qconv {
    dt_kernel k;
    bool has_kernel;
    const dt_format *df, *sf;
    dt_rules r;
    dtcast_options o; /* stochastic: through dtcast_convert with o.element_offset */
    bool stochastic;
} dt_qconv;
void dt_qconv_init(dt_qconv *c, dtcast_type dst, dtcast_type src, dtcast_round round,
                   bool saturate, uint64_t seed, size_t count, bool exact);
/* The same with the conversion's options given whole (o->threads is ignored: one thread). */
void dt_qconv_init_opts(dt_qconv *c, dtcast_type dst, dtcast_type src, const dtcast_options *o,
                        size_t count, bool exact);
/* first: the index in its tensor of src[0] (stochastic rounding draws by it) */
void dt_qconv_run(const dt_qconv *c, void *dst, const void *src, size_t n, size_t first);
void dt_qconv_release(dt_qconv *c);

/* ---- the element step and the code layout (layout.c) ----------------------------------------- */
typedef struct dt_emit {
    const dt_quant *q;
    bool stream; /* large output: codes through an L1 buffer and streaming stores */
    dt_qconv conv;  /* float32 -> code type */
    uint8_t *codes; /* the output (quantize) or input (dequantize) codes */
} dt_emit;
void dt_emit_init(dt_emit *em, const dt_quant *q, void *codes, bool decode);
void dt_emit_release(dt_emit *em);
/* Quantize: the codes of flat elements [f, f + n) of x from their scaled float32 values
 * (n <= DT_QCHUNK). */
void dt_emit_codes(const dt_emit *em, size_t f, const float *vals, size_t n);
/* Dequantize: the float32 values of the codes of flat elements [f, f + n) (n <= DT_QCHUNK). */
void dt_emit_values(const dt_emit *em, size_t f, float *vals, size_t n);

/* Reads flat elements [f, f + n) of a float32 / bfloat16 / float16 / float64 tensor as float32
 * (float64 rounded to nearest even): returns a pointer to them (into x itself for float32, else
 * buf, which has room for DT_QCHUNK). */
typedef struct dt_loader {
    dt_qconv conv;
    const void *data;
    dtcast_type type;
} dt_loader;
void dt_loader_init(dt_loader *l, const void *data, dtcast_type type, bool exact);
const float *dt_load_f32(const dt_loader *l, size_t f, size_t n, float *buf);
void dt_loader_release(dt_loader *l);
/* Writes float32 values as flat elements [f, f + n) of y (one rounding, nearest even). */
typedef struct dt_storer {
    dt_qconv conv;
    bool stream; /* large output: streaming stores */
    void *data;
    dtcast_type type;
} dt_storer;
void dt_storer_init(dt_storer *s, void *data, dtcast_type type, size_t count, bool exact);
void dt_store_f32(const dt_storer *s, size_t f, const float *vals, size_t n);
void dt_storer_release(dt_storer *s);
/* vals[i] *= k[i / B] (the last block may be short), then stored as flat elements [f, f + n)
 * of y: fl32 product, one rounding to y's type (the fast paths) */
void dt_store_scaled(const dt_storer *s, const dt_quant *q, size_t f, float *vals, size_t n,
                     size_t B, const float *k);

/* ---- float32 helpers -------------------------------------------------------------------------- */
static inline uint32_t dt_f32_bits(float x)
{
    union {
        float f;
        uint32_t u;
    } v = {.f = x};
    return v.u;
}
static inline float dt_f32_from_bits(uint32_t u)
{
    union {
        uint32_t u;
        float f;
    } v = {.u = u};
    return v.f;
}
/* fl32(a * b) where a NaN a gives itself, quieted, and a NaN b (a not NaN) gives b's NaN: the
 * first operand's NaN, as x86 and Arm give it, fixed here because a compiler may swap the
 * operands of a multiplication (NaN x NaN then depends on the build) */
static inline float dt_mul_nan_first(float a, float b)
{
    return a != a ? dt_f32_from_bits(dt_f32_bits(a) | 0x00400000u) : a * b;
}
/* NaN-propagating max / clamp (torch.clamp, torch.maximum keep NaN) */
static inline float dt_maxf_nan(float a, float b)
{
    return a != a ? a : (a > b ? a : b);
}
static inline float dt_clampf_nan(float a, float lo, float hi)
{
    return a != a ? a : a < lo ? lo : a > hi ? hi : a;
}

/* ---- vector steps (simd.c): AVX2 when active, else plain C; the same results ------------------ */
/* |x| max over n values, NaN-propagating (a NaN anywhere gives the canonical NaN); the simple
 * path compares floats one by one, the fast ones take the integer max of the |x| bits */
float dt_q_amax(const dt_quant *q, const float *x, size_t n);
/* out[b] = |x| max of block b (B elements each), NaN-propagating */
void dt_q_amax_blocks(const dt_quant *q, const float *x, size_t nblk, size_t B, float *out);
enum {
    DT_Q_MUL,    /* x * k */
    DT_Q_DIV,    /* x / k */
    DT_Q_MUL_I8, /* clamp(x * k * 64, +-127) (MXINT8) */
    DT_Q_DIV_MO  /* x / k, NaN -> 6, -0 -> +0 (NVFP4 modelopt) */
};
/* out[i] = f(in[i], c) for the per-block formulas of NVFP4 (float32, one operation at a time) */
enum {
    DT_QM_MO_SCALE, /* a == 0 ? 1 : max(a / c, 2^-9), NaN kept (modelopt, c = fl32(6 g)) */
    DT_QM_TA_SCALE, /* clamp(fl32(a / 6) / c, 2^-6, 448), NaN kept (torchao, c = g or 1) */
    DT_QM_CT_SCALE, /* clamp(c * fl32(a / 6), -448, 448), NaN kept (ct, c = gs) */
    DT_QM_MUL,      /* a * c */
    DT_QM_DIV,      /* a / c */
    DT_QM_RDIV      /* c / a */
};
void dt_q_map(const dt_quant *q, int op, float *out, const float *in, size_t n, float c);
/* dst = bfloat16 (nearest even, canonical NaN) of vals[b*B + i] * k[b]; false (nothing done)
 * where there is no vector step for it */
bool dt_q_apply_bf16(const dt_quant *q, uint16_t *dst, const float *vals, size_t nblk, size_t B,
                     const float *k);
/* vals[b*B + i] = op(x[b*B + i], k[b]) over nblk blocks of B */
void dt_q_apply(const dt_quant *q, int op, float *vals, const float *x, size_t nblk, size_t B,
                const float *k);

/* ---- the schemes (one file each) ---------------------------------------------------------------- */
typedef struct dt_qio {
    const void *x;      /* quantize: the input; dequantize: NULL */
    void *y;            /* dequantize: the output */
    uint8_t *codes;
    void *scales;
    float *global; /* global scale value (in and out), NULL when none */
} dt_qio;
dtcast_status dt_mx_quantize(const dt_quant *q, dt_qio *io, dtcast_error *error);
dtcast_status dt_mx_dequantize(const dt_quant *q, dt_qio *io, dtcast_error *error);
dtcast_status dt_nvfp4_quantize(const dt_quant *q, dt_qio *io, dtcast_error *error);
dtcast_status dt_nvfp4_dequantize(const dt_quant *q, dt_qio *io, dtcast_error *error);
dtcast_status dt_fp8_block_quantize(const dt_quant *q, dt_qio *io, dtcast_error *error);
dtcast_status dt_fp8_block_dequantize(const dt_quant *q, dt_qio *io, dtcast_error *error);
dtcast_status dt_absmax_quantize(const dt_quant *q, dt_qio *io, dtcast_error *error);
dtcast_status dt_absmax_dequantize(const dt_quant *q, dt_qio *io, dtcast_error *error);

/* dt_parallel_for over count units (nothing when 0), each range run in the default
 * floating-point environment (round to nearest, no flush to zero), the caller's restored after */
void dt_quant_for(size_t count, unsigned threads, void (*fn)(void *ctx, size_t begin, size_t end),
                  void *ctx);
typedef struct dt_fpstate {
    unsigned csr;
    int round;
} dt_fpstate;
void dt_fp_enter(dt_fpstate *s);
void dt_fp_leave(const dt_fpstate *s);

/* Tests: every quantization and dequantization takes the simple path while set. */
void dt_quant_simple_set(bool on);
bool dt_quant_simple(void);

#endif /* DTCAST_QUANT_H */
