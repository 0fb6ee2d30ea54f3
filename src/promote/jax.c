/* JAX: jax.numpy.result_type of two operands, the least upper bound on JAX's type promotion
 * lattice ("Type promotion semantics"). Python int, float and complex are the weak types i*, f*,
 * c*; a weak result takes the default type of its kind. With x64 off, 64-bit results become
 * their 32-bit counterparts. Strict mode (jax_numpy_dtype_promotion='strict') keeps only the
 * edges out of the weak types. */
#include "promote/promote.h"

#include "internal.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The lattice's nodes. */
enum {
    N_B1, N_IW, N_FW, N_CW, /* bool, the weak i* f* c* */
    N_U1, N_U2, N_U4, N_U8, N_U16, N_U32, N_U64,
    N_I2, N_I4, N_I8, N_I16, N_I32, N_I64,
    N_F4E2M1, N_F6E2M3, N_F6E3M2, N_F8E3M4, N_F8E4M3, N_F8E8M0, N_F8E4M3B11, N_F8E4M3FN,
    N_F8E4M3FNUZ, N_F8E5M2, N_F8E5M2FNUZ, /* JAX's small floats: reachable only from f* */
    N_BF16, N_F16, N_F32, N_F64, N_C64, N_C128,
    N_COUNT
};

typedef enum node_group { G_PLAIN, G_WEAK, G_INTN, G_FLOAT8, G_FLOAT6, G_FLOAT4 } node_group;

typedef struct node {
    dtcast_type type;    /* DTCAST_UNDEFINED for the weak types */
    const char *name;    /* str() of the node in JAX's messages */
    pr_category category;
    node_group group;
} node;

static const node nodes[N_COUNT] = {
    [N_B1] = {DTCAST_BOOL, "'bool'", PR_BOOL, G_PLAIN},
    [N_IW] = {DTCAST_UNDEFINED, "\"<class 'int'>\"", PR_INT, G_WEAK},
    [N_FW] = {DTCAST_UNDEFINED, "\"<class 'float'>\"", PR_FLOAT, G_WEAK},
    [N_CW] = {DTCAST_UNDEFINED, "\"<class 'complex'>\"", PR_COMPLEX, G_WEAK},
    [N_U1] = {DTCAST_UINT1, "'uint1'", PR_INT, G_INTN},
    [N_U2] = {DTCAST_UINT2, "'uint2'", PR_INT, G_INTN},
    [N_U4] = {DTCAST_UINT4, "'uint4'", PR_INT, G_INTN},
    [N_U8] = {DTCAST_UINT8, "'uint8'", PR_INT, G_PLAIN},
    [N_U16] = {DTCAST_UINT16, "'uint16'", PR_INT, G_PLAIN},
    [N_U32] = {DTCAST_UINT32, "'uint32'", PR_INT, G_PLAIN},
    [N_U64] = {DTCAST_UINT64, "'uint64'", PR_INT, G_PLAIN},
    [N_I2] = {DTCAST_INT2, "'int2'", PR_INT, G_INTN},
    [N_I4] = {DTCAST_INT4, "'int4'", PR_INT, G_INTN},
    [N_I8] = {DTCAST_INT8, "'int8'", PR_INT, G_PLAIN},
    [N_I16] = {DTCAST_INT16, "'int16'", PR_INT, G_PLAIN},
    [N_I32] = {DTCAST_INT32, "'int32'", PR_INT, G_PLAIN},
    [N_I64] = {DTCAST_INT64, "'int64'", PR_INT, G_PLAIN},
    [N_F4E2M1] = {DTCAST_FLOAT4E2M1, "'float4_e2m1fn'", PR_FLOAT, G_FLOAT4},
    [N_F6E2M3] = {DTCAST_FLOAT6E2M3FN, "'float6_e2m3fn'", PR_FLOAT, G_FLOAT6},
    [N_F6E3M2] = {DTCAST_FLOAT6E3M2FN, "'float6_e3m2fn'", PR_FLOAT, G_FLOAT6},
    [N_F8E3M4] = {DTCAST_FLOAT8E3M4, "'float8_e3m4'", PR_FLOAT, G_FLOAT8},
    [N_F8E4M3] = {DTCAST_FLOAT8E4M3, "'float8_e4m3'", PR_FLOAT, G_FLOAT8},
    [N_F8E8M0] = {DTCAST_FLOAT8E8M0, "'float8_e8m0fnu'", PR_FLOAT, G_FLOAT8},
    [N_F8E4M3B11] = {DTCAST_FLOAT8E4M3B11FNUZ, "'float8_e4m3b11fnuz'", PR_FLOAT, G_FLOAT8},
    [N_F8E4M3FN] = {DTCAST_FLOAT8E4M3FN, "'float8_e4m3fn'", PR_FLOAT, G_FLOAT8},
    [N_F8E4M3FNUZ] = {DTCAST_FLOAT8E4M3FNUZ, "'float8_e4m3fnuz'", PR_FLOAT, G_FLOAT8},
    [N_F8E5M2] = {DTCAST_FLOAT8E5M2, "'float8_e5m2'", PR_FLOAT, G_FLOAT8},
    [N_F8E5M2FNUZ] = {DTCAST_FLOAT8E5M2FNUZ, "'float8_e5m2fnuz'", PR_FLOAT, G_FLOAT8},
    [N_BF16] = {DTCAST_BFLOAT16, "'bfloat16'", PR_FLOAT, G_PLAIN},
    [N_F16] = {DTCAST_FLOAT16, "'float16'", PR_FLOAT, G_PLAIN},
    [N_F32] = {DTCAST_FLOAT32, "'float32'", PR_FLOAT, G_PLAIN},
    [N_F64] = {DTCAST_FLOAT64, "'float64'", PR_FLOAT, G_PLAIN},
    [N_C64] = {DTCAST_COMPLEX64, "'complex64'", PR_COMPLEX, G_PLAIN},
    [N_C128] = {DTCAST_COMPLEX128, "'complex128'", PR_COMPLEX, G_PLAIN},
};

