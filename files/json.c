/* The JSON reader (a recursive descent over the text into a flat array of nodes, with a depth
 * limit so that hostile nesting cannot exhaust the stack) and the writing helpers. */
#include "files/json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const uint8_t *s;
    size_t len, pos;
    dt_json_doc *doc;
    size_t cap; /* nodes allocated */
    size_t pool_used;
    const char *what;
    dt_io_error *err;
    dtcast_status status;
} parser;

/* Records the first error (later ones are consequences). */
static int fail_at(parser *p, size_t at, dtcast_status status, const char *msg)
{
    if (p->status == DTCAST_OK) {
        p->status = status;
        dt_io_fail(p->err, status, "%s: %s at byte %" PRIu64, p->what, msg,
                   p->doc->base + (uint64_t)at);
    }
    return 0;
}

static int fail(parser *p, const char *msg) { return fail_at(p, p->pos, DTCAST_ERR_BAD_FILE, msg); }

/* "unexpected 'x'" or "unexpected byte 0xNN" or "unexpected end of text" + context. */
static int fail_unexpected(parser *p, const char *expected)
{
    char msg[96];
    if (p->pos >= p->len)
        snprintf(msg, sizeof msg, "%s, found the end of the text", expected);
    else if (p->s[p->pos] >= 0x20 && p->s[p->pos] < 0x7F)
        snprintf(msg, sizeof msg, "%s, found '%c'", expected, p->s[p->pos]);
    else
        snprintf(msg, sizeof msg, "%s, found byte 0x%02X", expected, p->s[p->pos]);
    return fail(p, msg);
}

static void skip_ws(parser *p)
{
    while (p->pos < p->len &&
           (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n' ||
            p->s[p->pos] == '\r'))
        p->pos++;
}

