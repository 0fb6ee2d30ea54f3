/* ONNX models in the cast job, graph mode (`--mode graph`; docs/onnx_models.md, "Graph mode"):
 * the model's graph computes in float16 or bfloat16 where every node stays valid.
 *
 * The plan, over the model's graph (its subgraphs run as they are, in their own types):
 *   1. read: the nodes (inputs, outputs, op, domain, the attributes that give a type), the
 *      values with the type the graph declares (inputs, outputs, initializers, value_info);
 *      the nodes in topological order (Kahn; a cycle or a value read but given by nothing is an
 *      error); the names the subgraphs of a node read from outside (they must keep their type);
 *   2. types: each node's output types from its operator's schema at the model's opset (type
 *      constraints bound by the inputs, a constraint of one type, the attribute that names the
 *      type: Cast's `to`, the random ops' `dtype`, Constant and ConstantOfShape's tensor), not
 *      from value_info, which may be missing;
 *   3. which nodes compute in the target type T: a node of the default domain, not blocked, with
 *      no subgraph, whose float32 values all sit on type constraints that admit T (from the
 *      schema table, files/onnx_schemas.inc). Such a node's float32 constraints take T; its
 *      attribute types (Cast to, dtype) are rewritten to T; a Constant's float32 tensor is
 *      stored in T;
 *   4. names: every float32 value V has a home type, the type its own name carries afterwards:
 *      float32, except a graph input or output (T, unless --keep-io-types) and an initializer
 *      that only nodes in T read (stored in T). Its producer writes it in its compute type;
 *      when that is not the home type, the producer writes V_<T> (or V_float32... a new name)
 *      and a Cast to the home type writes V. A consumer that needs the other type reads the
 *      other name, written by one Cast after the producer (one per value, not per consumer).
 *      So value_info, the subgraphs' outer names and every name the model had keep their
 *      meaning; only graph inputs and outputs change their declared type.
 *   5. write: the nodes in topological order, each followed by the Casts of its outputs (the
 *      Casts of the graph's inputs and initializers first); every other field of the graph as
 *      it was (initializers through the weights mode's writer, in T where planned). */
#include "files/onnx_model_impl.h"
#include "files/onnx_schema.h"

#include <stdlib.h>
#include <string.h>

enum { ONNX_FLOAT = 1, ONNX_INT32 = 6 };

#define OG_NONE (-1)

typedef struct og_value {
    const uint8_t *name; /* into the map */
    size_t len;
    int32_t type;     /* ONNX element type; 0 unknown or not a tensor */
    int32_t producer; /* node index; OG_NONE: a graph input or an initializer (or nothing) */
    int32_t tensor;   /* an initializer: index in j->t; else OG_NONE */
    uint8_t is_input, is_output, captured, given;
    uint8_t need_float, need_t; /* read as float32 / as T by some consumer */
    uint8_t home_t, made_t;     /* its name carries T / its producer writes T */
    char *other;                /* the name of the version that is not the home type */
    int32_t decl_type;          /* the type value_info or the graph's input/output declares */
} og_value;

typedef struct og_node {
    span s;                  /* the NodeProto */
    const uint8_t *op, *domain, *name;
    size_t op_len, domain_len, name_len;
    int32_t *in, *out;       /* value indexes; OG_NONE for an empty (omitted) input */
    size_t lists;            /* where in, out and outer start in the arena (it moves while it
                              * grows: the pointers are set once every node is read) */
    int n_in, n_out;
    uint8_t *in_t;           /* per input: read as T */
    int subgraph;            /* it has graph attributes */
    int32_t *outer;          /* the values its subgraphs read from this graph */
    int n_outer;
    int has_to, has_dtype;   /* Cast's to / a dtype attribute: present */
    int64_t to, dtype;
    size_t type_attr_start;  /* the AttributeProto holding to/dtype (0: none) */
    int32_t value_tensor;    /* Constant / ConstantOfShape: its `value` tensor in j->t */
    int convert;             /* computes in T */
    int set_type;            /* write to/dtype = T: 1 rewrite the attribute, 2 add it */
    int blocked;             /* by the request (--block-op, --block-node) */
    int identity;            /* a Cast to the type its input has (after the plan): Identity */
} og_node;

struct om_graph_plan {
    og_value *v;
    size_t nv, cap_v;
    size_t *slot; /* name hash -> value index + 1 */
    size_t nslot;
    og_node *n;
    size_t nn, cap_n;
    int32_t *order;  /* the nodes, topologically */
    int32_t *arena;  /* every node's in/out/outer lists */
    size_t na, cap_a;
    uint8_t *flags;  /* every node's in_t */
    int64_t target;  /* ONNX type of r->to */
    size_t converted, casts, blocked_schema, blocked_request, blocked_subgraph;
    size_t blocked_runtime, partial_runtime; /* nodes the runtime runs in T not at all / in part */
    char first_schema[160], first_runtime[160];
    int32_t *types;  /* scratch: a node's input and output types (runtime_flip) */
    size_t cap_types;
};

/* ---- values by name ---------------------------------------------------------------------------- */

static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211u;
    return h;
}

static int32_t value_find(const om_graph_plan *g, const uint8_t *p, size_t n)
{
    if (!g->nslot)
        return OG_NONE;
    for (size_t i = hash_bytes(p, n) & (g->nslot - 1);; i = (i + 1) & (g->nslot - 1)) {
        const size_t k = g->slot[i];
        if (!k)
            return OG_NONE;
        const og_value *v = &g->v[k - 1];
        if (v->len == n && memcmp(v->name, p, n) == 0)
            return (int32_t)(k - 1);
    }
}

/* The value named p (made when new); OG_NONE when out of memory. */
static int32_t value_get(om_graph_plan *g, const uint8_t *p, size_t n)
{
    int32_t k = value_find(g, p, n);
    if (k != OG_NONE)
        return k;
    if (g->nv == g->cap_v) {
        size_t cap = g->cap_v ? 2 * g->cap_v : 256;
        og_value *nv = realloc(g->v, cap * sizeof *nv);
        if (!nv)
            return OG_NONE;
        g->v = nv;
        g->cap_v = cap;
    }
    if (2 * (g->nv + 1) > g->nslot) {
        size_t ns = g->nslot ? 2 * g->nslot : 1024;
        size_t *s = calloc(ns, sizeof *s);
        if (!s)
            return OG_NONE;
        for (size_t i = 0; i < g->nv; i++) {
            size_t h = hash_bytes(g->v[i].name, g->v[i].len) & (ns - 1);
            while (s[h])
                h = (h + 1) & (ns - 1);
            s[h] = i + 1;
        }
        free(g->slot);
        g->slot = s;
        g->nslot = ns;
    }
    og_value *v = &g->v[g->nv];
    memset(v, 0, sizeof *v);
    v->name = p;
    v->len = n;
    v->producer = OG_NONE;
    v->tensor = OG_NONE;
    size_t h = hash_bytes(p, n) & (g->nslot - 1);
    while (g->slot[h])
        h = (h + 1) & (g->nslot - 1);
    g->slot[h] = g->nv + 1;
    return (int32_t)g->nv++;
}