typedef struct edge {
    unsigned char from, to;
} edge;

/* JAX: the standard lattice, each node to its immediately higher nodes. */
static const edge standard_edges[] = {
    {N_B1, N_IW},
    {N_IW, N_U1}, {N_IW, N_U2}, {N_IW, N_U4}, {N_IW, N_U8}, {N_IW, N_I2}, {N_IW, N_I4},
    {N_IW, N_I8},
    {N_U8, N_I16}, {N_U8, N_U16}, {N_U16, N_I32}, {N_U16, N_U32}, {N_U32, N_I64},
    {N_U32, N_U64}, {N_U64, N_FW}, /* JAX: uint64 with a signed integer -> weak float */
    {N_I8, N_I16}, {N_I16, N_I32}, {N_I32, N_I64}, {N_I64, N_FW},
    {N_FW, N_F4E2M1}, {N_FW, N_F6E2M3}, {N_FW, N_F6E3M2}, {N_FW, N_F8E3M4}, {N_FW, N_F8E4M3},
    {N_FW, N_F8E8M0}, {N_FW, N_F8E4M3B11}, {N_FW, N_F8E4M3FN}, {N_FW, N_F8E4M3FNUZ},
    {N_FW, N_F8E5M2}, {N_FW, N_F8E5M2FNUZ}, {N_FW, N_BF16}, {N_FW, N_F16}, {N_FW, N_CW},
    {N_BF16, N_F32}, {N_F16, N_F32}, /* JAX: bfloat16 with float16 -> float32 */
    {N_F32, N_F64}, {N_F32, N_C64}, {N_F64, N_C128},
    {N_CW, N_C64}, {N_C64, N_C128},
};

typedef uint64_t node_set;

#define BIT(n) ((node_set)1 << (n))

static bool strict_edge(int from, int to)
{
    /* JAX strict: i* -> f* and every integer; f* -> c* and every float; c* -> every complex. */
    if (from == N_IW)
        return to == N_FW || (nodes[to].category == PR_INT && nodes[to].group != G_WEAK);
    if (from == N_FW)
        return to == N_CW || (nodes[to].category == PR_FLOAT && nodes[to].group != G_WEAK);
    if (from == N_CW)
        return nodes[to].category == PR_COMPLEX && nodes[to].group != G_WEAK;
    return false;
}

/* Every node's upper bounds (itself included) on the chosen lattice. */
static void upper_bounds(bool strict, node_set ub[N_COUNT])
{
    node_set up[N_COUNT] = {0}; /* immediate successors */
    if (strict) {
        for (int f = 0; f < N_COUNT; f++)
            for (int t = 0; t < N_COUNT; t++)
                if (strict_edge(f, t))
                    up[f] |= BIT(t);
    } else {
        for (size_t i = 0; i < sizeof standard_edges / sizeof standard_edges[0]; i++)
            up[standard_edges[i].from] |= BIT(standard_edges[i].to);
    }
    for (int n = 0; n < N_COUNT; n++) {
        node_set reach = BIT(n);
        for (;;) {
            node_set next = reach;
            for (int k = 0; k < N_COUNT; k++)
                if (reach & BIT(k))
                    next |= up[k];
            if (next == reach)
                break;
            reach = next;
        }
        ub[n] = reach;
    }
}

