/* libFuzzer harness for the GGUF jobs (files/gguf_job.c) on hostile files: the input is a GGUF
 * file (its first byte, when it is not 'G', picks the job and is dropped). Jobs: dequantize to
 * safetensors (bfloat16, float16 or float32, metadata kept or not: every value type's text,
 * every block type's dequantizer on arbitrary bytes), and the writer with the GGUF as its source
 * (requantize or not, to Q8_0 / Q4_K / BF16: every block type read, rows that fall back).
 * Checks: never a crash, never a leak; a failed job names something and leaves no output; a
 * dequantize that succeeds writes a file the safetensors reader (inspect) reads, a GGUF written
 * is read back by the GGUF reader. */
#include "files/gguf.h"
#include "files/gguf_job.h"
#include "files/inspect.h"
#include "scratch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int write_file(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    const int ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned pick = 0;
    if (size > 0 && data[0] != 'G') {
        pick = data[0];
        data++;
        size--;
    }
    const char *in = fuzz_scratch_path("fuzz_gguf_jobs", "m.gguf");
    const char *st = fuzz_scratch_path("fuzz_gguf_jobs", "o.safetensors");
    const char *gg = fuzz_scratch_path("fuzz_gguf_jobs", "o.gguf");
    if (!in || !st || !gg || !write_file(in, data, size))
        return 0;
    unlink(st);
    unlink(gg);
    dt_io_error err = DT_IO_ERROR_INIT;
    if (pick % 2 == 0) {
        static const dtcast_type to[3] = {DTCAST_BFLOAT16, DTCAST_FLOAT16, DTCAST_FLOAT32};
        dt_gguf_dequantize_request r;
        memset(&r, 0, sizeof r);
        r.in = in;
        r.out = st;
        r.to = to[pick / 2 % 3];
        r.no_metadata = (int)(pick / 6 % 2);
        r.threads = 1;
        if (dt_gguf_dequantize(&r, &err) != DTCAST_OK) {
            if (!err.message[0] || access(st, F_OK) == 0)
                abort();
            return 0;
        }
        dt_inspect ins;
        dt_io_error e2 = DT_IO_ERROR_INIT;
        if (dt_inspect_path(st, &ins, NULL, NULL, &e2) != DTCAST_OK)
            abort(); /* what the job wrote does not read back */
        dt_inspect_free(&ins);
        return 0;
    }
    static const int types[3] = {8, 12, 30};
    dt_gguf_write_request w;
    memset(&w, 0, sizeof w);
    w.in = in;
    w.out = gg;
    w.type = types[pick / 2 % 3];
    w.requantize = (int)(pick / 6 % 2);
    w.threads = 1;
    if (dt_gguf_write(&w, &err) != DTCAST_OK) {
        if (!err.message[0] || access(gg, F_OK) == 0)
            abort();
        return 0;
    }
    /* the file written parses */
    FILE *f = fopen(gg, "rb");
    if (!f)
        abort();
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
        abort();
    fclose(f);
    dt_gguf g;
    dt_io_error e3 = DT_IO_ERROR_INIT;
    if (dt_gguf_parse(buf, (uint64_t)n, gg, &g, &e3) != DTCAST_OK)
        abort(); /* the writer wrote what the reader refuses */
    dt_gguf_free(&g);
    free(buf);
    return 0;
}
