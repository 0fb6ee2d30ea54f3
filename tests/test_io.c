/* Tests of the file formats: .npy, ONNX TensorProto and ModelProto, whole-file reading and
 * writing. Fixtures are built as bytes here; the ONNX conformance data is read from
 * tests/conformance (the ONNX Cast/Q-DQ node test data, copied into the repository). */
#include "check.h"
#include "files/npy.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONFORMANCE "tests/conformance/onnx" /* the in-repo copy; tests run from the top */

/* ---- byte builders ------------------------------------------------------------------------- */

typedef struct bytes {
    uint8_t b[4096];
    size_t n;
} bytes;

static void put(bytes *o, const void *p, size_t n)
{
    if (n && o->n + n <= sizeof o->b) {
        memcpy(o->b + o->n, p, n);
        o->n += n;
    }
}

static void put_byte(bytes *o, uint8_t v) { put(o, &v, 1); }

static void put_varint(bytes *o, uint64_t v)
{
    while (v >= 0x80) {
        put_byte(o, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    put_byte(o, (uint8_t)v);
}

static void put_key(bytes *o, unsigned field, unsigned wt) { put_varint(o, field << 3 | wt); }

static void put_field_varint(bytes *o, unsigned field, uint64_t v)
{
    put_key(o, field, 0);
    put_varint(o, v);
}

static void put_field_bytes(bytes *o, unsigned field, const void *p, size_t n)
{
    put_key(o, field, 2);
    put_varint(o, n);
    put(o, p, n);
}

static void put_field_fixed32(bytes *o, unsigned field, uint32_t v)
{
    put_key(o, field, 5);
    for (int i = 0; i < 4; i++)
        put_byte(o, (uint8_t)(v >> (8 * i)));
}

/* An .npy file: version major.0, the dict text, then data. */
static void npy_file(bytes *o, int major, const char *dict, const void *data, size_t n)
{
    o->n = 0;
    put(o, "\x93NUMPY", 6);
    put_byte(o, (uint8_t)major);
    put_byte(o, 0);
    size_t hlen = strlen(dict);
    for (int i = 0; i < (major == 1 ? 2 : 4); i++)
        put_byte(o, (uint8_t)(hlen >> (8 * i)));
    put(o, dict, hlen);
    put(o, data, n);
}

static bool is_empty(const dt_tensor *t)
{
    return t->data == NULL && t->name == NULL && t->count == 0 && t->ndim == 0 &&
           t->type == DTCAST_UNDEFINED;
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* ---- the tensor record ---------------------------------------------------------------------- */

static void test_tensor(void)
{
    dt_tensor t;
    dt_io_error err;
    dt_tensor_init(&t);
    CHECK(is_empty(&t), "tensor.init", "not empty");
    int64_t dims[2] = {3, 5};
    CHECK(dt_tensor_set_shape(&t, 2, dims, "test", &err) == DTCAST_OK && t.count == 15,
          "tensor.shape", "count %zu", t.count);
    t.type = DTCAST_INT4;
    CHECK(dt_tensor_alloc(&t, &err) == DTCAST_OK && t.nbytes == 8, "tensor.alloc.int4",
          "nbytes %zu", t.nbytes);
    dt_tensor_free(&t);
    CHECK(is_empty(&t), "tensor.free", "not empty");

    t.type = DTCAST_STRING;
    t.count = 3;
    CHECK(dt_tensor_alloc(&t, &err) == DTCAST_OK && ((char **)t.data)[2] == NULL,
          "tensor.alloc.string", "%s", err.message);
    ((char **)t.data)[1] = malloc(4);
    dt_tensor_free(&t); /* ASan reports the string if it leaks */

    int64_t neg[2] = {2, -1};
    CHECK(dt_tensor_set_shape(&t, 2, neg, "test", &err) == DTCAST_ERR_BAD_FILE &&
              strstr(err.message, "negative"),
          "tensor.shape.negative", "%s", err.message);
    int64_t big[3] = {INT64_MAX, INT64_MAX, 4};
    CHECK(dt_tensor_set_shape(&t, 3, big, "test", &err) == DTCAST_ERR_SIZE_OVERFLOW,
          "tensor.shape.overflow", "%s", err.message);
    int64_t zero[3] = {INT64_MAX, INT64_MAX, 0};
    CHECK(dt_tensor_set_shape(&t, 3, zero, "test", &err) == DTCAST_ERR_SIZE_OVERFLOW,
          "tensor.shape.overflow_before_zero", "%s", err.message);
    CHECK(dt_tensor_set_shape(&t, 33, dims, "test", &err) == DTCAST_ERR_BAD_FILE,
          "tensor.shape.too_many_dims", "%s", err.message);
}

/* ---- files -------------------------------------------------------------------------------- */

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void test_files(void)
{
    dt_io_error err;
    char dir[] = "/tmp/dtcast_test_io_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "file.mkdtemp", "cannot create a temporary directory");
        return;
    }
    char path[256], missing[256];
    snprintf(path, sizeof path, "%s/out.bin", dir);
    snprintf(missing, sizeof missing, "%s/no/such/dir/out.bin", dir);

    const char text[] = "hello, tensors";
    CHECK(dt_write_file(path, text, sizeof text, &err) == DTCAST_OK, "file.write", "%s",
          err.message);
    uint8_t *buf = NULL;
    size_t len = 0;
    CHECK(dt_read_file(path, &buf, &len, &err) == DTCAST_OK && len == sizeof text &&
              memcmp(buf, text, len) == 0,
          "file.read", "%s", err.message);
    free(buf);
    CHECK(dt_write_file(path, "", 0, &err) == DTCAST_OK, "file.write.empty", "%s", err.message);
    CHECK(dt_read_file(path, &buf, &len, &err) == DTCAST_OK && len == 0 && buf,
          "file.read.empty", "%s", err.message);
    free(buf);
    CHECK(count_entries(dir) == 1, "file.no_temp_left", "%d entries", count_entries(dir));

    CHECK(dt_write_file(missing, text, sizeof text, &err) == DTCAST_ERR_IO &&
              strstr(err.message, "cannot create"),
          "file.write.missing_dir", "%s", err.message);
    CHECK(dt_read_file(missing, &buf, &len, &err) == DTCAST_ERR_IO && buf == NULL &&
              strstr(err.message, "cannot open"),
          "file.read.missing", "%s", err.message);
    CHECK(dt_read_file(dir, &buf, &len, &err) == DTCAST_ERR_IO && buf == NULL,
          "file.read.directory", "%s", err.message);

    unlink(path);
    rmdir(dir);

    CHECK(dt_file_kind_of("a/b.npy") == DT_FILE_NPY && dt_file_kind_of("X.NPY") == DT_FILE_NPY &&
              dt_file_kind_of("input_0.pb") == DT_FILE_PB && dt_file_kind_of("-") == DT_FILE_RAW &&
              dt_file_kind_of("w.raw") == DT_FILE_RAW && dt_file_kind_of("w.bin") == DT_FILE_RAW &&
              dt_file_kind_of("npy") == DT_FILE_UNKNOWN &&
              dt_file_kind_of("m.safetensors") == DT_FILE_SAFETENSORS &&
              dt_file_kind_of("m.safetensors.index.json") == DT_FILE_SAFETENSORS_INDEX &&
              dt_file_kind_of("m.gguf") == DT_FILE_UNKNOWN &&
              dt_file_kind_of("m.onnx") == DT_FILE_ONNX_MODEL,
          "file.kind", "wrong kind");
    char why[256];
    CHECK(strstr(dt_file_kind_refusal("m.pt", why, sizeof why), "PyTorch checkpoint") &&
              strstr(dt_file_kind_refusal("a.xyz", why, sizeof why), "unknown file kind '.xyz'"),
          "file.kind_refusal", "%s", why);
}

/* ---- .npy ----------------------------------------------------------------------------------- */

static dtcast_status npy(const bytes *f, dtcast_type hint, dt_tensor *t, dt_io_error *err)
{
    return dt_npy_parse(f->b, f->n, hint, t, err);
}

static void test_npy_read(void)
{
    bytes f;
    dt_tensor t;
    dt_io_error err;

    float v[6] = {1, 2, 3, 4, 5, 6};
    npy_file(&f, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", v, 24);
    CHECK(npy(&f, DTCAST_UNDEFINED, &t, &err) == DTCAST_OK && t.type == DTCAST_FLOAT32 &&
              t.ndim == 2 && t.dims[0] == 2 && t.dims[1] == 3 && t.count == 6 &&
              memcmp(t.data, v, 24) == 0,
          "npy.read.f4", "%s", err.message);
    dt_tensor_free(&t);

    /* Fortran order: the file holds columns first. */
    float cols[6] = {1, 4, 2, 5, 3, 6};
    npy_file(&f, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", cols, 24);
    CHECK(npy(&f, DTCAST_UNDEFINED, &t, &err) == DTCAST_OK && memcmp(t.data, v, 24) == 0,
          "npy.read.fortran", "%s", err.message);
    dt_tensor_free(&t);

    uint8_t be[8] = {0x00, 0x00, 0x01, 0x02, 0xFF, 0xFF, 0xFF, 0xFE};
    npy_file(&f, 2, "{\"descr\": \">i4\", \"fortran_order\": False, \"shape\": (2,)}", be, 8);
    int32_t want_i[2] = {0x0102, -2};
    CHECK(npy(&f, DTCAST_UNDEFINED, &t, &err) == DTCAST_OK && t.type == DTCAST_INT32 &&
              memcmp(t.data, want_i, 8) == 0,
          "npy.read.big_endian_v2", "%s", err.message);
    dt_tensor_free(&t);

    /* Big-endian complex: each part is swapped on its own. */
    uint8_t bec[8] = {0x3F, 0x80, 0, 0, 0xC0, 0, 0, 0};
    npy_file(&f, 3, "{'descr': '>c8', 'fortran_order': False, 'shape': (), }", bec, 8);
    float want_c[2] = {1.0f, -2.0f};
    CHECK(npy(&f, DTCAST_UNDEFINED, &t, &err) == DTCAST_OK && t.type == DTCAST_COMPLEX64 &&
              t.ndim == 0 && t.count == 1 && memcmp(t.data, want_c, 8) == 0,
          "npy.read.complex_big_endian_scalar_v3", "%s", err.message);
    dt_tensor_free(&t);

    npy_file(&f, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (0, 3), }", NULL, 0);
    CHECK(npy(&f, DTCAST_UNDEFINED, &t, &err) == DTCAST_OK && t.type == DTCAST_BOOL &&
              t.count == 0 && t.data != NULL,
          "npy.read.empty", "%s", err.message);
    dt_tensor_free(&t);

    uint8_t raw[3] = {0x21, 0x43, 0x05};
    npy_file(&f, 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", raw, 3);
    CHECK(npy(&f, DTCAST_UNDEFINED, &t, &err) == DTCAST_OK && t.type == DTCAST_UINT8 &&
              t.count == 3,
          "npy.read.u1", "%s", err.message);
    dt_tensor_free(&t);
    /* A sub-byte type is one element per byte: 0x21 is not an int4 code. */
    CHECK(npy(&f, DTCAST_INT4, &t, &err) == DTCAST_ERR_BAD_FILE && is_empty(&t) &&
              strstr(err.message, "element 0 is byte 0x21"),
          "npy.read.u1_as_int4_not_a_code", "%s", err.message);
    dt_tensor_free(&t);
    uint8_t codes[3] = {0x07, 0xF8, 0x0F}; /* 7, -8 sign-extended (as ml_dtypes), -1 */
    npy_file(&f, 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", codes, 3);
    CHECK(npy(&f, DTCAST_INT4, &t, &err) == DTCAST_OK && t.type == DTCAST_INT4 && t.count == 3 &&
              t.ndim == 1 && t.dims[0] == 3 && t.nbytes == 2 &&
              ((uint8_t *)t.data)[0] == 0x87 && ((uint8_t *)t.data)[1] == 0x0F,
          "npy.read.u1_as_int4", "%s", err.message);
    dt_tensor_free(&t);
    CHECK(npy(&f, DTCAST_UINT4, &t, &err) == DTCAST_ERR_BAD_FILE &&
              strstr(err.message, "element 1 is byte 0xf8"),
          "npy.read.u1_as_uint4_no_sign_extension", "%s", err.message);
    dt_tensor_free(&t);
    npy_file(&f, 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", raw, 3);
    CHECK(npy(&f, DTCAST_FLOAT8E4M3FN, &t, &err) == DTCAST_OK &&
              t.type == DTCAST_FLOAT8E4M3FN && t.count == 3 && t.dims[0] == 3,
          "npy.read.u1_as_float8", "%s", err.message);
    dt_tensor_free(&t);
    CHECK(npy(&f, DTCAST_BFLOAT16, &t, &err) == DTCAST_ERR_BAD_FILE && is_empty(&t),
          "npy.read.u1_as_bfloat16_odd", "%s", err.message);
    uint8_t bf[8] = {0x80, 0x3F, 0, 0x40, 0, 0, 0, 0};
    npy_file(&f, 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 4), }", bf, 8);
    CHECK(npy(&f, DTCAST_BFLOAT16, &t, &err) == DTCAST_OK && t.type == DTCAST_BFLOAT16 &&
              t.ndim == 2 && t.dims[0] == 2 && t.dims[1] == 2 && t.count == 4,
          "npy.read.u1_as_bfloat16", "%s", err.message);
    dt_tensor_free(&t);

    npy_file(&f, 1, "{'descr': '<V2', 'fortran_order': False, 'shape': (2, 2), }", bf, 8);
    CHECK(npy(&f, DTCAST_BFLOAT16, &t, &err) == DTCAST_OK && t.count == 4 && t.dims[1] == 2,
          "npy.read.void_as_bfloat16", "%s", err.message);
    dt_tensor_free(&t);
    CHECK(npy(&f, DTCAST_UNDEFINED, &t, &err) == DTCAST_ERR_BAD_FILE && is_empty(&t),
          "npy.read.void_needs_hint", "%s", err.message);

    /* ml_dtypes names: bfloat16 as is, int4 one element per byte (packed on reading). */
    npy_file(&f, 1, "{'descr': 'bfloat16', 'fortran_order': False, 'shape': (4,), }", bf, 8);
    CHECK(npy(&f, DTCAST_UNDEFINED, &t, &err) == DTCAST_OK && t.type == DTCAST_BFLOAT16 &&
              t.count == 4,
          "npy.read.named_bfloat16", "%s", err.message);
    dt_tensor_free(&t);
    npy_file(&f, 1, "{'descr': 'i8', 'fortran_order': False, 'shape': (1,), }", bf, 8);
    CHECK(npy(&f, DTCAST_UNDEFINED, &t, &err) == DTCAST_OK && t.type == DTCAST_INT64,
          "npy.read.bare_typestr_is_numpy", "%s", err.message);
    dt_tensor_free(&t);
    uint8_t i4[3] = {0x01, 0x0F, 0x07};
    npy_file(&f, 1, "{'descr': 'int4', 'fortran_order': False, 'shape': (3,), }", i4, 3);
    CHECK(npy(&f, DTCAST_UNDEFINED, &t, &err) == DTCAST_OK && t.type == DTCAST_INT4 &&
              t.nbytes == 2 && ((uint8_t *)t.data)[0] == 0xF1 && ((uint8_t *)t.data)[1] == 0x07,
          "npy.read.named_int4", "%s", err.message);
    dt_tensor_free(&t);

    /* Strings: UTF-32 and bytes, trailing NULs dropped. */
    uint32_t u[4] = {'h', 0xE9, 0x1F600, 0};
    npy_file(&f, 1, "{'descr': '<U2', 'fortran_order': False, 'shape': (2,), }", u, 16);
    CHECK(npy(&f, DTCAST_UNDEFINED, &t, &err) == DTCAST_OK && t.type == DTCAST_STRING &&
              strcmp(((char **)t.data)[0], "h\xC3\xA9") == 0 &&
              strcmp(((char **)t.data)[1], "\xF0\x9F\x98\x80") == 0,
          "npy.read.unicode", "%s", err.message);
    dt_tensor_free(&t);
    npy_file(&f, 1, "{'descr': '|S3', 'fortran_order': False, 'shape': (2,), }", "ab\0xyz", 6);
    CHECK(npy(&f, DTCAST_UNDEFINED, &t, &err) == DTCAST_OK &&
              strcmp(((char **)t.data)[0], "ab") == 0 && strcmp(((char **)t.data)[1], "xyz") == 0,
          "npy.read.bytes_strings", "%s", err.message);
    dt_tensor_free(&t);
    uint32_t bad_cp[1] = {0xD800};
    npy_file(&f, 1, "{'descr': '<U1', 'fortran_order': False, 'shape': (1,), }", bad_cp, 4);
    CHECK(npy(&f, DTCAST_UNDEFINED, &t, &err) == DTCAST_ERR_BAD_FILE && is_empty(&t),
          "npy.read.bad_code_point", "%s", err.message);
}

static void expect_npy_error(const char *name, const bytes *f, dtcast_status want,
                             const char *text)
{
    dt_tensor t;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = npy(f, DTCAST_UNDEFINED, &t, &err);
    CHECK(st == want && strstr(err.message, text) && is_empty(&t), name, "status %d: %s", st,
          err.message);
}

static void test_npy_errors(void)
{
    bytes f;
    float v[4] = {0};
    npy_file(&f, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", v, 16);
    bytes cut = f;
    f.b[8] = 0x90, f.b[9] = 0x01; /* header length 400 */
    expect_npy_error("npy.err.header_length", &f, DTCAST_ERR_BAD_FILE,
                     "header length 400 exceeds file size");
    cut.n -= 1;
    expect_npy_error("npy.err.short_data", &cut, DTCAST_ERR_BAD_FILE, "data is 15 bytes");
    f = cut;
    f.b[0] = 'X';
    expect_npy_error("npy.err.magic", &f, DTCAST_ERR_BAD_FILE, "magic");
    f.n = 7;
    memcpy(f.b, "\x93NUMPY\x01", 7);
    expect_npy_error("npy.err.truncated_preamble", &f, DTCAST_ERR_BAD_FILE, "preamble");
    npy_file(&f, 4, "{}", NULL, 0);
    expect_npy_error("npy.err.version", &f, DTCAST_ERR_BAD_FILE, "version 4.0");

    static const struct {
        const char *name, *dict, *text;
        dtcast_status st;
    } cases[] = {
        {"npy.err.dtype", "{'descr': '<f3', 'fortran_order': False, 'shape': (4,), }",
         "unsupported dtype '<f3'", DTCAST_ERR_BAD_FILE},
        {"npy.err.object", "{'descr': '|O', 'fortran_order': False, 'shape': (4,), }",
         "object arrays", DTCAST_ERR_BAD_FILE},
        {"npy.err.structured", "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,)}",
         "structured", DTCAST_ERR_BAD_FILE},
        {"npy.err.missing_key", "{'descr': '<f4', 'shape': (4,), }", "missing",
         DTCAST_ERR_BAD_FILE},
        {"npy.err.unknown_key", "{'descr': '<f4', 'x': 1, 'shape': (4,), }", "unknown key",
         DTCAST_ERR_BAD_FILE},
        {"npy.err.shape", "{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }",
         "non-negative integer", DTCAST_ERR_BAD_FILE},
        {"npy.err.unterminated", "{'descr': '<f4", "unterminated", DTCAST_ERR_BAD_FILE},
        {"npy.err.trailing", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,)} x",
         "after the dict", DTCAST_ERR_BAD_FILE},
        {"npy.err.dim_too_large",
         "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
         "too large", DTCAST_ERR_BAD_FILE},
        {"npy.err.overflow",
         "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296)}",
         "overflow", DTCAST_ERR_SIZE_OVERFLOW},
        {"npy.err.items_overflow",
         "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,)}",
         "overflow", DTCAST_ERR_SIZE_OVERFLOW},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        npy_file(&f, 1, cases[i].dict, v, 16);
        expect_npy_error(cases[i].name, &f, cases[i].st, cases[i].text);
    }
    expect_npy_error("npy.err.null", &(bytes){.n = 0}, DTCAST_ERR_BAD_FILE, "magic");
}

/* Serializes t, checks the descr text, parses it back with hint and compares. */
static void npy_round_trip(const char *name, const dt_tensor *t, const char *descr,
                           dtcast_type hint)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    dt_io_error err = DT_IO_ERROR_INIT;
    dt_tensor back;
    dtcast_status st = dt_npy_serialize(t, &buf, &len, &err);
    if (!CHECK(st == DTCAST_OK, name, "serialize: %s", err.message))
        return;
    bool aligned = len >= 10 && (10 + (size_t)(buf[8] | buf[9] << 8)) % 64 == 0;
    bool has_descr = strstr((const char *)buf + 10, descr) != NULL;
    st = dt_npy_parse(buf, len, hint, &back, &err);
    bool same = st == DTCAST_OK && back.type == t->type && back.count == t->count &&
                back.nbytes == t->nbytes &&
                (t->type == DTCAST_STRING || memcmp(back.data, t->data, t->nbytes) == 0);
    for (size_t i = 0; same && t->type == DTCAST_STRING && i < t->count; i++)
        same = strcmp(((char **)back.data)[i], ((char **)t->data)[i]) == 0;
    CHECK(aligned && has_descr && same, name, "aligned %d descr %d same %d: %s", aligned,
          has_descr, same, err.message);
    dt_tensor_free(&back);
    free(buf);
}

static void make_tensor(dt_tensor *t, dtcast_type type, int ndim, const int64_t *dims,
                        const void *data)
{
    dt_io_error err;
    dt_tensor_init(t);
    dt_tensor_set_shape(t, ndim, dims, "test", &err);
    t->type = type;
    dt_tensor_alloc(t, &err);
    if (data)
        memcpy(t->data, data, t->nbytes);
}

static void test_npy_write(void)
{
    dt_tensor t;
    int64_t d23[2] = {2, 3}, d5[1] = {5}, d3[1] = {3};
    double dv[6] = {1.5, -2, 0, 1e300, -0.0, 3};
    make_tensor(&t, DTCAST_FLOAT64, 2, d23, dv);
    npy_round_trip("npy.write.f8", &t, "'descr': '<f8', 'fortran_order': False, 'shape': (2, 3)",
                   DTCAST_UNDEFINED);
    dt_tensor_free(&t);

    make_tensor(&t, DTCAST_INT64, 1, d3, (int64_t[]){-1, 0, INT64_MAX});
    npy_round_trip("npy.write.i8", &t, "'shape': (3,)", DTCAST_UNDEFINED);
    dt_tensor_free(&t);

    make_tensor(&t, DTCAST_COMPLEX128, 0, NULL, (double[]){1, 2});
    npy_round_trip("npy.write.c16_scalar", &t, "'descr': '<c16', 'fortran_order': False, "
                   "'shape': ()", DTCAST_UNDEFINED);
    dt_tensor_free(&t);

    make_tensor(&t, DTCAST_BOOL, 1, d3, (uint8_t[]){1, 0, 1});
    npy_round_trip("npy.write.bool", &t, "'|b1'", DTCAST_UNDEFINED);
    dt_tensor_free(&t);

    make_tensor(&t, DTCAST_INT4, 1, d5, (uint8_t[]){0x21, 0x43, 0x05});
    npy_round_trip("npy.write.int4_one_per_byte", &t, "'descr': '|u1', 'fortran_order': False, "
                   "'shape': (5,)", DTCAST_INT4);
    dt_tensor_free(&t);

    make_tensor(&t, DTCAST_FLOAT8E5M2, 2, d23, (uint8_t[]){1, 2, 3, 4, 5, 6});
    npy_round_trip("npy.write.float8_keeps_shape", &t, "'descr': '|u1', 'fortran_order': "
                   "False, 'shape': (2, 3)", DTCAST_FLOAT8E5M2);
    dt_tensor_free(&t);

    make_tensor(&t, DTCAST_BFLOAT16, 1, d3, (uint16_t[]){0x3F80, 0x7FC0, 0x8000});
    npy_round_trip("npy.write.bfloat16_as_u2", &t, "'descr': '<u2', 'fortran_order': False, "
                   "'shape': (3,)", DTCAST_BFLOAT16);
    dt_tensor_free(&t);

    make_tensor(&t, DTCAST_STRING, 1, d3, NULL);
    char **s = t.data;
    s[0] = strdup("");
    s[1] = strdup("caf\xC3\xA9");
    s[2] = strdup("\xF0\x9F\x98\x80!");
    npy_round_trip("npy.write.strings", &t, "'descr': '<U4'", DTCAST_UNDEFINED);
    free(s[2]);
    s[2] = strdup("\xC3(");
    uint8_t *buf = NULL;
    size_t len;
    dt_io_error err;
    CHECK(dt_npy_serialize(&t, &buf, &len, &err) == DTCAST_ERR_INVALID_ARGUMENT && !buf &&
              strstr(err.message, "element 2"),
          "npy.write.bad_utf8", "%s", err.message);
    dt_tensor_free(&t);
}

/* ---- TensorProto ------------------------------------------------------------------------------ */

static dtcast_status pb(const bytes *f, dt_tensor *t, dt_io_error *err)
{
    return dt_pb_parse(f->b, f->n, t, err);
}

static void test_pb_typed_fields(void)
{
    bytes f = {.n = 0};
    dt_tensor t;
    dt_io_error err = DT_IO_ERROR_INIT;

    /* float32 2x2: dims unpacked, float_data half packed and half one per key, skipped
     * unknown fields of every wire type. */
    put_field_varint(&f, 1, 2);
    put_field_varint(&f, 1, 2);
    put_field_varint(&f, 2, DTCAST_FLOAT32);
    put_field_bytes(&f, 12, "doc", 3);
    uint32_t two[2] = {f32_bits(1.5f), f32_bits(-2.0f)};
    put_field_bytes(&f, 4, two, 8);
    put_field_fixed32(&f, 4, f32_bits(3.0f));
    put_key(&f, 99, 1);
    put(&f, "12345678", 8);
    put_field_fixed32(&f, 4, f32_bits(4.0f));
    put_field_varint(&f, 1000, 7);
    put_field_bytes(&f, 8, "w", 1);
    float want[4] = {1.5f, -2.0f, 3.0f, 4.0f};
    CHECK(pb(&f, &t, &err) == DTCAST_OK && t.type == DTCAST_FLOAT32 && t.count == 4 &&
              memcmp(t.data, want, 16) == 0 && t.name && strcmp(t.name, "w") == 0,
          "pb.float_data", "%s", err.message);
    dt_tensor_free(&t);

    /* float16 in int32_data, packed dims. */
    f.n = 0;
    put_field_bytes(&f, 1, "\x03", 1);
    put_field_varint(&f, 2, DTCAST_FLOAT16);
    bytes run = {.n = 0};
    put_varint(&run, 0x3C00);
    put_varint(&run, 0xBC00);
    put_varint(&run, 0x7E00);
    put_field_bytes(&f, 5, run.b, run.n);
    uint16_t h[3] = {0x3C00, 0xBC00, 0x7E00};
    CHECK(pb(&f, &t, &err) == DTCAST_OK && t.type == DTCAST_FLOAT16 && t.ndim == 1 &&
              t.count == 3 && memcmp(t.data, h, 6) == 0,
          "pb.int32_data.float16", "%s", err.message);
    dt_tensor_free(&t);

    /* int8 -1 as a sign-extended int32 varint (10 bytes); int4 packed bytes per int32. */
    f.n = 0;
    put_field_varint(&f, 1, 1);
    put_field_varint(&f, 2, DTCAST_INT8);
    put_field_varint(&f, 5, (uint64_t)-1);
    CHECK(pb(&f, &t, &err) == DTCAST_OK && ((uint8_t *)t.data)[0] == 0xFF, "pb.int32_data.int8",
          "%s", err.message);
    dt_tensor_free(&t);
    f.n = 0;
    put_field_varint(&f, 1, 3);
    put_field_varint(&f, 2, DTCAST_INT4);
    put_field_varint(&f, 5, 0xF1);
    put_field_varint(&f, 5, 0x07);
    CHECK(pb(&f, &t, &err) == DTCAST_OK && t.count == 3 && t.nbytes == 2 &&
              ((uint8_t *)t.data)[0] == 0xF1 && ((uint8_t *)t.data)[1] == 0x07,
          "pb.int32_data.int4", "%s", err.message);
    dt_tensor_free(&t);

    /* bcomplex32 in int32_data: one bfloat16 part per value, real first (as complex32) */
    f.n = 0;
    put_field_varint(&f, 1, 2);
    put_field_varint(&f, 2, DTCAST_BCOMPLEX32);
    static const uint16_t bc[4] = {0x3F80, 0xC040, 0x7FC0, 0x0001};
    for (int i = 0; i < 4; i++)
        put_field_varint(&f, 5, bc[i]);
    CHECK(pb(&f, &t, &err) == DTCAST_OK && t.type == DTCAST_BCOMPLEX32 && t.count == 2 &&
              t.nbytes == 8 && memcmp(t.data, bc, 8) == 0,
          "pb.int32_data.bcomplex32", "%s", err.message);
    dt_tensor_free(&t);

    /* uint32 in uint64_data; int64 in int64_data; complex128 in double_data. */
    f.n = 0;
    put_field_varint(&f, 1, 2);
    put_field_varint(&f, 2, DTCAST_UINT32);
    put_field_varint(&f, 11, 0xFFFFFFFFu);
    put_field_varint(&f, 11, 7);
    uint32_t u32[2] = {0xFFFFFFFFu, 7};
    CHECK(pb(&f, &t, &err) == DTCAST_OK && memcmp(t.data, u32, 8) == 0, "pb.uint64_data.uint32",
          "%s", err.message);
    dt_tensor_free(&t);
    f.n = 0;
    put_field_varint(&f, 2, DTCAST_INT64);
    put_field_varint(&f, 7, (uint64_t)INT64_MIN);
    int64_t i64 = INT64_MIN;
    CHECK(pb(&f, &t, &err) == DTCAST_OK && t.ndim == 0 && t.count == 1 &&
              memcmp(t.data, &i64, 8) == 0,
          "pb.int64_data.scalar", "%s", err.message);
    dt_tensor_free(&t);
    f.n = 0;
    put_field_varint(&f, 1, 1);
    put_field_varint(&f, 2, DTCAST_COMPLEX128);
    double c[2] = {1.25, -3};
    put_field_bytes(&f, 10, c, 16);
    CHECK(pb(&f, &t, &err) == DTCAST_OK && memcmp(t.data, c, 16) == 0,
          "pb.double_data.complex128", "%s", err.message);
    dt_tensor_free(&t);

    /* strings */
    f.n = 0;
    put_field_varint(&f, 1, 2);
    put_field_varint(&f, 2, DTCAST_STRING);
    put_field_bytes(&f, 6, "1.5", 3);
    put_field_bytes(&f, 6, "", 0);
    CHECK(pb(&f, &t, &err) == DTCAST_OK && t.type == DTCAST_STRING &&
              strcmp(((char **)t.data)[0], "1.5") == 0 && strcmp(((char **)t.data)[1], "") == 0,
          "pb.string_data", "%s", err.message);
    dt_tensor_free(&t);
}

static void expect_pb_error(const char *name, const bytes *f, dtcast_status want,
                            const char *text)
{
    dt_tensor t;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = pb(f, &t, &err);
    CHECK(st == want && strstr(err.message, text) && is_empty(&t), name, "status %d: %s", st,
          err.message);
}

static void test_pb_errors(void)
{
    bytes f = {.n = 0};
    put_field_varint(&f, 1, 2);
    put_field_varint(&f, 1, 3);
    put_field_varint(&f, 2, DTCAST_FLOAT32);
    bytes base = f;
    put_field_bytes(&f, 9, "12345678", 8);
    expect_pb_error("pb.err.raw_length", &f, DTCAST_ERR_BAD_FILE,
                    "raw_data is 8 bytes but 6 float32 elements need 24");
    f = base;
    put_field_fixed32(&f, 4, 0);
    expect_pb_error("pb.err.value_count", &f, DTCAST_ERR_BAD_FILE,
                    "float_data has 1 values but 6 float32 elements need 6");
    f = base;
    put_field_varint(&f, 7, 1);
    expect_pb_error("pb.err.wrong_field", &f, DTCAST_ERR_BAD_FILE,
                    "keeps its values in float_data, not int64_data");
    f = base;
    put_field_varint(&f, 14, 1);
    expect_pb_error("pb.err.external_no_location", &f, DTCAST_ERR_BAD_FILE,
                    "data_location EXTERNAL without an external_data location");
    f = base;
    put_field_varint(&f, 14, 2);
    expect_pb_error("pb.err.bad_location", &f, DTCAST_ERR_BAD_FILE, "unknown data_location 2");
    f = base;
    put_field_bytes(&f, 3, "\x08\x01", 2);
    expect_pb_error("pb.err.segment", &f, DTCAST_ERR_BAD_FILE, "segment");
    f = base;
    put_field_bytes(&f, 9, "12", 2);
    f.n--;
    expect_pb_error("pb.err.truncated_bytes", &f, DTCAST_ERR_BAD_FILE, "runs past the end");
    f = base;
    put_byte(&f, 0x08);
    put_byte(&f, 0x80);
    expect_pb_error("pb.err.truncated_varint", &f, DTCAST_ERR_BAD_FILE, "truncated varint");
    f = base;
    put_key(&f, 20, 3);
    expect_pb_error("pb.err.group", &f, DTCAST_ERR_BAD_FILE, "wire type 3");
    f = base;
    put_field_bytes(&f, 2, "x", 1);
    expect_pb_error("pb.err.type_wire", &f, DTCAST_ERR_BAD_FILE, "data_type has wire type 2");

    f.n = 0;
    put_field_varint(&f, 1, (uint64_t)-5);
    put_field_varint(&f, 2, DTCAST_FLOAT32);
    expect_pb_error("pb.err.negative_dim", &f, DTCAST_ERR_BAD_FILE, "negative (-5)");
    f.n = 0;
    put_field_varint(&f, 1, (uint64_t)1 << 40);
    put_field_varint(&f, 1, (uint64_t)1 << 40);
    put_field_varint(&f, 2, DTCAST_FLOAT32);
    expect_pb_error("pb.err.dims_overflow", &f, DTCAST_ERR_SIZE_OVERFLOW, "overflow");
    f.n = 0;
    put_field_varint(&f, 1, 1);
    put_field_varint(&f, 2, 77);
    expect_pb_error("pb.err.unknown_type", &f, DTCAST_ERR_BAD_FILE, "unknown data_type 77");
    f.n = 0;
    put_field_varint(&f, 1, 1);
    expect_pb_error("pb.err.no_type", &f, DTCAST_ERR_BAD_FILE, "data_type is missing");
    f.n = 0;
    put_field_varint(&f, 2, DTCAST_STRING);
    put_field_bytes(&f, 9, "x", 1);
    expect_pb_error("pb.err.raw_string", &f, DTCAST_ERR_BAD_FILE, "string");
    f.n = 0;
    put_field_varint(&f, 2, DTCAST_INT8);
    put_field_bytes(&f, 9, "x", 1);
    put_field_varint(&f, 5, 1);
    expect_pb_error("pb.err.raw_and_typed", &f, DTCAST_ERR_BAD_FILE, "both raw_data and");
    f.n = 0;
    for (int k = 0; k < 33; k++)
        put_field_varint(&f, 1, 1);
    expect_pb_error("pb.err.too_many_dims", &f, DTCAST_ERR_BAD_FILE, "more than 32 dims");
    f.n = 0;
    put_field_varint(&f, 2, DTCAST_FLOAT32);
    put_field_bytes(&f, 4, "123", 3);
    expect_pb_error("pb.err.packed_fixed", &f, DTCAST_ERR_BAD_FILE, "truncated 4-byte");
    f.n = 0;
    put(&f, "\x00", 1);
    expect_pb_error("pb.err.field_zero", &f, DTCAST_ERR_BAD_FILE, "field number 0");
}

static void pb_round_trip(const char *name, const dt_tensor *t)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    dt_io_error err = DT_IO_ERROR_INIT;
    dt_tensor back;
    if (!CHECK(dt_pb_serialize(t, &buf, &len, &err) == DTCAST_OK, name, "%s", err.message))
        return;
    dtcast_status st = dt_pb_parse(buf, len, &back, &err);
    bool same = st == DTCAST_OK && back.type == t->type && back.ndim == t->ndim &&
                back.count == t->count && back.nbytes == t->nbytes &&
                memcmp(back.dims, t->dims, sizeof t->dims[0] * (size_t)t->ndim) == 0 &&
                (!t->name) == (!back.name) && (!t->name || strcmp(t->name, back.name) == 0) &&
                (t->type == DTCAST_STRING || memcmp(back.data, t->data, t->nbytes) == 0);
    for (size_t i = 0; same && t->type == DTCAST_STRING && i < t->count; i++)
        same = strcmp(((char **)back.data)[i], ((char **)t->data)[i]) == 0;
    CHECK(same, name, "status %d: %s", st, err.message);
    dt_tensor_free(&back);
    free(buf);
}

static void test_pb_write(void)
{
    dt_tensor t;
    int64_t d23[2] = {2, 3}, d5[1] = {5}, d0[2] = {0, 300};
    make_tensor(&t, DTCAST_FLOAT32, 2, d23, (float[]){1, 2, 3, 4, 5, 6});
    t.name = strdup("x");
    pb_round_trip("pb.write.float32", &t);
    dt_tensor_free(&t);
    make_tensor(&t, DTCAST_UINT2, 1, d5, (uint8_t[]){0xE4, 0x02});
    pb_round_trip("pb.write.uint2_odd", &t);
    dt_tensor_free(&t);
    make_tensor(&t, DTCAST_FLOAT8E8M0, 2, d0, NULL);
    pb_round_trip("pb.write.empty", &t);
    dt_tensor_free(&t);
    make_tensor(&t, DTCAST_COMPLEX32, 0, NULL, (uint16_t[]){0x3C00, 0x4000});
    pb_round_trip("pb.write.complex32_scalar", &t);
    dt_tensor_free(&t);
    make_tensor(&t, DTCAST_BCOMPLEX32, 1, d5,
                (uint16_t[]){0x3F80, 0x4000, 0xFF80, 0x7FC0, 0x8000, 0x0001, 0x4049, 0xC049,
                             0x7F7F, 0});
    pb_round_trip("pb.write.bcomplex32", &t);
    dt_tensor_free(&t);
    make_tensor(&t, DTCAST_INT1, 1, d5, (uint8_t[]){0x15});
    pb_round_trip("pb.write.int1_odd", &t);
    dt_tensor_free(&t);
    make_tensor(&t, DTCAST_STRING, 1, d5, NULL);
    char **s = t.data;
    s[0] = strdup("NaN"), s[1] = strdup(""), s[3] = strdup("-1e+20"), s[4] = strdup("x");
    s[2] = strdup("");
    pb_round_trip("pb.write.strings", &t);
    dt_tensor_free(&t);
}

/* ---- conformance data ------------------------------------------------------------------------ */

typedef struct conformance_tally {
    int files, failures;
    char first_failure[2048];
} conformance_tally;

/* Parses a TensorProto and writes it again: ONNX's own files come back byte for byte. */
static dtcast_status parse_and_rewrite(const uint8_t *buf, size_t len, dt_io_error *err)
{
    dt_tensor t;
    uint8_t *out = NULL;
    size_t out_len = 0;
    dtcast_status st = dt_pb_parse(buf, len, &t, err);
    if (st == DTCAST_OK)
        st = dt_pb_serialize(&t, &out, &out_len, err);
    bool same = st != DTCAST_OK || (out_len == len && memcmp(out, buf, len) == 0);
    if (!same) {
        /* A file that keeps its values in typed fields (int32_data, ...: the Q/DQ tests) is
         * rewritten with raw_data: the rewrite must then hold the same tensor. */
        dt_pb_info info;
        dt_io_error e2 = DT_IO_ERROR_INIT;
        if (dt_pb_locate(buf, len, &info, &e2) == DTCAST_OK) {
            const bool typed = info.where == DT_PB_TYPED;
            dt_pb_info_free(&info);
            dt_tensor u;
            if (typed && dt_pb_parse(out, out_len, &u, &e2) == DTCAST_OK) {
                same = u.type == t.type && u.ndim == t.ndim && u.nbytes == t.nbytes &&
                       memcmp(u.dims, t.dims, sizeof u.dims) == 0 &&
                       (t.nbytes == 0 || memcmp(u.data, t.data, t.nbytes) == 0) &&
                       ((!u.name && !t.name) || (u.name && t.name && !strcmp(u.name, t.name)));
                dt_tensor_free(&u);
            }
        }
    }
    if (!same) {
        st = DTCAST_ERR_BAD_FILE;
        snprintf(err->message, sizeof err->message, "rewritten differently (%zu bytes, was %zu)",
                 out_len, len);
    }
    free(out);
    dt_tensor_free(&t);
    return st;
}

static void parse_one(const char *path, bool model, conformance_tally *c)
{
    uint8_t *buf;
    size_t len;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = dt_read_file(path, &buf, &len, &err);
    if (st == DTCAST_OK) {
        if (model) {
            dt_onnx_model m;
            st = dt_onnx_model_parse(buf, len, &m, &err);
            if (st == DTCAST_OK && (m.opset <= 0 || !m.op_type[0] || m.ninputs < 1 ||
                                    m.noutputs < 1 || m.output_types[0] == DTCAST_UNDEFINED))
                st = DTCAST_ERR_BAD_FILE, snprintf(err.message, sizeof err.message,
                                                   "incomplete model");
        } else {
            st = parse_and_rewrite(buf, len, &err);
        }
        free(buf);
    }
    c->files++;
    if (st != DTCAST_OK && c->failures++ == 0)
        snprintf(c->first_failure, sizeof c->first_failure, "%s: %s", path, err.message);
}

static void parse_case_dir(const char *dir, conformance_tally *c)
{
    char path[700];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    parse_one(path, true, c);
    snprintf(path, sizeof path, "%s/test_data_set_0", dir);
    DIR *d = opendir(path);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        if (dt_file_kind_of(e->d_name) != DT_FILE_PB)
            continue;
        char file[1000];
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        parse_one(file, false, c);
    }
    closedir(d);
}

static void test_conformance_suite(const char *suite)
{
    char root[256], name[300];
    snprintf(root, sizeof root, CONFORMANCE "/%s", suite);
    DIR *d = opendir(root);
    snprintf(name, sizeof name, "conformance.%s.all_parse_and_rewrite", suite);
    if (!d) {
        CHECK(1, name, "skipped: %s absent", root);
        return;
    }
    conformance_tally c = {0, 0, ""};
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char dir[600];
        snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
        parse_case_dir(dir, &c);
    }
    closedir(d);
    CHECK(c.failures == 0 && c.files > 0, name, "%d of %d files failed; first: %s", c.failures,
          c.files, c.first_failure);
}

static dtcast_status read_tensor(const char *path, dt_tensor *t)
{
    uint8_t *buf;
    size_t len;
    dt_io_error err;
    dt_tensor_init(t);
    dtcast_status st = dt_read_file(path, &buf, &len, &err);
    if (st != DTCAST_OK)
        return st;
    st = dt_pb_parse(buf, len, t, &err);
    free(buf);
    return st;
}

static dtcast_status read_model(const char *path, dt_onnx_model *m)
{
    uint8_t *buf;
    size_t len;
    dt_io_error err;
    dtcast_status st = dt_read_file(path, &buf, &len, &err);
    if (st != DTCAST_OK)
        return st;
    st = dt_onnx_model_parse(buf, len, m, &err);
    free(buf);
    return st;
}

static void test_conformance_details(void)
{
    const char *dir = CONFORMANCE "/node/test_cast_FLOAT_to_INT4";
    char path[512];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    dt_onnx_model m;
    if (read_model(path, &m) != DTCAST_OK) {
        CHECK(access(path, R_OK) != 0, "conformance.model.cast_int4", "cannot parse %s", path);
        return;
    }
    const dt_onnx_attr *to = dt_onnx_model_attr(&m, "to");
    CHECK(strcmp(m.op_type, "Cast") == 0 && m.opset >= 21 && to && to->kind == 2 &&
              to->i == DTCAST_INT4 && m.ninputs == 1 && m.input_types[0] == DTCAST_FLOAT32 &&
              m.noutputs == 1 && m.output_types[0] == DTCAST_INT4 &&
              dt_onnx_model_attr(&m, "saturate") == NULL,
          "conformance.model.cast_int4", "op %s opset %lld", m.op_type, (long long)m.opset);

    dt_tensor t;
    snprintf(path, sizeof path, "%s/test_data_set_0/output_0.pb", dir);
    CHECK(read_tensor(path, &t) == DTCAST_OK && t.type == DTCAST_INT4 && t.ndim == 2 &&
              t.dims[0] == 5 && t.dims[1] == 5 && t.nbytes == 13 && t.name &&
              strcmp(t.name, "output") == 0,
          "conformance.output.int4", "type %d count %zu", t.type, t.count);
    dt_tensor_free(&t);

    snprintf(path, sizeof path,
             CONFORMANCE "/node/test_castlike_FLOAT_to_FLOAT8E4M3FN/model.onnx");
    if (read_model(path, &m) == DTCAST_OK)
        CHECK(strcmp(m.op_type, "CastLike") == 0 && m.ninputs == 2 &&
                  m.input_types[1] == DTCAST_FLOAT8E4M3FN,
              "conformance.model.castlike", "op %s inputs %d", m.op_type, m.ninputs);

    snprintf(path, sizeof path, CONFORMANCE "/node_legacy/test_cast_STRING_to_FLOAT/"
                                "test_data_set_0/input_0.pb");
    if (read_tensor(path, &t) == DTCAST_OK)
        CHECK(t.type == DTCAST_STRING && t.count > 0 && ((char **)t.data)[0] != NULL,
              "conformance.legacy.strings", "type %d", t.type);
    dt_tensor_free(&t);
}

/* ---- ModelProto by hand ------------------------------------------------------------------------ */

static void test_model(void)
{
    bytes attr1 = {.n = 0}, attr2 = {.n = 0}, attr3 = {.n = 0}, node = {.n = 0};
    bytes tensor = {.n = 0}, type = {.n = 0}, vi = {.n = 0}, graph = {.n = 0}, op = {.n = 0};
    bytes model = {.n = 0};
    put_field_bytes(&attr1, 1, "to", 2);
    put_field_varint(&attr1, 3, 17); /* no type field: an old model */
    put_field_bytes(&attr2, 1, "round_mode", 10);
    put_field_bytes(&attr2, 4, "down", 4);
    put_field_varint(&attr2, 20, 3);
    put_field_bytes(&attr3, 1, "alpha", 5);
    put_field_fixed32(&attr3, 2, f32_bits(0.5f));
    put_field_varint(&attr3, 20, 1);
    put_field_bytes(&node, 1, "x", 1);
    put_field_bytes(&node, 4, "Cast", 4);
    put_field_bytes(&node, 5, attr1.b, attr1.n);
    put_field_bytes(&node, 5, attr2.b, attr2.n);
    put_field_bytes(&node, 5, attr3.b, attr3.n);
    put_field_varint(&tensor, 1, DTCAST_FLOAT16);
    put_field_bytes(&type, 1, tensor.b, tensor.n);
    put_field_bytes(&vi, 1, "x", 1);
    put_field_bytes(&vi, 2, type.b, type.n);
    put_field_bytes(&graph, 1, node.b, node.n);
    put_field_bytes(&graph, 1, "\x22\x03" "Add", 5); /* a second node: ignored */
    put_field_bytes(&graph, 11, vi.b, vi.n);
    put_field_bytes(&graph, 12, vi.b, vi.n);
    put_field_bytes(&op, 1, "com.microsoft", 13);
    put_field_varint(&op, 2, 1);
    put_field_varint(&model, 1, 10);
    put_field_bytes(&model, 7, graph.b, graph.n);
    put_field_bytes(&model, 8, op.b, op.n);
    op.n = 0;
    put_field_varint(&op, 2, 24);
    put_field_bytes(&model, 8, op.b, op.n);

    dt_onnx_model m;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = dt_onnx_model_parse(model.b, model.n, &m, &err);
    const dt_onnx_attr *to = dt_onnx_model_attr(&m, "to");
    const dt_onnx_attr *rm = dt_onnx_model_attr(&m, "round_mode");
    const dt_onnx_attr *alpha = dt_onnx_model_attr(&m, "alpha");
    CHECK(st == DTCAST_OK && m.opset == 24 && strcmp(m.op_type, "Cast") == 0 && m.nattrs == 3 &&
              to && to->kind == 2 && to->i == 17 && rm && rm->kind == 3 &&
              strcmp(rm->s, "down") == 0 && alpha && alpha->kind == 1 && alpha->f == 0.5 &&
              !dt_onnx_model_attr(&m, "saturate") && m.ninputs == 1 &&
              m.input_types[0] == DTCAST_FLOAT16 && m.noutputs == 1,
          "model.by_hand", "status %d: %s", st, err.message);

    CHECK(dt_onnx_model_parse(model.b, model.n - 1, &m, &err) == DTCAST_ERR_BAD_FILE &&
              strstr(err.message, "onnx model:") && m.op_type[0] == '\0',
          "model.err.truncated", "%s", err.message);
    bytes bad = {.n = 0};
    put_field_varint(&bad, 7, 1);
    CHECK(dt_onnx_model_parse(bad.b, bad.n, &m, &err) == DTCAST_ERR_BAD_FILE &&
              strstr(err.message, "graph has wire type 0"),
          "model.err.graph_wire_type", "%s", err.message);
    CHECK(dt_onnx_model_parse((const uint8_t *)"", 0, &m, &err) == DTCAST_OK && m.nattrs == 0,
          "model.empty", "%s", err.message);
}

/* ---- hostile inputs ------------------------------------------------------------------------------
 * The fuzzers (fuzz/) ran without finding a crash; these are the inputs that would exhaust memory
 * or overflow if a reader believed a header without the bytes to back it. */

static void test_hostile_inputs(void)
{
    bytes f;
    /* Zero-width strings: no data bytes for a trillion elements. */
    npy_file(&f, 1, "{'descr': '|S0', 'fortran_order': False, 'shape': (1000000000000,), }", NULL,
             0);
    expect_npy_error("hostile.npy.zero_width_bytes", &f, DTCAST_ERR_BAD_FILE, "'|S0'");
    npy_file(&f, 1, "{'descr': '<U0', 'fortran_order': False, 'shape': (1000000000000,), }", NULL,
             0);
    expect_npy_error("hostile.npy.zero_width_unicode", &f, DTCAST_ERR_BAD_FILE, "'<U0'");
    /* A v2 header length of 4 GiB. */
    npy_file(&f, 2, "", NULL, 0);
    f.b[8] = f.b[9] = f.b[10] = f.b[11] = 0xFF;
    expect_npy_error("hostile.npy.huge_header", &f, DTCAST_ERR_BAD_FILE,
                     "header length 4294967295 exceeds file size 12 at byte 8");
    /* Empty dims next to a huge one: zero elements, no allocation. */
    dt_tensor t;
    dt_io_error err;
    npy_file(&f, 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (0, 9223372036854775807)}",
             NULL, 0);
    CHECK(npy(&f, DTCAST_UNDEFINED, &t, &err) == DTCAST_OK && t.count == 0, "hostile.npy.empty_huge",
          "%s", err.message);
    dt_tensor_free(&t);

    /* pb: a trillion elements claimed, a few values present. */
    f.n = 0;
    put_field_varint(&f, 1, 1000000000000);
    put_field_varint(&f, 2, DTCAST_STRING);
    put_field_bytes(&f, 6, "a", 1);
    expect_pb_error("hostile.pb.strings_claimed", &f, DTCAST_ERR_BAD_FILE,
                    "string_data has 1 values but 1000000000000 string elements need");
    f.n = 0;
    put_field_varint(&f, 1, 1000000000001);
    put_field_varint(&f, 2, DTCAST_INT4);
    expect_pb_error("hostile.pb.int4_claimed", &f, DTCAST_ERR_BAD_FILE,
                    "int32_data has 0 values but 1000000000001 int4 elements need 500000000001");
    /* An eleven-byte varint. */
    f.n = 0;
    put(&f, "\x08\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\x01", 12);
    expect_pb_error("hostile.pb.long_varint", &f, DTCAST_ERR_BAD_FILE, "longer than 10 bytes");
}

int main(void)
{
    test_tensor();
    test_files();
    test_npy_read();
    test_npy_errors();
    test_npy_write();
    test_pb_typed_fields();
    test_pb_errors();
    test_pb_write();
    test_model();
    test_conformance_suite("node");
    test_conformance_suite("node_legacy");
    test_conformance_details();
    test_hostile_inputs();
    return CHECK_EXIT();
}