static dtcast_status oom(om_job *j) { return om_fail(j, DTCAST_ERR_OUT_OF_MEMORY, "out of memory"); }

static int eq(const uint8_t *p, size_t n, const char *s)
{
    return n == strlen(s) && memcmp(p, s, n) == 0;
}

/* ---- 1. reading the graph --------------------------------------------------------------------- */

/* Appends to the arena (offsets: the arena moves as it grows). */
static int arena_push(om_graph_plan *g, int32_t x)
{
    if (g->na == g->cap_a) {
        size_t cap = g->cap_a ? 2 * g->cap_a : 1024;
        int32_t *a = realloc(g->arena, cap * sizeof *a);
        if (!a)
            return 0;
        g->arena = a;
        g->cap_a = cap;
    }
    g->arena[g->na++] = x;
    return 1;
}

/* The names a graph (recursively) reads as node inputs: pushed to the arena when they are values
 * of the model's graph. */
static dtcast_status read_captures(om_job *j, om_graph_plan *g, pb gr, int depth)
{
    dtcast_status st = DTCAST_OK;
    uint32_t f = 0;
    int wt = 0;
    size_t at = 0;
    if (depth > 64)
        return om_fail(j, DTCAST_ERR_BAD_FILE, "graphs nested more than 64 deep");
    while (pb_next(&gr, &f, &wt, &at, &st)) {
        if (f != GP_NODE || wt != WT_BYTES) {
            st = pb_skip(&gr, wt, at);
            continue;
        }
        pb n = {0};
        if ((st = pb_sub(&gr, &n)) != DTCAST_OK)
            break;
        while (pb_next(&n, &f, &wt, &at, &st)) {
            pb s = {0};
            if (f == NP_INPUT && wt == WT_BYTES) {
                if ((st = pb_sub(&n, &s)) != DTCAST_OK)
                    break;
                if (s.end == s.pos)
                    continue;
                /* made when new: its producer may come later in the file (names defined
                 * inside the body become values nobody in this graph gives, and are ignored) */
                const int32_t k = value_get(g, j->map + s.pos, s.end - s.pos);
                if (k == OG_NONE || !arena_push(g, k))
                    return oom(j);
            } else if (f == NP_ATTR && wt == WT_BYTES) {
                if ((st = pb_sub(&n, &s)) != DTCAST_OK)
                    break;
                while (pb_next(&s, &f, &wt, &at, &st)) {
                    pb sg = {0};
                    if ((f == AP_G || f == AP_GRAPHS) && wt == WT_BYTES) {
                        if ((st = pb_sub(&s, &sg)) == DTCAST_OK)
                            st = read_captures(j, g, sg, depth + 1);
                    } else {
                        st = pb_skip(&s, wt, at);
                    }
                }
            } else {
                st = pb_skip(&n, wt, at);
            }
        }
    }
    return st;
}

/* A ValueInfoProto's name and tensor element type (0 when it is not a tensor). */
static dtcast_status read_value_info(pb v, pb *name, int32_t *type)
{
    dtcast_status st = DTCAST_OK;
    uint32_t f = 0;
    int wt = 0;
    size_t at = 0;
    memset(name, 0, sizeof *name);
    *type = 0;
    while (pb_next(&v, &f, &wt, &at, &st)) {
        if (f == VI_NAME && wt == WT_BYTES) {
            st = pb_sub(&v, name);
        } else if (f == VI_TYPE && wt == WT_BYTES) {
            pb tp = {0};
            if ((st = pb_sub(&v, &tp)) != DTCAST_OK)
                break;
            while (pb_next(&tp, &f, &wt, &at, &st)) {
                pb tt = {0};
                if (f == TP_TENSOR && wt == WT_BYTES && (st = pb_sub(&tp, &tt)) == DTCAST_OK) {
                    while (pb_next(&tt, &f, &wt, &at, &st)) {
                        uint64_t e = 0;
                        if (f == TT_ELEM && wt == WT_VARINT && (st = pb_varint(&tt, &e)) == DTCAST_OK)
                            *type = e < 64 ? (int32_t)e : 0;
                        else if (!(f == TT_ELEM && wt == WT_VARINT))
                            st = pb_skip(&tt, wt, at);
                    }
                } else if (!(f == TP_TENSOR && wt == WT_BYTES)) {
                    st = pb_skip(&tp, wt, at);
                }
            }
        } else {
            st = pb_skip(&v, wt, at);
        }
    }
    return st;
}

