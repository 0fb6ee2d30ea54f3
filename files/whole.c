/* Tensors read, converted and written whole (whole.h): strings and the small tensors of the
 * one-tensor commands. Never prints. */
#include "files/whole.h"

#include "files/formats.h"
#include "files/job.h"
#include "files/npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *shown(const char *path)
{
    return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

/* src into dst (size bytes), cut short when it does not fit. */
static void copy_text(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size)
        n = size - 1;
    memmove(dst, src, n);
    dst[n] = 0;
}

/* The reader's error with the file's name in front (when the message does not name it yet) and
 * the file recorded. */
static dtcast_status at_file(dtcast_status st, dt_io_error *err, const char *path)
{
    const char *name = shown(path);
    if (!strstr(err->message, name)) {
        char text[sizeof err->message];
        size_t n = strlen(name);
        copy_text(text, sizeof text, name);
        if (n + 2 < sizeof text) {
            memcpy(text + n, ": ", 2);
            copy_text(text + n + 2, sizeof text - n - 2, err->message);
        }
        copy_text(err->message, sizeof err->message, text);
    }
    return dt_io_where(st, err, name, NULL);
}

#define ST(e) ((e)->status != DTCAST_OK ? (e)->status : DTCAST_ERR_BAD_FILE)

/* Raw strings: one element per line ("\n" or "\r\n"); a final newline does not start one. */
static dtcast_status load_raw_strings(const char *path, const uint8_t *buf, size_t len,
                                      const dt_input *spec, dt_tensor *t, dt_io_error *err)
{
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        if (buf[i] == '\n' || i + 1 == len)
            lines++;
    int64_t dim = (int64_t)lines;
    dtcast_status st;
    if (spec->has_shape) {
        if ((st = dt_tensor_set_shape(t, spec->ndim, spec->dims, "--shape", err)) != DTCAST_OK)
            return st;
        if (t->count != lines)
            return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                              "%s: %zu lines, but --shape asks for %zu strings", shown(path),
                              lines, t->count);
    } else if ((st = dt_tensor_set_shape(t, 1, &dim, shown(path), err)) != DTCAST_OK) {
        return st;
    }
    if ((st = dt_tensor_alloc(t, err)) != DTCAST_OK)
        return st;
    char **strings = t->data;
    size_t start = 0, k = 0;
    for (size_t i = 0; i <= len && k < lines; i++) {
        if (i < len && buf[i] != '\n')
            continue;
        size_t end = i;
        if (end > start && buf[end - 1] == '\r')
            end--;
        if (!(strings[k] = malloc(end - start + 1)))
            return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory reading %s",
                              shown(path));
        memcpy(strings[k], buf + start, end - start);
        strings[k][end - start] = 0;
        k++;
        start = i + 1;
    }
    return DTCAST_OK;
}

/* The shape of raw data: the one given (which must match its length), else every whole element
 * the bytes hold. */
static dtcast_status raw_shape(const char *path, size_t len, const dt_input *spec, dt_tensor *t,
                               dt_io_error *err)
{
    char tname[32];
    dt_type_label(spec->from, tname, sizeof tname);
    dtcast_status st;
    if (spec->has_shape) {
        size_t need = 0;
        if ((st = dt_tensor_set_shape(t, spec->ndim, spec->dims, "--shape", err)) != DTCAST_OK)
            return st;
        if (dtcast_storage_size(spec->from, t->count, &need, NULL) != DTCAST_OK || need != len)
            return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                              "%s: %zu bytes, but --shape asks for %zu %s elements (%zu bytes)",
                              shown(path), len, t->count, tname, need);
        return DTCAST_OK;
    }
    size_t eight; /* bytes of 8 elements: sub-byte types pack several to a byte */
    if (dtcast_storage_size(spec->from, 8, &eight, NULL) != DTCAST_OK || eight == 0)
        return dt_io_fail(err, DTCAST_ERR_UNSUPPORTED, "%s: cannot read raw %s data",
                          shown(path), tname);
    size_t count;
    if (eight >= 8) {
        size_t size = eight / 8;
        if (len % size)
            return dt_io_fail(err, DTCAST_ERR_BAD_FILE,
                              "%s: %zu bytes is not a whole number of %s elements (%zu bytes "
                              "each)",
                              shown(path), len, tname, size);
        count = len / size;
    } else {
        count = len * (8 / eight);
    }
    int64_t dim = (int64_t)count;
    return dt_tensor_set_shape(t, 1, &dim, shown(path), err);
}

static dtcast_status load_raw(const char *path, const uint8_t *buf, size_t len,
                              const dt_input *spec, dt_tensor *t, dt_io_error *err)
{
    if (spec->from == DTCAST_UNDEFINED) {
        dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "reading raw data from '%s' needs --from TYPE",
                   shown(path));
        err->usage = 1;
        return DTCAST_ERR_INVALID_ARGUMENT;
    }
    t->type = spec->from;
    if (spec->from == DTCAST_STRING)
        return load_raw_strings(path, buf, len, spec, t, err);
    dtcast_status st = raw_shape(path, len, spec, t, err);
    if (st == DTCAST_OK)
        st = dt_tensor_alloc(t, err);
    if (st == DTCAST_OK && len)
        memcpy(t->data, buf, len < t->nbytes ? len : t->nbytes);
    return st;
}

