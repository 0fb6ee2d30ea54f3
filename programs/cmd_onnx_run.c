/* dtcast onnx-run MODEL.onnx INPUT.pb... --out DIR: runs a one-node ONNX model (Cast, CastLike,
 * QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, BitCast) with the node's attributes and the
 * model's opset, and writes output_K.pb (TensorProto, raw_data, named after the node's outputs)
 * into DIR. */
#include "cli.h"
#include "onnx_node.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { OPT_OUT = CLI_OPT_COMMAND };

static const char onnx_run_help[] =
    "usage: dtcast onnx-run [options] MODEL.onnx INPUT.pb... --out DIR\n"
    "\n"
    "Runs a model of one node: Cast, CastLike, QuantizeLinear, DequantizeLinear,\n"
    "DynamicQuantizeLinear or BitCast, with the node's attributes and the opset of the model's\n"
    "opset_import. The INPUT files are the node's inputs in order (TensorProto .pb files);\n"
    "give fewer to leave optional inputs out. Writes DIR/output_K.pb for each output K\n"
    "(TensorProto with raw_data, named as the node's output), making DIR if needed.\n"
    "\n"
    "  -o, --out DIR    where to write output_0.pb, output_1.pb, ...\n"
    "  -T, --threads N  worker threads (0 = automatic)\n"
    "  -h, --help       show this help\n"
    "\n"
    "Examples:\n"
    "  dtcast onnx-run test_quantizelinear/model.onnx test_quantizelinear/test_data_set_0/input_*.pb --out out\n"
    "  dtcast onnx-run model.onnx x.pb scale.pb zero_point.pb -o results\n";

static const cli_option onnx_run_options[] = {
    {"help", 'h', 0, CLI_OPT_HELP},
    {"out", 'o', 1, OPT_OUT},
    {"threads", 'T', 1, CLI_OPT_THREADS},
    {NULL, 0, 0, 0},
};

typedef struct run_args {
    const char *model;
    const char *out;
    const char *inputs[ONNX_NODE_MAX_IO];
    int ninputs;
    unsigned threads;
} run_args;

/* Returns -1 after --help, else an exit status. */
static int parse_args(run_args *r, int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, "onnx-run", argc, argv, onnx_run_options);
    for (;;) {
        int id = cli_args_next(&a);
        unsigned long n;
        switch (id) {
        case CLI_ARG_END:
            if (!r->model)
                return cli_usage("onnx-run", "missing MODEL.onnx");
            if (!r->out)
                return cli_usage("onnx-run", "missing --out DIR");
            return CLI_OK;
        case CLI_ARG_ERROR:
            return CLI_USAGE;
        case CLI_OPT_HELP:
            fputs(onnx_run_help, stdout);
            return -1;
        case OPT_OUT:
            r->out = a.value;
            break;
        case CLI_OPT_THREADS:
            if (cli_parse_uint("onnx-run", a.spelled, a.value, 1024, &n) != CLI_OK)
                return CLI_USAGE;
            r->threads = (unsigned)n;
            break;
        default:
            if (!r->model) {
                r->model = a.value;
            } else {
                if (r->ninputs == ONNX_NODE_MAX_IO)
                    return cli_usage("onnx-run", "more than %d inputs", ONNX_NODE_MAX_IO);
                r->inputs[r->ninputs++] = a.value;
            }
            break;
        }
    }
}

static int read_input(const char *path, dt_tensor *t)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    dt_io_error err;
    err.message[0] = 0;
    dt_tensor_init(t);
    dtcast_status st = dt_read_file(path, &buf, &len, &err);
    if (st == DTCAST_OK && (st = dt_pb_parse(buf, len, t, &err)) != DTCAST_OK)
        dt_tensor_free(t);
    free(buf);
    if (st != DTCAST_OK)
        return cli_fail("%s: %s", path, err.message);
    return CLI_OK;
}

static int write_outputs(const char *dir, const dt_tensor *out, int nout)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return cli_fail("%s: cannot make the directory: %s", dir, strerror(errno));
    for (int k = 0; k < nout; k++) {
        size_t n = strlen(dir) + 32;
        char *path = malloc(n);
        if (!path)
            return cli_fail("out of memory");
        snprintf(path, n, "%s/output_%d.pb", dir, k);
        uint8_t *buf = NULL;
        size_t len = 0;
        dt_io_error err;
        err.message[0] = 0;
        dtcast_status st = dt_pb_serialize(&out[k], &buf, &len, &err);
        if (st == DTCAST_OK)
            st = dt_write_file(path, buf, len, &err);
        free(buf);
        if (st != DTCAST_OK) {
            int status = cli_fail("%s: %s", path, err.message);
            free(path);
            return status;
        }
        free(path);
    }
    return CLI_OK;
}

int cmd_onnx_run(int argc, char **argv)
{
    run_args r;
    memset(&r, 0, sizeof r);
    int status = parse_args(&r, argc, argv);
    if (status != CLI_OK)
        return status < 0 ? CLI_OK : status;
    onnx_node *node = malloc(sizeof *node);
    if (!node)
        return cli_fail("out of memory");
    char err[512];
    onnx_node_status ns = onnx_node_read(r.model, node, err, sizeof err);
    if (ns != ONNX_NODE_OK) {
        free(node);
        return cli_fail("%s: %s", r.model, err);
    }
    dt_tensor in[ONNX_NODE_MAX_IO], out[ONNX_NODE_MAX_IO];
    const dt_tensor *inputs[ONNX_NODE_MAX_IO];
    int nin = 0, nout = 0;
    status = CLI_OK;
    for (; nin < r.ninputs && status == CLI_OK; nin++) {
        status = read_input(r.inputs[nin], &in[nin]);
        inputs[nin] = &in[nin];
    }
    if (status == CLI_OK) {
        if (onnx_node_run(node, inputs, nin, out, &nout, r.threads, err, sizeof err))
            status = cli_fail("%s", err);
        else
            status = write_outputs(r.out, out, nout);
    }
    for (int k = 0; k < nout; k++)
        dt_tensor_free_converted(&out[k]);
    for (int k = 0; k < nin; k++)
        dt_tensor_free(&in[k]);
    free(node);
    return status;
}