static dtcast_status read_node(om_job *j, om_graph_plan *g, pb n)
{
    if (g->nn == g->cap_n) {
        size_t cap = g->cap_n ? 2 * g->cap_n : 256;
        og_node *nn = realloc(g->n, cap * sizeof *nn);
        if (!nn)
            return oom(j);
        g->n = nn;
        g->cap_n = cap;
    }
    og_node *d = &g->n[g->nn];
    memset(d, 0, sizeof *d);
    d->s.start = n.pos;
    d->s.end = n.end;
    d->value_tensor = OG_NONE;
    static const uint8_t empty[1] = {0};
    d->op = d->domain = d->name = empty;
    dtcast_status st = DTCAST_OK;
    uint32_t f = 0;
    int wt = 0;
    size_t at = 0;
    /* inputs, then outputs, then the outer names: offsets into the arena (fixed up below) */
    const size_t base = g->na;
    for (int pass = 0; pass < 2 && st == DTCAST_OK; pass++) {
        pb r = n;
        while (pb_next(&r, &f, &wt, &at, &st)) {
            pb s = {0};
            const uint32_t want = pass == 0 ? NP_INPUT : NP_OUTPUT;
            if (f == want && wt == WT_BYTES) {
                if ((st = pb_sub(&r, &s)) != DTCAST_OK)
                    break;
                int32_t k = OG_NONE;
                if (s.end > s.pos && (k = value_get(g, j->map + s.pos, s.end - s.pos)) == OG_NONE)
                    return oom(j);
                if (!arena_push(g, k))
                    return oom(j);
                if (pass == 0)
                    d->n_in++;
                else
                    d->n_out++;
            } else {
                st = pb_skip(&r, wt, at);
            }
        }
    }
    pb r = n;
    while (st == DTCAST_OK && pb_next(&r, &f, &wt, &at, &st)) {
        pb s = {0};
        if ((f == NP_OP || f == NP_DOMAIN || f == NP_NAME) && wt == WT_BYTES) {
            if ((st = pb_sub(&r, &s)) != DTCAST_OK)
                break;
            const uint8_t *p = j->map + s.pos;
            const size_t len = s.end - s.pos;
            if (f == NP_OP)
                d->op = p, d->op_len = len;
            else if (f == NP_DOMAIN)
                d->domain = p, d->domain_len = len;
            else
                d->name = p, d->name_len = len;
        } else if (f == NP_ATTR && wt == WT_BYTES) {
            if ((st = pb_sub(&r, &s)) != DTCAST_OK)
                break;
            const size_t attr_at = at;
            pb a = s, aname = {0};
            uint64_t iv = 0;
            int has_i = 0;
            size_t tensor_at = 0;
            while (pb_next(&a, &f, &wt, &at, &st)) {
                pb sg = {0};
                if (f == AP_NAME && wt == WT_BYTES) {
                    st = pb_sub(&a, &aname);
                } else if (f == AP_I && wt == WT_VARINT) {
                    st = pb_varint(&a, &iv);
                    has_i = 1;
                } else if (f == AP_T && wt == WT_BYTES) {
                    if ((st = pb_sub(&a, &sg)) == DTCAST_OK)
                        tensor_at = sg.pos;
                } else if ((f == AP_G || f == AP_GRAPHS) && wt == WT_BYTES) {
                    d->subgraph = 1;
                    st = pb_skip(&a, wt, at);
                } else {
                    st = pb_skip(&a, wt, at);
                }
            }
            const uint8_t *an = j->map + aname.pos;
            const size_t al = aname.end - aname.pos;
            if (eq(an, al, "to") && has_i) {
                d->has_to = 1;
                d->to = (int64_t)iv;
                d->type_attr_start = attr_at;
            } else if (eq(an, al, "dtype") && has_i) {
                d->has_dtype = 1;
                d->dtype = (int64_t)iv;
                d->type_attr_start = attr_at;
            } else if (eq(an, al, "value") && tensor_at) {
                const om_tensor *t = om_tensor_at(j, tensor_at);
                d->value_tensor = t ? (int32_t)(t - j->t) : OG_NONE;
            }
        } else {
            st = pb_skip(&r, wt, at);
        }
    }
    if (st != DTCAST_OK)
        return st;
    if (d->subgraph) {
        const size_t before = g->na;
        pb a = n;
        while (pb_next(&a, &f, &wt, &at, &st)) {
            pb s = {0};
            if (f == NP_ATTR && wt == WT_BYTES) {
                if ((st = pb_sub(&a, &s)) != DTCAST_OK)
                    break;
                while (pb_next(&s, &f, &wt, &at, &st)) {
                    pb sg = {0};
                    if ((f == AP_G || f == AP_GRAPHS) && wt == WT_BYTES) {
                        if ((st = pb_sub(&s, &sg)) == DTCAST_OK)
                            st = read_captures(j, g, sg, 1);
                    } else {
                        st = pb_skip(&s, wt, at);
                    }
                }
            } else {
                st = pb_skip(&a, wt, at);
            }
        }
        d->n_outer = (int)(g->na - before);
    }
    d->lists = base;
    g->nn++;
    return st;
}

static dtcast_status read_graph(om_job *j, om_graph_plan *g)
{
    pb gr = om_reader(j, j->graph.start, j->graph.end);
    dtcast_status st = DTCAST_OK;
    uint32_t f = 0;
    int wt = 0;
    size_t at = 0;
    /* the declared values first: captures and types refer to them */
    while (pb_next(&gr, &f, &wt, &at, &st)) {
        pb s = {0};
        if ((f == GP_INPUT || f == GP_OUTPUT || f == GP_VALUE_INFO) && wt == WT_BYTES) {
            if ((st = pb_sub(&gr, &s)) != DTCAST_OK)
                break;
            pb name = {0};
            int32_t type = 0;
            if ((st = read_value_info(s, &name, &type)) != DTCAST_OK)
                break;
            if (name.end == name.pos)
                continue;
            const int32_t k = value_get(g, j->map + name.pos, name.end - name.pos);
            if (k == OG_NONE)
                return oom(j);
            og_value *v = &g->v[k];
            if (f == GP_INPUT) {
                v->is_input = 1;
                v->given = 1;
                v->type = type;
            } else if (f == GP_OUTPUT) {
                v->is_output = 1;
            }
            if (!v->decl_type)
                v->decl_type = type;
        } else if (f == GP_INITIALIZER && wt == WT_BYTES) {
            if ((st = pb_sub(&gr, &s)) != DTCAST_OK)
                break;
            om_tensor *t = om_tensor_at(j, s.pos);
            if (!t || !t->name[0])
                continue;
            const int32_t k = value_get(g, (const uint8_t *)t->name, strlen(t->name));
            if (k == OG_NONE)
                return oom(j);
            g->v[k].tensor = (int32_t)(t - j->t);
            g->v[k].type = (int32_t)t->data_type;
            g->v[k].given = 1;
        } else {
            st = pb_skip(&gr, wt, at);
        }
    }
    gr = om_reader(j, j->graph.start, j->graph.end);
    while (st == DTCAST_OK && pb_next(&gr, &f, &wt, &at, &st)) {
        pb s = {0};
        if (f == GP_NODE && wt == WT_BYTES) {
            if ((st = pb_sub(&gr, &s)) == DTCAST_OK)
                st = read_node(j, g, s);
        } else {
            st = pb_skip(&gr, wt, at);
        }
    }
    if (st != DTCAST_OK)
        return st;
    /* the lists from offsets to pointers; in_t per input */
    size_t total_in = 0;
    for (size_t i = 0; i < g->nn; i++)
        total_in += (size_t)g->n[i].n_in;
    if (!(g->flags = calloc(total_in + 1, 1)))
        return oom(j);
    size_t fi = 0;
    for (size_t i = 0; i < g->nn; i++) {
        og_node *d = &g->n[i];
        d->in = g->arena + d->lists;
        d->out = d->in + d->n_in;
        d->outer = d->out + d->n_out;
        d->in_t = g->flags + fi;
        fi += (size_t)d->n_in;
    }
    return DTCAST_OK;
}

static void node_label(const om_graph_plan *g, const og_node *d, char *buf, size_t size)
{
    if (d->name_len)
        snprintf(buf, size, "node '%.*s' (%.*s)", (int)(d->name_len > 80 ? 80 : d->name_len),
                 (const char *)d->name, (int)(d->op_len > 40 ? 40 : d->op_len), (const char *)d->op);
    else
        snprintf(buf, size, "node %zu (%.*s)", (size_t)(d - g->n),
                 (int)(d->op_len > 40 ? 40 : d->op_len), (const char *)d->op);
}

/* Producers, then the topological order (Kahn's algorithm, stable: among the nodes that are
 * ready, the one first in the file first). */
