/* libFuzzer harness for `dtcast dequantize` on a model folder (files/dequantize.c,
 * files/quant_layout.c): the quantized-layout recognition (hostile names, dtypes and shapes of
 * every layout), the shape tensors and zero points of pack-quantized, GPTQ's g_idx, and
 * config.json's quantization_config parser. The input is split at the first 4 bytes (a
 * little-endian length L): the next L bytes are config.json, the rest model.safetensors; the
 * byte after the length picks the output type (bfloat16, float16, float32) and a convert-layout
 * target (files/convert_layout.c), run on the same folder after the dequantization. Checks:
 * never a crash, never a leak; a failed job names something and writes no output file; a job
 * that succeeds writes a checkpoint that inspect reads. */
#include "files/inspect.h"
#include "files/quantize.h"
#include "scratch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static int exists(const char *path)
{
    return access(path, F_OK) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5)
        return 0;
    size_t len = (size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16 |
                 (size_t)data[3] << 24;
    static const dtcast_type targets[3] = {DTCAST_BFLOAT16, DTCAST_FLOAT16, DTCAST_FLOAT32};
    const dtcast_type to = targets[data[4] % 3];
    /* every target of convert-layout, 1 .. DT_RELAYOUT_LAST */
    const dt_relayout layout = (dt_relayout)(1 + data[4] / 3 % DT_RELAYOUT_LAST);
    data += 5;
    size -= 5;
    if (len > size)
        len = size;
    const char *config = fuzz_scratch_path("fuzz_dequantize", "config.json");
    const char *shard = fuzz_scratch_path("fuzz_dequantize", "model.safetensors");
    const char *out = fuzz_scratch_path("fuzz_dequantize", "out");
    if (!config || !shard || !out || !write_file(config, data, len) ||
        !write_file(shard, data + len, size - len))
        return 0;
    char in[128], out_shard[160], out_config[160];
    snprintf(in, sizeof in, "%s", shard);
    *strrchr(in, '/') = '\0'; /* the scratch folder */
    snprintf(out_shard, sizeof out_shard, "%s/model.safetensors", out);
    snprintf(out_config, sizeof out_config, "%s/config.json", out);
    dt_dequantize_request r;
    memset(&r, 0, sizeof r);
    r.in = in;
    r.out = out;
    r.to = to;
    r.threads = 1;
    dt_io_error err = DT_IO_ERROR_INIT;
    /* convert-layout first: the same checks */
    dt_relayout_request rl;
    memset(&rl, 0, sizeof rl);
    rl.in = in;
    rl.out = out;
    rl.to = layout;
    if (dt_relayout_checkpoint(&rl, &err) != DTCAST_OK) {
        if (!err.message[0] || exists(out_shard) || exists(out_config))
            abort();
    } else {
        dt_inspect ins;
        dt_io_error e2 = DT_IO_ERROR_INIT;
        const dtcast_status st = dt_inspect_path(out, &ins, NULL, NULL, &e2);
        dt_inspect_free(&ins);
        if (st != DTCAST_OK)
            abort();
    }
    unlink(out_shard);
    unlink(out_config);
    rmdir(out);
    err = (dt_io_error)DT_IO_ERROR_INIT;
    if (dt_dequantize_checkpoint(&r, &err) != DTCAST_OK) {
        if (!err.message[0] || exists(out_shard) || exists(out_config))
            abort(); /* said why, nothing left behind */
        rmdir(out);
        return 0;
    }
    /* what it wrote reads back */
    dt_inspect ins;
    dt_io_error e2 = DT_IO_ERROR_INIT;
    const dtcast_status st = dt_inspect_path(out, &ins, NULL, NULL, &e2);
    dt_inspect_free(&ins);
    if (st != DTCAST_OK)
        abort();
    unlink(out_shard);
    unlink(out_config);
    rmdir(out);
    return 0;
}
