/* Lookup tables built from the reference path (exact by construction) and cached: 256 entries
 * for every 8-bit-or-narrower source, 65536 bytes for a 16-bit source into an 8-bit-or-narrower
 * destination. The cache is an open-addressed hash of fixed size: readers probe without a lock
 * (each slot's table pointer is published with release after its key is written); a miss takes
 * the mutex, probes again and builds. Tables live until the process ends. */
#include "kernels.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define SLOTS 2048      /* power of two */
#define MAX_TABLES 1536 /* at most this many slots used: probes always end at an empty slot */
#define MAX_BIG 64      /* at most 64 tables of 64 KiB (4 MiB) */

typedef struct slot {
    uint32_t key; /* written before table is published, never changed after */
    _Atomic(const void *) table;
} slot;

static slot slots[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned used, big_used; /* under lock */

void dt_rules_normalize(const dt_format *df, const dt_rules *r, dt_rules *out)
{
    *out = *r;
    switch (df->tc) {
    case DT_TC_BOOL:
        out->round = DTCAST_ROUND_RNE;
        out->saturate_int = false;
        /* fall through */
    case DT_TC_UINT:
    case DT_TC_SINT:
        out->saturate_float = false;
        out->nan_as_max = false;
        break;
    default: /* floats and e8m0 */
        out->saturate_int = false;
        if (df->tc != DT_TC_FLOAT || df->nan != DT_NAN_NONE)
            out->nan_as_max = false;
        break;
    }
}

static uint32_t key_of(const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    dt_rules n;
    dt_rules_normalize(df, r, &n);
    return 1u + ((uint32_t)sf->type & 0xFF) + (((uint32_t)df->type & 0xFF) << 8) +
           ((uint32_t)n.round << 16) + ((uint32_t)n.saturate_float << 20) +
           ((uint32_t)n.saturate_int << 21) + ((uint32_t)n.nan_as_max << 22);
}

static unsigned hash_of(uint32_t key) { return (key * 2654435761u) >> (32 - 11); }

static size_t entry_bytes(const dt_format *df)
{
    return df->stride_bits <= 8 ? 1 : (size_t)df->stride_bits / 8;
}

static bool is_big(const dt_format *sf) { return sf->stride_bits == 16; }

static void fill(uint8_t *t, const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    const size_t n = is_big(sf) ? 65536 : 256, w = entry_bytes(df);
    for (size_t c = 0; c < n; c++) {
        dt_value v;
        dt_decode(sf, c, &v); /* masks c to the source's bits (float6: the low 6 of the byte) */
        uint64_t code = dt_encode(df, &v, r);
        for (size_t i = 0; i < w; i++) /* little-endian */
            t[c * w + i] = (uint8_t)(code >> (8 * i));
    }
}

static void *build(const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    uint8_t *t = aligned_alloc(64, (is_big(sf) ? 65536 : 256) * entry_bytes(df));
    if (t)
        fill(t, df, sf, r);
    return t;
}

const void *dt_table_build_into(uint8_t *buf, const dt_format *df, const dt_format *sf,
                                const dt_rules *r)
{
    if (sf->stride_bits > 8)
        return NULL;
    fill(buf, df, sf, r);
    return buf;
}

/* The slot holding key, or the empty slot where it would go. */
static slot *probe(uint32_t key, const void **table)
{
    for (unsigned h = hash_of(key);; h = (h + 1) & (SLOTS - 1)) {
        const void *t = atomic_load_explicit(&slots[h].table, memory_order_acquire);
        if (!t || slots[h].key == key) {
            *table = t;
            return &slots[h];
        }
    }
}

bool dt_table_ready(const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    const void *t;
    probe(key_of(df, sf, r), &t);
    return t != NULL;
}

const void *dt_table_get(const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    if (sf->stride_bits > 16 || (sf->stride_bits == 16 && df->stride_bits > 8))
        return NULL;
    const uint32_t key = key_of(df, sf, r);
    const void *t;
    probe(key, &t);
    if (t)
        return t;
    pthread_mutex_lock(&lock);
    slot *s = probe(key, &t); /* another thread may have built it meanwhile */
    if (!t && used < MAX_TABLES && (!is_big(sf) || big_used < MAX_BIG)) {
        void *made = build(df, sf, r);
        if (made) {
            used++;
            big_used += is_big(sf);
            s->key = key;
            atomic_store_explicit(&s->table, made, memory_order_release);
            t = made;
        }
    }
    pthread_mutex_unlock(&lock);
    return t;
}