/* A new node (index in *idx); 0 on allocation failure. */
static int new_node(parser *p, dt_json_kind kind, uint32_t *idx)
{
    dt_json_doc *d = p->doc;
    if (d->nnodes == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        if (cap > SIZE_MAX / sizeof *d->nodes || cap > UINT32_MAX)
            return fail_at(p, p->pos, DTCAST_ERR_OUT_OF_MEMORY, "too many values");
        dt_json_node *nodes = realloc(d->nodes, cap * sizeof *nodes);
        if (!nodes)
            return fail_at(p, p->pos, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
        d->nodes = nodes;
        p->cap = cap;
    }
    *idx = (uint32_t)d->nnodes++;
    dt_json_node *n = &d->nodes[*idx];
    memset(n, 0, sizeof *n);
    n->kind = (uint8_t)kind;
    n->at = (uint32_t)p->pos;
    return 1;
}

/* ---- strings ------------------------------------------------------------------------------ */

static int hex4(const uint8_t *s, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = s[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return 0;
        *v = *v << 4 | d;
    }
    return 1;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The string at p->pos (its opening quote), decoded into the pool: *off, *len. The decoded form
 * is never longer than the quoted text, so the pool (the text's length + 1) always has room. */
static int parse_string(parser *p, uint32_t *off, uint32_t *len)
{
    char *out = p->doc->pool + p->pool_used;
    size_t n = 0;
    p->pos++; /* the opening quote */
    for (;;) {
        if (p->pos >= p->len)
            return fail(p, "unterminated string");
        uint8_t c = p->s[p->pos];
        if (c == '"')
            break;
        if (c < 0x20) {
            char msg[64];
            snprintf(msg, sizeof msg, "control character 0x%02X in a string", c);
            return fail(p, msg);
        }
        if (c != '\\') {
            out[n++] = (char)c; /* UTF-8 was checked for the whole text */
            p->pos++;
            continue;
        }
        if (p->pos + 1 >= p->len)
            return fail(p, "unterminated string");
        uint8_t e = p->s[p->pos + 1];
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e && simple) {
            static const char decoded[] = "\"\\/\b\f\n\r\t";
            out[n++] = decoded[simple - "\"\\/bfnrt"];
            p->pos += 2;
            continue;
        }
        if (e != 'u') {
            char msg[64];
            if (e >= 0x20 && e < 0x7F)
                snprintf(msg, sizeof msg, "invalid escape '\\%c'", e);
            else
                snprintf(msg, sizeof msg, "invalid escape: byte 0x%02X after '\\'", e);
            return fail(p, msg);
        }
        unsigned cp;
        if (p->pos + 6 > p->len || !hex4(p->s + p->pos + 2, &cp))
            return fail(p, "invalid \\u escape (four hex digits expected)");
        if (cp >= 0xDC00 && cp <= 0xDFFF)
            return fail(p, "lone low surrogate in a \\u escape");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            unsigned lo;
            if (p->pos + 12 > p->len || p->s[p->pos + 6] != '\\' || p->s[p->pos + 7] != 'u' ||
                !hex4(p->s + p->pos + 8, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                return fail(p, "high surrogate in a \\u escape without a low surrogate after it");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            p->pos += 6;
        }
        n += put_utf8(out + n, cp);
        p->pos += 6;
    }
    p->pos++; /* the closing quote */
    out[n] = 0;
    *off = (uint32_t)p->pool_used;
    *len = (uint32_t)n;
    p->pool_used += n + 1;
    return 1;
}

/* ---- numbers and literals ----------------------------------------------------------------- */

static int is_digit(parser *p)
{
    return p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9';
}

static int parse_number(parser *p, dt_json_node *n)
{
    int integer = 1, overflow = 0;
    uint64_t v = 0;
    if (p->s[p->pos] == '-') {
        integer = 0;
        p->pos++;
    }
    if (!is_digit(p))
        return fail(p, "invalid number: a digit must follow '-'");
    if (p->s[p->pos] == '0') {
        p->pos++; /* a leading zero stands alone ("01" fails at the '1' in the caller) */
    } else {
        while (is_digit(p)) {
            unsigned d = p->s[p->pos] - '0';
            if (v > (UINT64_MAX - d) / 10)
                overflow = 1;
            else
                v = v * 10 + d;
            p->pos++;
        }
    }
    if (p->pos < p->len && p->s[p->pos] == '.') {
        integer = 0;
        p->pos++;
        if (!is_digit(p))
            return fail(p, "invalid number: a digit must follow '.'");
        while (is_digit(p))
            p->pos++;
    }
    if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        integer = 0;
        p->pos++;
        if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
            p->pos++;
        if (!is_digit(p))
            return fail(p, "invalid number: a digit must follow the exponent mark");
        while (is_digit(p))
            p->pos++;
    }
    n->num = (uint8_t)(!integer ? DT_JSON_NUM_OTHER
                                : overflow ? DT_JSON_NUM_OVERFLOW : DT_JSON_NUM_UINT);
    n->u = integer && !overflow ? v : 0;
    return 1;
}

static int parse_literal(parser *p, const char *word)
{
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
        return fail_unexpected(p, "expected a value");
    p->pos += n;
    return 1;
}

/* ---- values ------------------------------------------------------------------------------- */

static int parse_value(parser *p, uint32_t *idx, int depth);

/* Links child into its parent's list after *last. */
static void link_child(parser *p, uint32_t parent, uint32_t *last, uint32_t child)
{
    dt_json_node *par = &p->doc->nodes[parent];
    if (par->count == 0)
        par->first = child;
    else
        p->doc->nodes[*last].next = child;
    par->count++;
    *last = child;
}

static int parse_array(parser *p, uint32_t self, int depth)
{
    uint32_t last = 0;
    p->pos++; /* '[' */
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == ']') {
        p->pos++;
        return 1;
    }
    for (;;) {
        uint32_t child;
        if (!parse_value(p, &child, depth + 1))
            return 0;
        link_child(p, self, &last, child);
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            skip_ws(p);
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == ']') {
            p->pos++;
            return 1;
        }
        return fail_unexpected(p, "expected ',' or ']'");
    }
}