static int node_of_type(dtcast_type t)
{
    for (int n = 0; n < N_COUNT; n++)
        if (nodes[n].group != G_WEAK && nodes[n].type == t)
            return n;
    return -1;
}

static int node_of_operand(const dtcast_operand *op)
{
    switch (op->scalar) {
    case DTCAST_SCALAR_NONE:
        return node_of_type(op->type);
    case DTCAST_SCALAR_BOOL: /* JAX: a Python bool is a bool, not weak */
        return N_B1;
    case DTCAST_SCALAR_INT:
        return N_IW;
    case DTCAST_SCALAR_FLOAT:
        return N_FW;
    default:
        return N_CW;
    }
}

static dtcast_status no_path(int a, int b, bool strict, dtcast_error *m)
{
    const char *why;
    node_group ga = nodes[a].group, gb = nodes[b].group;
    if (strict)
        why = " when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired "
              "output type, or set jax_numpy_dtype_promotion=standard.";
    else if (ga == G_FLOAT8 || gb == G_FLOAT8)
        why = ". To avoid unintended promotion, 8-bit floats do not support implicit promotion. "
              "If you'd like your inputs to be promoted to another type, you can do so explicitly "
              "using e.g. x.astype('float32')";
    else if (ga == G_FLOAT6 || gb == G_FLOAT6)
        why = ". To avoid unintended promotion, 6-bit floats do not support implicit promotion. "
              "If you'd like your inputs to be promoted to another type, you can do so explicitly "
              "using e.g. x.astype('float32')";
    else if (ga == G_FLOAT4 || gb == G_FLOAT4)
        why = ". To avoid unintended promotion, 4-bit floats do not support implicit promotion. "
              "If you'd like your inputs to be promoted to another type, you can do so explicitly "
              "using e.g. x.astype('float32')";
    else if (ga == G_INTN || gb == G_INTN)
        why = ". To avoid unintended promotion, 1-bit, 2-bit and 4-bit integers do not support "
              "implicit promotion. If you'd like your inputs to be promoted to another type, you "
              "can do so explicitly using e.g. x.astype('int32')";
    else
        why = ". Try explicitly casting inputs to the desired output type.";
    return dt_fail(m, DTCAST_ERR_PROMOTION, DT_NO_INDEX,
                   "Input dtypes (%s, %s) have no available implicit dtype promotion path%s",
                   nodes[a].name, nodes[b].name, why);
}

/* JAX: the default type of a weak result's kind (int64, float64, complex128). */
static dtcast_type weak_default(int n)
{
    return n == N_IW ? DTCAST_INT64 : n == N_FW ? DTCAST_FLOAT64 : DTCAST_COMPLEX128;
}

/* JAX with x64 off: 64-bit types canonicalize to their 32-bit counterparts. */
static dtcast_type canonical_x32(dtcast_type t)
{
    switch (t) {
    case DTCAST_INT64:
        return DTCAST_INT32;
    case DTCAST_UINT64:
        return DTCAST_UINT32;
    case DTCAST_FLOAT64:
        return DTCAST_FLOAT32;
    case DTCAST_COMPLEX128:
        return DTCAST_COMPLEX64;
    default:
        return t;
    }
}

dtcast_status pr_jax(const dtcast_operand *a, const dtcast_operand *b,
                     const dtcast_promote_attrs *attrs, dtcast_type *out, dtcast_error *m)
{
    const bool strict = attrs->strict != 0;
    int na = node_of_operand(a), nb = node_of_operand(b);
    if (na < 0 || nb < 0)
        return dt_fail(m, DTCAST_ERR_PROMOTION, DT_NO_INDEX,
                       "dtype=dtype('%s') is not a valid dtype for JAX type promotion.",
                       dtcast_type_name(na < 0 ? a->type : b->type));
    node_set ub[N_COUNT];
    upper_bounds(strict, ub);
    /* JAX: LUB(N) = N & CUB(N) if not empty, else the c in CUB(N) with CUB(N) within UB(c). */
    node_set common = ub[na] & ub[nb];
    node_set least = common & (BIT(na) | BIT(nb));
    if (!least)
        for (int c = 0; c < N_COUNT; c++)
            if ((common & BIT(c)) && (common & ~ub[c]) == 0)
                least |= BIT(c);
    int lub = -1;
    for (int c = 0; c < N_COUNT && least; c++)
        if (least == BIT(c))
            lub = c;
    if (lub < 0)
        return no_path(na, nb, strict, m);
    dtcast_type t = nodes[lub].group == G_WEAK ? weak_default(lub) : nodes[lub].type;
    *out = attrs->x64 ? t : canonical_x32(t);
    return DTCAST_OK;
}
