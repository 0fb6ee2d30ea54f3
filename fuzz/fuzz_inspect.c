/* libFuzzer harness for dtcast inspect's reader (files/inspect.c). The first byte picks what
 * the rest is:
 *   (first byte modulo 4) 0: a .npy, 1: a .pb, 2: a .safetensors, inspected from memory
 *      (dt_inspect_memory);
 *   3: a checkpoint folder written to a temporary folder and inspected from disk: two bytes of
 *      length L, L bytes of model.safetensors.index.json (absent when L is 0xFFFF), then the
 *      rest split in two halves: a.safetensors and b.safetensors;
 *   0xF0 to 0xF7 (before the modulo): an ONNX model (.onnx), inspected from memory;
 *   0xF8 and above: a GGUF file (.gguf), inspected from memory.
 * Checks: never a crash, never a leak; the status is OK exactly when no error was recorded;
 * every tensor of a valid safetensors file lies inside it; the JSON document parses (its
 * \udcXX escapes of stray bytes read as \u00XX). */
#include "files/inspect.h"
#include "files/json.h"
#include "scratch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *paths[3];

static int make_dir(void)
{
    static const char *const names[3] = {"model.safetensors.index.json", "a.safetensors",
                                         "b.safetensors"};
    for (int i = 0; i < 3; i++)
        if (!(paths[i] = fuzz_scratch_path("fuzz_inspect", names[i])))
            return 0;
    return 1;
}

static int put(const char *path, const uint8_t *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    int ok = fwrite(d, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

static void check(const dt_inspect *r, dtcast_status st)
{
    if ((st == DTCAST_OK) != (r->nerrors == 0) && st != DTCAST_ERR_OUT_OF_MEMORY)
        abort();
    size_t errors = 0;
    for (size_t i = 0; i < r->nproblems; i++)
        errors += !r->problems[i].warning;
    if (errors != r->nerrors)
        abort();
    for (size_t i = 0; i < r->ntensors; i++) {
        const dt_insp_tensor *t = &r->tensors[i];
        const dt_insp_file *f = &r->files[t->file];
        if ((f->kind == DT_FILE_SAFETENSORS || f->gguf) && f->ok &&
            (t->offset < f->data_start || t->offset > f->size || t->bytes > f->size - t->offset))
            abort();
    }
    char *text;
    size_t len;
    dt_io_error err = DT_IO_ERROR_INIT;
    if (dt_inspect_json(r, &text, &len, &err) != DTCAST_OK)
        return;
    /* Bytes that are not UTF-8 come as \udcXX (surrogateescape), which this strict reader
     * refuses as a lone surrogate: read them as \u00XX, the rest must parse. */
    for (size_t i = 0; i + 6 <= len; i++)
        if (text[i] == '\\' && text[i + 1] == '\\')
            i++;
        else if (text[i] == '\\' && memcmp(text + i + 1, "udc", 3) == 0)
            memcpy(text + i + 2, "00", 2);
    dt_json_doc doc;
    if (dt_json_parse((const uint8_t *)text, len, 0, NULL, &doc, &err) != DTCAST_OK)
        abort(); /* the document is always JSON */
    dt_json_free(&doc);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t *d = data + 1;
    size_t n = size - 1;
    dt_inspect r;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st;
    if (data[0] >= 0xF0) { /* an ONNX model in memory (its external data is not opened), a GGUF */
        const int gguf = data[0] >= 0xF8;
        st = dt_inspect_memory(d, n, gguf ? DT_INSP_GGUF : DT_INSP_ONNX,
                               gguf ? "in.gguf" : "in.onnx", &r, &err);
        check(&r, st);
        dt_inspect_free(&r);
        return 0;
    }
    switch (data[0] % 4) {
    case 0:
    case 1:
    case 2: {
        static const dt_insp_kind kinds[3] = {DT_INSP_NPY, DT_INSP_PB, DT_INSP_SAFETENSORS};
        static const char *const names[3] = {"in.npy", "in.pb", "in.safetensors"};
        st = dt_inspect_memory(d, n, kinds[data[0] % 4], names[data[0] % 4], &r, &err);
        check(&r, st);
        dt_inspect_free(&r);
        return 0;
    }
    default:
        break;
    }
    if (n < 2 || !make_dir())
        return 0;
    size_t ilen = (size_t)d[0] | (size_t)d[1] << 8;
    d += 2;
    n -= 2;
    int has_index = ilen != 0xFFFF;
    if (!has_index)
        ilen = 0;
    if (ilen > n)
        ilen = n;
    unlink(paths[0]);
    if (has_index && !put(paths[0], d, ilen))
        return 0;
    size_t rest = n - ilen, half = rest / 2;
    if (!put(paths[1], d + ilen, half) || !put(paths[2], d + ilen + half, rest - half))
        return 0;
    st = dt_inspect_path(fuzz_scratch_dir, &r, NULL, NULL, &err);
    check(&r, st);
    dt_inspect_free(&r);
    return 0;
}
