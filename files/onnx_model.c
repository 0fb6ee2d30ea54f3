/* ONNX models in the cast job: weights-only conversion (onnx_model.h; docs/onnx_models.md).
 *
 * Three steps over the model file, mapped read-only:
 *   1. scan: every TensorProto of the model (initializers, Constant values, other attribute
 *      tensors) with where its data is, every value name (for new names that collide with
 *      none), the graph inputs (an initializer that is also one stays as it is: a caller may
 *      feed it), the opset;
 *   2. decide: which tensors are stored in the target type (chosen, floating-point, wider than
 *      the target, at least DT_ONNX_MIN_ELEMENTS, every value still finite and nonzero-ness
 *      kept), and where each tensor's data goes (in the model, or the output's data file);
 *   3. write: the messages on the way from the ModelProto to a changed tensor are written anew
 *      (their other fields byte for byte as they were), every other field is copied. Protobuf
 *      puts a message's length before it, so each rewritten message is first counted (the same
 *      code, writing nothing), then written; data is streamed through the pipeline.
 *
 * A converted initializer w becomes w_<type> and `Cast(w_<type>) -> w` (to = its old type) is
 * the first node of its graph; a converted Constant keeps its place, writes <out>_<type>, and
 * its Cast follows it. Nothing else in the graph changes, so consumers, value_info, graph
 * inputs and outputs, and subgraphs reading the name from the outer scope all see the same name
 * with the same type as before. */
#include "files/onnx_model.h"
#include "files/onnx_model_impl.h"

#include "files/file.h"
#include "files/job.h"
#include "files/onnx_schema.h"
#include "files/protobuf.h"
#include "files/report.h"
#include "files/value_scan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

dtcast_status om_fail(om_job *j, dtcast_status st, const char *fmt, ...)
{
    char text[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return dt_job_fail(j->err, 0, st, "%s: %s", j->shown, text);
}

pb om_reader(om_job *j, size_t start, size_t end)
{
    pb r = {j->map, start, end, j->shown, j->err};
    return r;
}

/* ---- the value names ------------------------------------------------------------------------ */

static uint64_t name_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211u;
    return h;
}

int om_names_has(const om_names *s, const uint8_t *p, size_t n)
{
    if (!s->cap)
        return 0;
    for (size_t i = name_hash(p, n) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (!s->p[i])
            return 0;
        if (s->len[i] == n && memcmp(s->p[i], p, n) == 0)
            return 1;
    }
}

int om_names_add(om_names *s, const uint8_t *p, size_t n)
{
    if (om_names_has(s, p, n))
        return 1;
    if (2 * (s->n + 1) > s->cap) {
        om_names g = {NULL, NULL, s->cap ? 2 * s->cap : 1024, 0};
        g.p = calloc(g.cap, sizeof *g.p);
        g.len = calloc(g.cap, sizeof *g.len);
        if (!g.p || !g.len) {
            free(g.p);
            free(g.len);
            return 0;
        }
        for (size_t i = 0; i < s->cap; i++)
            if (s->p[i])
                om_names_add(&g, s->p[i], s->len[i]);
        free(s->p);
        free(s->len);
        *s = g;
    }
    size_t i = name_hash(p, n) & (s->cap - 1);
    while (s->p[i])
        i = (i + 1) & (s->cap - 1);
    s->p[i] = p;
    s->len[i] = n;
    s->n++;
    return 1;
}

/* ---- 1. the scan ------------------------------------------------------------------------------ */

static dtcast_status add_name(om_job *j, const pb *v)
{
    if (!om_names_add(&j->names, j->map + v->pos, v->end - v->pos))
        return om_fail(j, DTCAST_ERR_OUT_OF_MEMORY, "out of memory for the model's names");
    return DTCAST_OK;
}