static int parse_object(parser *p, uint32_t self, int depth)
{
    uint32_t last = 0;
    p->pos++; /* '{' */
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == '}') {
        p->pos++;
        return 1;
    }
    for (;;) {
        if (p->pos >= p->len || p->s[p->pos] != '"')
            return fail_unexpected(p, "expected a string key");
        uint32_t key_at = (uint32_t)p->pos, key, key_len, child;
        if (!parse_string(p, &key, &key_len))
            return 0;
        skip_ws(p);
        if (p->pos >= p->len || p->s[p->pos] != ':')
            return fail_unexpected(p, "expected ':'");
        p->pos++;
        skip_ws(p);
        if (!parse_value(p, &child, depth + 1))
            return 0;
        dt_json_node *c = &p->doc->nodes[child];
        c->key = key;
        c->key_len = key_len;
        c->key_at = key_at;
        link_child(p, self, &last, child);
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            skip_ws(p);
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == '}') {
            p->pos++;
            return 1;
        }
        return fail_unexpected(p, "expected ',' or '}'");
    }
}

/* One value at p->pos (whitespace before it already skipped). */
static int parse_value(parser *p, uint32_t *idx, int depth)
{
    if (p->pos >= p->len)
        return fail_unexpected(p, "expected a value");
    uint8_t c = p->s[p->pos];
    dt_json_kind kind;
    switch (c) {
    case '{': kind = DT_JSON_OBJECT; break;
    case '[': kind = DT_JSON_ARRAY; break;
    case '"': kind = DT_JSON_STRING; break;
    case 't': kind = DT_JSON_TRUE; break;
    case 'f': kind = DT_JSON_FALSE; break;
    case 'n': kind = DT_JSON_NULL; break;
    default:
        if (c != '-' && (c < '0' || c > '9'))
            return fail_unexpected(p, "expected a value");
        kind = DT_JSON_NUMBER;
    }
    if ((kind == DT_JSON_OBJECT || kind == DT_JSON_ARRAY) && depth >= DT_JSON_MAX_DEPTH) {
        char msg[64];
        snprintf(msg, sizeof msg, "nesting deeper than %d levels", DT_JSON_MAX_DEPTH);
        return fail(p, msg);
    }
    if (!new_node(p, kind, idx))
        return 0;
    int ok;
    switch (kind) {
    case DT_JSON_OBJECT: ok = parse_object(p, *idx, depth); break;
    case DT_JSON_ARRAY: ok = parse_array(p, *idx, depth); break;
    case DT_JSON_STRING: {
        uint32_t off, len;
        ok = parse_string(p, &off, &len);
        if (ok) {
            p->doc->nodes[*idx].str = off;
            p->doc->nodes[*idx].len = len;
        }
        break;
    }
    case DT_JSON_TRUE: ok = parse_literal(p, "true"); break;
    case DT_JSON_FALSE: ok = parse_literal(p, "false"); break;
    case DT_JSON_NULL: ok = parse_literal(p, "null"); break;
    default: ok = parse_number(p, &p->doc->nodes[*idx]); break;
    }
    if (ok)
        p->doc->nodes[*idx].end = (uint32_t)p->pos;
    return ok;
}

size_t dt_json_utf8_check(const uint8_t *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        uint32_t cp, min;
        if (c >= 0xC2 && c <= 0xDF) {
            n = 2, cp = c & 0x1F, min = 0x80;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 3, cp = c & 0x0F, min = 0x800;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 4, cp = c & 0x07, min = 0x10000;
        } else {
            return i; /* a continuation byte, C0/C1 (always overlong) or F5..FF */
        }
        if (len - i < n)
            return i;
        for (size_t k = 1; k < n; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return i;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += n;
    }
    return len;
}

void dt_json_free(dt_json_doc *doc)
{
    free(doc->nodes);
    free(doc->pool);
    memset(doc, 0, sizeof *doc);
}

