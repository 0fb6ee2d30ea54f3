/* Tensors in files for the CLI's one-tensor commands (read and written whole by files/whole.h,
 * with the errors printed) and the small helpers that show one element: its encoding in hex or
 * binary, its value as text. */
#include "cli.h"
#include "files/formats.h"
#include "files/job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading and writing: the file layer's whole tensors (files/whole.h), errors printed ---- */

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
    dt_tensor_init(t);
    dt_file_kind kind;
    if (cli_file_kind(path, spec->format_raw, &kind) != CLI_OK)
        return CLI_FAIL;
    if (dt_file_format_of(kind) && dt_file_format_of(kind)->many_tensors)
        return cli_fail("%s: '%s' reads .npy, .pb and raw files; convert checkpoints with "
                        "'dtcast cast'",
                        path, cmd);
    dt_io_error err = DT_IO_ERROR_INIT;
    if (dt_tensor_load(path, kind, spec, t, &err) == DTCAST_OK)
        return CLI_OK;
    return err.usage ? cli_usage(cmd, "%s", err.message) : cli_fail("%s", err.message);
}

int cli_save_tensor(const char *path, const dt_tensor *t)
{
    dt_file_kind kind;
    if (cli_file_kind(path, 0, &kind) != CLI_OK)
        return CLI_FAIL;
    dt_io_error err = DT_IO_ERROR_INIT;
    if (dt_tensor_save(path, kind, t, &err) == DTCAST_OK)
        return CLI_OK;
    return cli_fail("%s", err.message);
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