static char *copy_text(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

/* An external_data entry (key, value) of the tensor at t. */
static dtcast_status scan_external_entry(om_job *j, pb *r, om_tensor *t)
{
    pb e = {0}, key = {0}, value = {0};
    dtcast_status st = pb_sub(r, &e);
    int has_key = 0, has_value = 0;
    uint32_t f = 0;
    int wt = 0;
    size_t at = 0;
    while (pb_next(&e, &f, &wt, &at, &st)) {
        if ((f == SS_KEY || f == SS_VALUE) && wt == WT_BYTES) {
            st = pb_sub(&e, f == SS_KEY ? &key : &value);
            *(f == SS_KEY ? &has_key : &has_value) = 1;
        } else {
            st = pb_skip(&e, wt, at);
        }
    }
    if (st != DTCAST_OK || !has_key || !has_value)
        return st != DTCAST_OK ? st : om_fail(j, DTCAST_ERR_BAD_FILE, "an external_data entry without key or value at byte %zu", e.pos);
    const char *k = (const char *)j->map + key.pos;
    size_t kn = key.end - key.pos, vn = value.end - value.pos;
    const char *v = (const char *)j->map + value.pos;
    if (kn == 8 && memcmp(k, "location", 8) == 0) {
        free(t->location);
        if (!(t->location = copy_text(j->map + value.pos, vn)))
            return om_fail(j, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
        if (memchr(t->location, '\0', vn))
            return om_fail(j, DTCAST_ERR_BAD_FILE, "tensor '%s': a location with a NUL byte at byte %zu",
                        t->name, value.pos);
    } else if ((kn == 6 && memcmp(k, "offset", 6) == 0) || (kn == 6 && memcmp(k, "length", 6) == 0)) {
        uint64_t x = 0;
        if (vn == 0 || vn > 19)
            return om_fail(j, DTCAST_ERR_BAD_FILE, "tensor '%s': external %.*s '%.*s' is not a number "
                        "(byte %zu)", t->name, (int)kn, k, (int)(vn > 40 ? 40 : vn), v, value.pos);
        for (size_t i = 0; i < vn; i++) {
            if (v[i] < '0' || v[i] > '9')
                return om_fail(j, DTCAST_ERR_BAD_FILE, "tensor '%s': external %.*s '%.*s' is not a "
                            "number (byte %zu)", t->name, (int)kn, k, (int)vn, v, value.pos);
            x = x * 10 + (uint64_t)(v[i] - '0');
        }
        if (k[0] == 'o') {
            t->ext_offset = x;
        } else {
            t->ext_length = x;
            t->has_length = 1;
        }
    }
    return DTCAST_OK;
}

/* A TensorProto: its fields as scanned into a new om_tensor (kind, name as given). */
static dtcast_status scan_tensor(om_job *j, pb *r, int kind, const pb *const_out)
{
    pb m = {0};
    dtcast_status st = pb_sub(r, &m);
    if (st != DTCAST_OK)
        return st;
    if (j->nt == j->cap) {
        size_t cap = j->cap ? 2 * j->cap : 64;
        om_tensor *g = realloc(j->t, cap * sizeof *g);
        if (!g)
            return om_fail(j, DTCAST_ERR_OUT_OF_MEMORY, "out of memory for the model's tensors");
        j->t = g;
        j->cap = cap;
    }
    om_tensor *t = &j->t[j->nt++];
    memset(t, 0, sizeof *t);
    t->start = m.pos;
    t->end = m.end;
    t->kind = kind;
    t->depth = j->depth;
    t->count = 1;
    int location_external = 0;
    while (pb_more(&m)) {
        uint32_t f = 0;
        int wt = 0;
        size_t at = 0;
        uint64_t v = 0;
        if ((st = pb_key(&m, &f, &wt, &at)) != DTCAST_OK)
            return st;
        pb s = {0};
        switch (f) {
        case T_DIMS:
            if (wt == WT_VARINT) {
                if ((st = pb_varint(&m, &v)) != DTCAST_OK)
                    return st;
                if (t->ndim == DT_MAX_DIMS)
                    t->bad_dims = 1;
                else
                    t->dims[t->ndim++] = (int64_t)v;
            } else if (wt == WT_BYTES) {
                if ((st = pb_sub(&m, &s)) != DTCAST_OK)
                    return st;
                while (pb_more(&s)) {
                    if ((st = pb_varint(&s, &v)) != DTCAST_OK)
                        return st;
                    if (t->ndim == DT_MAX_DIMS)
                        t->bad_dims = 1;
                    else
                        t->dims[t->ndim++] = (int64_t)v;
                }
            } else {
                return pb_fail(&m, at, "dims has wire type %d", wt);
            }
            break;
        case T_TYPE:
            if ((st = pb_expect(&m, "data_type", wt, WT_VARINT, at)) != DTCAST_OK ||
                (st = pb_varint(&m, &t->data_type)) != DTCAST_OK)
                return st;
            break;
        case T_NAME:
            if ((st = pb_expect(&m, "name", wt, WT_BYTES, at)) != DTCAST_OK ||
                (st = pb_sub(&m, &s)) != DTCAST_OK)
                return st;
            if (kind == 1)
                break;
            free(t->name); /* a repeated field: the last one counts, as protobuf reads it */
            if (!(t->name = copy_text(j->map + s.pos, s.end - s.pos)))
                return om_fail(j, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
            break;
        case T_RAW:
        case T_FLOAT:
        case T_DOUBLE:
            if (wt != WT_BYTES) { /* one number per key: not one run of bytes */
                t->runs += 2;
                if ((st = pb_skip(&m, wt, at)) != DTCAST_OK)
                    return st;
                break;
            }
            if ((st = pb_sub(&m, &s)) != DTCAST_OK)
                return st;
            t->where = f == T_RAW ? W_RAW : W_TYPED;
            t->data_start = s.pos;
            t->data_len = s.end - s.pos;
            t->runs++;
            break;
        case T_SEGMENT:
            t->segment = 1;
            if ((st = pb_skip(&m, wt, at)) != DTCAST_OK)
                return st;
            break;
        case T_EXTERNAL:
            if ((st = pb_expect(&m, "external_data", wt, WT_BYTES, at)) != DTCAST_OK ||
                (st = scan_external_entry(j, &m, t)) != DTCAST_OK)
                return st;
            break;
        case T_LOCATION:
            if ((st = pb_expect(&m, "data_location", wt, WT_VARINT, at)) != DTCAST_OK ||
                (st = pb_varint(&m, &v)) != DTCAST_OK)
                return st;
            location_external = v == 1;
            break;
        default:
            if (f != T_DIMS && f != T_TYPE)
                t->runs += (f >= T_INT32 && f <= 7) || f == 11 ? 1 : 0; /* other value fields */
            if ((st = pb_skip(&m, wt, at)) != DTCAST_OK)
                return st;
        }
    }
    if (!t->name) {
        const pb *o = const_out;
        t->name = o ? copy_text(j->map + o->pos, o->end - o->pos) : copy_text((const uint8_t *)"", 0);
        if (!t->name)
            return om_fail(j, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int k = 0; k < t->ndim; k++) {
        if (t->dims[k] < 0 || __builtin_mul_overflow(t->count, (uint64_t)t->dims[k], &t->count))
            return om_fail(j, DTCAST_ERR_BAD_FILE, "tensor '%s' (byte %zu): dims are negative or "
                        "their product overflows", t->name, t->start);
    }
    if (t->bad_dims)
        return om_fail(j, DTCAST_ERR_BAD_FILE, "tensor '%s' (byte %zu): more than %d dims", t->name,
                    t->start, DT_MAX_DIMS);
    if (location_external) {
        if (!t->location)
            return om_fail(j, DTCAST_ERR_BAD_FILE, "tensor '%s' (byte %zu): external data without a "
                        "location", t->name, t->start);
        t->where = W_EXTERNAL;
        j->any_external = 1;
        /* inside the model's folder: relative, no "..", not empty */
        const char *l = t->location;
        int escapes = l[0] == '/' || l[0] == '\0' || strcmp(l, "..") == 0 ||
                      strncmp(l, "../", 3) == 0 || strstr(l, "/../") ||
                      (strlen(l) >= 3 && strcmp(l + strlen(l) - 3, "/..") == 0) || strchr(l, '\\');
        if (escapes)
            return om_fail(j, DTCAST_ERR_BAD_FILE, "tensor '%s': external data location '%s' is not "
                        "a relative path inside the model's folder", t->name, l);
    }
    return DTCAST_OK;
}

static dtcast_status scan_graph(om_job *j, pb *r);

/* --select-op / --exclude-op: the inputs of node n (op its op_type) into the sets of names read
 * by a node of a chosen / a left op type. Names are unique across a model's graphs and
 * subgraphs (ONNX's static single assignment), so a name is the tensor. */
static dtcast_status mark_readers(om_job *j, pb n, pb op)
{
    const dt_cast_request *r = j->r;
    if (!r || (!r->select_ops.n && !r->exclude_ops.n)) /* no request: the tensor scan */
        return DTCAST_OK;
    char buf[256];
    const size_t len = op.end - op.pos;
    snprintf(buf, sizeof buf, "%.*s", (int)(len > 250 ? 250 : len), (const char *)j->map + op.pos);
    const int sel = r->select_ops.n && dt_glob_any(&r->select_ops, buf);
    const int exc = r->exclude_ops.n && dt_glob_any(&r->exclude_ops, buf);
    dtcast_status st = DTCAST_OK;
    uint32_t f = 0;
    int wt = 0;
    size_t at = 0;
    while ((sel || exc) && pb_next(&n, &f, &wt, &at, &st)) {
        if (f != NP_INPUT || wt != WT_BYTES) {
            st = pb_skip(&n, wt, at);
            continue;
        }
        pb s = {0};
        if ((st = pb_sub(&n, &s)) != DTCAST_OK || s.end == s.pos)
            continue;
        if ((sel && !om_names_add(&j->read_by_selected, j->map + s.pos, s.end - s.pos)) ||
            (exc && !om_names_add(&j->read_by_excluded, j->map + s.pos, s.end - s.pos)))
            return om_fail(j, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    }
    return st;
}

int om_tensor_chosen(const om_job *j, const om_tensor *t)
{
    const dt_cast_request *r = j->r;
    const uint8_t *name = (const uint8_t *)t->name;
    const size_t len = strlen(t->name);
    if ((r->select.n || r->select_ops.n) && !(r->select.n && dt_glob_any(&r->select, t->name)) &&
        !(r->select_ops.n && om_names_has(&j->read_by_selected, name, len)))
        return 0;
    return !dt_glob_any(&r->exclude, t->name) &&
           !(r->exclude_ops.n && om_names_has(&j->read_by_excluded, name, len));
}

/* A NodeProto: its names, its Constant value, the graphs of its attributes. */
static dtcast_status scan_node(om_job *j, pb *r)
{
    pb n = {0};
    dtcast_status st = pb_sub(r, &n);
    if (st != DTCAST_OK)
        return st;
    pb op = {0}, out0 = {0};
    int has_out0 = 0;
    /* first the names and the op type (they may come after the attributes) */
    pb scan = n;
    while (pb_more(&scan)) {
        uint32_t f = 0;
        int wt = 0;
        size_t at = 0;
        if ((st = pb_key(&scan, &f, &wt, &at)) != DTCAST_OK)
            return st;
        if ((f == NP_INPUT || f == NP_OUTPUT || f == NP_OP) && wt == WT_BYTES) {
            pb s = {0};
            if ((st = pb_sub(&scan, &s)) != DTCAST_OK)
                return st;
            if (f == NP_OP)
                op = s;
            else if (s.end > s.pos && (st = add_name(j, &s)) != DTCAST_OK)
                return st;
            if (f == NP_OUTPUT && !has_out0) {
                out0 = s;
                has_out0 = 1;
            }
        } else if ((st = pb_skip(&scan, wt, at)) != DTCAST_OK) {
            return st;
        }
    }
    const int constant = op.end - op.pos == 8 && memcmp(j->map + op.pos, "Constant", 8) == 0;
    if ((st = mark_readers(j, n, op)) != DTCAST_OK)
        return st;
    while (pb_more(&n)) {
        uint32_t f = 0;
        int wt = 0;
        size_t at = 0;
        if ((st = pb_key(&n, &f, &wt, &at)) != DTCAST_OK)
            return st;
        if (f != NP_ATTR || wt != WT_BYTES) {
            if ((st = pb_skip(&n, wt, at)) != DTCAST_OK)
                return st;
            continue;
        }
        pb a = {0};
        if ((st = pb_sub(&n, &a)) != DTCAST_OK)
            return st;
        pb name = {0};
        pb look = a;
        while (pb_more(&look)) { /* the attribute's name first */
            if ((st = pb_key(&look, &f, &wt, &at)) != DTCAST_OK)
                return st;
            if (f == AP_NAME && wt == WT_BYTES)
                st = pb_sub(&look, &name);
            else
                st = pb_skip(&look, wt, at);
            if (st != DTCAST_OK)
                return st;
        }
        const int value = name.end - name.pos == 5 && memcmp(j->map + name.pos, "value", 5) == 0;
        while (pb_more(&a)) {
            if ((st = pb_key(&a, &f, &wt, &at)) != DTCAST_OK)
                return st;
            if ((f == AP_T || f == AP_TENSORS) && wt == WT_BYTES)
                st = scan_tensor(j, &a, constant && value && f == AP_T && has_out0 ? 1 : 2,
                                 has_out0 ? &out0 : NULL);
            else if ((f == AP_G || f == AP_GRAPHS) && wt == WT_BYTES)
                st = scan_graph(j, &a);
            else
                st = pb_skip(&a, wt, at);
            if (st != DTCAST_OK)
                return st;
        }
    }
    return DTCAST_OK;
}

/* The name of a ValueInfoProto (graph input, output, value_info). */
static dtcast_status value_info_name(pb *r, pb *name)
{
    pb v = {0};
    dtcast_status st = pb_sub(r, &v);
    memset(name, 0, sizeof *name);
    uint32_t f = 0;
    int wt = 0;
    size_t at = 0;
    while (pb_next(&v, &f, &wt, &at, &st)) {
        st = f == 1 && wt == WT_BYTES ? pb_sub(&v, name) : pb_skip(&v, wt, at);
    }
    return st;
}

static dtcast_status scan_graph(om_job *j, pb *r)
{
    pb g = {0};
    dtcast_status st = pb_sub(r, &g);
    if (st != DTCAST_OK)
        return st;
    if (++j->depth > 64)
        return om_fail(j, DTCAST_ERR_BAD_FILE, "graphs nested more than 64 deep (byte %zu)", g.pos);
    om_names inputs = {0};
    /* the graph's inputs, outputs and value_info names */
    pb scan = g;
    uint32_t f = 0;
    int wt = 0;
    size_t at = 0;
    while (pb_next(&scan, &f, &wt, &at, &st)) {
        if ((f == GP_INPUT || f == GP_OUTPUT || f == GP_VALUE_INFO) && wt == WT_BYTES) {
            pb name = {0};
            if ((st = value_info_name(&scan, &name)) == DTCAST_OK && name.end > name.pos) {
                st = add_name(j, &name);
                if (st == DTCAST_OK && f == GP_INPUT &&
                    !om_names_add(&inputs, j->map + name.pos, name.end - name.pos))
                    st = om_fail(j, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
            }
        } else {
            st = pb_skip(&scan, wt, at);
        }
    }
    while (pb_next(&g, &f, &wt, &at, &st)) {
        if (f == GP_INITIALIZER && wt == WT_BYTES) {
            if ((st = scan_tensor(j, &g, 0, NULL)) == DTCAST_OK) {
                om_tensor *t = &j->t[j->nt - 1];
                t->is_input = om_names_has(&inputs, (const uint8_t *)t->name, strlen(t->name));
                if (!om_names_add(&j->names, (const uint8_t *)t->name, strlen(t->name)))
                    st = om_fail(j, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
            }
        } else if (f == GP_NODE && wt == WT_BYTES) {
            st = scan_node(j, &g);
        } else {
            st = pb_skip(&g, wt, at);
        }
    }
    free(inputs.p);
    free(inputs.len);
    j->depth--;
    return st;
}

/* The ModelProto: the opset of the default domain, the graph. */
static dtcast_status scan_model(om_job *j)
{
    pb m = om_reader(j, 0, j->len);
    dtcast_status st = DTCAST_OK;
    int graphs = 0;
    j->opset = -1;
    uint32_t f = 0;
    int wt = 0;
    size_t at = 0;
    while (pb_next(&m, &f, &wt, &at, &st)) {
        if (f == MP_GRAPH && wt == WT_BYTES) {
            graphs++;
            pb peek = m; /* the GraphProto's bytes, for graph mode */
            pb g = {0};
            if (pb_sub(&peek, &g) == DTCAST_OK) {
                j->graph.start = g.pos;
                j->graph.end = g.end;
            }
            st = scan_graph(j, &m);
        } else if (f == MP_OPSET && wt == WT_BYTES) {
            pb o = {0}, domain = {0};
            uint64_t version = 0;
            int has_version = 0;
            if ((st = pb_sub(&m, &o)) != DTCAST_OK)
                break;
            while (st == DTCAST_OK && pb_more(&o)) {
                if ((st = pb_key(&o, &f, &wt, &at)) != DTCAST_OK)
                    break;
                if (f == OS_DOMAIN && wt == WT_BYTES)
                    st = pb_sub(&o, &domain);
                else if (f == OS_VERSION && wt == WT_VARINT && (has_version = 1))
                    st = pb_varint(&o, &version);
                else
                    st = pb_skip(&o, wt, at);
            }
            size_t dn = domain.end - domain.pos;
            if (st == DTCAST_OK && has_version &&
                (dn == 0 || (dn == 7 && memcmp(j->map + domain.pos, "ai.onnx", 7) == 0)))
                j->opset = version > INT32_MAX ? INT32_MAX : (int64_t)version;
        } else {
            st = pb_skip(&m, wt, at);
        }
    }
    if (st == DTCAST_OK && graphs != 1)
        st = om_fail(j, DTCAST_ERR_BAD_FILE, graphs ? "%d graphs in the ModelProto" : "no graph: not an "
                  "ONNX model (ModelProto)", graphs);
    if (st == DTCAST_OK && j->opset < 0)
        st = om_fail(j, DTCAST_ERR_BAD_FILE, "no opset_import for the default domain");
    return st;
}

/* ---- 2. the decisions ------------------------------------------------------------------------ */

static int is_float_type(uint64_t t)
{
    return t == DTCAST_FLOAT32 || t == DTCAST_FLOAT64 || t == DTCAST_FLOAT16 ||
           t == DTCAST_BFLOAT16;
}

/* The element size of a tensor's data as stored (0: not a fixed-size type dtcast knows). */
static uint64_t element_bytes(uint64_t data_type)
{
    if (data_type == 0 || data_type >= 1000 || !dtcast_type_name((dtcast_type)data_type))
        return 0;
    const int bits = dtcast_type_bits((dtcast_type)data_type);
    return bits >= 8 && bits % 8 == 0 ? (uint64_t)bits / 8 : 0;
}

/* The external data file of t, open (the model's folder + location). */
static dtcast_status open_external(om_job *j, const om_tensor *t, dt_infile *in)
{
    size_t n = strlen(j->dir) + strlen(t->location) + 2;
    char *path = malloc(n);
    if (!path)
        return om_fail(j, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    snprintf(path, n, "%s/%s", j->dir, t->location);
    dt_io_error e = DT_IO_ERROR_INIT;
    dtcast_status st = dt_infile_open(in, path, &e);
    free(path);
    if (st != DTCAST_OK)
        return om_fail(j, st, "tensor '%s': its external data: %s", t->name, e.message);
    if (t->ext_offset > in->size || t->ext_length > in->size - t->ext_offset) {
        dt_infile_close(in);
        return om_fail(j, DTCAST_ERR_BAD_FILE, "tensor '%s': external data at offset %llu, %llu bytes, "
                    "runs past the end of '%s' (%llu bytes)", t->name,
                    (unsigned long long)t->ext_offset, (unsigned long long)t->ext_length,
                    t->location, (unsigned long long)in->size);
    }
    return DTCAST_OK;
}

/* The extremes of t's values (its data read once). */
static dtcast_status scan_extremes(om_job *j, const om_tensor *t, dt_value_extremes *x_out)
{
    dt_value_extremes x;
    dt_value_extremes_init(&x);
    const dtcast_type type = (dtcast_type)t->data_type;
    const size_t eb = (size_t)element_bytes(t->data_type);
    dtcast_status st = DTCAST_OK;
    if (t->where == W_EXTERNAL) {
        dt_infile in;
        if ((st = open_external(j, t, &in)) != DTCAST_OK)
            return st;
        const size_t block = DT_BLOCK_BYTES / eb * eb;
        uint8_t *buf = malloc(block);
        if (!buf) {
            dt_infile_close(&in);
            return om_fail(j, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
        }
        dt_io_error e = DT_IO_ERROR_INIT;
        for (uint64_t done = 0; done < t->ext_length && st == DTCAST_OK;) {
            size_t n = t->ext_length - done < block ? (size_t)(t->ext_length - done) : block;
            st = dt_infile_read(&in, t->ext_offset + done, buf, n, &e);
            if (st == DTCAST_OK)
                dt_value_extremes_take(&x, type, buf, n / eb);
            done += n;
        }
        if (st != DTCAST_OK)
            om_fail(j, st, "tensor '%s': %s", t->name, e.message);
        free(buf);
        dt_infile_close(&in);
    } else {
        dt_value_extremes_take(&x, type, j->map + t->data_start, t->data_len / eb);
    }
    *x_out = x;
    return st;
}

/* An element of `type` whose bits are code, as a double. */
static double value_of(dtcast_type type, uint64_t code)
{
    const int bits = dtcast_type_bits(type);
    uint8_t in[8]; /* the code as an element of its type, in memory order */
    const uint16_t c16 = (uint16_t)code;
    const uint32_t c32 = (uint32_t)code;
    memcpy(in, bits == 16 ? (const void *)&c16 : bits == 32 ? (const void *)&c32
                                                            : (const void *)&code,
           (size_t)bits / 8);
    double v = 0;
    dtcast_error e;
    return dtcast_convert(&v, DTCAST_FLOAT64, in, type, 1, NULL, &e) == DTCAST_OK ? v : 0;
}

dtcast_status om_values_survive(om_job *j, const om_tensor *t, const dtcast_options *o,
                                    int *ok, char *why, size_t why_size)
{
    dt_value_extremes x;
    const dtcast_type type = (dtcast_type)t->data_type;
    dtcast_status st = scan_extremes(j, t, &x);
    if (st != DTCAST_OK)
        return st;
    *ok = 1;
    const int bits = dtcast_type_bits(type);
    const uint64_t sign = (uint64_t)1 << (bits - 1);
    for (int k = 1; k < 4 && *ok; k += 2) { /* the largest magnitude of each sign */
        const uint64_t mag = k == 1 ? x.pmax : x.nmax;
        if (!mag) /* no nonzero value of that sign */
            continue;
        const double v = value_of(type, mag | (k >= 2 ? sign : 0));
        dtcast_error e;
        double back = 0;
        uint8_t out[8];
        if (dtcast_convert(out, j->r->to, &v, DTCAST_FLOAT64, 1, o, &e) != DTCAST_OK ||
            dtcast_convert(&back, DTCAST_FLOAT64, out, j->r->to, 1, NULL, &e) != DTCAST_OK)
            return om_fail(j, DTCAST_ERR_INVALID_ARGUMENT, "tensor '%s': %s", t->name, e.message);
        if (back == 0 || back != back || back - back != 0) {
            *ok = 0;
            char tn[32];
            snprintf(why, why_size, "%.17g would become %s in %s", v,
                     back == 0 ? "0" : back != back ? "NaN" : back > 0 ? "inf" : "-inf",
                     dt_type_label(j->r->to, tn, sizeof tn));
        }
    }
    return DTCAST_OK;
}

int om_scaled_target(dtcast_type to, int64_t *opset)
{
    switch (to) {
    case DTCAST_FLOAT8E4M3FN:
    case DTCAST_FLOAT8E4M3FNUZ:
    case DTCAST_FLOAT8E5M2:
    case DTCAST_FLOAT8E5M2FNUZ:
        *opset = 19; /* DequantizeLinear-19: float8 codes, float16/bfloat16 scales */
        return 1;
    case DTCAST_INT8:
        *opset = 10;
        return 1;
    default:
        return 0;
    }
}

/* The largest finite value of a scaled target's codes, from the format's description (448
 * for float8e4m3fn, 57344 for float8e5m2, 127 for int8). */
static double codes_max(dtcast_type to)
{
    dtcast_info info;
    if (dtcast_type_info(to, &info, NULL) != DTCAST_OK)
        return 0;
    if (info.kind == DTCAST_KIND_SIGNED)
        return (double)(((uint64_t)1 << (info.bits - 1)) - 1);
    return info.max;
}

/* Weights mode, a scaled target: t's per-tensor scale, amax / codes_max(to) rounded to the
 * scale's type (t's own type; 1 for a tensor of zeros), in t->scale, so that
 * QuantizeLinear(x, scale) maps the largest magnitude to the codes' largest. *ok = 0 with why
 * when there is none: an Inf or NaN in t (the codes would change it), a scale that is not a
 * normal number of its type, or a type DequantizeLinear does not output at the opset (float64;
 * before opset 19 anything but float32). */
static dtcast_status scale_for(om_job *j, om_tensor *t, int *ok, char *why, size_t why_size)
{
    const dtcast_type type = (dtcast_type)t->data_type;
    char tn[32];
    *ok = 0;
    if (type == DTCAST_FLOAT64 || (j->opset < 19 && type != DTCAST_FLOAT32)) {
        snprintf(why, why_size, "'%s': DequantizeLinear at opset %lld does not output %s",
                 t->name, (long long)j->opset, dt_type_label(type, tn, sizeof tn));
        return DTCAST_OK;
    }
    dt_value_extremes x;
    dtcast_status st = scan_extremes(j, t, &x);
    if (st != DTCAST_OK)
        return st;
    if (x.nonfinite) {
        snprintf(why, why_size, "'%s': it holds an Inf or NaN, which a scale cannot carry",
                 t->name);
        return DTCAST_OK;
    }
    double amax = 0;
    for (int k = 0; k < 2; k++) { /* the largest magnitude of each sign (sign cleared) */
        const double v = value_of(type, k ? x.nmax : x.pmax);
        amax = v > amax ? v : amax;
    }
    const double qmax = codes_max(j->r->to);
    const double s = amax > 0 ? amax / qmax : 1.0;
    dtcast_error e;
    double back = 0;
    dtcast_info info;
    t->scale_type = (uint64_t)type;
    memset(t->scale, 0, sizeof t->scale);
    if (qmax <= 0 || dtcast_type_info(type, &info, NULL) != DTCAST_OK ||
        dtcast_convert(t->scale, type, &s, DTCAST_FLOAT64, 1, NULL, &e) != DTCAST_OK ||
        dtcast_convert(&back, DTCAST_FLOAT64, t->scale, type, 1, NULL, &e) != DTCAST_OK)
        return om_fail(j, DTCAST_ERR_INVALID_ARGUMENT, "tensor '%s': no scale", t->name);
    if (!(back >= info.min_normal && back <= info.max)) {
        snprintf(why, why_size, "'%s': its scale %.9g (largest magnitude %.9g) is not a normal "
                 "%s", t->name, s, amax, dt_type_label(type, tn, sizeof tn));
        return DTCAST_OK;
    }
    *ok = 1;
    return DTCAST_OK;
}

/* The convert step from t's type to r->to (the profile's checks included). */
dtcast_status om_converter_for(om_job *j, const om_tensor *t, dt_library_convert *c)
{
    dtcast_error e;
    memset(&e, 0, sizeof e);
    dtcast_status st = dt_conversion_converter(&j->r->conversion, (dtcast_type)t->data_type,
                                               j->r->to, t->dims, t->ndim, c, &e);
    if (st != DTCAST_OK) {
        char a[32], b[32];
        return om_fail(j, st, "tensor '%s': cannot cast %s to %s: %s", t->name,
                    dt_type_label((dtcast_type)t->data_type, a, sizeof a),
                    dt_type_label(j->r->to, b, sizeof b), e.message);
    }
    return DTCAST_OK;
}

/* A new value name: base_<type>, or base_<type>_N, used nowhere in the model. */
char *om_new_name(om_job *j, const char *base, dtcast_type type)
{
    return om_new_name_suffix(j, base, dtcast_type_name(type));
}

char *om_new_name_suffix(om_job *j, const char *base, const char *tn)
{
    size_t n = strlen(base) + strlen(tn) + 24;
    char *s = malloc(n);
    if (!s)
        return NULL;
    snprintf(s, n, "%s_%s", base, tn);
    for (unsigned k = 1; om_names_has(&j->names, (const uint8_t *)s, strlen(s)); k++)
        snprintf(s, n, "%s_%s_%u", base, tn, k);
    if (!om_names_add(&j->names, (const uint8_t *)s, strlen(s))) {
        free(s);
        return NULL;
    }
    return s;
}

static dtcast_status decide(om_job *j)
{
    const dt_cast_request *r = j->r;
    dtcast_status st = DTCAST_OK;
    for (size_t i = 0; i < j->nt && st == DTCAST_OK; i++) {
        om_tensor *t = &j->t[i];
        const uint64_t eb = element_bytes(t->data_type);
        /* the data must be as large as the dims say */
        if (t->where == W_EXTERNAL) {
            uint64_t want;
            if (!eb || __builtin_mul_overflow(t->count, eb, &want))
                want = UINT64_MAX;
            if (!t->has_length && want != UINT64_MAX)
                t->ext_length = want;
            if (eb && t->ext_length != want)
                return om_fail(j, DTCAST_ERR_BAD_FILE, "tensor '%s': external data of %llu bytes for "
                            "%llu elements of %llu bytes", t->name,
                            (unsigned long long)t->ext_length, (unsigned long long)t->count,
                            (unsigned long long)eb);
        } else if ((t->where == W_RAW || t->where == W_TYPED) && eb && t->runs == 1 &&
                   (t->data_len / eb != t->count || t->data_len % eb)) {
            return om_fail(j, DTCAST_ERR_BAD_FILE, "tensor '%s' (byte %zu): %zu data bytes for %llu "
                        "elements", t->name, t->start, t->data_len, (unsigned long long)t->count);
        }
        if (r->onnx_graph || t->kind == 2 || !is_float_type(t->data_type))
            continue; /* graph mode: og_plan decides */
        if (dt_conversion_float32_only(&r->conversion) && t->data_type != DTCAST_FLOAT32)
            continue; /* a converter's profile: as the converter, float32 initializers only */
        if (dtcast_type_bits(r->to) >= dtcast_type_bits((dtcast_type)t->data_type))
            continue; /* not narrower: nothing to gain */
        if (!om_tensor_chosen(j, t))
            continue;
        if (t->kind == 0 && t->is_input) {
            if (j->kept_input++ == 0)
                snprintf(j->first_input, sizeof j->first_input, "%s", t->name);
            continue;
        }
        if (t->count < DT_ONNX_MIN_ELEMENTS) {
            j->kept_small++;
            continue;
        }
        if (t->segment || t->where == W_NONE || (t->where != W_EXTERNAL && t->runs != 1) ||
            (t->where == W_TYPED && t->data_type != DTCAST_FLOAT32 &&
             t->data_type != DTCAST_FLOAT64)) {
            j->kept_layout++;
            continue;
        }
        int64_t need;
        if (om_scaled_target(r->to, &need)) {
            int ok = 0;
            char why[256];
            if ((st = scale_for(j, t, &ok, why, sizeof why)) != DTCAST_OK)
                break;
            if (!ok) {
                if (j->kept_scale++ == 0)
                    snprintf(j->first_scale, sizeof j->first_scale, "%s", why);
                continue;
            }
            if (!(t->new_name = om_new_name(j, t->name, r->to)) ||
                !(t->scale_name = om_new_name_suffix(j, t->name, "scale")))
                return om_fail(j, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
            t->convert = 1;
            j->converted++;
            continue;
        }
        dt_library_convert conv;
        if ((st = om_converter_for(j, t, &conv)) != DTCAST_OK)
            break;
        int ok = 1;
        char why[160];
        /* under a converter's profile its clamp decides the values, as the converter's does */
        if (!conv.clamp && (st = om_values_survive(j, t, &conv.options, &ok, why, sizeof why)) != DTCAST_OK)
            break;
        if (!ok) {
            if (j->kept_values++ == 0)
                snprintf(j->first_values, sizeof j->first_values, "'%s' (%s)", t->name, why);
            continue;
        }
        if (!(t->new_name = om_new_name(j, t->name, r->to)))
            return om_fail(j, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
        t->convert = 1;
        j->converted++;
    }
    if (st == DTCAST_OK && r->onnx_graph)
        st = og_plan(j);
    if (st != DTCAST_OK)
        return st;
    /* the output bytes of every tensor's data */
    for (size_t i = 0; i < j->nt; i++) {
        om_tensor *t = &j->t[i];
        const uint64_t eb = t->convert ? (uint64_t)dtcast_type_bits(r->to) / 8 : 0;
        t->out_bytes = t->convert ? t->count * eb
                                  : t->where == W_EXTERNAL ? t->ext_length : t->data_len;
    }
    return DTCAST_OK;
}

/* ---- 3. the writer ---------------------------------------------------------------------------- */

#define OM_BUF ((size_t)1 << 16)

dtcast_status om_w_flush(om_job *j, om_writer *w)
{
    if (w->counting || !w->used)
        return DTCAST_OK;
    dt_io_error e = DT_IO_ERROR_INIT;
    dtcast_status st = dt_outfile_write(w->out, w->buf, w->used, &e);
    w->used = 0;
    return st == DTCAST_OK ? st : om_fail(j, st, "%s", e.message);
}

dtcast_status om_w_bytes(om_job *j, om_writer *w, const void *p, size_t n)
{
    w->n += n;
    if (w->counting)
        return DTCAST_OK;
    if (n > OM_BUF - w->used) {
        dtcast_status st = om_w_flush(j, w);
        if (st != DTCAST_OK)
            return st;
        if (n >= OM_BUF) {
            dt_io_error e = DT_IO_ERROR_INIT;
            st = dt_outfile_write(w->out, p, n, &e);
            return st == DTCAST_OK ? st : om_fail(j, st, "%s", e.message);
        }
    }
    memcpy(w->buf + w->used, p, n);
    w->used += n;
    return DTCAST_OK;
}

dtcast_status om_w_varint(om_job *j, om_writer *w, uint64_t v)
{
    uint8_t b[10];
    return om_w_bytes(j, w, b, (size_t)(put_varint(b, v) - b));
}

dtcast_status om_w_key(om_job *j, om_writer *w, uint32_t field, int wt)
{
    return om_w_varint(j, w, (uint64_t)field << 3 | (uint64_t)wt);
}

dtcast_status om_w_text(om_job *j, om_writer *w, uint32_t field, const void *p, size_t n)
{
    dtcast_status st = om_w_key(j, w, field, WT_BYTES);
    if (st == DTCAST_OK)
        st = om_w_varint(j, w, n);
    return st == DTCAST_OK ? om_w_bytes(j, w, p, n) : st;
}

/* Copies the input's bytes [a, b) (whole fields) as they are. */
dtcast_status om_w_copy(om_job *j, om_writer *w, size_t a, size_t b)
{
    return om_w_bytes(j, w, j->map + a, b - a);
}


/* A length-delimited field holding what emit writes: counted, then written. */
dtcast_status om_w_message(om_job *j, om_writer *w, uint32_t field, emit_fn emit,
                               const void *arg)
{
    om_writer c = {1, 0, NULL, NULL, 0};
    dtcast_status st = emit(j, &c, arg);
    if (st != DTCAST_OK)
        return st;
    if ((st = om_w_key(j, w, field, WT_BYTES)) != DTCAST_OK ||
        (st = om_w_varint(j, w, c.n)) != DTCAST_OK)
        return st;
    if (w->counting) {
        w->n += c.n;
        return DTCAST_OK;
    }
    const uint64_t before = w->n;
    st = emit(j, w, arg);
    if (st == DTCAST_OK && w->n - before != c.n)
        return om_fail(j, DTCAST_ERR_IO, "a message of %llu bytes was counted as %llu",
                    (unsigned long long)(w->n - before), (unsigned long long)c.n);
    return st;
}

om_tensor *om_tensor_at(om_job *j, size_t start)
{
    size_t lo = 0, hi = j->nt; /* scanned in file order: sorted by start */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (j->t[mid].start < start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < j->nt && j->t[lo].start == start ? &j->t[lo] : NULL;
}

/* Whether the tensor's message is written anew: converted, or its data moves. */
int om_tensor_changes(const om_job *j, const om_tensor *t)
{
    return t->convert || t->where == W_EXTERNAL || (t->external_out && j->external_out);
}

/* A scaled tensor's codes: QuantizeLinear(x, scale) as the operator defines it at the model's
 * opset (saturate = 1; the zero point 0 of the codes' type), block by block. */
typedef struct quantize_ctx {
    const om_job *j;
    const om_tensor *t;
    dtcast_onnx_qdq_attrs attrs;
} quantize_ctx;

static dtcast_status quantize_block(void *ctx, void *dst, const void *src, size_t count,
                                    dtcast_error *error)
{
    const quantize_ctx *c = ctx;
    const dtcast_type from = (dtcast_type)c->t->data_type, to = c->j->r->to;
    uint8_t zero = 0; /* +0 in every scaled target's codes */
    dtcast_tensor x = {(void *)(uintptr_t)src, count * (size_t)element_bytes(c->t->data_type),
                       from, 1, {(int64_t)count}};
    dtcast_tensor scale = {(void *)(uintptr_t)c->t->scale, (size_t)element_bytes(c->t->data_type),
                           (dtcast_type)c->t->scale_type, 0, {0}};
    dtcast_tensor zp = {&zero, 1, to, 0, {0}};
    dtcast_tensor y = {dst, count, to, 0, {0}};
    dtcast_options o;
    dtcast_options_init(&o);
    o.threads = 1;
    return dtcast_onnx_quantize_linear(&y, &x, &scale, &zp, &c->attrs, &o, error);
}

/* The data of t (converted or copied) into out. */
static dtcast_status stream_data(om_job *j, const om_tensor *t, dt_outfile *out)
{
    dt_infile in;
    int opened = 0;
    dtcast_status st = DTCAST_OK;
    if (t->where == W_EXTERNAL) {
        if ((st = open_external(j, t, &in)) != DTCAST_OK)
            return st;
        opened = 1;
    }
    dt_io_error e = DT_IO_ERROR_INIT;
    if (!t->convert) {
        if (opened)
            st = dt_stream_copy(&in, t->ext_offset, t->ext_length, out, j->buffers, j->progress, &e);
        else
            st = dt_outfile_write(out, j->map + t->data_start, t->data_len, &e);
    } else if (t->scale_name) {
        quantize_ctx q = {j, t, {0}};
        dtcast_onnx_qdq_attrs_init(&q.attrs);
        q.attrs.opset = (int)(j->opset > DTCAST_ONNX_OPSET_MAX ? DTCAST_ONNX_OPSET_MAX : j->opset);
        q.attrs.saturate = 1;
        dt_stream_job sj = {
            .in = opened ? &in : NULL,
            .mem = opened ? NULL : j->map + t->data_start,
            .offset = opened ? t->ext_offset : 0,
            .src = {(dtcast_type)t->data_type, DT_STORE_NATIVE},
            .count = t->count,
            .dst = {j->r->to, DT_STORE_NATIVE},
            .convert = quantize_block,
            .convert_ctx = &q,
            .progress = j->progress,
            .buffers = j->buffers,
        };
        st = dt_stream_run(&sj, out, &e);
        if (st == DTCAST_OK && j->r->report) {
            char text[600], a[32], b[32];
            double sv = 0;
            dtcast_error ce;
            if (dtcast_convert(&sv, DTCAST_FLOAT64, t->scale, (dtcast_type)t->scale_type, 1, NULL,
                               &ce) != DTCAST_OK)
                sv = 0;
            snprintf(text, sizeof text, "%s: %llu elements of %s as %s codes times the scale %.9g "
                     "(%s '%s'), DequantizeLinear back\n", t->name, (unsigned long long)t->count,
                     dt_type_label((dtcast_type)t->data_type, a, sizeof a),
                     dt_type_label(j->r->to, b, sizeof b), sv, a, t->scale_name);
            dt_job_report(&j->r->hooks, text);
        }
    } else {
        dt_library_convert c;
        dt_report report;
        int reporting = 0;
        if ((st = om_converter_for(j, t, &c)) != DTCAST_OK) {
            if (opened)
                dt_infile_close(&in);
            return st;
        }
        if (j->r->report && dt_report_init(&report, c.from, c.to, &c.options) == DTCAST_OK) {
            reporting = 1;
            report.rule = c.rule;
        }
        dt_stream_job sj = {
            .in = opened ? &in : NULL,
            .mem = opened ? NULL : j->map + t->data_start,
            .offset = opened ? t->ext_offset : 0,
            .src = {c.from, DT_STORE_NATIVE},
            .count = t->count,
            .dst = {c.to, DT_STORE_NATIVE},
            .convert = dt_library_convert_block,
            .convert_ctx = &c,
            .observe = reporting ? dt_report_observe : NULL,
            .observe_ctx = &report,
            .progress = j->progress,
            .buffers = j->buffers,
        };
        st = dt_stream_run(&sj, out, &e);
        if (st == DTCAST_OK && reporting) {
            char *text = dt_report_text(&report, t->name);
            if (text)
                dt_job_report(&j->r->hooks, text);
            free(text);
        }
    }
    if (opened)
        dt_infile_close(&in);
    return st == DTCAST_OK ? st : om_fail(j, st, "tensor '%s': %s", t->name, e.message);
}

/* A StringStringEntryProto (external_data). */
typedef struct entry {
    const char *key, *value;
} entry;

static dtcast_status emit_entry(om_job *j, om_writer *w, const void *arg)
{
    const entry *e = arg;
    dtcast_status st = om_w_text(j, w, SS_KEY, e->key, strlen(e->key));
    return st == DTCAST_OK ? om_w_text(j, w, SS_VALUE, e->value, strlen(e->value)) : st;
}

dtcast_status om_emit_tensor(om_job *j, om_writer *w, const void *arg)
{
    const om_tensor *t = arg;
    pb m = om_reader(j, t->start, t->end);
    dtcast_status st = DTCAST_OK;
    uint32_t f = 0;
    int wt = 0;
    size_t at = 0;
    while (pb_next(&m, &f, &wt, &at, &st)) {
        if ((st = pb_skip(&m, wt, at)) != DTCAST_OK)
            break;
        switch (f) {
        case T_TYPE:
            if (t->convert) {
                if ((st = om_w_key(j, w, T_TYPE, WT_VARINT)) == DTCAST_OK)
                    st = om_w_varint(j, w, (uint64_t)j->r->to);
                break;
            }
            st = om_w_copy(j, w, at, m.pos);
            break;
        case T_NAME:
            if (t->convert && t->kind == 0)
                st = om_w_text(j, w, T_NAME, t->new_name, strlen(t->new_name));
            else
                st = om_w_copy(j, w, at, m.pos);
            break;
        case T_RAW:
        case T_FLOAT:
        case T_DOUBLE:
        case T_EXTERNAL:
        case T_LOCATION:
            break; /* the data is written below */
        default:
            st = om_w_copy(j, w, at, m.pos);
        }
    }
    if (st != DTCAST_OK)
        return st;
    if (t->external_out && j->external_out) {
        char off[24], len[24];
        snprintf(off, sizeof off, "%llu", (unsigned long long)t->out_offset);
        snprintf(len, sizeof len, "%llu", (unsigned long long)t->out_bytes);
        const entry entries[3] = {{"location", j->data_name}, {"offset", off}, {"length", len}};
        for (int k = 0; k < 3 && st == DTCAST_OK; k++)
            st = om_w_message(j, w, T_EXTERNAL, emit_entry, &entries[k]);
        if (st == DTCAST_OK && (st = om_w_key(j, w, T_LOCATION, WT_VARINT)) == DTCAST_OK)
            st = om_w_varint(j, w, 1);
        if (st != DTCAST_OK || w->counting)
            return st;
        /* the data, at its offset in the data file */
        static const uint8_t zeros[4096];
        dt_io_error e = DT_IO_ERROR_INIT;
        while (st == DTCAST_OK && j->data.written < t->out_offset) {
            uint64_t gap = t->out_offset - j->data.written;
            st = dt_outfile_write(&j->data, zeros, gap < sizeof zeros ? (size_t)gap : sizeof zeros, &e);
        }
        if (st != DTCAST_OK)
            return om_fail(j, st, "%s", e.message);
        return stream_data(j, t, &j->data);
    }
    /* in the model: raw_data */
    if ((st = om_w_key(j, w, T_RAW, WT_BYTES)) != DTCAST_OK ||
        (st = om_w_varint(j, w, t->out_bytes)) != DTCAST_OK)
        return st;
    if (w->counting) {
        w->n += t->out_bytes;
        return DTCAST_OK;
    }
    if ((st = om_w_flush(j, w)) != DTCAST_OK)
        return st;
    const uint64_t before = w->out->written;
    if ((st = stream_data(j, t, w->out)) != DTCAST_OK)
        return st;
    if (w->out->written - before != t->out_bytes)
        return om_fail(j, DTCAST_ERR_IO, "tensor '%s': %llu data bytes written, %llu expected",
                    t->name, (unsigned long long)(w->out->written - before),
                    (unsigned long long)t->out_bytes);
    w->n += t->out_bytes;
    return DTCAST_OK;
}


static dtcast_status om_emit_to_attr(om_job *j, om_writer *w, const void *arg)
{
    const cast_node *c = arg;
    dtcast_status st = om_w_text(j, w, AP_NAME, "to", 2);
    if (st == DTCAST_OK && (st = om_w_key(j, w, AP_I, WT_VARINT)) == DTCAST_OK)
        st = om_w_varint(j, w, c->to);
    if (st == DTCAST_OK && (st = om_w_key(j, w, AP_TYPE, WT_VARINT)) == DTCAST_OK)
        st = om_w_varint(j, w, AT_INT);
    return st;
}

dtcast_status om_emit_cast(om_job *j, om_writer *w, const void *arg)
{
    const cast_node *c = arg;
    char name[300];
    snprintf(name, sizeof name, "dtcast_Cast_%s", c->output);
    dtcast_status st = om_w_text(j, w, NP_INPUT, c->input, strlen(c->input));
    if (st == DTCAST_OK)
        st = om_w_text(j, w, NP_OUTPUT, c->output, strlen(c->output));
    if (st == DTCAST_OK)
        st = om_w_text(j, w, NP_NAME, name, strlen(name));
    if (st == DTCAST_OK)
        st = om_w_text(j, w, NP_OP, "Cast", 4);
    if (st == DTCAST_OK)
        st = om_w_message(j, w, NP_ATTR, om_emit_to_attr, c);
    return st;
}



/* The scale of a scaled tensor: a scalar TensorProto, raw_data. */
dtcast_status om_emit_scale(om_job *j, om_writer *w, const void *arg)
{
    const om_tensor *t = arg;
    dtcast_status st = om_w_key(j, w, T_TYPE, WT_VARINT);
    if (st == DTCAST_OK)
        st = om_w_varint(j, w, t->scale_type);
    if (st == DTCAST_OK)
        st = om_w_text(j, w, T_NAME, t->scale_name, strlen(t->scale_name));
    if (st == DTCAST_OK)
        st = om_w_text(j, w, T_RAW, t->scale, (size_t)element_bytes(t->scale_type));
    return st;
}

static dtcast_status emit_scale_attr(om_job *j, om_writer *w, const void *arg)
{
    dtcast_status st = om_w_text(j, w, AP_NAME, "value", 5);
    if (st == DTCAST_OK)
        st = om_w_message(j, w, AP_T, om_emit_scale, arg);
    if (st == DTCAST_OK && (st = om_w_key(j, w, AP_TYPE, WT_VARINT)) == DTCAST_OK)
        st = om_w_varint(j, w, AT_TENSOR);
    return st;
}

/* Constant(value = the scale) -> scale_name: a converted Constant's scale. */
static dtcast_status emit_scale_constant(om_job *j, om_writer *w, const void *arg)
{
    const om_tensor *t = arg;
    char name[300];
    snprintf(name, sizeof name, "dtcast_Constant_%s", t->scale_name);
    dtcast_status st = om_w_text(j, w, NP_OUTPUT, t->scale_name, strlen(t->scale_name));
    if (st == DTCAST_OK)
        st = om_w_text(j, w, NP_NAME, name, strlen(name));
    if (st == DTCAST_OK)
        st = om_w_text(j, w, NP_OP, "Constant", 8);
    if (st == DTCAST_OK)
        st = om_w_message(j, w, NP_ATTR, emit_scale_attr, t);
    return st;
}

dtcast_status om_emit_dequantize(om_job *j, om_writer *w, const void *arg)
{
    const om_tensor *t = arg;
    char name[300];
    snprintf(name, sizeof name, "dtcast_DequantizeLinear_%s", t->name);
    dtcast_status st = om_w_text(j, w, NP_INPUT, t->new_name, strlen(t->new_name));
    if (st == DTCAST_OK)
        st = om_w_text(j, w, NP_INPUT, t->scale_name, strlen(t->scale_name));
    if (st == DTCAST_OK)
        st = om_w_text(j, w, NP_OUTPUT, t->name, strlen(t->name));
    if (st == DTCAST_OK)
        st = om_w_text(j, w, NP_NAME, name, strlen(name));
    if (st == DTCAST_OK)
        st = om_w_text(j, w, NP_OP, "DequantizeLinear", 16);
    return st;
}

/* Whether the message [start, end) holds a tensor that changes or a graph (searched to the
 * attributes of a node). */
int om_attr_changes(om_job *j, pb a)
{
    while (pb_more(&a)) {
        uint32_t f = 0;
        int wt = 0;
        size_t at = 0;
        if (pb_key(&a, &f, &wt, &at) != DTCAST_OK)
            return 1;
        if ((f == AP_G || f == AP_GRAPHS) && wt == WT_BYTES)
            return 1;
        if ((f == AP_T || f == AP_TENSORS) && wt == WT_BYTES) {
            pb s = {0};
            if (pb_sub(&a, &s) != DTCAST_OK)
                return 1;
            const om_tensor *t = om_tensor_at(j, s.pos);
            if (!t || om_tensor_changes(j, t))
                return 1;
            continue;
        }
        if (pb_skip(&a, wt, at) != DTCAST_OK)
            return 1;
    }
    return 0;
}

dtcast_status om_emit_attr(om_job *j, om_writer *w, const void *arg)
{
    const span *s = arg;
    pb a = om_reader(j, s->start, s->end);
    dtcast_status st = DTCAST_OK;
    while (st == DTCAST_OK && pb_more(&a)) {
        uint32_t f = 0;
        int wt = 0;
        size_t at = 0;
        pb sub = {0};
        if ((st = pb_key(&a, &f, &wt, &at)) != DTCAST_OK)
            break;
        if ((f == AP_G || f == AP_GRAPHS || f == AP_T || f == AP_TENSORS) && wt == WT_BYTES) {
            if ((st = pb_sub(&a, &sub)) != DTCAST_OK)
                break;
            const span g = {sub.pos, sub.end};
            const om_tensor *t = f == AP_T || f == AP_TENSORS ? om_tensor_at(j, sub.pos) : NULL;
            if (f == AP_G || f == AP_GRAPHS)
                st = om_w_message(j, w, f, om_emit_graph, &g);
            else if (t && om_tensor_changes(j, t))
                st = om_w_message(j, w, f, om_emit_tensor, t);
            else
                st = om_w_copy(j, w, at, a.pos);
            continue;
        }
        if ((st = pb_skip(&a, wt, at)) == DTCAST_OK)
            st = om_w_copy(j, w, at, a.pos);
    }
    return st;
}

/* The converted Constant value of the node [start, end), or NULL. */
static const om_tensor *converted_constant(om_job *j, pb n)
{
    while (pb_more(&n)) {
        uint32_t f = 0;
        int wt = 0;
        size_t at = 0;
        pb a = {0};
        if (pb_key(&n, &f, &wt, &at) != DTCAST_OK)
            return NULL;
        if (f != NP_ATTR || wt != WT_BYTES) {
            if (pb_skip(&n, wt, at) != DTCAST_OK)
                return NULL;
            continue;
        }
        if (pb_sub(&n, &a) != DTCAST_OK)
            return NULL;
        while (pb_more(&a)) {
            if (pb_key(&a, &f, &wt, &at) != DTCAST_OK)
                return NULL;
            pb s = {0};
            if (f == AP_T && wt == WT_BYTES) {
                if (pb_sub(&a, &s) != DTCAST_OK)
                    return NULL;
                const om_tensor *t = om_tensor_at(j, s.pos);
                if (t && t->kind == 1 && t->convert)
                    return t;
            } else if (pb_skip(&a, wt, at) != DTCAST_OK) {
                return NULL;
            }
        }
    }
    return NULL;
}

typedef struct node_arg {
    span s;
    const om_tensor *constant; /* converted: its output renamed */
} node_arg;

static dtcast_status emit_node(om_job *j, om_writer *w, const void *arg)
{
    const node_arg *na = arg;
    pb n = om_reader(j, na->s.start, na->s.end);
    dtcast_status st = DTCAST_OK;
    int outputs = 0;
    while (st == DTCAST_OK && pb_more(&n)) {
        uint32_t f = 0;
        int wt = 0;
        size_t at = 0;
        pb sub = {0};
        if ((st = pb_key(&n, &f, &wt, &at)) != DTCAST_OK)
            break;
        if (f == NP_ATTR && wt == WT_BYTES) {
            if ((st = pb_sub(&n, &sub)) != DTCAST_OK)
                break;
            const span a = {sub.pos, sub.end};
            st = om_attr_changes(j, sub) ? om_w_message(j, w, NP_ATTR, om_emit_attr, &a)
                                      : om_w_copy(j, w, at, n.pos);
            continue;
        }
        if ((st = pb_skip(&n, wt, at)) != DTCAST_OK)
            break;
        if (f == NP_OUTPUT && outputs++ == 0 && na->constant)
            st = om_w_text(j, w, NP_OUTPUT, na->constant->new_name, strlen(na->constant->new_name));
        else
            st = om_w_copy(j, w, at, n.pos);
    }
    return st;
}

/* The Casts of the converted initializers of the graph [s->start, s->end): its first nodes. */
static dtcast_status emit_initializer_casts(om_job *j, om_writer *w, const span *s)
{
    dtcast_status st = DTCAST_OK;
    pb scan = om_reader(j, s->start, s->end);
    uint32_t f = 0;
    int wt = 0;
    size_t at = 0;
    while (pb_next(&scan, &f, &wt, &at, &st)) {
        if (f != GP_INITIALIZER || wt != WT_BYTES) {
            st = pb_skip(&scan, wt, at);
            continue;
        }
        pb ts = {0};
        if ((st = pb_sub(&scan, &ts)) != DTCAST_OK)
            break;
        const om_tensor *t = om_tensor_at(j, ts.pos);
        if (t && t->convert && t->scale_name) {
            st = om_w_message(j, w, GP_NODE, om_emit_dequantize, t);
        } else if (t && t->convert) {
            const cast_node c = {t->new_name, t->name, t->data_type};
            st = om_w_message(j, w, GP_NODE, om_emit_cast, &c);
        }
    }
    return st;
}

dtcast_status om_emit_graph(om_job *j, om_writer *w, const void *arg)
{
    const span *s = arg;
    dtcast_status st = DTCAST_OK;
    /* the Casts of this graph's converted initializers go before its first node */
    int casts_done = 0;
    pb g = om_reader(j, s->start, s->end);
    while (st == DTCAST_OK && pb_more(&g)) {
        uint32_t f = 0;
        int wt = 0;
        size_t at = 0;
        pb sub = {0};
        if ((st = pb_key(&g, &f, &wt, &at)) != DTCAST_OK)
            break;
        if (f == GP_NODE && wt == WT_BYTES && !casts_done) {
            casts_done = 1;
            if ((st = emit_initializer_casts(j, w, s)) != DTCAST_OK)
                break;
        }
        if ((f == GP_NODE || f == GP_INITIALIZER) && wt == WT_BYTES) {
            if ((st = pb_sub(&g, &sub)) != DTCAST_OK)
                break;
            if (f == GP_INITIALIZER) {
                const om_tensor *t = om_tensor_at(j, sub.pos);
                st = t && om_tensor_changes(j, t) ? om_w_message(j, w, f, om_emit_tensor, t)
                                               : om_w_copy(j, w, at, g.pos);
                if (st == DTCAST_OK && t && t->convert && t->scale_name)
                    st = om_w_message(j, w, GP_INITIALIZER, om_emit_scale, t);
                continue;
            }
            node_arg na = {{sub.pos, sub.end}, converted_constant(j, sub)};
            pb attrs = sub;
            int changes = na.constant != NULL;
            while (!changes && pb_more(&attrs)) { /* any attribute that changes */
                uint32_t f2 = 0;
                int wt2 = 0;
                size_t at2 = 0;
                pb a = {0};
                if (pb_key(&attrs, &f2, &wt2, &at2) != DTCAST_OK)
                    break;
                if (f2 == NP_ATTR && wt2 == WT_BYTES) {
                    if (pb_sub(&attrs, &a) != DTCAST_OK)
                        break;
                    changes = om_attr_changes(j, a);
                } else if (pb_skip(&attrs, wt2, at2) != DTCAST_OK) {
                    break;
                }
            }
            st = changes ? om_w_message(j, w, GP_NODE, emit_node, &na) : om_w_copy(j, w, at, g.pos);
            if (st == DTCAST_OK && na.constant && na.constant->scale_name) {
                st = om_w_message(j, w, GP_NODE, emit_scale_constant, na.constant);
                if (st == DTCAST_OK)
                    st = om_w_message(j, w, GP_NODE, om_emit_dequantize, na.constant);
            } else if (st == DTCAST_OK && na.constant) {
                const cast_node c = {na.constant->new_name, na.constant->name,
                                     na.constant->data_type};
                st = om_w_message(j, w, GP_NODE, om_emit_cast, &c);
            }
            continue;
        }
        if ((st = pb_skip(&g, wt, at)) == DTCAST_OK)
            st = om_w_copy(j, w, at, g.pos);
    }
    if (st == DTCAST_OK && !casts_done) /* a graph without nodes */
        st = emit_initializer_casts(j, w, s);
    return st;
}

static dtcast_status emit_model(om_job *j, om_writer *w, const void *arg)
{
    (void)arg;
    pb m = om_reader(j, 0, j->len);
    dtcast_status st = DTCAST_OK;
    while (st == DTCAST_OK && pb_more(&m)) {
        uint32_t f = 0;
        int wt = 0;
        size_t at = 0;
        pb sub = {0};
        if ((st = pb_key(&m, &f, &wt, &at)) != DTCAST_OK)
            break;
        if (f == MP_GRAPH && wt == WT_BYTES) {
            if ((st = pb_sub(&m, &sub)) != DTCAST_OK)
                break;
            const span g = {sub.pos, sub.end};
            st = om_w_message(j, w, MP_GRAPH, j->plan ? og_emit_graph : om_emit_graph, &g);
            continue;
        }
        if ((st = pb_skip(&m, wt, at)) == DTCAST_OK)
            st = om_w_copy(j, w, at, m.pos);
    }
    return st;
}

/* The output's data file: which tensors go there, at which offsets (in the order the writer
 * meets them: the order of the file). */
static void place_external(om_job *j)
{
    uint64_t offset = 0;
    for (size_t i = 0; i < j->nt; i++) {
        om_tensor *t = &j->t[i];
        /* converted tensors, external ones, and initializers in raw_data; not the typed fields
         * of tensors left as they are, nor other attributes' tensors held in the model */
        t->external_out = j->external_out && t->out_bytes >= DT_EXTERNAL_MIN &&
                          (t->convert || t->where == W_EXTERNAL ||
                           (t->kind == 0 && t->where == W_RAW));
        if (!t->external_out)
            continue;
        const uint64_t align = t->out_bytes >= ((uint64_t)1 << 20) ? 4096 : 64;
        offset = (offset + align - 1) / align * align;
        t->out_offset = offset;
        offset += t->out_bytes;
    }
}

/* ---- the job ---------------------------------------------------------------------------------- */

static dtcast_status check_request(om_job *j)
{
    const dt_cast_request *r = j->r;
    char tn[32];
    if (r->onnx_graph && r->to != DTCAST_FLOAT16 && r->to != DTCAST_BFLOAT16)
        return dt_job_fail(j->err, 1, DTCAST_ERR_INVALID_ARGUMENT,
                           "%s: --mode graph computes in float16 or bfloat16 (--to %s)", j->shown,
                           dt_type_label(r->to, tn, sizeof tn));
    if (!r->onnx_graph && (r->keep_io_types || r->block_ops.n || r->block_nodes.n ||
                           r->onnx_runtime != DT_ONNX_RUNTIME_ANY))
        return dt_job_fail(j->err, 1, DTCAST_ERR_INVALID_ARGUMENT,
                           "%s: --keep-io-types, --block-op, --block-node and --runtime apply to "
                           "--mode graph (weights mode keeps every node as it is)", j->shown);
    int64_t dq;
    if (om_scaled_target(r->to, &dq)) {
        if (dt_conversion_float32_only(&r->conversion))
            return dt_job_fail(j->err, 1, DTCAST_ERR_INVALID_ARGUMENT,
                               "%s: the converters' profiles write float16 (--to %s)", j->shown,
                               dt_type_label(r->to, tn, sizeof tn));
        if (j->opset < dq)
            return dt_job_fail(j->err, 0, DTCAST_ERR_UNSUPPORTED,
                               "%s: opset %lld has no DequantizeLinear of %s (it came in opset "
                               "%lld); the model is left as it is", j->shown, (long long)j->opset,
                               dt_type_label(r->to, tn, sizeof tn), (long long)dq);
        return DTCAST_OK;
    }
    if (r->to != DTCAST_FLOAT16 && r->to != DTCAST_BFLOAT16 && r->to != DTCAST_FLOAT32)
        return dt_job_fail(j->err, 1, DTCAST_ERR_INVALID_ARGUMENT,
                           "%s: an ONNX model's weights are stored as float16, bfloat16 or "
                           "float32, or as float8e4m3fn, float8e4m3fnuz, float8e5m2, "
                           "float8e5m2fnuz or int8 codes with a scale (--to %s: not yet)",
                           j->shown, dt_type_label(r->to, tn, sizeof tn));
    const int64_t need = r->to == DTCAST_BFLOAT16 ? 13 : 6;
    if (j->opset < need)
        return dt_job_fail(j->err, 0, DTCAST_ERR_UNSUPPORTED,
                           "%s: opset %lld has no Cast from %s (it came in opset %lld); the "
                           "model is left as it is", j->shown, (long long)j->opset,
                           dt_type_label(r->to, tn, sizeof tn), (long long)need);
    return DTCAST_OK;
}

static void send_warnings(om_job *j)
{
    const dt_job_hooks *h = &j->r->hooks;
    char tn[32];
    dt_type_label(j->r->to, tn, sizeof tn);
    if (j->kept_input)
        dt_job_warn(h, "%s: %zu initializer%s kept in %s type: also graph input%s, which a "
                    "caller may feed (first: '%s')", j->shown, j->kept_input,
                    j->kept_input == 1 ? "" : "s", j->kept_input == 1 ? "its" : "their",
                    j->kept_input == 1 ? "" : "s", j->first_input);
    if (j->kept_values)
        dt_job_warn(h, "%s: %zu tensor%s kept in %s type: %s values would not survive %s: %s",
                    j->shown, j->kept_values, j->kept_values == 1 ? "" : "s",
                    j->kept_values == 1 ? "its" : "their", j->kept_values == 1 ? "its" : "their",
                    tn, j->first_values);
    if (j->kept_scale)
        dt_job_warn(h, "%s: %zu tensor%s kept in %s type: no scale for %s codes: %s", j->shown,
                    j->kept_scale, j->kept_scale == 1 ? "" : "s",
                    j->kept_scale == 1 ? "its" : "their", tn, j->first_scale);
    if (j->kept_layout)
        dt_job_warn(h, "%s: %zu tensor%s kept: data in a layout this job does not rewrite "
                    "(segments, typed fields other than float_data/double_data)", j->shown,
                    j->kept_layout, j->kept_layout == 1 ? "" : "s");
}

static dtcast_status run(om_job *j)
{
    dtcast_status st = scan_model(j);
    if (st == DTCAST_OK)
        st = check_request(j);
    if (st == DTCAST_OK)
        st = decide(j);
    if (st != DTCAST_OK)
        return st;
    /* the data file's name, should there be one: the output's file name + ".data" */
    const char *base = strrchr(j->r->out, '/');
    base = base ? base + 1 : j->r->out;
    size_t n = strlen(j->r->out) + 6;
    char *data_path = malloc(n);
    if (!data_path || !(j->data_name = malloc(strlen(base) + 6))) {
        free(data_path);
        return om_fail(j, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    }
    snprintf(data_path, n, "%s.data", j->r->out);
    snprintf(j->data_name, strlen(base) + 6, "%s.data", base);
    /* where the data goes: auto keeps the input's choice, and goes external past 2 GiB */
    const dt_external mode = j->r->external_data;
    j->external_out = mode == DT_EXTERNAL_ALWAYS || (mode == DT_EXTERNAL_AUTO && j->any_external);
    place_external(j);
    om_writer count = {1, 0, NULL, NULL, 0};
    st = emit_model(j, &count, NULL);
    if (st == DTCAST_OK && count.n > DT_PROTO_MAX && !j->external_out) {
        if (mode == DT_EXTERNAL_NEVER)
            st = om_fail(j, DTCAST_ERR_SIZE_OVERFLOW, "the converted model would be %llu bytes, "
                      "over protobuf's 2 GiB: give --external-data auto or always",
                      (unsigned long long)count.n);
        j->external_out = 1;
        place_external(j);
    }
    if (st != DTCAST_OK) {
        free(data_path);
        return st;
    }
    uint64_t total = 0;
    for (size_t i = 0; i < j->nt; i++)
        if (j->t[i].convert || j->t[i].where == W_EXTERNAL)
            total += j->t[i].where == W_EXTERNAL ? j->t[i].ext_length : j->t[i].data_len;
    dt_progress_init(j->progress, total, j->r->hooks.progress, j->r->hooks.progress_ctx);
    dt_outfile out;
    memset(&out, 0, sizeof out);
    memset(&j->data, 0, sizeof j->data);
    dt_io_error e = DT_IO_ERROR_INIT;
    if (j->external_out) {
        if (strcmp(j->r->out, "-") == 0)
            st = dt_job_fail(j->err, 1, DTCAST_ERR_INVALID_ARGUMENT, "%s: a model with "
                             "external data cannot go to stdout", j->shown);
        else if ((st = dt_outfile_open(&j->data, data_path, &e)) != DTCAST_OK)
            st = om_fail(j, st, "%s", e.message);
    }
    uint8_t *buf = st == DTCAST_OK ? malloc(OM_BUF) : NULL;
    if (st == DTCAST_OK && !buf)
        st = om_fail(j, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    if (st == DTCAST_OK && (st = dt_outfile_open(&out, j->r->out, &e)) != DTCAST_OK)
        st = om_fail(j, st, "%s", e.message);
    if (st == DTCAST_OK) {
        om_writer w = {0, 0, &out, buf, 0};
        st = emit_model(j, &w, NULL);
        if (st == DTCAST_OK)
            st = om_w_flush(j, &w);
    }
    if (st == DTCAST_OK && j->external_out &&
        (st = dt_outfile_commit(&j->data, &e)) != DTCAST_OK)
        st = om_fail(j, st, "%s", e.message);
    if (st == DTCAST_OK && (st = dt_outfile_commit(&out, &e)) != DTCAST_OK)
        st = om_fail(j, st, "%s", e.message);
    dt_outfile_abort(&out);
    dt_outfile_abort(&j->data);
    free(buf);
    free(data_path);
    if (st == DTCAST_OK)
        send_warnings(j);
    return st;
}

static void job_free(om_job *j)
{
    for (size_t i = 0; i < j->nt; i++) {
        free(j->t[i].name);
        free(j->t[i].location);
        free(j->t[i].new_name);
        free(j->t[i].scale_name);
    }
    og_free(j);
    free(j->t);
    free(j->names.p);
    free(j->names.len);
    free(j->read_by_selected.p);
    free(j->read_by_selected.len);
    free(j->read_by_excluded.p);
    free(j->read_by_excluded.len);
    free(j->dir);
    free(j->data_name);
}

dtcast_status dt_onnx_model_cast(const dt_cast_request *r, dt_progress *progress,
                                 dt_stream_buffers *buffers, dt_io_error *err)
{
    om_job j;
    memset(&j, 0, sizeof j);
    j.r = r;
    j.err = err;
    j.shown = r->in;
    j.progress = progress;
    j.buffers = buffers;
    dt_infile in;
    dt_io_error e = DT_IO_ERROR_INIT;
    dtcast_status st = dt_infile_open(&in, r->in, &e);
    if (st == DTCAST_OK && !in.seekable)
        st = dt_job_fail(err, 1, DTCAST_ERR_INVALID_ARGUMENT, "%s: an ONNX model is read from a "
                         "file, not a pipe", in.shown);
    else if (st == DTCAST_OK && (st = dt_infile_map(&in, &j.map, &j.len, &e)) != DTCAST_OK)
        dt_job_fail(err, 0, st, "%s", e.message);
    else if (st != DTCAST_OK)
        dt_job_fail(err, 0, st, "%s", e.message);
    if (st == DTCAST_OK) {
        const char *slash = strrchr(r->in, '/');
        j.dir = slash == r->in ? copy_text((const uint8_t *)"/", 1)
                : slash          ? copy_text((const uint8_t *)r->in, (size_t)(slash - r->in))
                                 : copy_text((const uint8_t *)".", 1);
        if (!j.dir)
            st = om_fail(&j, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    }
    if (st == DTCAST_OK)
        st = run(&j);
    if (st == DTCAST_OK && err)
        err->status = DTCAST_OK;
    job_free(&j);
    dt_infile_close(&in);
    return st;
}

/* The graph's nodes, for dt_onnx_model_tensors: how often each initializer of the model's graph
 * is read there (readers[i]) and, when a Cast reads it, that Cast's output (cast_out[i], into the
 * map). The initializers are found by a hash of their names (slot: index + 1, 0 empty). */
static dtcast_status count_readers(om_job *j, uint32_t *readers, span *cast_out)
{
    size_t cap = 16;
    while (cap < 2 * j->nt)
        cap *= 2;
    size_t *slot = calloc(cap, sizeof *slot);
    if (!slot)
        return om_fail(j, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; i < j->nt; i++) {
        const om_tensor *t = &j->t[i];
        if (t->kind != 0 || t->depth != 1)
            continue;
        size_t k = name_hash((const uint8_t *)t->name, strlen(t->name)) & (cap - 1);
        while (slot[k])
            k = (k + 1) & (cap - 1);
        slot[k] = i + 1;
    }
    pb g = om_reader(j, j->graph.start, j->graph.end);
    dtcast_status st = DTCAST_OK;
    uint32_t f = 0;
    int wt = 0;
    size_t at = 0;
    while (pb_next(&g, &f, &wt, &at, &st)) {
        if (f != GP_NODE || wt != WT_BYTES) {
            st = pb_skip(&g, wt, at);
            continue;
        }
        pb n = {0}, op = {0}, out0 = {0};
        if ((st = pb_sub(&g, &n)) != DTCAST_OK)
            break;
        pb scan = n;
        int outs = 0;
        while (pb_next(&scan, &f, &wt, &at, &st)) {
            pb v = {0};
            if (f == NP_OP && wt == WT_BYTES)
                st = pb_sub(&scan, &op);
            else if (f == NP_OUTPUT && wt == WT_BYTES && (st = pb_sub(&scan, &v)) == DTCAST_OK &&
                     outs++ == 0)
                out0 = v;
            else if (f != NP_OUTPUT)
                st = pb_skip(&scan, wt, at);
        }
        if (st != DTCAST_OK)
            break;
        const int is_cast = op.end - op.pos == 4 && memcmp(j->map + op.pos, "Cast", 4) == 0;
        while (pb_next(&n, &f, &wt, &at, &st)) {
            pb v = {0};
            if (f != NP_INPUT || wt != WT_BYTES) {
                st = pb_skip(&n, wt, at);
                continue;
            }
            if ((st = pb_sub(&n, &v)) != DTCAST_OK)
                break;
            const size_t vn = v.end - v.pos;
            for (size_t k = name_hash(j->map + v.pos, vn) & (cap - 1); slot[k];
                 k = (k + 1) & (cap - 1)) {
                const size_t i = slot[k] - 1;
                const char *name = j->t[i].name;
                if (strlen(name) != vn || memcmp(name, j->map + v.pos, vn) != 0)
                    continue;
                readers[i]++;
                if (is_cast && outs == 1) {
                    cast_out[i].start = out0.pos;
                    cast_out[i].end = out0.end;
                }
            }
        }
    }
    free(slot);
    return st;
}

dtcast_status dt_onnx_model_tensors(const uint8_t *buf, size_t len, const char *shown,
                                    int64_t *opset,
                                    dtcast_status (*fn)(void *ctx, const dt_onnx_tensor_info *t),
                                    void *ctx, dt_io_error *err)
{
    om_job j;
    memset(&j, 0, sizeof j);
    j.err = err;
    j.shown = shown;
    j.map = buf ? buf : (const uint8_t *)"";
    j.len = len;
    dtcast_status st = scan_model(&j);
    if (opset)
        *opset = j.opset;
    uint32_t *readers = st == DTCAST_OK ? calloc(j.nt ? j.nt : 1, sizeof *readers) : NULL;
    span *cast_out = st == DTCAST_OK ? calloc(j.nt ? j.nt : 1, sizeof *cast_out) : NULL;
    if (st == DTCAST_OK && (!readers || !cast_out))
        st = om_fail(&j, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    if (st == DTCAST_OK)
        st = count_readers(&j, readers, cast_out);
    char *name = NULL;
    for (size_t i = 0; st == DTCAST_OK && i < j.nt; i++) {
        const om_tensor *t = &j.t[i];
        dt_onnx_tensor_info info;
        memset(&info, 0, sizeof info);
        info.name = t->name ? t->name : "";
        info.kind = t->kind;
        info.depth = t->depth;
        info.data_type = t->data_type;
        info.ndim = t->ndim;
        info.dims = t->dims;
        info.count = t->count;
        info.where = t->where == W_RAW        ? DT_ONNX_DATA_RAW
                     : t->where == W_TYPED    ? DT_ONNX_DATA_TYPED
                     : t->where == W_EXTERNAL ? DT_ONNX_DATA_EXTERNAL
                     : t->runs > 0            ? DT_ONNX_DATA_TYPED /* int32_data, int64_data, ... */
                                              : DT_ONNX_DATA_NONE;
        info.data_offset = t->data_start;
        info.data_len = t->data_len;
        info.location = t->location;
        info.ext_offset = t->ext_offset;
        info.ext_length = t->ext_length;
        info.has_length = t->has_length;
        free(name);
        name = NULL;
        if (readers[i] == 1 && cast_out[i].end > cast_out[i].start) {
            if (!(name = copy_text(j.map + cast_out[i].start, cast_out[i].end - cast_out[i].start)))
                st = om_fail(&j, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
            info.cast_output = name;
        }
        if (st == DTCAST_OK)
            st = fn(ctx, &info);
    }
    free(name);
    free(readers);
    free(cast_out);
    if (st == DTCAST_OK && err)
        err->status = DTCAST_OK;
    job_free(&j);
    return st;
}