dtcast_status dt_tensor_load(const char *path, dt_file_kind kind, const dt_input *spec,
                             dt_tensor *t, dt_io_error *err)
{
    dt_tensor_init(t);
    const dt_file_format *f = dt_file_format_of(kind);
    if (!f || f->many_tensors)
        return at_file(dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                                  "a whole tensor is read from a .npy, .pb or raw file, not a %s",
                                  f ? f->name : "file of unknown kind"),
                       err, path);
    uint8_t *buf = NULL;
    size_t len = 0;
    dtcast_status st = dt_read_file(path, &buf, &len, err);
    if (st != DTCAST_OK)
        return at_file(st, err, path);
    /* Without a type, data that starts as a .npy file does is one (e.g. piped into stdin). */
    if (kind == DT_FILE_RAW && spec->from == DTCAST_UNDEFINED && len >= 6 &&
        memcmp(buf, "\x93NUMPY", 6) == 0)
        kind = DT_FILE_NPY;
    if (kind == DT_FILE_NPY)
        st = dt_npy_parse(buf, len, spec->from, t, err);
    else if (kind == DT_FILE_PB)
        st = dt_pb_parse(buf, len, t, err);
    else
        st = load_raw(path, buf, len, spec, t, err);
    free(buf);
    if (st == DTCAST_OK && kind != DT_FILE_RAW && spec->from != DTCAST_UNDEFINED &&
        spec->from != t->type) {
        char a[32], b[32];
        st = dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "%s holds %s data, but --from says %s",
                        shown(path), dt_type_label(t->type, a, sizeof a),
                        dt_type_label(spec->from, b, sizeof b));
    }
    if (st != DTCAST_OK) {
        int usage = err->usage;
        dt_tensor_free(t);
        at_file(ST(err), err, path);
        err->usage = usage;
        return ST(err);
    }
    return DTCAST_OK;
}

/* Raw strings: each followed by a newline. */
static dtcast_status save_raw_strings(const char *path, const dt_tensor *t, dt_io_error *err)
{
    char **strings = t->data;
    size_t total = 0;
    for (size_t i = 0; i < t->count; i++)
        total += (strings[i] ? strlen(strings[i]) : 0) + 1;
    char *text = malloc(total ? total : 1);
    if (!text)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory writing %s", path);
    size_t at = 0;
    for (size_t i = 0; i < t->count; i++) {
        size_t n = strings[i] ? strlen(strings[i]) : 0;
        if (n)
            memcpy(text + at, strings[i], n);
        at += n;
        text[at++] = '\n';
    }
    dtcast_status st = dt_write_file(path, text, at, err);
    free(text);
    return st;
}

dtcast_status dt_tensor_save(const char *path, dt_file_kind kind, const dt_tensor *t,
                             dt_io_error *err)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    dtcast_status st;
    switch (kind) {
    case DT_FILE_NPY:
        st = dt_npy_serialize(t, &buf, &len, err);
        break;
    case DT_FILE_PB:
        st = dt_pb_serialize(t, &buf, &len, err);
        break;
    case DT_FILE_RAW:
        st = t->type == DTCAST_STRING ? save_raw_strings(path, t, err)
                                      : dt_write_file(path, t->data, t->nbytes, err);
        return st == DTCAST_OK ? st : at_file(ST(err), err, path);
    default: {
        char a[32];
        return at_file(dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT,
                                  "a %s tensor cannot be written as a checkpoint (write .npy, "
                                  ".pb or raw)",
                                  dt_type_label(t->type, a, sizeof a)),
                       err, path);
    }
    }
    if (st == DTCAST_OK)
        st = dt_write_file(path, buf, len, err);
    free(buf);
    return st == DTCAST_OK ? st : at_file(ST(err), err, path);
}

dtcast_status dt_tensor_convert(const dt_conversion *c, const dt_tensor *src, dtcast_type to,
                                dt_tensor *dst, dtcast_error *error)
{
    dt_io_error err = DT_IO_ERROR_INIT;
    dt_tensor_init(dst);
    dst->type = to;
    dtcast_status st = dt_tensor_set_shape(dst, src->ndim, src->dims, "the output", &err);
    if (st == DTCAST_OK)
        st = dt_tensor_alloc(dst, &err);
    if (st == DTCAST_OK && src->name && !(dst->name = strdup(src->name)))
        st = dt_io_fail(&err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    if (st != DTCAST_OK) {
        copy_text(error->message, sizeof error->message, err.message);
        dt_tensor_free(dst);
        return st;
    }
    dt_library_convert conv;
    st = dt_conversion_converter(c, src->type, to, src->dims, src->ndim, &conv, error);
    if (st == DTCAST_OK)
        st = dt_library_convert_block(&conv, dst->data, src->data, src->count, error);
    if (st != DTCAST_OK)
        dt_tensor_free_converted(dst);
    return st;
}

void dt_tensor_free_converted(dt_tensor *t)
{
    if (t->type == DTCAST_STRING && t->data)
        dtcast_strings_free(t->data, t->count); /* the strings; the array is t's own */
    dt_tensor_free(t);
}
