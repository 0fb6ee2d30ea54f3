/* The tensor record, whole-file reading and writing, and which reader a file name asks for. */
#include "files/file.h"
#include "files/tensor.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

dtcast_status dt_io_fail(dt_io_error *err, dtcast_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        /* the message may quote the record's own fields (a copy first: no overlap) */
        char text[sizeof err->message];
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
        memcpy(err->message, text, sizeof text);
        err->file[0] = err->tensor[0] = '\0';
        err->offset = -1;
        err->usage = 0;
        err->status = status;
    }
    return status;
}

/* ---- the tensor record ------------------------------------------------------------------- */

void dt_tensor_init(dt_tensor *t)
{
    memset(t, 0, sizeof *t); /* type UNDEFINED, no dims, no elements, no data */
}

void dt_tensor_free(dt_tensor *t)
{
    if (t->type == DTCAST_STRING && t->data) {
        char **strings = t->data;
        for (size_t i = 0; i < t->count; i++)
            free(strings[i]);
    }
    free(t->data);
    free(t->name);
    dt_tensor_init(t);
}

dtcast_status dt_io_at(dtcast_status status, dt_io_error *err, size_t offset)
{
    if (status != DTCAST_OK && err) {
        const size_t n = strnlen(err->message, sizeof err->message);
        if (n < sizeof err->message)
            snprintf(err->message + n, sizeof err->message - n, " at byte %zu", offset);
        err->offset = (int64_t)offset;
    }
    return status;
}

dtcast_status dt_io_where(dtcast_status status, dt_io_error *err, const char *file,
                          const char *tensor)
{
    if (!err)
        return status;
    if (file && file != err->file)
        snprintf(err->file, sizeof err->file, "%s", file);
    if (tensor && tensor != err->tensor)
        snprintf(err->tensor, sizeof err->tensor, "%s", tensor);
    const char *at = NULL;
    for (const char *p = strstr(err->message, " at byte "); p; p = strstr(p + 1, " at byte "))
        at = p;
    if (err->offset < 0 && at && at[9] >= '0' && at[9] <= '9') {
        int64_t v = 0;
        for (const char *d = at + 9; *d >= '0' && *d <= '9' && v < INT64_MAX / 10 - 9; d++)
            v = v * 10 + (*d - '0');
        err->offset = v;
    }
    return status;
}

dtcast_status dt_tensor_set_shape(dt_tensor *t, int ndim, const int64_t *dims, const char *what,
                                  dt_io_error *err)
{
    if (ndim < 0 || ndim > DT_MAX_DIMS)
        return dt_io_fail(err, DTCAST_ERR_BAD_FILE, "%s: %d dimensions, at most %d supported",
                          what, ndim, DT_MAX_DIMS);
    size_t count = 1;
    for (int i = 0; i < ndim; i++) {
        if (dims[i] < 0)
            return dt_io_fail(err, DTCAST_ERR_BAD_FILE, "%s: dimension %d is negative (%lld)",
                              what, i, (long long)dims[i]);
        if ((uint64_t)dims[i] > SIZE_MAX)
            return dt_io_fail(err, DTCAST_ERR_SIZE_OVERFLOW,
                              "%s: dimension %d (%lld) does not fit in memory", what, i,
                              (long long)dims[i]);
        if (__builtin_mul_overflow(count, (size_t)dims[i], &count))
            return dt_io_fail(err, DTCAST_ERR_SIZE_OVERFLOW,
                              "%s: the product of the dimensions overflows", what);
    }
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        t->dims[i] = dims[i];
    t->count = count;
    return DTCAST_OK;
}

dtcast_status dt_tensor_alloc(dt_tensor *t, dt_io_error *err)
{
    size_t nbytes = 0;
    dtcast_status st = dtcast_storage_size(t->type, t->count, &nbytes, NULL);
    if (st != DTCAST_OK)
        return dt_io_fail(err, st, "cannot size %zu elements of type %d: %s", t->count,
                          (int)t->type, dtcast_status_string(st));
    /* One byte at least, so that data is never NULL, even for an empty tensor. */
    void *data = calloc(nbytes ? nbytes : 1, 1);
    if (!data)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory allocating %zu bytes",
                          nbytes);
    t->data = data;
    t->nbytes = nbytes;
    return DTCAST_OK;
}

/* ---- reading ----------------------------------------------------------------------------- */

