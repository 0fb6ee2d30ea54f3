/* libFuzzer harness for the GGUF reader (files/gguf.c): the input is a whole file. Checks: never
 * a crash, a leak or an out-of-bounds read (ASan); a refusal names the byte; a file that parses
 * keeps every promise of gguf.h (each value and tensor inside the file, the data dense in
 * tensor-info order, unique keys and names within the limits), every array element can be
 * read back, and the writer (dt_gguf_out) writes the same metadata and tensor infos again into
 * a header that parses to the same values (the data left zero). */
#include "files/gguf.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* g's metadata and tensor infos through the writer, read back: the same. */
static void rewrite(const uint8_t *data, const dt_gguf *g)
{
    dt_gguf_out o;
    dt_gguf_out_init(&o, g->big_endian);
    for (uint64_t i = 0; i < g->nkv; i++)
        dt_gguf_put_kv(&o, g, data, &g->kv[i]);
    dt_gguf_info *info = calloc(g->ntensors ? g->ntensors : 1, sizeof *info);
    char (*names)[64] = calloc(g->ntensors ? g->ntensors : 1, sizeof *names);
    uint8_t *h = NULL;
    size_t hl = 0;
    dt_io_error err = DT_IO_ERROR_INIT;
    if (info && names) {
        uint64_t total = 0;
        int named = 1;
        for (uint64_t i = 0; i < g->ntensors; i++) {
            memcpy(names[i], g->tensors[i].name, (size_t)g->tensors[i].name_len);
            named &= memchr(names[i], 0, (size_t)g->tensors[i].name_len) == NULL;
            info[i] = (dt_gguf_info){names[i], g->tensors[i].type, g->tensors[i].n_dims, {0}};
            memcpy(info[i].ne, g->tensors[i].ne, sizeof info[i].ne);
            total += dt_gguf_padded(g->tensors[i].bytes, o.alignment);
        }
        /* names with NUL bytes cannot be given as C strings: skipped */
        const dtcast_status st = dt_gguf_out_header(&o, info, (size_t)g->ntensors, &h, &hl, NULL,
                                                    &err);
        if (st == DTCAST_OK && named && total < (1u << 24)) {
            uint8_t *f = calloc(hl + (size_t)total + 1, 1);
            if (f) {
                memcpy(f, h, hl);
                dt_gguf back;
                if (dt_gguf_parse(f, hl + total, "back", &back, &err) != DTCAST_OK ||
                    back.nkv != g->nkv || back.ntensors != g->ntensors ||
                    back.alignment != g->alignment || back.data_start != hl)
                    abort();
                for (uint64_t i = 0; i < g->ntensors; i++)
                    if (back.tensors[i].offset != g->tensors[i].offset ||
                        back.tensors[i].bytes != g->tensors[i].bytes ||
                        back.tensors[i].type != g->tensors[i].type)
                        abort();
                for (uint64_t i = 0; i < g->nkv; i++)
                    if (back.kv[i].type != g->kv[i].type || back.kv[i].count != g->kv[i].count ||
                        back.kv[i].value_bytes != g->kv[i].value_bytes ||
                        memcmp(f + back.kv[i].value_at, data + g->kv[i].value_at,
                               (size_t)g->kv[i].value_bytes) != 0)
                        abort();
                dt_gguf_free(&back);
                free(f);
            }
        }
    }
    free(h);
    free(info);
    free(names);
    dt_gguf_out_free(&o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dt_gguf g;
    dt_io_error err = DT_IO_ERROR_INIT;
    if (dt_gguf_parse(data, size, "f.gguf", &g, &err) != DTCAST_OK) {
        if (strncmp(err.message, "f.gguf: byte ", 13) != 0 && !strstr(err.message, "memory"))
            abort();
        if (g.kv || g.tensors)
            abort();
        return 0;
    }
    if ((g.version != 2 && g.version != 3) || !g.alignment || (g.alignment & (g.alignment - 1)))
        abort();
    uint64_t sum = 0;
    for (uint64_t i = 0; i < g.nkv; i++) {
        const dt_gguf_kv *kv = &g.kv[i];
        if (!kv->key_len || kv->type >= DT_GGUF_VALUE_TYPES || kv->value_at > size ||
            kv->value_bytes > size - kv->value_at)
            abort();
        if (kv->type == DT_GGUF_ARRAY && kv->elem_type != DT_GGUF_STRING)
            for (uint64_t e = 0; e < kv->count; e++)
                sum += dt_gguf_array_u64(&g, data, kv, e);
    }
    uint64_t expect = 0;
    for (uint64_t i = 0; i < g.ntensors; i++) {
        const dt_gguf_tensor *t = &g.tensors[i];
        const dt_ggml_traits *gt = dt_ggml_traits_of(t->type);
        if (!gt || !t->name_len || t->name_len > DT_GGUF_MAX_NAME || t->n_dims > 4 ||
            t->offset != expect || t->at != g.data_start + t->offset || t->at > size ||
            t->bytes > size - t->at || t->ne[0] % gt->block)
            abort();
        sum += t->at < size ? data[t->at] : 0;
        expect += (t->bytes + g.alignment - 1) / g.alignment * g.alignment;
    }
    volatile uint64_t sink = sum;
    (void)sink;
    rewrite(data, &g);
    dt_gguf_free(&g);
    return 0;
}
