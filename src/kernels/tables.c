/* Lookup tables built from the reference path (exact by construction) and cached: 256 entries
 * for every 8-bit-or-narrower source, 65536 entries for a 16-bit source into a destination of at
 * most 16 bits (1 or 2 bytes each), and pair tables (65536 entries of 1 or 2 bytes, built from
 * the 256-entry table). The cache is an open-addressed hash of fixed size: readers probe without
 * a lock (each slot's table pointer is published with release after its key is written); a miss
 * takes the mutex, probes again and builds. Tables live until the process ends. */
#include "kernels.h"
#include "portable.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define SLOTS 2048      /* power of two */
#define MAX_TABLES 1536 /* at most this many slots used: probes always end at an empty slot */
#define MAX_BIG 128     /* at most 128 units of 64 KiB (8 MiB) in 65536-entry tables */
#define MAX_PAIR 512    /* at most 512 units of 64 KiB (32 MiB) in pair tables, the upper half
                         * for those much faster than the byte tables (dt_table_pair_get_some) */
#define PAIR_KEY (1u << 23) /* key_of's flag of a pair table */

typedef struct slot {
    uint32_t key; /* written before table is published, never changed after */
    _Atomic(const void *) table;
} slot;

static slot slots[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned used, big_used, pair_used; /* under lock (pair_used: in units of 64 KiB) */

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
    if (sf->stride_bits > 16 || (sf->stride_bits == 16 && df->stride_bits > 16))
        return NULL;
    const uint32_t key = key_of(df, sf, r);
    const void *t;
    probe(key, &t);
    if (t)
        return t;
    pthread_mutex_lock(&lock);
    slot *s = probe(key, &t); /* another thread may have built it meanwhile */
    const unsigned units = is_big(sf) ? (unsigned)entry_bytes(df) : 0; /* of 64 KiB */
    if (!t && used < MAX_TABLES && big_used + units <= MAX_BIG) {
        void *made = build(df, sf, r);
        if (made) {
            used++;
            big_used += units;
            s->key = key;
            atomic_store_explicit(&s->table, made, memory_order_release);
            t = made;
        }
    }
    pthread_mutex_unlock(&lock);
    return t;
}

/* ---- pair tables: two source bytes per entry (portable_pair.c) ---- */
unsigned dt_table_pair_bits(const dt_format *df, const dt_format *sf)
{
    const unsigned sb = (unsigned)sf->stride_bits, db = (unsigned)df->stride_bits;
    const unsigned bits = 16 / sb * db; /* two source bytes' elements, at db bits each */
    return sb <= 8 && db <= 8 && bits <= 16 ? bits : 0;
}

/* Entry x of the pair table: the output codes of the elements of source bytes x & 255 (first in
 * memory) and x >> 8, at db-bit steps (the packed stream's order), in 1 or 2 bytes. Built by
 * rows of 256 entries from the codes of single source bytes, the second byte's above the
 * first's (element by element took ~150 us more here; first touching the new 64 KiB ~40 us). */
static void fill_pair(uint8_t *p, const uint8_t *t, const dt_format *df, const dt_format *sf)
{
    const unsigned sb = (unsigned)sf->stride_bits, db = (unsigned)df->stride_bits;
    const unsigned per = 8 / sb, eb = dt_table_pair_bits(df, sf) > 8 ? 2 : 1;
    const unsigned smask = sb == 8 ? 0xFFu : (1u << sb) - 1;
    uint16_t one[256]; /* the codes of source byte v's elements at db-bit steps */
    for (unsigned v = 0; v < 256; v++) {
        unsigned e = 0;
        for (unsigned j = 0; j < per; j++)
            e |= (unsigned)t[(v >> (j * sb)) & smask] << (j * db);
        one[v] = (uint16_t)e;
    }
    for (unsigned hi = 0; hi < 256; hi++) {
        const unsigned h = (unsigned)one[hi] << (per * db);
        uint8_t *row = p + (size_t)hi * 256 * eb;
        if (eb == 1) {
            for (unsigned lo = 0; lo < 256; lo++)
                row[lo] = (uint8_t)(one[lo] | h);
        } else {
            for (unsigned lo = 0; lo < 256; lo++) {
                row[2 * lo] = (uint8_t)(one[lo] | h);
                row[2 * lo + 1] = (uint8_t)((one[lo] | h) >> 8);
            }
        }
    }
}

bool dt_table_pair_ready(const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    const void *t;
    probe(key_of(df, sf, r) | PAIR_KEY, &t);
    return t != NULL;
}

static const void *pair_get(const dt_format *df, const dt_format *sf, const dt_rules *r,
                            unsigned budget)
{
    const unsigned eb = dt_table_pair_bits(df, sf) > 8 ? 2 : 1;
    const uint32_t key = key_of(df, sf, r) | PAIR_KEY;
    const void *t;
    probe(key, &t);
    if (t || !dt_table_pair_bits(df, sf))
        return t;
    const uint8_t *base = dt_table_get(df, sf, r); /* before the lock: it takes it */
    if (!base)
        return NULL;
    pthread_mutex_lock(&lock);
    slot *s = probe(key, &t);
    if (!t && used < MAX_TABLES && pair_used + eb <= budget) {
        uint8_t *made = aligned_alloc(64, (size_t)65536 * eb);
        if (made) {
            fill_pair(made, base, df, sf);
            used++;
            pair_used += eb;
            s->key = key;
            atomic_store_explicit(&s->table, (const void *)made, memory_order_release);
            t = made;
        }
    }
    pthread_mutex_unlock(&lock);
    return t;
}

const void *dt_table_pair_get(const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    return pair_get(df, sf, r, MAX_PAIR);
}

const void *dt_table_pair_get_some(const dt_format *df, const dt_format *sf, const dt_rules *r)
{
    return pair_get(df, sf, r, MAX_PAIR / 2);
}