static dtcast_status sort_nodes(om_job *j, om_graph_plan *g)
{
    char label[160];
    for (size_t i = 0; i < g->nn; i++) {
        og_node *d = &g->n[i];
        for (int k = 0; k < d->n_out; k++) {
            const int32_t v = d->out[k];
            if (v == OG_NONE)
                continue;
            if (g->v[v].producer != OG_NONE || g->v[v].given) {
                node_label(g, d, label, sizeof label);
                return om_fail(j, DTCAST_ERR_BAD_FILE, "%s writes '%.*s', which %s already", label,
                               (int)(g->v[v].len > 100 ? 100 : g->v[v].len),
                               (const char *)g->v[v].name,
                               g->v[v].given ? "the graph gives" : "another node writes");
            }
            g->v[v].producer = (int32_t)i;
        }
    }
    size_t *pending = calloc(g->nn + 1, sizeof *pending);
    size_t *users_at = calloc(g->nv + 1, sizeof *users_at);
    int32_t *users = NULL;
    size_t nusers = 0;
    for (size_t i = 0; i < g->nn; i++)
        nusers += (size_t)(g->n[i].n_in + g->n[i].n_outer);
    users = malloc((nusers + 1) * sizeof *users);
    g->order = malloc((g->nn + 1) * sizeof *g->order);
    if (!pending || !users_at || !users || !g->order) {
        free(pending);
        free(users_at);
        free(users);
        return oom(j);
    }
    /* the consumers of each value (counting sort by value) */
    size_t *fill = calloc(g->nv + 1, sizeof *fill);
    if (!fill) {
        free(pending);
        free(users_at);
        free(users);
        return oom(j);
    }
    dtcast_status st = DTCAST_OK;
    for (size_t i = 0; i < g->nn && st == DTCAST_OK; i++) {
        const og_node *d = &g->n[i];
        for (int k = 0; k < d->n_in + d->n_outer; k++) {
            const int32_t v = k < d->n_in ? d->in[k] : d->outer[k - d->n_in];
            if (v == OG_NONE)
                continue;
            if (g->v[v].producer == OG_NONE && !g->v[v].given && k < d->n_in) {
                node_label(g, d, label, sizeof label);
                st = om_fail(j, DTCAST_ERR_BAD_FILE, "%s reads '%.*s', which no node, graph input "
                             "or initializer gives", label, (int)(g->v[v].len > 100 ? 100 : g->v[v].len),
                             (const char *)g->v[v].name);
                break;
            }
            if (g->v[v].producer != OG_NONE) {
                users_at[v + 1]++;
                pending[i]++;
            }
        }
    }
    for (size_t v = 0; v < g->nv; v++)
        users_at[v + 1] += users_at[v];
    for (size_t i = 0; i < g->nn && st == DTCAST_OK; i++) {
        const og_node *d = &g->n[i];
        for (int k = 0; k < d->n_in + d->n_outer; k++) {
            const int32_t v = k < d->n_in ? d->in[k] : d->outer[k - d->n_in];
            if (v != OG_NONE && g->v[v].producer != OG_NONE)
                users[users_at[v] + fill[v]++] = (int32_t)i;
        }
    }
    free(fill);
    /* Kahn, with a min-heap of ready node indexes (stable order) */
    int32_t *heap = st == DTCAST_OK ? malloc((g->nn + 1) * sizeof *heap) : NULL;
    size_t nh = 0, done = 0;
    if (st == DTCAST_OK && !heap)
        st = oom(j);
    for (size_t i = 0; st == DTCAST_OK && i < g->nn; i++) {
        if (pending[i])
            continue;
        heap[nh++] = (int32_t)i; /* increasing: already a heap */
    }
    while (st == DTCAST_OK && nh) {
        const int32_t top = heap[0];
        heap[0] = heap[--nh];
        for (size_t p = 0;;) { /* sift down */
            size_t c = 2 * p + 1;
            if (c >= nh)
                break;
            if (c + 1 < nh && heap[c + 1] < heap[c])
                c++;
            if (heap[p] <= heap[c])
                break;
            const int32_t x = heap[p];
            heap[p] = heap[c];
            heap[c] = x;
            p = c;
        }
        g->order[done++] = top;
        const og_node *d = &g->n[top];
        for (int k = 0; k < d->n_out; k++) {
            const int32_t v = d->out[k];
            if (v == OG_NONE)
                continue;
            for (size_t u = users_at[v]; u < users_at[v + 1]; u++) {
                const int32_t c = users[u];
                if (--pending[c] == 0) { /* sift up */
                    size_t q = nh++;
                    heap[q] = c;
                    while (q && heap[(q - 1) / 2] > heap[q]) {
                        const int32_t x = heap[q];
                        heap[q] = heap[(q - 1) / 2];
                        heap[(q - 1) / 2] = x;
                        q = (q - 1) / 2;
                    }
                }
            }
        }
    }
    if (st == DTCAST_OK && done != g->nn) {
        size_t stuck = 0;
        while (stuck < g->nn && !pending[stuck])
            stuck++;
        node_label(g, &g->n[stuck < g->nn ? stuck : 0], label, sizeof label);
        st = om_fail(j, DTCAST_ERR_BAD_FILE, "the graph has a cycle: %s waits on itself (%zu of "
                     "%zu nodes cannot be ordered)", label, g->nn - done, g->nn);
    }
    free(heap);
    free(pending);
    free(users_at);
    free(users);
    return st;
}

/* ---- 2. and 3. types, and which nodes compute in T ------------------------------------------ */

static int default_domain(const og_node *d)
{
    return d->domain_len == 0 || eq(d->domain, d->domain_len, "ai.onnx");
}

static int one_type(uint64_t mask)
{
    if (!mask || (mask & (mask - 1)))
        return 0;
    return __builtin_ctzll(mask);
}

/* The ops whose output 0 has the type an attribute names: its name, and the type when it is
 * absent (0: the type of input 0; -1: the attribute is required). */
typedef struct typed_op {
    const char *op, *attr;
    int absent;
} typed_op;
static const typed_op typed_ops[] = {
    {"Cast", "to", -1},          {"RandomNormal", "dtype", ONNX_FLOAT},
    {"RandomUniform", "dtype", ONNX_FLOAT}, {"RandomNormalLike", "dtype", 0},
    {"RandomUniformLike", "dtype", 0}, {"EyeLike", "dtype", 0},
    {"Bernoulli", "dtype", 0},   {"Multinomial", "dtype", ONNX_INT32},
};

static const typed_op *typed_op_of(const og_node *d)
{
    if (!default_domain(d))
        return NULL;
    for (size_t i = 0; i < sizeof typed_ops / sizeof typed_ops[0]; i++)
        if (eq(d->op, d->op_len, typed_ops[i].op))
            return &typed_ops[i];
    return NULL;
}

static int node_blocked(const om_job *j, const og_node *d)
{
    const dt_cast_request *r = j->r;
    char buf[256];
    if (r->block_ops.n) {
        snprintf(buf, sizeof buf, "%.*s", (int)(d->op_len > 200 ? 200 : d->op_len),
                 (const char *)d->op);
        if (dt_glob_any(&r->block_ops, buf))
            return 1;
    }
    if (r->block_nodes.n && d->name_len) {
        snprintf(buf, sizeof buf, "%.*s", (int)(d->name_len > 250 ? 250 : d->name_len),
                 (const char *)d->name);
        if (dt_glob_any(&r->block_nodes, buf))
            return 1;
    }
    return 0;
}

