/* Tensors in files for the CLI (.npy, .pb, raw bytes, text lines for strings) and the small
 * helpers that show one element: its encoding in hex or binary, its value as text. */
#include "cli.h"
#include "files/job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading -------------------------------------------------------------------------------- */

static const char *display_path(const char *path)
{
    return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

/* Raw strings: one element per line ("\n" or "\r\n"); a final newline does not start one. */
static int load_raw_strings(const char *path, const uint8_t *buf, size_t len,
                            const cli_input_spec *spec, dt_tensor *t)
{
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        if (buf[i] == '\n' || i + 1 == len)
            lines++;
    int64_t dim = (int64_t)lines;
    dt_io_error err;
    if (spec->has_shape) {
        if (dt_tensor_set_shape(t, spec->ndim, spec->dims, "--shape", &err) != DTCAST_OK)
            return cli_fail("%s", err.message);
        if (t->count != lines)
            return cli_fail("%s: %zu lines, but --shape asks for %zu strings",
                            display_path(path), lines, t->count);
    } else if (dt_tensor_set_shape(t, 1, &dim, display_path(path), &err) != DTCAST_OK) {
        return cli_fail("%s", err.message);
    }
    if (dt_tensor_alloc(t, &err) != DTCAST_OK)
        return cli_fail("%s", err.message);
    char **strings = t->data;
    size_t start = 0, k = 0;
    for (size_t i = 0; i <= len && k < lines; i++) {
        if (i < len && buf[i] != '\n')
            continue;
        size_t end = i;
        if (end > start && buf[end - 1] == '\r')
            end--;
        strings[k] = malloc(end - start + 1);
        if (!strings[k])
            return cli_fail("out of memory reading %s", display_path(path));
        memcpy(strings[k], buf + start, end - start);
        strings[k][end - start] = 0;
        k++;
        start = i + 1;
    }
    return CLI_OK;
}

/* Elements a raw buffer holds: its shape when given, else every whole element in it. */
static int raw_shape(const char *path, size_t len, const cli_input_spec *spec, dt_tensor *t)
{
    dt_io_error err;
    char tname[32];
    cli_type_label(spec->from, tname, sizeof tname);
    if (spec->has_shape) {
        size_t need = 0;
        if (dt_tensor_set_shape(t, spec->ndim, spec->dims, "--shape", &err) != DTCAST_OK)
            return cli_fail("%s", err.message);
        if (dtcast_storage_size(spec->from, t->count, &need, NULL) != DTCAST_OK || need != len)
            return cli_fail("%s: %zu bytes, but --shape asks for %zu %s elements (%zu bytes)",
                            display_path(path), len, t->count, tname, need);
        return CLI_OK;
    }
    int stride = cli_element_stride_bits(spec->from);
    if (stride <= 0)
        return cli_fail("%s: cannot read raw %s data", display_path(path), tname);
    size_t count;
    if (stride >= 8) {
        size_t size = (size_t)stride / 8;
        if (len % size)
            return cli_fail("%s: %zu bytes is not a whole number of %s elements (%zu bytes each)",
                            display_path(path), len, tname, size);
        count = len / size;
    } else {
        count = len * (size_t)(8 / stride);
    }
    int64_t dim = (int64_t)count;
    if (dt_tensor_set_shape(t, 1, &dim, display_path(path), &err) != DTCAST_OK)
        return cli_fail("%s", err.message);
    return CLI_OK;
}

static int load_raw(const char *cmd, const char *path, const uint8_t *buf, size_t len,
                    const cli_input_spec *spec, dt_tensor *t)
{
    if (spec->from == DTCAST_UNDEFINED)
        return cli_usage(cmd, "reading raw data from '%s' needs --from TYPE",
                         display_path(path));
    t->type = spec->from;
    if (spec->from == DTCAST_STRING)
        return load_raw_strings(path, buf, len, spec, t);
    int status = raw_shape(path, len, spec, t);
    if (status != CLI_OK)
        return status;
    dt_io_error err;
    if (dt_tensor_alloc(t, &err) != DTCAST_OK)
        return cli_fail("%s", err.message);
    if (len)
        memcpy(t->data, buf, len < t->nbytes ? len : t->nbytes);
    return CLI_OK;
}

/* The file's own type must agree with --from when both are there. */
static int check_declared_type(const char *path, const cli_input_spec *spec, const dt_tensor *t)
{
    if (spec->from == DTCAST_UNDEFINED || spec->from == t->type)
        return CLI_OK;
    char a[32], b[32];
    return cli_fail("%s holds %s data, but --from says %s", path,
                    cli_type_label(t->type, a, sizeof a), cli_type_label(spec->from, b, sizeof b));
}

static int prefix_path(const char *path, const dt_io_error *err)
{
    if (strstr(err->message, path))
        return cli_fail("%s", err->message);
    return cli_fail("%s: %s", path, err->message);
}

int cli_file_kind(const char *path, int format_raw, dt_file_kind *kind)
{
    char why[512];
    *kind = format_raw ? DT_FILE_RAW : dt_file_kind_of(path);
    if (*kind == DT_FILE_UNKNOWN)
        return cli_fail("%s", dt_file_kind_refusal(path, why, sizeof why));
    return CLI_OK;
}

int cli_load_tensor(const char *cmd, const char *path, const cli_input_spec *spec, dt_tensor *t)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    dt_io_error err;
    err.message[0] = 0;
    dt_tensor_init(t);
    dt_file_kind kind;
    if (cli_file_kind(path, spec->format_raw, &kind) != CLI_OK)
        return CLI_FAIL;
    if (kind == DT_FILE_SAFETENSORS || kind == DT_FILE_SAFETENSORS_INDEX)
        return cli_fail("%s: '%s' reads .npy, .pb and raw files; convert checkpoints with "
                        "'dtcast cast'",
                        path, cmd);
    if (dt_read_file(path, &buf, &len, &err) != DTCAST_OK)
        return prefix_path(path, &err);
    int status = CLI_OK;
    /* Without --from, data that starts as a .npy file does is one (e.g. piped into stdin). */
    if (kind == DT_FILE_RAW && spec->from == DTCAST_UNDEFINED && len >= 6 &&
        memcmp(buf, "\x93NUMPY", 6) == 0)
        kind = DT_FILE_NPY;
    switch (kind) {
    case DT_FILE_NPY:
        if (dt_npy_parse(buf, len, spec->from, t, &err) != DTCAST_OK)
            status = prefix_path(path, &err);
        else
            status = check_declared_type(path, spec, t);
        break;
    case DT_FILE_PB:
        if (dt_pb_parse(buf, len, t, &err) != DTCAST_OK)
            status = prefix_path(path, &err);
        else
            status = check_declared_type(path, spec, t);
        break;
    case DT_FILE_RAW:
        status = load_raw(cmd, path, buf, len, spec, t);
        break;
    default:
        break; /* refused above */
    }
    free(buf);
    if (status != CLI_OK)
        dt_tensor_free(t);
    return status;
}

