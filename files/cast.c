/* The cast job (cast.h; it never prints): which tensors the input holds and where, which tensors
 * the output gets and how, and the streamed conversion between them (pipeline.c). Memory stays
 * bounded by the block buffers whatever the file size; only string tensors, TensorProto typed
 * fields, Fortran-order arrays written in C order, and formats that cannot be streamed from a
 * pipe are held whole in memory. */
#include "files/cast.h"
#include "files/onnx_model.h"

#include "files/checkpoint.h"
#include "files/file.h"
#include "files/formats.h"
#include "files/npy.h"
#include "files/pipeline.h"
#include "files/progress.h"
#include "files/job.h"
#include "files/report.h"
#include "files/quant_layout.h"
#include "files/safetensors.h"
#include "files/whole.h"

#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PB_LIMIT ((uint64_t)INT32_MAX) /* protobuf messages stop at 2 GiB */

/* The job's steps return JOB_OK, JOB_FAIL (the error in err_out), JOB_USAGE (the same, a usage
 * error) or JOB_WHOLE (strings: the tensor is converted whole, cast_whole). */
enum { JOB_OK = 0, JOB_FAIL = 1, JOB_USAGE = 2, JOB_WHOLE = -2 };

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int job_fail(dt_io_error *err, int usage, dtcast_status status, const char *fmt, ...)
{
    char text[sizeof err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    dt_job_fail(err, usage, usage ? DTCAST_ERR_INVALID_ARGUMENT : status, "%s", text);
    dt_io_where(DTCAST_ERR_BAD_FILE, err, NULL, NULL); /* the offset a message names */
    return usage ? JOB_USAGE : JOB_FAIL;
}

/* Records the file and the tensor of the failure just written (status passes through). */
static int failed_at(int status, dt_io_error *err, const char *file, const char *tensor)
{
    dt_io_where(DTCAST_ERR_BAD_FILE, err, file, tensor);
    return status;
}

/* X is the request or a source: both know where the error goes. */
#define FAIL(x, ...) job_fail((x)->err_out, 0, DTCAST_ERR_BAD_FILE, __VA_ARGS__)
#define USAGE(x, ...) job_fail((x)->err_out, 1, DTCAST_ERR_INVALID_ARGUMENT, __VA_ARGS__)
/* A failure whose status is known: the library's, an I/O error's, out of memory. */
#define FAIL_ST(x, st, ...) job_fail((x)->err_out, 0, (st), __VA_ARGS__)
#define FAIL_OOM(x) FAIL_ST(x, DTCAST_ERR_OUT_OF_MEMORY, "out of memory")
/* The status a reader's or writer's error record holds (BAD_FILE when it holds none). */
#define ERR_ST(e) ((e).status != DTCAST_OK ? (e).status : DTCAST_ERR_BAD_FILE)

/* The status of a finished job: a usage error is DTCAST_ERR_INVALID_ARGUMENT; others are the
 * status the failure recorded (the library's, the reader's or writer's, out of memory). */
static dtcast_status job_status(int status, const dt_io_error *err)
{
    if (status == JOB_OK)
        return DTCAST_OK;
    if (err->usage)
        return DTCAST_ERR_INVALID_ARGUMENT;
    return err->status != DTCAST_OK ? err->status : DTCAST_ERR_BAD_FILE;
}

static const char *error_text(const dt_cast_request *r, dtcast_status st, const char *message,
                              char *buf, size_t size)
{
    if (r->error_text)
        return r->error_text(r->error_text_ctx, st, message, buf, size);
    return message && message[0] ? message : dtcast_status_string(st);
}

/* ---- the input ------------------------------------------------------------------------------ */

typedef struct src_tensor {
    char *name;
    dtcast_type type;
    int ndim;
    int64_t dims[DT_MAX_DIMS];
    uint64_t count;
    int fortran;       /* elements in Fortran order (the output keeps it when it can) */
    dt_infile *file;   /* where the elements are ... */
    const uint8_t *mem; /* ... or here (dtcast layout) */
    uint64_t offset, file_bytes;
    dt_layout layout;
    int open_ended;    /* raw data from a pipe to raw output: as many elements as the pipe holds
                        * (count and file_bytes 0 until then) */
} src_tensor;

typedef struct source {
    const char *path, *shown;
    dt_file_kind kind;
    dt_infile file, external; /* external: the data file of an ONNX tensor */
    dt_tensor mem;            /* a tensor read whole */
    src_tensor *t;
    size_t n;
    dt_st_header st;
    int checkpoint;           /* safetensors: only floating-point tensors are converted */
    dt_io_error *err_out;     /* the job's error */
} source;

static void source_free(source *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->t[i].name);
    free(s->t);
    dt_st_header_free(&s->st);
    dt_tensor_free(&s->mem);
    dt_infile_close(&s->external);
    dt_infile_close(&s->file);
    memset(s, 0, sizeof *s);
}

static int fail_io(const source *s, const dt_io_error *err)
{
    const dtcast_status st = err->status != DTCAST_OK ? err->status : DTCAST_ERR_BAD_FILE;
    int status = strstr(err->message, s->shown) == NULL
                     ? FAIL_ST(s, st, "%s: %s", s->shown, err->message)
                     : FAIL_ST(s, st, "%s", err->message);
    if (s->err_out->offset < 0)
        s->err_out->offset = err->offset;
    return failed_at(status, s->err_out, s->shown, err->tensor[0] ? err->tensor : NULL);
}