/* A tensor the job may store in T: float32, its data in a layout the writer rewrites. */
static int tensor_convertible(const om_tensor *t)
{
    return t->data_type == ONNX_FLOAT && !t->segment && t->where != W_NONE &&
           (t->where == W_EXTERNAL || t->runs == 1);
}

/* The constraints of flip the request's runtime has a kernel for when bound to T (the node's
 * other constraints keep their types), in *runnable: all of flip if it can, else the subset
 * flipping the most constraints it can run (of those, the largest as a bit mask), 0 when none.
 * A subset that leaves output 0's constraint out, when flip has it, is none: the node's result
 * would stay float32 with only a side input in T (Resize's roi alone), which saves nothing, and
 * onnxruntime's Resize reads that input as float32 whatever its kernel's registration says.
 *
 * The kernel is looked up with the types each input and output would have: T where its formal
 * parameter's constraint is in the subset and the value is float32 now, its type otherwise. */
static dtcast_status runtime_flip(om_job *j, om_graph_plan *g, const og_node *d,
                                  const dt_onnx_schema *s, uint64_t flip, uint64_t *runnable)
{
    const size_t need = (size_t)d->n_in + (size_t)d->n_out;
    if (need > g->cap_types) {
        int32_t *p = realloc(g->types, need * sizeof *p);
        if (!p)
            return oom(j);
        g->types = p;
        g->cap_types = need;
    }
    int32_t *in = g->types, *out = g->types + d->n_in;
    const int bits = __builtin_popcountll(flip);
    int best = -1;
    *runnable = 0;
    uint64_t must = 0; /* output 0's constraint, when it flips */
    const dt_onnx_formal *f0 = d->n_out > 0 ? dt_onnx_formal_at(s->out, s->n_out, 0) : NULL;
    if (f0 && f0->constraint >= 0 && f0->constraint < 64 && (flip >> f0->constraint & 1))
        must = (uint64_t)1 << f0->constraint;
    /* an output typed like input 0 (RandomNormalLike without dtype): the two flip together */
    const typed_op *to = typed_op_of(d);
    const dt_onnx_formal *i0 = d->n_in > 0 ? dt_onnx_formal_at(s->in, s->n_in, 0) : NULL;
    if (to && to->absent == 0 && !d->has_to && !d->has_dtype && must && i0 &&
        i0->constraint >= 0 && i0->constraint < 64 && (flip >> i0->constraint & 1))
        must |= (uint64_t)1 << i0->constraint;
    /* every subset of flip, from flip down (a mask's subsets in decreasing order); past 8
     * constraints (no ONNX operator has them) only flip itself */
    for (uint64_t sub = flip;; sub = (sub - 1) & flip) {
        const int n = __builtin_popcountll(sub);
        if (sub && n > best && (sub & must) == must) {
            for (int side = 0; side < 2; side++) {
                const int nk = side ? d->n_out : d->n_in;
                const int32_t *vals = side ? d->out : d->in;
                int32_t *types = side ? out : in;
                for (int k = 0; k < nk; k++) {
                    const dt_onnx_formal *f = dt_onnx_formal_at(side ? s->out : s->in,
                                                                side ? s->n_out : s->n_in, k);
                    const int c = f ? f->constraint : -1;
                    const int32_t t = vals[k] == OG_NONE ? 0 : g->v[vals[k]].type;
                    types[k] = t == ONNX_FLOAT && c >= 0 && c < 64 && (sub >> c & 1)
                                   ? (int32_t)g->target : t;
                }
            }
            if (dt_onnx_kernel_exists((dt_onnx_runtime)j->r->onnx_runtime, "", 0,
                                      (const char *)d->op, d->op_len, j->opset, s, in, d->n_in,
                                      out, d->n_out)) {
                best = n;
                *runnable = sub;
            }
        }
        if (!sub || best == bits || bits > 8)
            break;
    }
    return DTCAST_OK;
}

/* Whether an Identity of a `type` value runs on the request's runtime (a Cast to its own type is
 * written as one: else it stays a Cast, which the runtimes run for every type). */
static int identity_runs(const om_job *j, int64_t type)
{
    if (j->r->onnx_runtime == DT_ONNX_RUNTIME_ANY)
        return 1;
    const dt_onnx_schema *s = dt_onnx_schema_find("", 0, "Identity", 8, j->opset);
    const int32_t t = (int32_t)type;
    return s && dt_onnx_kernel_exists((dt_onnx_runtime)j->r->onnx_runtime, "", 0, "Identity", 8,
                                      j->opset, s, &t, 1, &t, 1);
}