/* ---- writing -------------------------------------------------------------------------------- */

static int save_raw_strings(const char *path, const dt_tensor *t)
{
    char **strings = t->data;
    size_t total = 0;
    for (size_t i = 0; i < t->count; i++)
        total += (strings[i] ? strlen(strings[i]) : 0) + 1;
    char *text = malloc(total ? total : 1);
    if (!text)
        return cli_fail("out of memory writing %s", path);
    size_t at = 0;
    for (size_t i = 0; i < t->count; i++) {
        size_t n = strings[i] ? strlen(strings[i]) : 0;
        if (n)
            memcpy(text + at, strings[i], n);
        at += n;
        text[at++] = '\n';
    }
    dt_io_error err;
    int status = CLI_OK;
    if (dt_write_file(path, text, at, &err) != DTCAST_OK)
        status = prefix_path(path, &err);
    free(text);
    return status;
}

int cli_save_tensor(const char *path, const dt_tensor *t)
{
    dt_io_error err;
    err.message[0] = 0;
    uint8_t *buf = NULL;
    size_t len = 0;
    dtcast_status st = DTCAST_OK;
    dt_file_kind kind;
    if (cli_file_kind(path, 0, &kind) != CLI_OK)
        return CLI_FAIL;
    switch (kind) {
    case DT_FILE_NPY:
        st = dt_npy_serialize(t, &buf, &len, &err);
        break;
    case DT_FILE_PB:
        st = dt_pb_serialize(t, &buf, &len, &err);
        break;
    case DT_FILE_RAW:
        if (t->type == DTCAST_STRING)
            return save_raw_strings(path, t);
        if (dt_write_file(path, t->data, t->nbytes, &err) != DTCAST_OK)
            return prefix_path(path, &err);
        return CLI_OK;
    default:
        return cli_fail("%s: a %s tensor cannot be written as a checkpoint (write .npy, .pb or "
                        "raw)",
                        path, dtcast_type_name(t->type));
    }
    if (st != DTCAST_OK) {
        free(buf);
        return prefix_path(path, &err);
    }
    int status = CLI_OK;
    if (dt_write_file(path, buf, len, &err) != DTCAST_OK)
        status = prefix_path(path, &err);
    free(buf);
    return status;
}