static dtcast_status read_stream(FILE *f, const char *path, uint8_t **buf, size_t *len,
                                 dt_io_error *err)
{
    size_t cap = 1 << 16, used = 0;
    uint8_t *data = malloc(cap);
    if (!data)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory reading '%s'", path);
    for (;;) {
        if (used == cap) {
            if (cap > SIZE_MAX / 2) {
                free(data);
                return dt_io_fail(err, DTCAST_ERR_SIZE_OVERFLOW, "'%s' is too large", path);
            }
            uint8_t *bigger = realloc(data, cap * 2);
            if (!bigger) {
                free(data);
                return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY,
                                  "out of memory reading '%s' (%zu bytes so far)", path, used);
            }
            data = bigger;
            cap *= 2;
        }
        size_t got = fread(data + used, 1, cap - used, f);
        used += got;
        if (got == 0) {
            if (ferror(f)) {
                int e = errno;
                free(data);
                return dt_io_fail(err, DTCAST_ERR_IO, "cannot read '%s' at byte %zu: %s", path,
                                  used, strerror(e));
            }
            break;
        }
    }
    *buf = data;
    *len = used;
    return DTCAST_OK;
}

dtcast_status dt_read_file(const char *path, uint8_t **buf, size_t *len, dt_io_error *err)
{
    if (!path || !buf || !len)
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "read: NULL argument");
    *buf = NULL;
    *len = 0;
    if (strcmp(path, "-") == 0)
        return read_stream(stdin, "<stdin>", buf, len, err);
    FILE *f = fopen(path, "rb");
    if (!f)
        return dt_io_fail(err, DTCAST_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    dtcast_status st = read_stream(f, path, buf, len, err);
    fclose(f);
    return st;
}

/* ---- writing ----------------------------------------------------------------------------- */

dtcast_status dt_write_file(const char *path, const void *buf, size_t len, dt_io_error *err)
{
    if (!path || (!buf && len))
        return dt_io_fail(err, DTCAST_ERR_INVALID_ARGUMENT, "write: NULL argument");
    dt_outfile out;
    dtcast_status st = dt_outfile_open(&out, path, err);
    if (st == DTCAST_OK)
        st = dt_outfile_write(&out, buf, len, err);
    if (st == DTCAST_OK)
        st = dt_outfile_commit(&out, err);
    dt_outfile_abort(&out);
    return st;
}

/* ---- file kinds -------------------------------------------------------------------------- */

static int has_suffix(const char *path, const char *suffix)
{
    size_t n = strlen(path), k = strlen(suffix);
    return n >= k && strcasecmp(path + n - k, suffix) == 0;
}

/* Kinds of file dtcast does not read, named so the refusal says what the file is. */
static const struct {
    const char *suffix, *what;
} refused_kinds[] = {
    {".pt", "a PyTorch checkpoint (.pt): save it as .safetensors first"},
    {".pth", "a PyTorch checkpoint (.pth): save it as .safetensors first"},
    {".ckpt", "a checkpoint (.ckpt): save it as .safetensors first"},
    {".bin.index.json", "a sharded PyTorch checkpoint index: save it as .safetensors first"},
    {".gguf", "a GGUF model (.gguf)"},
    {".h5", "an HDF5 file (.h5)"},
    {".hdf5", "an HDF5 file (.hdf5)"},
    {".npz", "a numpy archive (.npz): save one array with np.save (.npy)"},
    {".pkl", "a pickle (.pkl)"},
    {".json", "a JSON file (only *.safetensors.index.json is read)"},
};

/* dt_file_kind_of: formats.c (the table of file kinds). */

const char *dt_file_kind_refusal(const char *path, char *buf, size_t size)
{
    for (size_t i = 0; i < sizeof refused_kinds / sizeof refused_kinds[0]; i++)
        if (has_suffix(path, refused_kinds[i].suffix)) {
            snprintf(buf, size, "'%s' is %s", path, refused_kinds[i].what);
            return buf;
        }
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    if (dot && dot != base)
        snprintf(buf, size,
                 "'%s': unknown file kind '%s' (dtcast reads .npy, .pb, .safetensors, "
                 "*.safetensors.index.json, and raw data from .raw, .bin or - with --from; "
                 "--format raw reads any file as raw data)",
                 path, dot);
    else
        snprintf(buf, size,
                 "'%s': no file extension to tell its kind (use .npy, .pb, .safetensors, .raw "
                 "or .bin, or --format raw)",
                 path);
    return buf;
}