static src_tensor *add_tensor(source *s, const char *name)
{
    src_tensor *grown = realloc(s->t, (s->n + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    s->t = grown;
    src_tensor *t = &s->t[s->n];
    memset(t, 0, sizeof *t);
    if (!(t->name = strdup(name ? name : ""))) 
        return NULL;
    s->n++;
    return t;
}

static void set_shape(src_tensor *t, int ndim, const int64_t *dims, uint64_t count)
{
    t->ndim = ndim;
    memcpy(t->dims, dims, (size_t)ndim * sizeof dims[0]);
    t->count = count;
}

/* The name a lone tensor gets in a checkpoint: the input's file name without its extension. */
static char *stem_of(const char *path)
{
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    if (strcmp(path, "-") == 0)
        base = "tensor";
    char *stem = strdup(base);
    char *dot = stem ? strrchr(stem, '.') : NULL;
    if (dot && dot != stem)
        *dot = '\0';
    return stem;
}

/* A whole tensor in memory (strings, typed fields, Fortran order to C order). */
static int use_memory(source *s, const char *name)
{
    src_tensor *t = add_tensor(s, name);
    if (!t)
        return FAIL_OOM(s);
    t->type = s->mem.type;
    set_shape(t, s->mem.ndim, s->mem.dims, s->mem.count);
    t->mem = s->mem.data;
    t->layout = (dt_layout){s->mem.type, DT_STORE_NATIVE};
    dt_native_bytes(t->type, t->count, &t->file_bytes);
    return JOB_OK;
}

static int open_npy(source *s, const dt_cast_request *r)
{
    dt_io_error err = DT_IO_ERROR_INIT;
    dt_npy_info info;
    uint8_t head[16];
    const uint8_t *buf = NULL;
    size_t len = 0, total = 0, got = 0;
    uint8_t *piped = NULL;
    dtcast_status st;
    if (s->file.seekable) {
        st = dt_infile_map(&s->file, &buf, &len, &err);
        if (st == DTCAST_OK)
            st = dt_npy_read_header(buf, len, s->file.size, r->input.from, &info, &err);
    } else { /* a pipe: the preamble says how long the header is */
        st = dt_infile_read_some(&s->file, head, 12, &got, &err);
        if (st == DTCAST_OK)
            st = dt_npy_header_size(head, got, &total, &err);
        if (st == DTCAST_OK && total > ((size_t)1 << 26))
            st = dt_io_fail(&err, DTCAST_ERR_BAD_FILE, "npy: header of %zu bytes at byte 8",
                            total);
        if (st == DTCAST_OK && !(piped = malloc(total)))
            st = dt_io_fail(&err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
        if (st == DTCAST_OK && total > got) {
            memcpy(piped, head, got);
            st = dt_infile_read(&s->file, got, piped + got, total - got, &err);
        }
        if (st == DTCAST_OK)
            st = dt_npy_read_header(piped, total, UINT64_MAX, r->input.from, &info,
                                    &err);
        free(piped);
    }
    if (st != DTCAST_OK)
        return fail_io(s, &err);
    if (r->input.from != DTCAST_UNDEFINED && r->input.from != info.type) {
        char a[32], b[32];
        return FAIL(r, "%s holds %s data, but --from says %s", s->shown,
                        dt_type_label(info.type, a, sizeof a),
                        dt_type_label(r->input.from, b, sizeof b));
    }
    if (info.strings && !s->file.seekable)
        return FAIL(r, "%s: string arrays are converted whole: give a file, not a pipe",
                        s->shown);
    if (info.strings)
        return JOB_WHOLE;
    /* Fortran order into a format that has none is read whole. */
    dt_file_kind out = dt_file_kind_of(r->out);
    if ((info.fortran && (out != DT_FILE_NPY || r->to == DTCAST_STRING))) {
        if (!s->file.seekable)
            return FAIL(r, "%s: %s arrays are read whole: give a file, not a pipe", s->shown,
                            "Fortran-order");
        if (dt_npy_parse(buf, len, r->input.from, &s->mem, &err) != DTCAST_OK)
            return fail_io(s, &err);
        return use_memory(s, NULL);
    }
    char *stem = stem_of(s->path);
    src_tensor *t = stem ? add_tensor(s, stem) : NULL;
    free(stem);
    if (!t)
        return FAIL_OOM(r);
    t->type = info.type;
    set_shape(t, info.ndim, info.dims, info.count);
    t->fortran = info.fortran;
    t->file = &s->file;
    t->offset = info.data_offset;
    t->file_bytes = info.data_bytes;
    t->layout = info.layout;
    return JOB_OK;
}

/* A pipe whose length must be known first is copied to an unlinked temporary file: in OUT's
 * folder (where the output's own temporary file is, so the disk is the one that takes the
 * output anyway), or in $TMPDIR (default /tmp) when OUT is stdout. */
static int spool_input(source *s, const dt_cast_request *r)
{
    if (s->file.seekable)
        return JOB_OK;
    const char *out = r->out ? r->out : "-";
    char *dir = NULL;
    if (strcmp(out, "-") == 0) {
        const char *tmp = getenv("TMPDIR");
        dir = strdup(tmp && tmp[0] ? tmp : "/tmp");
    } else {
        const char *slash = strrchr(out, '/');
        size_t n = !slash ? 1 : slash == out ? 1 : (size_t)(slash - out);
        if ((dir = malloc(n + 1)) != NULL) {
            memcpy(dir, slash ? out : ".", n);
            dir[n] = '\0';
        }
    }
    if (!dir)
        return FAIL_OOM(r);
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = dt_infile_spool(&s->file, dir, &err);
    free(dir);
    return st == DTCAST_OK ? JOB_OK : fail_io(s, &err);
}

/* External data lives beside the .pb: a relative path that stays inside its folder. */
static int open_external(source *s, const dt_pb_info *info, src_tensor *t)
{
    const char *loc = info->location;
    if (loc[0] == '/' || strcmp(loc, "..") == 0 || strncmp(loc, "../", 3) == 0 ||
        strstr(loc, "/../") || (strlen(loc) >= 3 && strcmp(loc + strlen(loc) - 3, "/..") == 0))
        return FAIL(s, "%s: external_data location '%s' leaves the folder of the .pb at byte "
                        "%zu",
                        s->shown, loc, info->location_at);
    const char *slash = strrchr(s->path, '/');
    size_t dir = slash ? (size_t)(slash - s->path) + 1 : 0;
    char *path = malloc(dir + strlen(loc) + 1);
    if (!path)
        return FAIL_OOM(s);
    memcpy(path, s->path, dir);
    strcpy(path + dir, loc);
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = dt_infile_open(&s->external, path, &err);
    free(path);
    if (st != DTCAST_OK)
        return FAIL_ST(s, ERR_ST(err), "%s: external data: %s", s->shown, err.message);
    uint64_t end;
    if (!s->external.seekable || __builtin_add_overflow(info->ext_offset, info->nbytes, &end) ||
        end > s->external.size)
        return FAIL(s, "%s: external data '%s' holds %llu bytes, but offset %llu + length %zu "
                        "go beyond it",
                        s->shown, loc, (unsigned long long)s->external.size,
                        (unsigned long long)info->ext_offset, info->nbytes);
    t->file = &s->external;
    t->offset = info->ext_offset;
    return JOB_OK;
}

static int open_pb(source *s, const dt_cast_request *r)
{
    dt_io_error err = DT_IO_ERROR_INIT;
    const uint8_t *buf = NULL;
    size_t len = 0;
    dtcast_status st;
    /* A file is mapped and only its field keys are read; a pipe is spooled to a temporary
     * file first (its fields may come in any order) and read as one. */
    if (spool_input(s, r) != JOB_OK)
        return JOB_FAIL;
    const int piped = s->file.spooled;
    st = dt_infile_map(&s->file, &buf, &len, &err);
    dt_pb_info info;
    memset(&info, 0, sizeof info);
    if (st == DTCAST_OK)
        st = dt_pb_locate(buf, len, &info, &err);
    if (st == DTCAST_OK && r->input.from != DTCAST_UNDEFINED &&
        r->input.from != info.type) {
        char a[32], b[32];
        dt_pb_info_free(&info);
        return FAIL(r, "%s holds %s data, but --from says %s", s->shown,
                        dt_type_label(info.type, a, sizeof a),
                        dt_type_label(r->input.from, b, sizeof b));
    }
    int status = JOB_OK;
    if (st != DTCAST_OK) {
        status = fail_io(s, &err);
    } else if (info.type == DTCAST_STRING) {
        status = piped ? FAIL(r, "%s: string tensors are converted whole: give a file, not a "
                                  "pipe",
                                  s->shown)
                       : JOB_WHOLE;
    } else if (info.where == DT_PB_EXTERNAL && piped) {
        status = FAIL(r, "%s: external data is read from a file, not a pipe", s->shown);
    } else if (info.where == DT_PB_TYPED) {
        if (dt_pb_parse(buf, len, &s->mem, &err) != DTCAST_OK)
            status = fail_io(s, &err);
        else
            status = use_memory(s, info.name);
    } else {
        src_tensor *t = add_tensor(s, info.name);
        if (!t) {
            status = FAIL_OOM(r);
        } else {
            t->type = info.type;
            set_shape(t, info.ndim, info.dims, info.count);
            /* float6 raw_data and external data: four elements in three bytes (one per byte
             * under dtcast 1.0's codes 105, 106) */
            t->layout = (dt_layout){info.type, dtcast_type_bits(info.type) == 6 &&
                                                       !info.float6_byte_each
                                                   ? DT_STORE_F6_PACKED
                                                   : DT_STORE_NATIVE};
            t->file_bytes = info.nbytes;
            t->file = &s->file;
            t->offset = info.raw_at;
            if (info.where == DT_PB_EXTERNAL)
                status = open_external(s, &info, t);
        }
    }
    dt_pb_info_free(&info);
    return status;
}

static int open_safetensors(source *s)
{
    dt_io_error err = DT_IO_ERROR_INIT;
    if (!s->file.seekable)
        return FAIL(s, "%s: a safetensors file is read out of order: give a file, not a pipe",
                        s->shown);
    if (dt_st_read_header(&s->file, &s->st, &err) != DTCAST_OK)
        return fail_io(s, &err);
    s->checkpoint = 1;
    for (size_t i = 0; i < s->st.ntensors; i++) {
        const dt_st_tensor *e = &s->st.tensors[i];
        src_tensor *t = add_tensor(s, e->name);
        if (!t)
            return FAIL_OOM(s);
        t->type = e->type;
        set_shape(t, e->ndim, e->dims, e->count);
        t->file = &s->file;
        t->offset = s->st.data_start + e->begin;
        t->file_bytes = e->end - e->begin;
        t->layout = (dt_layout){e->type, dt_stride_bits(e->type) == 8 && dtcast_type_bits(e->type) == 6
                                             ? DT_STORE_F6_PACKED
                                             : DT_STORE_NATIVE};
    }
    return JOB_OK;
}

static int open_raw(source *s, const dt_cast_request *r)
{
    const dt_input *spec = &r->input;
    if (spec->from == DTCAST_UNDEFINED)
        return USAGE(r, "reading raw data from '%s' needs --from TYPE", s->shown);
    char *stem = stem_of(s->path);
    src_tensor *t = stem ? add_tensor(s, stem) : NULL;
    free(stem);
    if (!t)
        return FAIL_OOM(r);
    char tname[32];
    dt_type_label(spec->from, tname, sizeof tname);
    t->type = spec->from;
    const int packed6 = r->float6_packed && dtcast_type_bits(spec->from) == 6;
    t->layout = (dt_layout){spec->from, packed6 ? DT_STORE_F6_PACKED : DT_STORE_NATIVE};
    t->file = &s->file;
    unsigned stride = dt_stride_bits(spec->from);
    if (spec->has_shape) {
        dt_tensor shape;
        dt_io_error err = DT_IO_ERROR_INIT;
        dt_tensor_init(&shape);
        if (dt_tensor_set_shape(&shape, spec->ndim, spec->dims, "--shape", &err) != DTCAST_OK)
            return FAIL_ST(r, ERR_ST(err), "%s", err.message);
        set_shape(t, shape.ndim, shape.dims, shape.count);
        if (dt_layout_bytes(&t->layout, t->count, &t->file_bytes) != DTCAST_OK)
            return FAIL(r, "--shape: too many %s elements", tname);
        if (s->file.seekable && s->file.size != t->file_bytes)
            return FAIL(r, "%s: %llu bytes, but --shape asks for %llu %s elements (%llu bytes)",
                            s->shown, (unsigned long long)s->file.size,
                            (unsigned long long)t->count, tname,
                            (unsigned long long)t->file_bytes);
        return JOB_OK;
    }
    /* A pipe without --shape: its length is known at its end. Raw output needs no count
     * first, so the elements stream through; the other outputs write the shape before the
     * data, so the pipe is spooled to a temporary file and read as one. */
    if (!s->file.seekable && r->out_kind == DT_FILE_RAW) {
        int64_t none = 0;
        set_shape(t, 1, &none, 0);
        t->open_ended = 1;
        return JOB_OK;
    }
    if (spool_input(s, r) != JOB_OK)
        return JOB_FAIL;
    uint64_t size = s->file.size;
    if (stride >= 8 && size % (stride / 8)) {
        FAIL(r, "%s: %llu bytes is not a whole number of %s elements (%u bytes each): the "
                "last one is cut short at byte %llu",
             s->shown, (unsigned long long)size, tname, stride / 8,
             (unsigned long long)(size - size % (stride / 8)));
        return failed_at(JOB_FAIL, r->err_out, s->shown, NULL);
    }
    uint64_t count = stride >= 8 ? size / (stride / 8) : size * (8 / stride);
    if (packed6) /* every whole 6 bits: ceil(6n/8) bytes hold n elements for two n, the larger */
        count = size / 3 * 4 + size % 3 * 8 / 6;
    int64_t dim = (int64_t)count;
    set_shape(t, 1, &dim, count);
    t->file_bytes = size;
    return JOB_OK;
}

/* --shape on a file that has a shape of its own: a reshape to the same element count. */
static int reshape(source *s, const dt_input *spec)
{
    if (!spec->has_shape || s->kind == DT_FILE_RAW)
        return JOB_OK;
    if (s->n != 1)
        return USAGE(s, "--shape: %s holds %zu tensors", s->shown, s->n);
    dt_tensor shape;
    dt_io_error err = DT_IO_ERROR_INIT;
    dt_tensor_init(&shape);
    if (dt_tensor_set_shape(&shape, spec->ndim, spec->dims, "--shape", &err) != DTCAST_OK)
        return FAIL_ST(s, ERR_ST(err), "%s", err.message);
    src_tensor *t = &s->t[0];
    if (shape.count != t->count) {
        char a[64], b[64];
        dt_format_shape(a, sizeof a, t->ndim, t->dims);
        dt_format_shape(b, sizeof b, shape.ndim, shape.dims);
        return FAIL(s, "%s: --shape %s has %zu elements, but the tensor (%s) has %llu", s->shown,
                        b, shape.count, a, (unsigned long long)t->count);
    }
    if (t->fortran)
        return FAIL(s, "%s: --shape cannot reshape a Fortran-order array", s->shown);
    set_shape(t, shape.ndim, shape.dims, shape.count);
    return JOB_OK;
}

static int open_source(source *s, const dt_cast_request *r, const char *path, dt_file_kind kind)
{
    memset(s, 0, sizeof *s);
    s->file.fd = s->external.fd = -1;
    s->path = path;
    s->shown = strcmp(path, "-") == 0 ? "<stdin>" : path;
    s->kind = kind;
    s->err_out = r->err_out;
    dt_tensor_init(&s->mem);
    dt_io_error err = DT_IO_ERROR_INIT;
    if (dt_infile_open(&s->file, path, &err) != DTCAST_OK)
        return FAIL_ST(r, ERR_ST(err), "%s", err.message);
    /* Without --from, raw input that starts as a .npy file does is one (e.g. a pipe). */
    if (kind == DT_FILE_RAW && r->input.from == DTCAST_UNDEFINED &&
        !r->input.format_raw) {
        uint8_t magic[6];
        size_t got = 0;
        if (dt_infile_peek(&s->file, magic, 6, &got, &err) != DTCAST_OK)
            return FAIL_ST(r, ERR_ST(err), "%s", err.message);
        if (got == 6 && memcmp(magic, "\x93NUMPY", 6) == 0)
            s->kind = kind = DT_FILE_NPY;
    }
    int status;
    switch (kind) {
    case DT_FILE_NPY: status = open_npy(s, r); break;
    case DT_FILE_PB: status = open_pb(s, r); break;
    case DT_FILE_SAFETENSORS: status = open_safetensors(s); break;
    default: status = open_raw(s, r); break;
    }
    if (status == JOB_OK)
        status = reshape(s, &r->input);
    return status;
}

/* ---- choosing and converting ----------------------------------------------------------------- */

/* Whether a tensor is converted: it matches --select (default all) and no --exclude; in a
 * checkpoint, only floating-point tensors are (the others are copied as they are). */
static int chosen(const dt_cast_request *r, const source *s, const src_tensor *t)
{
    if (r->select.n && !dt_glob_any(&r->select, t->name))
        return 0;
    if (dt_glob_any(&r->exclude, t->name))
        return 0;
    return !s->checkpoint || dt_st_is_float(t->type) || r->single_output;
}

dtcast_status dt_conversion_options(const dt_conversion *s, dtcast_type from, dtcast_type to,
                                    const int64_t *dims, int ndim, dtcast_options *out,
                                    dtcast_error *error)
{
    dtcast_options base = s->options;
    dtcast_status st = DTCAST_OK;
    /* On a refusal a profile leaves *out untouched: it starts as base. */
    *out = base;
    switch (s->profile) {
    case DT_PROFILE_EXACT:
        break;
    case DT_PROFILE_ONNX:
        st = dtcast_onnx_options(out, (int64_t)to, from, s->opset, s->saturate, s->round_mode,
                                 &base, error);
        if (st == DTCAST_OK) {
            out->via_float32 |= s->options.via_float32;
            out->float4_nan_as_max |= s->options.float4_nan_as_max;
            out->string_to_bool_numeric |= s->options.string_to_bool_numeric;
        }
        break;
    case DT_PROFILE_PYPTO:
        st = dtcast_pypto_check_shape(dims, ndim, error);
        if (st == DTCAST_OK)
            st = dtcast_pypto_options(out, to, from, s->cast_mode, &base, error);
        break;
    case DT_PROFILE_ORT_FLOAT16:
    case DT_PROFILE_ONNXCONVERTER_COMMON:
        if (from != DTCAST_FLOAT32 || to != DTCAST_FLOAT16) {
            snprintf(error->message, sizeof error->message, "the profile converts float32 to "
                     "float16 only, as its converter does");
            st = DTCAST_ERR_UNSUPPORTED;
            break;
        }
        dtcast_options_init(out); /* numpy's float16 cast: round to nearest even */
        out->threads = base.threads;
        break;
    }
    /* A zero-element conversion checks the pair (complex to real, unknown types). */
    uint8_t probe_in[16] = {0}, probe_out[16];
    if (st == DTCAST_OK)
        st = dtcast_convert(probe_out, to, probe_in, from, 0, out, error);
    return st;
}

const char *dt_profile_name(dt_profile p)
{
    static const char *const names[] = {"exact", "onnx", "pypto", "ort-float16",
                                        "onnxconverter-common"};
    return (unsigned)p < sizeof names / sizeof names[0] ? names[p] : NULL;
}

void dt_profile_label(dt_profile p, int opset, char *buf, size_t size)
{
    if (p == DT_PROFILE_ONNX)
        snprintf(buf, size, "onnx:%d", opset);
    else
        snprintf(buf, size, "%s", dt_profile_name(p) ? dt_profile_name(p) : "?");
}

int dt_conversion_float32_only(const dt_conversion *c)
{
    return c->profile == DT_PROFILE_ORT_FLOAT16 || c->profile == DT_PROFILE_ONNXCONVERTER_COMMON;
}

dtcast_status dt_conversion_converter(const dt_conversion *c, dtcast_type from, dtcast_type to,
                                      const int64_t *dims, int ndim, dt_library_convert *out,
                                      dtcast_error *error)
{
    memset(out, 0, sizeof *out);
    out->from = from;
    out->to = to;
    dtcast_status st = dt_conversion_options(c, from, to, dims, ndim, &out->options, error);
    if (st != DTCAST_OK || !dt_conversion_float32_only(c))
        return st;
    /* the converters' defaults (min_positive_val, max_finite_val), as float32: numpy compares
     * a float32 array with them in float32 */
    const int ort = c->profile == DT_PROFILE_ORT_FLOAT16;
    const float tiny = ort ? 5.96e-08f : 1e-7f, big = ort ? 65504.0f : 1e4f;
    out->rule = ort ? "ort-float16: 0 < |x| < 5.96e-08 to 5.96e-08, finite |x| > 65504 to "
                      "65504, rne"
                    : "onnxconverter-common: 0 < |x| < 1e-7 to 1e-7, finite |x| > 1e4 to 1e4, rne";
    memcpy(&out->tiny, &tiny, 4);
    memcpy(&out->big, &big, 4);
    st = dtcast_convert(&out->tiny_code, DTCAST_FLOAT16, &tiny, DTCAST_FLOAT32, 1, &out->options,
                        error);
    if (st == DTCAST_OK)
        st = dtcast_convert(&out->big_code, DTCAST_FLOAT16, &big, DTCAST_FLOAT32, 1,
                            &out->options, error);
    out->clamp = 1;
    return st;
}

/* The job's message for a pair the profile refuses: "WHAT: cannot cast A to B (profile P): why". */
static int refused_pair(const dt_cast_request *r, dtcast_type from, const char *what,
                        const char *tensor, dtcast_status st, const dtcast_error *error)
{
    char a[32], b[32], why[sizeof error->message + 64];
    int status = FAIL_ST(r, st, "%s: cannot cast %s to %s (profile %s): %s", what,
                         dt_type_label(from, a, sizeof a), dt_type_label(r->to, b, sizeof b),
                         r->profile_label ? r->profile_label : "exact",
                         error_text(r, st, error->message, why, sizeof why));
    return failed_at(status, r->err_out, NULL, tensor);
}

/* The options a profile gives this pair (its checks included), once per tensor. */
static int resolve(const dt_cast_request *r, const src_tensor *t, const char *what,
                   dt_library_convert *c)
{
    dtcast_error error;
    memset(&error, 0, sizeof error);
    dtcast_status st = dt_conversion_converter(&r->conversion, t->type, r->to, t->dims, t->ndim,
                                               c, &error);
    return st == DTCAST_OK ? JOB_OK : refused_pair(r, t->type, what, t->name, st, &error);
}

/* What a conversion job sees of each block: the report and the NaN/Inf watch. */
typedef struct observer {
    dt_report report;
    int reporting;
    dt_nonfinite_watch watch;
    int watching;
    uint64_t nonfinite;
} observer;

static void observe_block(void *ctx, const void *src, const void *dst, size_t count)
{
    observer *o = ctx;
    if (o->reporting)
        dt_report_add(&o->report, src, dst, count);
    if (o->watching)
        o->nonfinite += dt_nonfinite_count(&o->watch, src, dst, count);
}

/* The whole job's warning: one line for the first tensor that lost finite values. */
typedef struct warnings {
    uint64_t nonfinite;
    size_t tensors;
    char first[96];
    dtcast_type to;
} warnings;

/* ---- the output ------------------------------------------------------------------------------ */

typedef struct job {
    const dt_cast_request *r;
    source *s;
    dt_progress *progress;
    warnings *warn;
    dt_stream_buffers *buffers;
} job;

/* Converts (or copies) one tensor into out, in layout dst. */
static int run_tensor(job *j, const src_tensor *t, int convert, dt_layout dst, dt_outfile *out,
                      const char *where)
{
    const dt_cast_request *r = j->r;
    char what[512];
    if (j->s->n > 1 || j->s->checkpoint)
        snprintf(what, sizeof what, "%s: tensor '%s'", j->s->shown, t->name);
    else
        snprintf(what, sizeof what, "%s", j->s->shown);
    dt_io_error err = DT_IO_ERROR_INIT;
    /* Unchanged bytes: copied as they are. */
    if (!convert && t->file && t->layout.store == dst.store) {
        if (dt_stream_copy(t->file, t->offset, t->file_bytes, out, j->buffers, j->progress,
                           &err) != DTCAST_OK)
            return failed_at(FAIL_ST(r, ERR_ST(err), "%s: %s", what, err.message), r->err_out, j->s->shown,
                             t->name);
        return JOB_OK;
    }
    dt_library_convert c;
    memset(&c, 0, sizeof c);
    observer o;
    memset(&o, 0, sizeof o);
    if (convert && resolve(r, t, what, &c) != JOB_OK)
        return JOB_FAIL;
    if (convert && r->report &&
        dt_report_init(&o.report, t->type, r->to, &c.options) == DTCAST_OK) {
        o.reporting = 1;
        o.report.rule = c.rule;
    }
    if (convert && r->watch)
        o.watching = dt_nonfinite_watch_init(&o.watch, t->type, r->to);
    dt_stream_job sj = {
        .in = t->mem ? NULL : t->file,
        .mem = t->mem,
        .offset = t->mem ? 0 : t->offset,
        .src = t->layout,
        .count = t->count,
        .dst = dst,
        .convert = convert ? dt_library_convert_block : NULL,
        .convert_ctx = &c,
        .observe = o.reporting || o.watching ? observe_block : NULL,
        .observe_ctx = &o,
        .progress = j->progress,
        .buffers = j->buffers,
        .open_ended = t->open_ended,
    };
    dtcast_status st = dt_stream_run(&sj, out, &err);
    int status = JOB_OK;
    if (st != DTCAST_OK && t->open_ended && strncmp(err.message, j->s->shown,
                                                    strlen(j->s->shown)) == 0) {
        status = FAIL_ST(r, ERR_ST(err), "%s", err.message); /* the input's own length */
        failed_at(status, r->err_out, j->s->shown, NULL);
    } else if (st != DTCAST_OK) {
        char a[32], b[32];
        status = convert ? FAIL_ST(r, st, "%s: cannot cast %s to %s: %s", what,
                                    dt_type_label(t->type, a, sizeof a),
                                    dt_type_label(r->to, b, sizeof b), err.message)
                         : FAIL_ST(r, ERR_ST(err), "%s: %s", what, err.message);
        failed_at(status, r->err_out, j->s->shown, t->name);
    }
    if (status == JOB_OK && o.reporting) {
        char *text = dt_report_text(&o.report, where ? where : t->name);
        if (!text)
            status = FAIL(r, "out of memory for the report of '%s'", t->name);
        else
            dt_job_report(&r->hooks, text);
        free(text);
    }
    if (o.nonfinite) {
        if (j->warn->tensors++ == 0) {
            snprintf(j->warn->first, sizeof j->warn->first, "%s", t->name);
            j->warn->to = r->to;
        }
        j->warn->nonfinite += o.nonfinite;
    }
    if (o.reporting)
        dt_report_free(&o.report);
    return status;
}

static dtcast_type out_type(const job *j, const src_tensor *t)
{
    return chosen(j->r, j->s, t) ? j->r->to : t->type;
}

static int single_tensor(job *j, const src_tensor **t)
{
    const dt_cast_request *r = j->r;
    size_t found = 0;
    for (size_t i = 0; i < j->s->n; i++)
        if (chosen(r, j->s, &j->s->t[i])) {
            *t = &j->s->t[i];
            found++;
        }
    if (found == 1)
        return JOB_OK;
    if (found == 0)
        return FAIL(r, "%s: no tensor matches --select/--exclude", j->s->shown);
    return USAGE(r,
                     "%s holds %zu tensors, and %s holds one: choose it with --select NAME, or "
                     "write .safetensors",
                     j->s->shown, found, r->out);
}

/* A pipe read for a length known up front (a .npy header, --shape) must end there, as a file
 * of another size is refused. */
static int pipe_ends(job *j, const src_tensor *t)
{
    dt_infile *f = t->file;
    if (!f || f->seekable || t->open_ended)
        return JOB_OK;
    uint8_t more;
    size_t got = 0;
    dt_io_error err = DT_IO_ERROR_INIT;
    if (dt_infile_peek(f, &more, 1, &got, &err) != DTCAST_OK)
        return fail_io(j->s, &err);
    if (got == 0)
        return JOB_OK;
    FAIL(j->r, "%s: the data goes on after the %llu bytes %s gives (byte %llu is one too many)",
         j->s->shown, (unsigned long long)t->file_bytes,
         j->s->kind == DT_FILE_RAW ? "--shape" : "the header", (unsigned long long)f->pos);
    j->r->err_out->offset = (int64_t)f->pos;
    return failed_at(JOB_FAIL, j->r->err_out, j->s->shown, NULL);
}

/* .npy, .pb and raw outputs: one tensor. */
static int write_single(job *j, dt_file_kind kind, dt_outfile *out, dt_outfile *data)
{
    const dt_cast_request *r = j->r;
    const src_tensor *t = NULL;
    if (single_tensor(j, &t) != JOB_OK)
        return JOB_FAIL;
    dt_io_error err = DT_IO_ERROR_INIT;
    uint8_t *head = NULL;
    size_t head_len = 0;
    /* float6: packed in a .pb (ONNX IR 14), and in a raw file with --float6-packed */
    const dt_file_format *format = dt_file_format_of(kind);
    dt_layout dst = {r->to, ((kind == DT_FILE_RAW && r->float6_packed) ||
                             (format && format->packs_float6)) &&
                                    dtcast_type_bits(r->to) == 6
                                ? DT_STORE_F6_PACKED
                                : DT_STORE_NATIVE};
    uint64_t nbytes = 0;
    if (dt_layout_bytes(&dst, t->count, &nbytes) != DTCAST_OK)
        return FAIL(r, "%s: %llu %s elements are too many", j->s->shown,
                        (unsigned long long)t->count, dtcast_type_name(r->to));
    dtcast_status st = DTCAST_OK;
    dt_outfile *payload = out;
    if (kind == DT_FILE_NPY) {
        st = dt_npy_write_header(r->to, t->ndim, t->dims, t->fortran, &head, &head_len, &dst,
                                 &err);
    } else if (kind == DT_FILE_PB) {
        const char *name = j->s->kind == DT_FILE_PB && t->name[0] ? t->name : NULL;
        int external = r->external_data == DT_EXTERNAL_ALWAYS ||
                       (r->external_data == DT_EXTERNAL_AUTO && nbytes + 4096 > PB_LIMIT);
        if (!external && nbytes + 4096 > PB_LIMIT)
            return FAIL(r, "%s: %llu bytes do not fit in one protobuf message (2 GiB); drop "
                            "--external-data never",
                            r->out, (unsigned long long)nbytes);
        if (external) {
            if (!data)
                return FAIL(r, "%s: a tensor over 2 GiB is written as ONNX external data, which "
                                "needs a file, not stdout",
                                r->out);
            const char *slash = strrchr(data->path, '/');
            st = dt_pb_write_external(r->to, t->ndim, t->dims, name, slash ? slash + 1 : data->path,
                                      0, nbytes, &head, &head_len, &err);
            payload = data;
        } else {
            st = dt_pb_write_prefix(r->to, t->ndim, t->dims, name, nbytes, &head, &head_len, &err);
        }
    }
    if (st == DTCAST_OK && head_len)
        st = dt_outfile_write(out, head, head_len, &err);
    free(head);
    if (st != DTCAST_OK)
        return FAIL_ST(r, ERR_ST(err), "%s: %s", r->out, err.message);
    if (run_tensor(j, t, 1, dst, payload, NULL) != JOB_OK)
        return JOB_FAIL;
    return pipe_ends(j, t);
}

/* Output tensor `item` (= source tensor item) of a safetensors output. */
static dtcast_status fill_tensor(void *ctx, size_t item, dt_outfile *out, uint64_t nbytes,
                                 dt_io_error *err)
{
    job *j = ctx;
    const src_tensor *t = &j->s->t[item];
    dtcast_type type = out_type(j, t);
    dt_layout dst = {type, dt_stride_bits(type) == 8 && dtcast_type_bits(type) == 6
                               ? DT_STORE_F6_PACKED
                               : DT_STORE_NATIVE};
    (void)nbytes;
    (void)err; /* the job's own record (write_checkpoint passes r->err_out) */
    if (run_tensor(j, t, chosen(j->r, j->s, t), dst, out, NULL) == JOB_OK)
        return DTCAST_OK;
    return j->r->err_out->usage ? DTCAST_ERR_INVALID_ARGUMENT : DTCAST_ERR_BAD_FILE;
}

static int write_checkpoint(job *j, dt_outfile *out, uint64_t *tensor_bytes)
{
    const dt_cast_request *r = j->r;
    source *s = j->s;
    if (!dt_st_dtype_name(r->to))
        return USAGE(r, "%s %s: safetensors cannot hold it; it holds %s",
                         r->to_flag,
                         dtcast_type_name(r->to), dt_st_dtype_list());
    dt_st_tensor *entries = calloc(s->n ? s->n : 1, sizeof *entries);
    int status = entries ? JOB_OK : FAIL_OOM(r);
    for (size_t i = 0; status == JOB_OK && i < s->n; i++) {
        src_tensor *t = &s->t[i];
        entries[i].name = t->name;
        entries[i].type = out_type(j, t);
        entries[i].ndim = t->ndim;
        memcpy(entries[i].dims, t->dims, sizeof t->dims);
        if (!dt_st_dtype_name(entries[i].type))
            status = failed_at(FAIL(r, "%s: tensor '%s' is %s, which safetensors cannot hold",
                                    s->shown, t->name, dtcast_type_name(entries[i].type)),
                               r->err_out, s->shown, t->name);
    }
    if (status != JOB_OK) {
        free(entries);
        return status;
    }
    *tensor_bytes = 0;
    dtcast_status st = dt_ckpt_write_shard(out, NULL, entries, s->n, &s->st, s->shown,
                                           fill_tensor, j, tensor_bytes, r->err_out);
    free(entries);
    if (st == DTCAST_OK)
        return JOB_OK;
    return r->err_out->usage ? JOB_USAGE : JOB_FAIL;
}

/* The data file of a TensorProto written as external data: OUT.data beside OUT. */
static int open_outputs(const dt_cast_request *r, dt_file_kind kind, dt_outfile *out,
                        dt_outfile *data, int *has_data)
{
    dt_io_error err = DT_IO_ERROR_INIT;
    *has_data = 0;
    if (dt_outfile_open(out, r->out, &err) != DTCAST_OK)
        return FAIL_ST(r, ERR_ST(err), "%s", err.message);
    if (kind == DT_FILE_PB && strcmp(r->out, "-") != 0 &&
        r->external_data != DT_EXTERNAL_NEVER) {
        char *name = malloc(strlen(r->out) + 8);
        if (!name)
            return FAIL_OOM(r);
        snprintf(name, strlen(r->out) + 8, "%s.data", r->out);
        dtcast_status st = dt_outfile_open(data, name, &err);
        free(name);
        if (st != DTCAST_OK)
            return FAIL_ST(r, ERR_ST(err), "%s", err.message);
        *has_data = 1;
    }
    return JOB_OK;
}

static uint64_t source_bytes(const source *s)
{
    uint64_t total = 0;
    for (size_t i = 0; i < s->n; i++)
        total += s->t[i].file_bytes;
    return total;
}

static void send_warning(const dt_cast_request *r, const warnings *w)
{
    if (!r->watch || r->report || w->nonfinite == 0)
        return;
    char line[512];
    dt_nonfinite_warning(line, sizeof line, w->to, w->nonfinite, w->first);
    if (w->tensors > 1)
        dt_job_warn(&r->hooks, "%s (and in %zu more tensors)", line, w->tensors - 1);
    else
        dt_job_warn(&r->hooks, "%s", line);
}

/* One input file to one output file. */
/* A checkpoint's scaled tensors (docs/quantization.md, "Layouts": codes with their block or
 * channel scales) are refused when --select/--exclude pick one of their parts: the codes alone
 * are not the values (a float8e4m3fn weight with its weight_scale cast to bfloat16 would hold
 * the codes, up to 448, where the weights are the codes times the scales), and U8 codes would be
 * copied as bytes among converted tensors. `dtcast dequantize` computes the values;
 * --raw-codes casts the codes on purpose. q[0, n) is every tensor of the checkpoint (all its
 * shards: a weight and its scale may be in two). Names that only look like a layout's (a plan
 * that does not fit) are left to the cast. */
static int refuse_scaled(const dt_cast_request *r, const char *shown, const dt_qt *q, size_t n)
{
    if (r->raw_codes || n == 0)
        return JOB_OK;
    dt_qplan plan;
    dt_io_error err;
    int status = JOB_OK;
    if (dt_qplan_make(q, n, &plan, &err) == DTCAST_OK) {
        for (size_t i = 0; i < n && status == JOB_OK; i++) {
            if (plan.role[i] == DT_QR_PLAIN || (r->select.n && !dt_glob_any(&r->select, q[i].name)) ||
                dt_glob_any(&r->exclude, q[i].name))
                continue;
            const dt_qgroup *g = &plan.groups[plan.group[i]];
            status = FAIL(r, "%s: tensor '%s' holds %s codes scaled by '%s' (%s layout): cast "
                              "would not give their values; 'dtcast dequantize' does, "
                              "--raw-codes casts the codes",
                              shown, q[g->codes].name, dtcast_type_name(q[g->codes].type),
                              q[g->scales].name, dt_qgroup_name(g));
            failed_at(status, r->err_out, shown, q[g->codes].name);
        }
    }
    dt_qplan_free(&plan);
    return status;
}

/* The tensors of a source as the layout recognition sees them (their names stay the source's). */
static int append_qt(const source *s, dt_qt **q, size_t *n)
{
    dt_qt *grown = realloc(*q, (*n + s->n + 1) * sizeof *grown);
    if (!grown)
        return FAIL_OOM(s);
    *q = grown;
    for (size_t i = 0; i < s->n; i++) {
        dt_qt *t = &grown[(*n)++];
        t->name = s->t[i].name;
        t->type = s->t[i].type;
        t->ndim = s->t[i].ndim;
        memcpy(t->dims, s->t[i].dims, sizeof t->dims);
    }
    return JOB_OK;
}

static int refuse_scaled_source(const dt_cast_request *r, const source *s)
{
    if (!s->checkpoint || r->raw_codes)
        return JOB_OK;
    dt_qt *q = NULL;
    size_t n = 0;
    int status = append_qt(s, &q, &n);
    if (status == JOB_OK)
        status = refuse_scaled(r, s->shown, q, n);
    free(q);
    return status;
}

static int cast_one(const dt_cast_request *r, const char *in, const char *outpath,
                    dt_file_kind in_kind, dt_file_kind out_kind, dt_progress *progress,
                    warnings *warn, dt_stream_buffers *buffers, dt_outfile *out,
                    dt_outfile *data, int *has_data, uint64_t *tensor_bytes)
{
    source s;
    int status = open_source(&s, r, in, in_kind);
    if (status != JOB_OK) {
        source_free(&s);
        return status;
    }
    status = refuse_scaled_source(r, &s);
    if (status != JOB_OK) {
        source_free(&s);
        return status;
    }
    dt_cast_request sub = *r;
    sub.out = outpath;
    sub.single_output = !(dt_file_format_of(out_kind) && dt_file_format_of(out_kind)->many_tensors);
    job j = {&sub, &s, progress, warn, buffers};
    if (progress->total == 0)
        progress->total = source_bytes(&s);
    status = open_outputs(&sub, out_kind, out, data, has_data);
    if (status == JOB_OK && out_kind == DT_FILE_SAFETENSORS)
        status = write_checkpoint(&j, out, tensor_bytes);
    else if (status == JOB_OK)
        status = write_single(&j, out_kind, out, *has_data ? data : NULL);
    source_free(&s);
    return status;
}

/* ---- sharded checkpoints ----------------------------------------------------------------------- */

/* In one step, every shard of the index is converted into the folder OUT and the index written
 * there. In steps (a batch engine spreading the shards over processes or machines), --shards
 * converts some shards and writes no index; --index-only, once all shards are in OUT, writes the
 * index alone. The index depends only on the input index and the converted shards' tensor bytes
 * (total_size), which --index-only reads back from the shards' headers, so the steps give the
 * same bytes as the one step. */

static char *join_path(const char *dir, size_t dir_len, const char *name)
{
    char *p = malloc(dir_len + strlen(name) + 2);
    if (p)
        snprintf(p, dir_len + strlen(name) + 2, "%.*s%s%s", (int)dir_len, dir,
                 dir_len && dir[dir_len - 1] != '/' ? "/" : "", name);
    return p;
}

static int load_index(const dt_cast_request *r, dt_st_index *ix)
{
    dt_io_error err = DT_IO_ERROR_INIT;
    if (dt_ckpt_load_index(r->in, ix, &err) != DTCAST_OK)
        return FAIL_ST(r, ERR_ST(err), "%s", err.message);
    return JOB_OK;
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static size_t shard_named(const dt_st_index *ix, const char *name)
{
    size_t i = 0;
    while (i < ix->nshards && strcmp(ix->shards[i], name) != 0)
        i++;
    return i;
}

/* One item of --shards: a shard file name of the index, else a 0-based position in the sorted
 * list of its shard names (a name is looked up first, so a shard file named "2" is that file). */
static int pick_one(const dt_cast_request *r, const dt_st_index *ix, const char **sorted,
                    const char *item, unsigned char *want)
{
    size_t i = shard_named(ix, item);
    if (i < ix->nshards) {
        want[i] = 1;
        return JOB_OK;
    }
    size_t digits = strspn(item, "0123456789");
    if (item[0] && !item[digits]) {
        unsigned long long pos = digits <= 19 ? strtoull(item, NULL, 10) : ULLONG_MAX;
        if (pos >= ix->nshards)
            return FAIL(r, "--shards: position %s is beyond the %zu shards of %s (0 to %zu)",
                            item, ix->nshards, r->in, ix->nshards - 1);
        want[shard_named(ix, sorted[pos])] = 1;
        return JOB_OK;
    }
    char hint[256] = "";
    const char *shown_hint =
        r->suggest ? r->suggest(r->suggest_ctx, item, (const char *const *)ix->shards,
                                ix->nshards, hint, sizeof hint)
                   : "";
    return FAIL(r, "--shards: '%s' is not a shard of %s%s", item, r->in, shown_hint);
}

/* --shards LIST: want[i] = 1 for the shards of ix to convert. */
static int pick_shards(const dt_cast_request *r, const dt_st_index *ix, unsigned char *want)
{
    if (ix->nshards == 0)
        return FAIL(r, "--shards: %s names no shard", r->in);
    const char **sorted = malloc(ix->nshards * sizeof *sorted);
    char *list = strdup(r->shards);
    int status = sorted && list ? JOB_OK : FAIL_OOM(r);
    if (status == JOB_OK) {
        memcpy(sorted, ix->shards, ix->nshards * sizeof *sorted);
        qsort(sorted, ix->nshards, sizeof *sorted, by_string);
    }
    for (char *item = list; status == JOB_OK && item;) {
        char *comma = strchr(item, ',');
        if (comma)
            *comma = '\0';
        if (!item[0])
            status = USAGE(r, "--shards: an empty item in '%s'", r->shards);
        else
            status = pick_one(r, ix, sorted, item, want);
        item = comma ? comma + 1 : NULL;
    }
    free(list);
    free(sorted);
    return status;
}

/* Opens out at OUT/<the index's own name> and writes the index for the converted shards. */
static int write_index(const dt_cast_request *r, const dt_st_index *ix, uint64_t total_size,
                       dt_outfile *out)
{
    dt_io_error err = DT_IO_ERROR_INIT;
    const char *slash = strrchr(r->in, '/');
    char *path = dt_path_join(r->out, slash ? slash + 1 : r->in);
    if (!path)
        return FAIL_OOM(r);
    dtcast_status st = dt_ckpt_write_index(out, path, ix, NULL, 0, total_size, r->in, &err);
    free(path);
    return st == DTCAST_OK ? JOB_OK : FAIL_ST(r, ERR_ST(err), "%s", err.message);
}

static int by_tensor_name(const void *a, const void *b)
{
    return strcmp(((const dt_st_tensor *)a)->name, ((const dt_st_tensor *)b)->name);
}

/* --index-only: the tensor bytes of the converted shard `shard` at path (what the one-step
 * conversion adds to total_size), after checking that it is a valid safetensors file holding
 * every tensor the index puts in it. */
static int shard_bytes(const dt_cast_request *r, const dt_st_index *ix, size_t shard,
                       const char *path, uint64_t *bytes)
{
    struct stat sb;
    if (stat(path, &sb) != 0 && errno == ENOENT)
        return FAIL_ST(r, DTCAST_ERR_IO, "--index-only: shard %s is missing: convert every shard first "
                        "(--shards)",
                        path);
    dt_io_error err = DT_IO_ERROR_INIT;
    dt_infile f;
    dt_st_header h;
    memset(&h, 0, sizeof h);
    if (dt_infile_open(&f, path, &err) != DTCAST_OK)
        return FAIL_ST(r, ERR_ST(err), "%s", err.message);
    int status = JOB_OK;
    if (dt_st_read_header(&f, &h, &err) != DTCAST_OK)
        status = strstr(err.message, path) ? FAIL_ST(r, ERR_ST(err), "%s", err.message)
                                            : FAIL_ST(r, ERR_ST(err), "%s: %s", path, err.message);
    dt_infile_close(&f);
    *bytes = 0;
    for (size_t i = 0; status == JOB_OK && i < h.ntensors; i++)
        *bytes += h.tensors[i].end - h.tensors[i].begin;
    if (status == JOB_OK)
        qsort(h.tensors, h.ntensors, sizeof *h.tensors, by_tensor_name);
    for (size_t i = 0; status == JOB_OK && i < ix->nentries; i++) {
        dt_st_tensor key = {.name = ix->entries[i].name};
        if (ix->entries[i].shard == shard &&
            !bsearch(&key, h.tensors, h.ntensors, sizeof *h.tensors, by_tensor_name))
            status = FAIL(r, "--index-only: %s has no tensor '%s', which the index puts there "
                              "(a shard of another checkpoint?)",
                              path, ix->entries[i].name);
    }
    dt_st_header_free(&h);
    return status;
}

static int index_only(const dt_cast_request *r, const dt_st_index *ix, dt_outfile *out)
{
    struct stat sb;
    if (stat(r->out, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return FAIL_ST(r, DTCAST_ERR_IO, "--index-only: OUT '%s' is not a folder (the folder the shards were "
                        "converted into)",
                        r->out);
    uint64_t total_size = 0;
    for (size_t i = 0; i < ix->nshards; i++) {
        char *path = join_path(r->out, strlen(r->out), ix->shards[i]);
        uint64_t bytes = 0;
        int status = path ? shard_bytes(r, ix, i, path, &bytes) : FAIL_OOM(r);
        free(path);
        if (status != JOB_OK)
            return status;
        total_size += bytes;
    }
    return write_index(r, ix, total_size, out);
}

/* Converts the shards of ix that want marks into OUT (outs[i] for shard i, not committed);
 * adds their tensor bytes to *total_size. */
static int convert_shards(const dt_cast_request *r, const dt_st_index *ix,
                          const unsigned char *want, dt_outfile *outs, uint64_t *total_size,
                          dt_progress *progress, warnings *warn, dt_stream_buffers *buffers)
{
    struct stat sb;
    const char *slash = strrchr(r->in, '/');
    size_t in_dir = slash ? (size_t)(slash - r->in) + 1 : 0;
    /* Progress over the shards converted: the sum of their sizes. */
    for (size_t i = 0; i < ix->nshards; i++) {
        char *p = want[i] ? join_path(r->in, in_dir, ix->shards[i]) : NULL;
        if (p && stat(p, &sb) == 0)
            progress->total += (uint64_t)sb.st_size;
        free(p);
    }
    int status = JOB_OK;
    for (size_t i = 0; status == JOB_OK && i < ix->nshards; i++) {
        if (!want[i])
            continue;
        char *in = join_path(r->in, in_dir, ix->shards[i]);
        char *out = join_path(r->out, strlen(r->out), ix->shards[i]);
        dt_outfile unused;
        int has_data = 0;
        uint64_t bytes = 0;
        memset(&unused, 0, sizeof unused);
        if (!in || !out)
            status = FAIL_OOM(r);
        else
            status = cast_one(r, in, out, DT_FILE_SAFETENSORS, DT_FILE_SAFETENSORS, progress, warn,
                              buffers, &outs[i], &unused, &has_data, &bytes);
        *total_size += bytes;
        free(in);
        free(out);
    }
    return status;
}

/* The scaled-tensor refusal over every shard's header (a weight and its scale may be in two). */
static int refuse_scaled_shards(const dt_cast_request *r, const dt_st_index *ix)
{
    if (r->raw_codes)
        return JOB_OK;
    const char *slash = strrchr(r->in, '/');
    size_t in_dir = slash ? (size_t)(slash - r->in) + 1 : 0;
    source *src = calloc(ix->nshards + 1, sizeof *src);
    dt_qt *q = NULL;
    size_t n = 0, opened = 0;
    int status = src ? JOB_OK : FAIL_OOM(r);
    for (size_t i = 0; status == JOB_OK && i < ix->nshards; i++) {
        char *in = join_path(r->in, in_dir, ix->shards[i]);
        if (!in) {
            status = FAIL_OOM(r);
            break;
        }
        status = open_source(&src[i], r, in, DT_FILE_SAFETENSORS);
        opened = i + 1;
        if (status == JOB_OK)
            status = append_qt(&src[i], &q, &n);
        free(in);
    }
    if (status == JOB_OK)
        status = refuse_scaled(r, r->in, q, n);
    for (size_t i = 0; i < opened; i++)
        source_free(&src[i]);
    free(src);
    free(q);
    return status;
}

static int cast_sharded(const dt_cast_request *r, dt_progress *progress, warnings *warn,
                        dt_stream_buffers *buffers)
{
    dt_st_index ix;
    int status = load_index(r, &ix);
    if (status != JOB_OK) {
        dt_st_index_free(&ix);
        return status;
    }
    /* outs[nshards] is the index. Every file is written to a temporary one; all are renamed
     * only when all succeeded. */
    dt_outfile *outs = calloc(ix.nshards + 1, sizeof *outs);
    unsigned char *want = calloc(ix.nshards + 1, 1);
    struct stat sb;
    uint64_t total_size = 0;
    if (!outs || !want)
        status = FAIL_OOM(r);
    else if (strcmp(r->out, "-") == 0)
        status = USAGE(r, "a sharded checkpoint is written to a folder, not stdout");
    if (status == JOB_OK && r->index_only) {
        status = index_only(r, &ix, &outs[ix.nshards]);
    } else if (status == JOB_OK) {
        /* Before anything is written: no scaled tensor is cast as values. Another process may
         * create the folder at the same time (--shards). */
        status = refuse_scaled_shards(r, &ix);
        if (status == JOB_OK && mkdir(r->out, 0777) != 0 && errno != EEXIST)
            status = FAIL_ST(r, DTCAST_ERR_IO, "cannot create the folder '%s': %s", r->out, strerror(errno));
        else if (status == JOB_OK && (stat(r->out, &sb) != 0 || !S_ISDIR(sb.st_mode)))
            status = USAGE(r, "OUT '%s' must be a folder for a sharded checkpoint",
                               r->out);
        else if (status == JOB_OK && r->shards)
            status = pick_shards(r, &ix, want);
        else if (status == JOB_OK)
            memset(want, 1, ix.nshards);
        if (status == JOB_OK)
            status = convert_shards(r, &ix, want, outs, &total_size, progress, warn, buffers);
        if (status == JOB_OK && !r->shards)
            status = write_index(r, &ix, total_size, &outs[ix.nshards]);
    }
    dt_io_error err = DT_IO_ERROR_INIT;
    for (size_t i = 0; status == JOB_OK && i <= ix.nshards; i++)
        if (dt_outfile_commit(&outs[i], &err) != DTCAST_OK)
            status = FAIL_ST(r, ERR_ST(err), "%s", err.message);
    for (size_t i = 0; outs && i <= ix.nshards; i++)
        dt_outfile_abort(&outs[i]);
    free(outs);
    free(want);
    dt_st_index_free(&ix);
    return status;
}

/* ---- the command's file job ----------------------------------------------------------------------- */

/* Strings (a string source or target) have no fixed size: the tensor is read, converted and
 * written whole (whole.h), from and to .npy, .pb or raw files. */
static int cast_whole(dt_cast_request *r)
{
    const dt_file_format *fi = dt_file_format_of(r->in_kind), *fo = dt_file_format_of(r->out_kind);
    if ((fi && fi->many_tensors) || !fo || fo->many_tensors)
        return FAIL(r, "%s: string tensors convert from and to .npy, .pb or raw files, not "
                       "checkpoints",
                    fi && fi->many_tensors ? r->in : r->out);
    if (r->float6_packed && (dtcast_type_bits(r->to) == 6 || dtcast_type_bits(r->input.from) == 6))
        return USAGE(r, "--float6-packed: strings convert in memory, one float6 per byte; "
                        "convert to or from a one-per-byte file first");
    dt_tensor src, dst;
    dt_io_error err = DT_IO_ERROR_INIT;
    if (dt_tensor_load(r->in, r->in_kind, &r->input, &src, &err) != DTCAST_OK) {
        *r->err_out = err;
        return err.usage ? JOB_USAGE : JOB_FAIL;
    }
    const char *what = strcmp(r->in, "-") == 0 ? "<stdin>" : r->in;
    dtcast_error error;
    memset(&error, 0, sizeof error);
    dtcast_status st = dt_tensor_convert(&r->conversion, &src, r->to, &dst, &error);
    int status = JOB_OK;
    if (st != DTCAST_OK) {
        status = refused_pair(r, src.type, what, NULL, st, &error);
    } else {
        if (dt_tensor_save(r->out, r->out_kind, &dst, &err) != DTCAST_OK) {
            *r->err_out = err;
            status = err.usage ? JOB_USAGE : JOB_FAIL;
        }
        dt_tensor_free_converted(&dst);
    }
    dt_tensor_free(&src);
    return status;
}

static int cast_files(dt_cast_request *r)
{
    dt_file_kind in_kind = r->in_kind, out_kind = r->out_kind;
    /* A sharded checkpoint goes to a folder: OUT has no kind of its own. */
    if (in_kind == DT_FILE_SAFETENSORS_INDEX)
        out_kind = DT_FILE_UNKNOWN;
    dt_progress progress;
    dt_progress_init(&progress, 0, r->hooks.progress, r->hooks.progress_ctx);
    warnings warn;
    memset(&warn, 0, sizeof warn);
    dt_stream_buffers buffers;
    memset(&buffers, 0, sizeof buffers);
    int status;
    if ((r->to == DTCAST_STRING || r->input.from == DTCAST_STRING) && !r->shards &&
        !r->index_only && in_kind != DT_FILE_SAFETENSORS_INDEX) {
        status = cast_whole(r);
    } else if (in_kind != DT_FILE_ONNX_MODEL && out_kind != DT_FILE_ONNX_MODEL &&
               (r->onnx_graph || r->keep_io_types || r->block_ops.n || r->block_nodes.n ||
                r->onnx_runtime || r->select_ops.n || r->exclude_ops.n)) {
        status = USAGE(r, "--mode, --keep-io-types, --block-op, --block-node, --runtime, "
                          "--select-op and --exclude-op apply to ONNX models (.onnx)");
    } else if (in_kind == DT_FILE_ONNX_MODEL || out_kind == DT_FILE_ONNX_MODEL) {
        if (in_kind != out_kind)
            status = USAGE(r, "an ONNX model (.onnx) is converted into an ONNX model: give "
                              "IN and OUT as .onnx files");
        else if (dt_onnx_model_cast(r, &progress, &buffers, r->err_out) == DTCAST_OK)
            status = JOB_OK;
        else
            status = r->err_out->usage ? JOB_USAGE : JOB_FAIL;
    } else if (in_kind == DT_FILE_SAFETENSORS_INDEX) {
        status = cast_sharded(r, &progress, &warn, &buffers);
    } else if (out_kind == DT_FILE_SAFETENSORS_INDEX) {
        status = USAGE(r, "OUT: a sharded checkpoint is written as a folder; give the "
                                   "input's *.safetensors.index.json and a folder");
    } else {
        dt_outfile out, data;
        memset(&out, 0, sizeof out);
        memset(&data, 0, sizeof data);
        int has_data = 0;
        uint64_t bytes = 0;
        dt_io_error err = DT_IO_ERROR_INIT;
        status = cast_one(r, r->in, r->out, in_kind, out_kind, &progress, &warn, &buffers, &out,
                          &data, &has_data, &bytes);
        /* The data file of external data only when it was used. */
        if (status == JOB_OK && has_data && data.written == 0) {
            dt_outfile_abort(&data);
            has_data = 0;
        }
        if (status == JOB_OK && has_data && dt_outfile_commit(&data, &err) != DTCAST_OK)
            status = FAIL_ST(r, ERR_ST(err), "%s", err.message);
        if (status == JOB_OK && dt_outfile_commit(&out, &err) != DTCAST_OK)
            status = FAIL_ST(r, ERR_ST(err), "%s", err.message);
        dt_outfile_abort(&data);
        dt_outfile_abort(&out);
        if (status == JOB_WHOLE) /* a string .npy or .pb */
            status = cast_whole(r);
    }
    dt_stream_buffers_free(&buffers);
    if (status == JOB_OK)
        send_warning(r, &warn);
    return status;
}

dtcast_status dt_cast_files(dt_cast_request *r, dt_io_error *err)
{
    dt_io_error local = DT_IO_ERROR_INIT;
    r->err_out = err ? err : &local;
    int status = cast_files(r);
    r->err_out = NULL;
    return job_status(status, err ? err : &local);
}