void cli_tensor_free_converted(dt_tensor *t)
{
    if (t->type == DTCAST_STRING && t->data)
        dtcast_strings_free(t->data, t->count);
    dt_tensor_free(t);
}

/* ---- one element ---------------------------------------------------------------------------- */

int cli_element_stride_bits(dtcast_type type)
{
    size_t bytes;
    if (type == DTCAST_STRING || dtcast_storage_size(type, 8, &bytes, NULL) != DTCAST_OK)
        return 0;
    return (int)bytes; /* 8 elements take `stride` bytes */
}

void cli_element_code(const void *data, dtcast_type type, size_t index, uint64_t code[2])
{
    const uint8_t *p = data;
    int stride = cli_element_stride_bits(type);
    code[0] = code[1] = 0;
    if (stride <= 0)
        return;
    if (stride < 8) {
        size_t bit = index * (size_t)stride;
        unsigned byte = p[bit / 8];
        code[0] = (byte >> (bit % 8)) & ((1u << stride) - 1);
        return;
    }
    size_t size = (size_t)stride / 8;
    const uint8_t *e = p + index * size;
    for (size_t i = 0; i < size && i < 16; i++)
        code[i / 8] |= (uint64_t)e[i] << (8 * (i % 8));
}

void cli_element_store(void *buf, dtcast_type type, const uint64_t code[2])
{
    uint8_t *p = buf;
    int stride = cli_element_stride_bits(type);
    memset(p, 0, 16);
    if (stride <= 0)
        return;
    if (stride < 8) {
        p[0] = (uint8_t)code[0];
        return;
    }
    for (int i = 0; i < stride / 8 && i < 16; i++)
        p[i] = (uint8_t)(code[i / 8] >> (8 * (i % 8)));
}

void cli_format_code(char *buf, size_t size, dtcast_type type, const uint64_t code[2])
{
    int stride = cli_element_stride_bits(type);
    int digits = (stride + 3) / 4;
    if (digits > 16)
        snprintf(buf, size, "0x%0*llx%016llx", digits - 16, (unsigned long long)code[1],
                 (unsigned long long)code[0]);
    else
        snprintf(buf, size, "0x%0*llx", digits > 0 ? digits : 1, (unsigned long long)code[0]);
}

void cli_format_binary(char *buf, size_t size, int bits, const uint64_t code[2])
{
    int stride = bits > 128 ? 128 : bits;
    size_t at = 0;
    if (size == 0)
        return;
    for (int bit = stride - 1; bit >= 0 && at + 2 < size; bit--) {
        buf[at++] = (char)('0' + (int)((code[bit / 64] >> (bit % 64)) & 1));
        if (bit && bit % 4 == 0 && stride > 8 && at + 2 < size)
            buf[at++] = '_';
    }
    buf[at] = 0;
}

void cli_format_value(char *buf, size_t size, const dt_tensor *t, size_t index,
                      dtcast_string_style style)
{
    if (t->type == DTCAST_STRING) {
        const char *s = ((char *const *)t->data)[index];
        if (size < 3) {
            snprintf(buf, size, "\"");
            return;
        }
        /* Quoted, with bytes that are not UTF-8 and control characters escaped. */
        buf[0] = '"';
        cli_escape(buf + 1, size - 2, s ? s : "");
        size_t used = strlen(buf);
        buf[used] = '"';
        buf[used + 1] = 0;
        return;
    }
    dtcast_options opts;
    dtcast_options_init(&opts);
    opts.string_style = style;
    if (dtcast_format_element(buf, size, t->data, t->type, index, &opts, NULL) != DTCAST_OK) {
        uint64_t code[2];
        cli_element_code(t->data, t->type, index, code);
        cli_format_code(buf, size, t->type, code);
    }
}

const char *cli_type_label(dtcast_type type, char *buf, size_t size)
{
    return dt_type_label(type, buf, size);
}

void cli_format_shape(char *buf, size_t size, int ndim, const int64_t *dims)
{
    dt_format_shape(buf, size, ndim, dims);
}