dtcast_status dt_json_parse(const uint8_t *text, size_t len, uint64_t base, const char *what,
                            dt_json_doc *doc, dt_io_error *err)
{
    memset(doc, 0, sizeof *doc);
    doc->base = base;
    what = what ? what : "json";
    if (!text && len)
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "%s: NULL text", what);
    if (len > DT_JSON_MAX_TEXT)
        return dt_io_fail(err, DTCAST_ERR_SIZE_OVERFLOW, "%s: text of %zu bytes, over the %u limit",
                          what, len, DT_JSON_MAX_TEXT);
    size_t bad = dt_json_utf8_check(text, len);
    if (bad != len)
        return dt_io_fail(err, DTCAST_ERR_BAD_FILE, "%s: invalid UTF-8 at byte %" PRIu64, what,
                          base + (uint64_t)bad);
    doc->pool = malloc(len + 1);
    if (!doc->pool)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
    doc->text = text;
    doc->len = len;
    parser p = {.s = text, .len = len, .doc = doc, .what = what, .err = err,
                .status = DTCAST_OK};
    uint32_t root;
    skip_ws(&p);
    if (parse_value(&p, &root, 0)) {
        skip_ws(&p);
        if (p.pos < len)
            fail_unexpected(&p, "expected the end of the text after the value");
    }
    if (p.status != DTCAST_OK) {
        dt_json_free(doc);
        return p.status;
    }
    return DTCAST_OK;
}

/* ---- queries ------------------------------------------------------------------------------ */

const char *dt_json_str(const dt_json_doc *doc, const dt_json_node *n)
{
    return doc->pool + n->str;
}

const char *dt_json_key(const dt_json_doc *doc, const dt_json_node *n)
{
    return doc->pool + n->key;
}

const dt_json_node *dt_json_first(const dt_json_doc *doc, const dt_json_node *n)
{
    return n->count ? &doc->nodes[n->first] : NULL;
}

const dt_json_node *dt_json_next(const dt_json_doc *doc, const dt_json_node *n)
{
    return n->next ? &doc->nodes[n->next] : NULL;
}

const dt_json_node *dt_json_get(const dt_json_doc *doc, const dt_json_node *obj, const char *key)
{
    size_t n = strlen(key);
    for (const dt_json_node *c = dt_json_first(doc, obj); c; c = dt_json_next(doc, c))
        if (c->key_len == n && memcmp(doc->pool + c->key, key, n) == 0)
            return c;
    return NULL;
}

typedef struct key_ref {
    const char *key;
    uint32_t len;
    uint32_t at; /* text order */
    const dt_json_node *node;
} key_ref;

static int cmp_key_ref(const void *a, const void *b)
{
    const key_ref *x = a, *y = b;
    int c = memcmp(x->key, y->key, x->len < y->len ? x->len : y->len);
    if (c)
        return c;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

const dt_json_node *dt_json_duplicate(const dt_json_doc *doc, const dt_json_node *obj,
                                      dtcast_status *status)
{
    *status = DTCAST_OK;
    if (obj->count < 2)
        return NULL;
    key_ref *refs = malloc(obj->count * sizeof *refs);
    if (!refs) {
        *status = DTCAST_ERR_OUT_OF_MEMORY;
        return NULL;
    }
    size_t n = 0;
    for (const dt_json_node *c = dt_json_first(doc, obj); c; c = dt_json_next(doc, c))
        refs[n++] = (key_ref){doc->pool + c->key, c->key_len, c->key_at, c};
    qsort(refs, n, sizeof *refs, cmp_key_ref);
    const dt_json_node *dup = NULL;
    for (size_t i = 1; i < n; i++)
        if (refs[i].len == refs[i - 1].len &&
            memcmp(refs[i].key, refs[i - 1].key, refs[i].len) == 0 &&
            (!dup || refs[i].at < dup->key_at))
            dup = refs[i].node;
    free(refs);
    return dup;
}

/* ---- writing ------------------------------------------------------------------------------ */

void dt_json_put(dt_json_buf *b, const void *p, size_t n)
{
    if (b->oom || n == 0)
        return;
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n) {
            if (cap > SIZE_MAX / 2) {
                b->oom = 1;
                return;
            }
            cap *= 2;
        }
        char *data = realloc(b->data, cap);
        if (!data) {
            b->oom = 1;
            return;
        }
        b->data = data;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void dt_json_puts(dt_json_buf *b, const char *s) { dt_json_put(b, s, strlen(s)); }

void dt_json_put_u64(dt_json_buf *b, uint64_t v)
{
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%" PRIu64, v);
    dt_json_put(b, tmp, (size_t)n);
}

static void put_u_escape(dt_json_buf *b, unsigned u)
{
    char tmp[12];
    snprintf(tmp, sizeof tmp, "\\u%04x", u & 0xFFFFu);
    dt_json_put(b, tmp, 6);
}

void dt_json_put_string(dt_json_buf *b, const char *s, size_t len, int ascii)
{
    const uint8_t *u = (const uint8_t *)s;
    dt_json_put(b, "\"", 1);
    size_t i = 0;
    while (i < len) {
        uint8_t c = u[i];
        const char *esc = NULL;
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\b': esc = "\\b"; break;
        case '\t': esc = "\\t"; break;
        case '\n': esc = "\\n"; break;
        case '\f': esc = "\\f"; break;
        case '\r': esc = "\\r"; break;
        default: break;
        }
        if (esc) {
            dt_json_put(b, esc, 2);
            i++;
        } else if (c < 0x20 || (ascii && c == 0x7F)) {
            put_u_escape(b, c);
            i++;
        } else if (c < 0x80 || !ascii) {
            dt_json_put(b, &u[i], 1);
            i++;
        } else {
            /* one UTF-8 character (valid by contract) as \uxxxx, or a surrogate pair */
            size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
            if (n > len - i)
                n = len - i;
            unsigned cp = c & (n == 4 ? 0x07 : n == 3 ? 0x0F : 0x1F);
            for (size_t k = 1; k < n; k++)
                cp = cp << 6 | (u[i + k] & 0x3F);
            if (cp >= 0x10000) {
                put_u_escape(b, 0xD800 + ((cp - 0x10000) >> 10));
                put_u_escape(b, 0xDC00 + ((cp - 0x10000) & 0x3FF));
            } else {
                put_u_escape(b, cp);
            }
            i += n;
        }
    }
    dt_json_put(b, "\"", 1);
}