/* The types of d's outputs, and whether it computes in T (d->convert, d->in_t, set_type). */
static dtcast_status type_node(om_job *j, om_graph_plan *g, og_node *d)
{
    const int64_t T = g->target;
    const uint64_t tbit = DT_ONNX_TYPE_BIT(T);
    int32_t bind[64];
    memset(bind, 0, sizeof bind);
    const dt_onnx_schema *s = default_domain(d)
                                  ? dt_onnx_schema_find("", 0, (const char *)d->op, d->op_len, j->opset)
                                  : NULL;
    const typed_op *to = typed_op_of(d);
    int known = 1;
    if (s)
        for (int k = 0; k < d->n_in; k++) {
            const dt_onnx_formal *f = dt_onnx_formal_at(s->in, s->n_in, k);
            const int32_t v = d->in[k];
            if (v == OG_NONE)
                continue;
            if (!g->v[v].type)
                known = 0;
            if (f && f->constraint >= 0 && f->constraint < 64 && !bind[f->constraint])
                bind[f->constraint] = g->v[v].type;
        }
    /* the outputs' types */
    for (int k = 0; k < d->n_out; k++) {
        const int32_t v = d->out[k];
        if (v == OG_NONE)
            continue;
        int32_t type = 0;
        const dt_onnx_formal *f = s ? dt_onnx_formal_at(s->out, s->n_out, k) : NULL;
        if (k == 0 && to) {
            type = d->has_to ? (int32_t)d->to
                   : d->has_dtype ? (int32_t)d->dtype
                   : to->absent > 0 ? to->absent
                   : to->absent == 0 && d->n_in > 0 && d->in[0] != OG_NONE ? g->v[d->in[0]].type
                                                                           : 0;
        } else if (k == 0 && s && eq(d->op, d->op_len, "Constant")) {
            type = d->value_tensor != OG_NONE ? (int32_t)j->t[d->value_tensor].data_type : 0;
        } else if (k == 0 && s && eq(d->op, d->op_len, "ConstantOfShape")) {
            type = d->value_tensor != OG_NONE ? (int32_t)j->t[d->value_tensor].data_type : ONNX_FLOAT;
        } else if (f && f->constraint >= 0 && f->constraint < 64 && bind[f->constraint]) {
            type = bind[f->constraint];
        } else if (f) {
            type = one_type(f->types);
        }
        if (!type)
            type = g->v[v].decl_type; /* value_info or the graph's output, when it has one */
        if (f && f->constraint >= 0 && f->constraint < 64 && !bind[f->constraint])
            bind[f->constraint] = type;
        g->v[v].type = type;
        if (!type)
            known = 0;
    }
    /* which constraints take T */
    if (!s || d->subgraph || d->blocked || !known)
        goto keep;
    uint64_t flip = 0;
    for (int c = 0; c < s->n_con && c < 64; c++)
        if (bind[c] == ONNX_FLOAT && (s->con[c].tensor_types & tbit))
            flip |= (uint64_t)1 << c;
    int blocked_float = 0;
    for (int c = 0; c < s->n_con && c < 64; c++)
        if (bind[c] == ONNX_FLOAT && !(s->con[c].tensor_types & tbit))
            blocked_float = 1;
    if (!flip) {
        if (blocked_float && g->blocked_schema++ == 0)
            snprintf(g->first_schema, sizeof g->first_schema, "%.*s at opset %lld",
                     (int)(d->op_len > 60 ? 60 : d->op_len), (const char *)d->op,
                     (long long)j->opset);
        goto keep;
    }
    if (j->r->onnx_runtime != DT_ONNX_RUNTIME_ANY) { /* what the runtime has kernels for */
        uint64_t runnable = 0;
        const dtcast_status st = runtime_flip(j, g, d, s, flip, &runnable);
        if (st != DTCAST_OK)
            return st;
        if (runnable != flip && (runnable ? g->partial_runtime++ : g->blocked_runtime++) == 0 &&
            !g->first_runtime[0])
            snprintf(g->first_runtime, sizeof g->first_runtime, "%.*s at opset %lld",
                     (int)(d->op_len > 60 ? 60 : d->op_len), (const char *)d->op,
                     (long long)j->opset);
        if (!(flip = runnable))
            goto keep;
    }
    /* an attribute-typed output: to/dtype becomes T, or (absent, following input 0) comes with
     * it; a Constant / ConstantOfShape: its tensor is stored in T */
    int out0_flips = 0;
    if (d->n_out > 0 && d->out[0] != OG_NONE && g->v[d->out[0]].type == ONNX_FLOAT) {
        const dt_onnx_formal *f = dt_onnx_formal_at(s->out, s->n_out, 0);
        const int c = f ? f->constraint : -1;
        out0_flips = c >= 0 && c < 64 && (flip >> c & 1);
    }
    if (to && out0_flips) {
        if (d->has_to || d->has_dtype)
            d->set_type = 1;
        else if (to->absent == ONNX_FLOAT)
            d->set_type = 2;
        /* absent, following input 0: T when input 0 takes T */
    }
    if ((eq(d->op, d->op_len, "Constant") || eq(d->op, d->op_len, "ConstantOfShape")) && out0_flips) {
        om_tensor *t = d->value_tensor != OG_NONE ? &j->t[d->value_tensor] : NULL;
        if (!t || !tensor_convertible(t))
            goto keep;
        t->convert = 1;
    }
    d->convert = 1;
    g->converted++;
    for (int k = 0; k < d->n_in; k++) {
        const dt_onnx_formal *f = dt_onnx_formal_at(s->in, s->n_in, k);
        const int32_t v = d->in[k];
        const int c = f ? f->constraint : -1;
        d->in_t[k] = v != OG_NONE && c >= 0 && c < 64 && (flip >> c & 1) &&
                     g->v[v].type == ONNX_FLOAT;
    }
    for (int k = 0; k < d->n_out; k++) {
        const dt_onnx_formal *f = dt_onnx_formal_at(s->out, s->n_out, k);
        const int32_t v = d->out[k];
        const int c = f ? f->constraint : -1;
        if (v == OG_NONE || g->v[v].type != ONNX_FLOAT)
            continue;
        if (k == 0 && to && !d->set_type && !(to->absent == 0 && d->n_in && d->in_t[0]))
            continue; /* its type is Cast's/dtype's own, not rewritten */
        g->v[v].made_t = c >= 0 && c < 64 && (flip >> c & 1);
    }
    /* a Cast that now casts to its input's type (Cast(to=FLOAT) of a float16 value, the second
     * of a float16 -> float32 -> float16 pair): written as Identity */
    if (eq(d->op, d->op_len, "Cast") && d->n_in == 1 && d->n_out == 1 && d->in[0] != OG_NONE &&
        d->out[0] != OG_NONE) {
        const int64_t from = d->in_t[0] ? T : g->v[d->in[0]].type;
        const int64_t into = d->set_type ? T : d->to;
        d->identity = from == into && from != 0 && identity_runs(j, from);
    }
    return DTCAST_OK;
keep:
    if (d->blocked)
        g->blocked_request++;
    else if (d->subgraph)
        g->blocked_subgraph++;
    for (int k = 0; k < d->n_in; k++)
        d->in_t[k] = 0;
    return DTCAST_OK;
}

/* ---- 4. homes and names ---------------------------------------------------------------------- */

static dtcast_status plan_names(om_job *j, om_graph_plan *g)
{
    const int keep_io = j->r->keep_io_types;
    for (size_t i = 0; i < g->nn; i++) {
        const og_node *d = &g->n[i];
        for (int k = 0; k < d->n_in; k++) {
            const int32_t v = d->in[k];
            if (v == OG_NONE || g->v[v].type != ONNX_FLOAT)
                continue;
            if (d->in_t[k])
                g->v[v].need_t = 1;
            else
                g->v[v].need_float = 1;
        }
        for (int k = 0; k < d->n_outer; k++)
            g->v[d->outer[k]].captured = 1;
    }
    for (size_t i = 0; i < g->nv; i++) {
        og_value *v = &g->v[i];
        if (v->type != ONNX_FLOAT)
            continue;
        if (v->tensor != OG_NONE) { /* an initializer: stored in T when only T is read */
            om_tensor *t = &j->t[v->tensor];
            v->home_t = !v->is_input && !v->is_output && !v->captured && v->need_t &&
                        !v->need_float && tensor_convertible(t) && om_tensor_chosen(j, t);
            if (v->home_t) {
                t->convert = 1;
                if (!(t->new_name = malloc(v->len + 1)))
                    return oom(j);
                memcpy(t->new_name, v->name, v->len);
                t->new_name[v->len] = '\0';
            }
            v->made_t = v->home_t;
        } else if (v->is_input) {
            v->home_t = !keep_io && !v->captured;
            v->made_t = v->home_t;
        } else { /* a node's output: the type its producer writes, unless a name must keep
                  * float32 (read by a subgraph) or the graph's output type is asked for */
            v->home_t = v->is_output ? !keep_io && !v->captured : !v->captured && v->made_t;
        }
        /* the other version: written by the producer (made_t != home_t) or by a Cast */
        const int other_needed = v->made_t != v->home_t ||
                                 (v->home_t ? v->need_float : v->need_t);
        if (other_needed) {
            char base[512];
            snprintf(base, sizeof base, "%.*s", (int)(v->len > 400 ? 400 : v->len),
                     (const char *)v->name);
            /* named after the type it holds: V_float16 for T, V_float32 for float32 */
            char *name = om_new_name(j, base, v->home_t ? DTCAST_FLOAT32 : j->r->to);
            if (!name)
                return oom(j);
            v->other = name;
            g->casts++;
        }
    }
    return DTCAST_OK;
}

