/* A small JSON (RFC 8259) reader into a flat tree of nodes, and the few writing helpers the
 * file formats need. Used by the safetensors reader and writer; not part of the installed API.
 *
 * Reading is strict: the whole text must be UTF-8, strings may hold any escape (\uXXXX surrogate
 * pairs become one UTF-8 character; a lone surrogate is an error), nesting is limited to
 * DT_JSON_MAX_DEPTH, and every error names the byte offset where it was found. Duplicate object
 * keys are not an error here: dt_json_duplicate() finds them, and the caller decides. */
#ifndef DTCAST_FILES_JSON_H
#define DTCAST_FILES_JSON_H

#include "files/tensor.h"

#include <stddef.h>
#include <stdint.h>

#define DT_JSON_MAX_DEPTH 64
#define DT_JSON_MAX_TEXT 0x7FFFFFFFu /* node fields are 32-bit offsets */

typedef enum dt_json_kind {
    DT_JSON_NULL,
    DT_JSON_FALSE,
    DT_JSON_TRUE,
    DT_JSON_NUMBER,
    DT_JSON_STRING,
    DT_JSON_ARRAY,
    DT_JSON_OBJECT
} dt_json_kind;

/* What a number is, for readers that want exact integers. */
typedef enum dt_json_num {
    DT_JSON_NUM_OTHER,    /* negative, a fraction or an exponent */
    DT_JSON_NUM_UINT,     /* a non-negative integer literal that fits uint64_t (in u) */
    DT_JSON_NUM_OVERFLOW  /* a non-negative integer literal above UINT64_MAX */
} dt_json_num;

/* One value. Index 0 is the root; 0 also means "none" in first/next (the root is nobody's
 * child). Positions are relative to the parsed text (add dt_json_doc.base for a file offset). */
typedef struct dt_json_node {
    uint8_t kind;          /* dt_json_kind */
    uint8_t num;           /* dt_json_num, for numbers */
    uint32_t at, end;      /* the value's text is [at, end) */
    uint32_t key, key_len; /* a member of an object: its key, decoded, in the pool */
    uint32_t key_at;       /* ... and where the key's opening quote is */
    uint32_t str, len;     /* a string: decoded bytes in the pool (NUL-terminated; may hold NULs) */
    uint32_t first, count; /* an array or object: its first child and how many */
    uint32_t next;         /* the next child of the same parent */
    uint64_t u;            /* a DT_JSON_NUM_UINT number */
} dt_json_node;

typedef struct dt_json_doc {
    dt_json_node *nodes;
    size_t nnodes;
    char *pool;            /* decoded strings and keys */
    const uint8_t *text;   /* the caller's text (not owned) */
    size_t len;
    uint64_t base;         /* added to every offset in messages */
} dt_json_doc;

/* Parses text[0, len) (one value, whitespace around it allowed). Messages read
 * "WHAT: expected ':' at byte N" with N = base + position; what NULL means "json". On failure
 * doc is left empty (safe to free). */
dtcast_status dt_json_parse(const uint8_t *text, size_t len, uint64_t base, const char *what,
                            dt_json_doc *doc, dt_io_error *err);
void dt_json_free(dt_json_doc *doc);

/* Decoded string and key bytes (NUL-terminated; the length is in the node). */
const char *dt_json_str(const dt_json_doc *doc, const dt_json_node *n);
const char *dt_json_key(const dt_json_doc *doc, const dt_json_node *n);
/* First child and next sibling, or NULL. */
const dt_json_node *dt_json_first(const dt_json_doc *doc, const dt_json_node *n);
const dt_json_node *dt_json_next(const dt_json_doc *doc, const dt_json_node *n);
/* The first member of object obj whose key is the C string key, or NULL. */
const dt_json_node *dt_json_get(const dt_json_doc *doc, const dt_json_node *obj, const char *key);
/* A member of obj whose key an earlier member already has (the first such in text order), or
 * NULL when every key is distinct. Sets *status to OUT_OF_MEMORY (NULL returned) on failure. */
const dt_json_node *dt_json_duplicate(const dt_json_doc *doc, const dt_json_node *obj,
                                      dtcast_status *status);
/* Offset of the first byte that breaks UTF-8 in s[0, len) (overlong forms, surrogates and
 * code points above U+10FFFF included), or len when it is all valid. */
size_t dt_json_utf8_check(const uint8_t *s, size_t len);

/* ---- writing ----------------------------------------------------------------------------- */

/* A growing byte buffer; after an allocation failure it stays failed (oom) and drops output. */
typedef struct dt_json_buf {
    char *data;
    size_t len, cap;
    int oom;
} dt_json_buf;

void dt_json_put(dt_json_buf *b, const void *p, size_t n);
void dt_json_puts(dt_json_buf *b, const char *s);
void dt_json_put_u64(dt_json_buf *b, uint64_t v);
/* A quoted JSON string. ascii == 0 escapes as serde_json does (only '"', '\\' and control
 * characters; \b \t \n \f \r short, others \u00xx; other bytes as they are); ascii == 1 as
 * Python's json.dumps does (also DEL and every non-ASCII character as \uxxxx, surrogate pairs
 * above U+FFFF). s must be valid UTF-8. */
void dt_json_put_string(dt_json_buf *b, const char *s, size_t len, int ascii);
/* Value v of doc the way Python's json.dumps(indent=2, sort_keys=True) prints it at nesting
 * level `level` (numbers keep their text). */
void dt_json_put_pretty(dt_json_buf *b, const dt_json_doc *doc, const dt_json_node *v, int level);

#endif /* DTCAST_FILES_JSON_H */