static void put_indent(dt_json_buf *b, int level)
{
    dt_json_put(b, "\n", 1);
    for (int i = 0; i < level; i++)
        dt_json_put(b, "  ", 2);
}

void dt_json_put_pretty(dt_json_buf *b, const dt_json_doc *doc, const dt_json_node *v, int level)
{
    switch (v->kind) {
    case DT_JSON_NULL: dt_json_puts(b, "null"); return;
    case DT_JSON_TRUE: dt_json_puts(b, "true"); return;
    case DT_JSON_FALSE: dt_json_puts(b, "false"); return;
    case DT_JSON_NUMBER: dt_json_put(b, doc->text + v->at, v->end - v->at); return;
    case DT_JSON_STRING: dt_json_put_string(b, dt_json_str(doc, v), v->len, 1); return;
    case DT_JSON_ARRAY:
        if (v->count == 0) {
            dt_json_puts(b, "[]");
            return;
        }
        dt_json_puts(b, "[");
        for (const dt_json_node *c = dt_json_first(doc, v); c; c = dt_json_next(doc, c)) {
            put_indent(b, level + 1);
            dt_json_put_pretty(b, doc, c, level + 1);
            if (c->next)
                dt_json_puts(b, ",");
        }
        put_indent(b, level);
        dt_json_puts(b, "]");
        return;
    default:
        break;
    }
    if (v->count == 0) {
        dt_json_puts(b, "{}");
        return;
    }
    key_ref *refs = malloc(v->count * sizeof *refs);
    if (!refs) {
        b->oom = 1;
        return;
    }
    size_t n = 0;
    for (const dt_json_node *c = dt_json_first(doc, v); c; c = dt_json_next(doc, c))
        refs[n++] = (key_ref){doc->pool + c->key, c->key_len, c->key_at, c};
    qsort(refs, n, sizeof *refs, cmp_key_ref); /* key bytes = code point order, as Python sorts */
    dt_json_puts(b, "{");
    for (size_t i = 0; i < n; i++) {
        put_indent(b, level + 1);
        dt_json_put_string(b, refs[i].key, refs[i].len, 1);
        dt_json_puts(b, ": ");
        dt_json_put_pretty(b, doc, refs[i].node, level + 1);
        if (i + 1 < n)
            dt_json_puts(b, ",");
    }
    put_indent(b, level);
    dt_json_puts(b, "}");
    free(refs);
}