dtcast_status og_plan(om_job *j)
{
    om_graph_plan *g = calloc(1, sizeof *g);
    if (!g)
        return oom(j);
    j->plan = g;
    g->target = (int64_t)j->r->to; /* float16 or bfloat16 (check_request): ONNX's codes */
    dtcast_status st = read_graph(j, g);
    if (st == DTCAST_OK)
        st = sort_nodes(j, g);
    if (st != DTCAST_OK)
        return st;
    for (size_t i = 0; i < g->nn; i++)
        g->n[i].blocked = node_blocked(j, &g->n[i]);
    for (size_t i = 0; i < g->nn; i++)
        if ((st = type_node(j, g, &g->n[g->order[i]])) != DTCAST_OK)
            return st;
    if ((st = plan_names(j, g)) != DTCAST_OK)
        return st;
    for (size_t i = 0; i < j->nt; i++)
        if (j->t[i].convert)
            j->converted++;
    if (j->r->report) {
        char text[900], tn[32], rt[300] = "";
        snprintf(tn, sizeof tn, "%s", dtcast_type_name(j->r->to));
        if (j->r->onnx_runtime != DT_ONNX_RUNTIME_ANY)
            snprintf(rt, sizeof rt, ", %zu for want of a kernel in %s in %s %s (%zu more in "
                     "part)%s%s%s", g->blocked_runtime, tn,
                     dt_onnx_runtime_name((dt_onnx_runtime)j->r->onnx_runtime),
                     dt_onnx_runtime_version((dt_onnx_runtime)j->r->onnx_runtime),
                     g->partial_runtime, g->first_runtime[0] ? " (first: " : "",
                     g->first_runtime, g->first_runtime[0] ? ")" : "");
        snprintf(text, sizeof text, "graph mode: %zu of %zu nodes compute in %s, %zu Casts added; "
                 "kept in their types: %zu by their schema%s%s%s%s, %zu with subgraphs, %zu "
                 "blocked\n", g->converted, g->nn, tn, g->casts, g->blocked_schema,
                 g->blocked_schema ? " (first: " : "", g->first_schema,
                 g->blocked_schema ? ")" : "", rt, g->blocked_subgraph, g->blocked_request);
        dt_job_report(&j->r->hooks, text);
    }
    return DTCAST_OK;
}

void og_free(om_job *j)
{
    om_graph_plan *g = j->plan;
    if (!g)
        return;
    for (size_t i = 0; i < g->nv; i++)
        free(g->v[i].other);
    free(g->v);
    free(g->slot);
    free(g->n);
    free(g->order);
    free(g->types);
    free(g->arena);
    free(g->flags);
    free(g);
    j->plan = NULL;
}

/* ---- 5. writing -------------------------------------------------------------------------------- */

/* The name of v in type T (as_t) or float32. */
static void name_of(const og_value *v, int as_t, const uint8_t **p, size_t *n)
{
    if (v->type != ONNX_FLOAT || as_t == v->home_t || !v->other) {
        *p = v->name;
        *n = v->len;
    } else {
        *p = (const uint8_t *)v->other;
        *n = strlen(v->other);
    }
}

typedef struct og_cast {
    const og_value *v;
    int from_t; /* the Cast reads the version in T (else float32) */
} og_cast;

static dtcast_status emit_og_cast_attr(om_job *j, om_writer *w, const void *arg)
{
    const og_cast *c = arg;
    dtcast_status st = om_w_text(j, w, AP_NAME, "to", 2);
    if (st == DTCAST_OK && (st = om_w_key(j, w, AP_I, WT_VARINT)) == DTCAST_OK)
        st = om_w_varint(j, w, c->from_t ? (uint64_t)ONNX_FLOAT : (uint64_t)j->plan->target);
    if (st == DTCAST_OK && (st = om_w_key(j, w, AP_TYPE, WT_VARINT)) == DTCAST_OK)
        st = om_w_varint(j, w, AT_INT);
    return st;
}

static dtcast_status emit_og_cast(om_job *j, om_writer *w, const void *arg)
{
    const og_cast *c = arg;
    const uint8_t *in, *out;
    size_t in_n, out_n;
    name_of(c->v, c->from_t, &in, &in_n);
    name_of(c->v, !c->from_t, &out, &out_n);
    char name[600];
    snprintf(name, sizeof name, "dtcast_Cast_%.*s", (int)(out_n > 500 ? 500 : out_n),
             (const char *)out);
    dtcast_status st = om_w_text(j, w, NP_INPUT, in, in_n);
    if (st == DTCAST_OK)
        st = om_w_text(j, w, NP_OUTPUT, out, out_n);
    if (st == DTCAST_OK)
        st = om_w_text(j, w, NP_NAME, name, strlen(name));
    if (st == DTCAST_OK)
        st = om_w_text(j, w, NP_OP, "Cast", 4);
    if (st == DTCAST_OK)
        st = om_w_message(j, w, NP_ATTR, emit_og_cast_attr, c);
    return st;
}

/* The Cast after v's producer, when one is needed: from the version the producer writes to the
 * other. */
static dtcast_status value_cast(om_job *j, om_writer *w, const og_value *v)
{
    if (v->type != ONNX_FLOAT || !v->other)
        return DTCAST_OK;
    /* the producer writes made_t; the other version is needed (it has a name) */
    const og_cast c = {v, v->made_t};
    return om_w_message(j, w, GP_NODE, emit_og_cast, &c);
}

typedef struct type_attr {
    const char *name;
    int64_t value;
} type_attr;

static dtcast_status emit_type_attr(om_job *j, om_writer *w, const void *arg)
{
    const type_attr *a = arg;
    dtcast_status st = om_w_text(j, w, AP_NAME, a->name, strlen(a->name));
    if (st == DTCAST_OK && (st = om_w_key(j, w, AP_I, WT_VARINT)) == DTCAST_OK)
        st = om_w_varint(j, w, (uint64_t)a->value);
    if (st == DTCAST_OK && (st = om_w_key(j, w, AP_TYPE, WT_VARINT)) == DTCAST_OK)
        st = om_w_varint(j, w, AT_INT);
    return st;
}

