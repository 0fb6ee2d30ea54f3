/* libFuzzer harness for the whole-tensor reader and writer (files/whole.c): the first byte picks
 * the kind and the type the rest is read as (raw strings, a line each; raw numbers of several
 * widths, with or without a shape from the second byte; .npy; .pb), written to a temporary file
 * and read with dt_tensor_load. Checks: never a crash, never a leak; a failed load leaves the
 * tensor empty; a loaded tensor is written with dt_tensor_save as raw data and read back to the
 * same count (and the same bytes for numbers, the same strings for text without a NUL or a
 * carriage return before a newline). */
#include "files/whole.h"
#include "scratch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct {
    dt_file_kind kind;
    dtcast_type from;
    const char *ending;
} cases[] = {
    {DT_FILE_RAW, DTCAST_STRING, "raw"},      {DT_FILE_RAW, DTCAST_FLOAT32, "raw"},
    {DT_FILE_RAW, DTCAST_INT4, "raw"},        {DT_FILE_RAW, DTCAST_UINT2, "raw"},
    {DT_FILE_RAW, DTCAST_COMPLEX64, "raw"},   {DT_FILE_RAW, DTCAST_UNDEFINED, "raw"},
    {DT_FILE_NPY, DTCAST_UNDEFINED, "npy"},   {DT_FILE_NPY, DTCAST_BFLOAT16, "npy"},
    {DT_FILE_PB, DTCAST_UNDEFINED, "pb"},     {DT_FILE_PB, DTCAST_FLOAT16, "pb"},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const size_t c = data[0] % (sizeof cases / sizeof cases[0]);
    dt_input spec;
    memset(&spec, 0, sizeof spec);
    spec.from = cases[c].from;
    if (data[0] & 0x80) { /* a shape: two dimensions from the second byte */
        spec.has_shape = 1;
        spec.ndim = 2;
        spec.dims[0] = data[1] & 0x0F;
        spec.dims[1] = data[1] >> 4;
    }
    char in_name[16];
    snprintf(in_name, sizeof in_name, "in.%s", cases[c].ending);
    const char *in_path = fuzz_scratch_path("fuzz_whole", in_name);
    const char *out_path = fuzz_scratch_path("fuzz_whole", "out.raw");
    if (!in_path || !out_path)
        return 0;
    FILE *f = fopen(in_path, "wb");
    if (!f)
        return 0;
    fwrite(data + 2, 1, size - 2, f);
    fclose(f);
    dt_tensor t, back;
    dt_io_error err = DT_IO_ERROR_INIT;
    if (dt_tensor_load(in_path, cases[c].kind, &spec, &t, &err) != DTCAST_OK) {
        if (t.data || t.name || t.count || !err.message[0])
            abort(); /* a failed load leaves the tensor empty and says why */
        return 0;
    }
    if (dt_tensor_save(out_path, DT_FILE_RAW, &t, &err) == DTCAST_OK) {
        dt_input again;
        memset(&again, 0, sizeof again);
        again.from = t.type;
        if (dt_tensor_load(out_path, DT_FILE_RAW, &again, &back, &err) != DTCAST_OK)
            abort();
        if (t.type != DTCAST_STRING && t.nbytes &&
            (back.nbytes != t.nbytes || memcmp(back.data, t.data, t.nbytes) != 0))
            abort();
        if (t.type == DTCAST_STRING) {
            /* a line each: strings holding a newline, or an empty last one, read back as more
             * or fewer lines; the others come back as they were */
            int plain = 1;
            char **s = t.data;
            for (size_t i = 0; i < t.count && plain; i++)
                plain = s[i] && !strchr(s[i], '\n') && !strchr(s[i], '\r') && s[i][0];
            if (plain && back.count != t.count)
                abort();
            for (size_t i = 0; plain && i < t.count; i++)
                if (strcmp(((char **)back.data)[i], s[i]) != 0)
                    abort();
        }
        dt_tensor_free(&back);
    }
    dt_tensor_free(&t);
    return 0;
}
