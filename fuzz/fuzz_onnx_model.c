/* libFuzzer harness for the ONNX model job (files/onnx_model.c): the input is split at the first
 * 4 bytes (a little-endian length L): the next L bytes are the model (m.onnx), the rest its
 * external data file (w.bin, which a model's external tensors may name). The first byte after
 * the length picks the target (float16, bfloat16, float32; float8e4m3fn and int8, codes with a
 * scale), the external-data mode, the mode (weights, graph: files/onnx_graph.c), in graph mode
 * --keep-io-types and --runtime onnxruntime-cpu, and --exclude-op MatMul. Checks:
 * never a crash, never a leak; a failed job names the model and leaves no output (neither
 * out.onnx nor out.onnx.data); a job that succeeds writes a model the job reads again. */
#include "files/cast.h"
#include "files/onnx_model.h"
#include "files/onnx_schema.h"
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

static dtcast_status convert(const char *in, const char *out, dtcast_type to, dt_external mode,
                             int graph, dt_io_error *err)
{
    dt_cast_request r;
    memset(&r, 0, sizeof r);
    r.in = in;
    r.out = out;
    r.in_kind = r.out_kind = DT_FILE_ONNX_MODEL;
    r.to = to;
    dtcast_options_init(&r.conversion.options);
    r.conversion.options.threads = 1;
    r.external_data = mode;
    r.onnx_graph = graph & 1;
    r.keep_io_types = (graph & 1) && (graph >> 1 & 1);
    r.onnx_runtime = (graph & 1) && (graph >> 2 & 1) ? DT_ONNX_RUNTIME_ORT_CPU : DT_ONNX_RUNTIME_ANY;
    if (graph >> 3 & 1) {
        r.exclude_ops.n = 1;
        r.exclude_ops.pattern[0] = "MatMul";
    }
    dt_progress progress;
    dt_progress_init(&progress, 0, NULL, NULL);
    dt_stream_buffers buffers;
    memset(&buffers, 0, sizeof buffers);
    dtcast_status st = dt_onnx_model_cast(&r, &progress, &buffers, err);
    dt_stream_buffers_free(&buffers);
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5)
        return 0;
    size_t len = (size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16 |
                 (size_t)data[3] << 24;
    const uint8_t pick = data[4];
    data += 5;
    size -= 5;
    if (len > size)
        len = size;
    static const dtcast_type targets[5] = {DTCAST_FLOAT16, DTCAST_BFLOAT16, DTCAST_FLOAT32,
                                           DTCAST_FLOAT8E4M3FN, DTCAST_INT8};
    const dtcast_type to = targets[pick % 5];
    const dt_external mode = (dt_external)(pick / 5 % 3);
    /* bit 0: graph mode, 1: keep the io types, 2: the runtime, 3: --exclude-op MatMul */
    const int graph = pick / 15 % 16;
    const char *model = fuzz_scratch_path("fuzz_onnx_model", "m.onnx");
    const char *ext = fuzz_scratch_path("fuzz_onnx_model", "w.bin");
    const char *out = fuzz_scratch_path("fuzz_onnx_model", "out.onnx");
    const char *out_data = fuzz_scratch_path("fuzz_onnx_model", "out.onnx.data");
    const char *again = fuzz_scratch_path("fuzz_onnx_model", "again.onnx");
    const char *again_data = fuzz_scratch_path("fuzz_onnx_model", "again.onnx.data");
    if (!model || !ext || !out || !out_data || !again || !again_data ||
        !write_file(model, data, len) || !write_file(ext, data + len, size - len))
        return 0;
    dt_io_error err = DT_IO_ERROR_INIT;
    if (convert(model, out, to, mode, graph, &err) != DTCAST_OK) {
        if (!err.message[0] || !strstr(err.message, "m.onnx") || access(out, F_OK) == 0 ||
            access(out_data, F_OK) == 0)
            abort(); /* named, nothing left behind */
        return 0;
    }
    /* what it wrote is a model the job reads again (nothing left to convert, or the rest) */
    dt_io_error err2 = DT_IO_ERROR_INIT;
    if (convert(out, again, to, DT_EXTERNAL_AUTO, graph, &err2) != DTCAST_OK)
        abort();
    unlink(out);
    unlink(out_data);
    unlink(again);
    unlink(again_data);
    return 0;
}