static dtcast_status emit_og_node(om_job *j, om_writer *w, const void *arg)
{
    const og_node *d = arg;
    om_graph_plan *g = j->plan;
    pb n = om_reader(j, d->s.start, d->s.end);
    dtcast_status st = DTCAST_OK;
    int in_k = 0, out_k = 0;
    const typed_op *to = typed_op_of(d);
    while (st == DTCAST_OK && pb_more(&n)) {
        uint32_t f = 0;
        int wt = 0;
        size_t at = 0;
        pb sub = {0};
        if ((st = pb_key(&n, &f, &wt, &at)) != DTCAST_OK)
            break;
        if ((f == NP_INPUT || f == NP_OUTPUT) && wt == WT_BYTES) {
            if ((st = pb_sub(&n, &sub)) != DTCAST_OK)
                break;
            const int is_in = f == NP_INPUT;
            const int k = is_in ? in_k++ : out_k++;
            const int32_t v = is_in ? (k < d->n_in ? d->in[k] : OG_NONE)
                                    : (k < d->n_out ? d->out[k] : OG_NONE);
            if (v == OG_NONE) {
                st = om_w_copy(j, w, at, n.pos);
                continue;
            }
            const uint8_t *p;
            size_t len;
            name_of(&g->v[v], is_in ? d->in_t[k] : g->v[v].made_t, &p, &len);
            st = om_w_text(j, w, f, p, len);
            continue;
        }
        if (f == NP_OP && wt == WT_BYTES && d->identity) {
            if ((st = pb_skip(&n, wt, at)) == DTCAST_OK)
                st = om_w_text(j, w, NP_OP, "Identity", 8);
            continue;
        }
        if (f == NP_ATTR && wt == WT_BYTES) {
            if ((st = pb_sub(&n, &sub)) != DTCAST_OK)
                break;
            if (d->identity)
                continue; /* Identity has no attributes (to, saturate, round_mode) */
            if (d->set_type == 1 && at == d->type_attr_start) {
                const type_attr a = {to ? to->attr : "to", g->target};
                st = om_w_message(j, w, NP_ATTR, emit_type_attr, &a);
            } else {
                const span a = {sub.pos, sub.end};
                st = om_attr_changes(j, sub) ? om_w_message(j, w, NP_ATTR, om_emit_attr, &a)
                                             : om_w_copy(j, w, at, n.pos);
            }
            continue;
        }
        if ((st = pb_skip(&n, wt, at)) == DTCAST_OK)
            st = om_w_copy(j, w, at, n.pos);
    }
    if (st == DTCAST_OK && d->set_type == 2 && to) {
        const type_attr a = {to->attr, g->target};
        st = om_w_message(j, w, NP_ATTR, emit_type_attr, &a);
    }
    return st;
}

/* A ValueInfoProto whose tensor element type becomes T: the fields on the path
 * ValueInfoProto.type -> TypeProto.tensor_type -> elem_type are written anew, every other
 * field is copied. */
typedef struct retype {
    span s;
    int depth; /* 0: the ValueInfoProto, 1: its TypeProto, 2: the TypeProto.Tensor */
} retype;

static dtcast_status emit_retyped(om_job *j, om_writer *w, const void *arg)
{
    static const uint32_t path[2] = {VI_TYPE, TP_TENSOR};
    const retype *r = arg;
    pb m = om_reader(j, r->s.start, r->s.end);
    dtcast_status st = DTCAST_OK;
    uint32_t f = 0;
    int wt = 0;
    size_t at = 0;
    while (pb_next(&m, &f, &wt, &at, &st)) {
        pb sub = {0};
        if (r->depth < 2 && f == path[r->depth] && wt == WT_BYTES) {
            if ((st = pb_sub(&m, &sub)) == DTCAST_OK) {
                const retype inner = {{sub.pos, sub.end}, r->depth + 1};
                st = om_w_message(j, w, f, emit_retyped, &inner);
            }
        } else if ((st = pb_skip(&m, wt, at)) != DTCAST_OK) {
            break;
        } else if (r->depth == 2 && f == TT_ELEM && wt == WT_VARINT) {
            if ((st = om_w_key(j, w, TT_ELEM, WT_VARINT)) == DTCAST_OK)
                st = om_w_varint(j, w, (uint64_t)j->plan->target);
        } else {
            st = om_w_copy(j, w, at, m.pos);
        }
    }
    return st;
}

dtcast_status og_emit_graph(om_job *j, om_writer *w, const void *arg)
{
    (void)arg;
    om_graph_plan *g = j->plan;
    pb gr = om_reader(j, j->graph.start, j->graph.end);
    dtcast_status st = DTCAST_OK;
    int nodes_done = 0;
    while (st == DTCAST_OK && pb_more(&gr)) {
        uint32_t f = 0;
        int wt = 0;
        size_t at = 0;
        pb sub = {0};
        if ((st = pb_key(&gr, &f, &wt, &at)) != DTCAST_OK)
            break;
        if (f == GP_NODE && wt == WT_BYTES) {
            st = pb_skip(&gr, wt, at);
            if (st != DTCAST_OK || nodes_done++)
                continue;
            /* every node here, at the first node's place: the Casts of the graph's inputs and
             * initializers, then the nodes in order, each followed by its outputs' Casts */
            for (size_t i = 0; st == DTCAST_OK && i < g->nv; i++)
                if (g->v[i].producer == OG_NONE && g->v[i].given)
                    st = value_cast(j, w, &g->v[i]);
            for (size_t i = 0; st == DTCAST_OK && i < g->nn; i++) {
                const og_node *d = &g->n[g->order[i]];
                st = om_w_message(j, w, GP_NODE, emit_og_node, d);
                for (int k = 0; st == DTCAST_OK && k < d->n_out; k++)
                    if (d->out[k] != OG_NONE)
                        st = value_cast(j, w, &g->v[d->out[k]]);
            }
            continue;
        }
        if ((f == GP_INITIALIZER || f == GP_INPUT || f == GP_OUTPUT || f == GP_VALUE_INFO) &&
            wt == WT_BYTES) {
            if ((st = pb_sub(&gr, &sub)) != DTCAST_OK)
                break;
            if (f == GP_INITIALIZER) {
                const om_tensor *t = om_tensor_at(j, sub.pos);
                st = t && om_tensor_changes(j, t) ? om_w_message(j, w, f, om_emit_tensor, t)
                                                  : om_w_copy(j, w, at, gr.pos);
                continue;
            }
            pb name = {0};
            int32_t type = 0;
            if ((st = read_value_info(sub, &name, &type)) != DTCAST_OK)
                break;
            const int32_t k = name.end > name.pos
                                  ? value_find(g, j->map + name.pos, name.end - name.pos)
                                  : OG_NONE;
            const int to_t = k != OG_NONE && g->v[k].home_t && type == ONNX_FLOAT;
            if (to_t) {
                const retype r = {{sub.pos, sub.end}, 0};
                st = om_w_message(j, w, f, emit_retyped, &r);
            } else {
                st = om_w_copy(j, w, at, gr.pos);
            }
            continue;
        }
        if ((st = pb_skip(&gr, wt, at)) == DTCAST_OK)
            st = om_w_copy(j, w, at, gr.pos);
    }
    if (st == DTCAST_OK && !nodes_done)
        for (size_t i = 0; st == DTCAST_OK && i < g->nv; i++)
            if (g->v[i].producer == OG_NONE && g->v[i].given)
                st = value_cast(j, w, &g->v[i]);
    return st;
}
