/* Tests of files/checkpoint.h, the checkpoint the jobs read: a model folder with an index, two
 * shards, config.json, another file, a sub-folder, a shard the index does not list and a second
 * index (the shards, tensors, absolute offsets, other files and warnings expected from how the
 * files were written here, byte by byte); a lone file; a .npy with and without DT_CKPT_NPY; a
 * folder without an index; two tensors of one name over two shards; a broken shard (the error
 * names the file and the byte offset); a folder of two indexes without model.safetensors's. */
#include "check.h"
#include "files/checkpoint.h"
#include "files/cast.h"
#include "files/json.h"
#include "files/quant_layout.h"
#include "files/quantize.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[256];

static void put(const char *name, const void *data, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, name);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, len, f);
        fclose(f);
    }
}

/* A safetensors file: the 8-byte length of json, json, then data_len bytes i & 255 (the data
 * byte at buffer offset i is i & 255, so a tensor's first byte tells its offset). */
static void put_st(const char *name, const char *json, size_t data_len)
{
    size_t n = strlen(json), len = 8 + n + data_len;
    uint8_t *b = malloc(len);
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)((uint64_t)n >> (8 * i));
    memcpy(b + 8, json, n);
    for (size_t i = 0; i < data_len; i++)
        b[8 + n + i] = (uint8_t)(i & 255);
    put(name, b, len);
    free(b);
}

static void put_text(const char *name, const char *text)
{
    put(name, text, strlen(text));
}

static char *path_of(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", root, name);
    return path;
}

static const char A_JSON[] = "{\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                             "\"a\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[8,16]}}";
static const char B_JSON[] = "{\"c\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[0,6]}}";

static int has_warning(const dt_ckpt *c, const char *part)
{
    for (size_t i = 0; i < c->nwarnings; i++)
        if (strstr(c->warnings[i], part))
            return 1;
    return 0;
}

static void test_folder(void)
{
    char dir[300];
    snprintf(dir, sizeof dir, "%s/m", root);
    mkdir(dir, 0777);
    put_st("m/s2.safetensors", A_JSON, 16);
    put_st("m/s1.safetensors", B_JSON, 6);
    put_st("m/extra.safetensors", B_JSON, 6);
    put_text("m/model.safetensors.index.json",
             "{\"metadata\": {\"total_size\": 22}, \"weight_map\": {\"c\": \"s1.safetensors\", "
             "\"a\": \"s2.safetensors\", \"b\": \"s2.safetensors\"}}");
    put_text("m/other.safetensors.index.json", "{\"weight_map\": {}}");
    put_text("m/config.json", "{}");
    put_text("m/tokenizer.json", "{}");
    put_text("m/README.md", "x");
    snprintf(dir, sizeof dir, "%s/m/sub", root);
    mkdir(dir, 0777);

    dt_ckpt c;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = dt_ckpt_open(&c, path_of("m"), 0, &err);
    CHECK(st == DTCAST_OK, "folder.open", "%d: %s", (int)st, err.message);
    if (st != DTCAST_OK) {
        dt_ckpt_close(&c);
        return;
    }
    CHECK(c.folder && c.has_index && strcmp(c.index_name, "model.safetensors.index.json") == 0,
          "folder.index", "folder %d index %d %s", c.folder, c.has_index,
          c.index_name ? c.index_name : "(none)");
    /* The index's shards in the index's order (c first: s1, then s2). */
    CHECK(c.nshards == 2 && strcmp(c.shards[0].name, "s1.safetensors") == 0 &&
              strcmp(c.shards[1].name, "s2.safetensors") == 0,
          "folder.shards", "%zu shards", c.nshards);
    CHECK(c.n == 3, "folder.count", "%zu tensors", c.n);
    size_t ia = dt_ckpt_find(&c, "a"), ib = dt_ckpt_find(&c, "b"), ic = dt_ckpt_find(&c, "c");
    CHECK(ia < c.n && ib < c.n && ic < c.n && dt_ckpt_find(&c, "d") == c.n, "folder.find",
          "a %zu b %zu c %zu", ia, ib, ic);
    if (ia < c.n && ib < c.n && ic < c.n) {
        uint64_t a_start = 8 + strlen(A_JSON), b_start = 8 + strlen(B_JSON);
        CHECK(c.at[ia].shard == 1 && c.at[ia].at == a_start + 8 && c.at[ia].bytes == 8,
              "folder.a_at", "shard %zu at %llu bytes %llu", c.at[ia].shard,
              (unsigned long long)c.at[ia].at, (unsigned long long)c.at[ia].bytes);
        CHECK(c.at[ib].shard == 1 && c.at[ib].at == a_start && c.at[ib].bytes == 8,
              "folder.b_at", "at %llu", (unsigned long long)c.at[ib].at);
        CHECK(c.at[ic].shard == 0 && c.at[ic].at == b_start && c.at[ic].bytes == 6 &&
                  strcmp(dt_ckpt_shard_name(&c, ic), "s1.safetensors") == 0,
              "folder.c_at", "at %llu", (unsigned long long)c.at[ic].at);
        CHECK(c.t[ia].type == DTCAST_BFLOAT16 && c.t[ia].ndim == 2 && c.t[ia].dims[1] == 2,
              "folder.a_type", "type %d ndim %d", (int)c.t[ia].type, c.t[ia].ndim);
        uint8_t *buf = NULL;
        st = dt_ckpt_read(&c, ia, &buf, &err);
        int same = st == DTCAST_OK;
        for (int i = 0; same && i < 8; i++)
            same = buf[i] == 8 + i; /* buffer offsets 8..15 */
        CHECK(same, "folder.read", "%s", err.message);
        free(buf);
        CHECK(dt_ckpt_data(&c, ic)[0] == 0 && dt_ckpt_data(&c, ia)[0] == 8, "folder.data", "%d",
              dt_ckpt_data(&c, ia)[0]);
    }
    CHECK(c.has_config && c.nother == 2 && strcmp(c.other[0], "README.md") == 0 &&
              strcmp(c.other[1], "tokenizer.json") == 0,
          "folder.other", "config %d, %zu others", c.has_config, c.nother);
    CHECK(c.nwarnings == 3 && has_warning(&c, "sub: a folder inside the model folder") &&
              has_warning(&c, "extra.safetensors: not in the index") &&
              has_warning(&c, "other.safetensors.index.json: another index"),
          "folder.warnings", "%zu warnings", c.nwarnings);
    struct stat sb;
    uint64_t size1 = stat(path_of("m/s1.safetensors"), &sb) == 0 ? (uint64_t)sb.st_size : 0;
    uint64_t size2 = stat(path_of("m/s2.safetensors"), &sb) == 0 ? (uint64_t)sb.st_size : 0;
    CHECK(dt_ckpt_input_bytes(&c) == size1 + size2, "folder.input_bytes", "%llu",
          (unsigned long long)dt_ckpt_input_bytes(&c));
    dt_ckpt_close(&c);
    dt_ckpt_close(&c); /* twice is safe */

    /* The index file itself: the same checkpoint. */
    st = dt_ckpt_open(&c, path_of("m/model.safetensors.index.json"), 0, &err);
    CHECK(st == DTCAST_OK && c.folder && c.n == 3 && c.nshards == 2, "index.open", "%s",
          err.message);
    dt_ckpt_close(&c);
}

static void test_lone(void)
{
    put_st("lone.safetensors", A_JSON, 16);
    dt_ckpt c;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = dt_ckpt_open(&c, path_of("lone.safetensors"), 0, &err);
    CHECK(st == DTCAST_OK && !c.folder && !c.has_index && c.nshards == 1 && c.n == 2 &&
              c.nother == 0 && c.nwarnings == 0,
          "lone.open", "%s", err.message);
    dt_ckpt_close(&c);

    /* A .npy: float32 [3]. */
    static const char head[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
    uint8_t npy[128 + 12];
    memset(npy, ' ', 128);
    memcpy(npy, "\x93NUMPY\x01\x00", 8);
    npy[8] = 128 - 10;
    npy[9] = 0;
    memcpy(npy + 10, head, strlen(head));
    npy[127] = '\n';
    for (int i = 0; i < 12; i++)
        npy[128 + i] = (uint8_t)i;
    put("w.npy", npy, sizeof npy);
    st = dt_ckpt_open(&c, path_of("w.npy"), 0, &err);
    CHECK(st == DTCAST_ERR_INVALID_ARGUMENT && strstr(err.message, "is not a checkpoint"),
          "npy.refused", "%d: %s", (int)st, err.message);
    dt_ckpt_close(&c);
    st = dt_ckpt_open(&c, path_of("w.npy"), DT_CKPT_NPY, &err);
    CHECK(st == DTCAST_OK && c.npy && c.n == 1 && strcmp(c.t[0].name, "w") == 0 &&
              c.t[0].type == DTCAST_FLOAT32 && c.at[0].at == 128 && c.at[0].bytes == 12,
          "npy.open", "%d: %s", (int)st, err.message);
    dt_ckpt_close(&c);

    st = dt_ckpt_open(&c, path_of("x.txt"), 0, &err);
    CHECK(st == DTCAST_ERR_INVALID_ARGUMENT && strstr(err.message, "give a .safetensors file"),
          "unknown.refused", "%d: %s", (int)st, err.message);
    dt_ckpt_close(&c);
}

static void test_errors(void)
{
    char dir[300];
    /* No index: every *.safetensors, sorted; a name in two shards is an error naming it. */
    snprintf(dir, sizeof dir, "%s/dup", root);
    mkdir(dir, 0777);
    put_st("dup/x.safetensors", B_JSON, 6);
    put_st("dup/y.safetensors", B_JSON, 6);
    dt_ckpt c;
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = dt_ckpt_open(&c, path_of("dup"), 0, &err);
    CHECK(st != DTCAST_OK && strstr(err.message, "two tensors are named 'c'") &&
              strcmp(err.tensor, "c") == 0,
          "dup.refused", "%d: %s", (int)st, err.message);
    dt_ckpt_close(&c);

    snprintf(dir, sizeof dir, "%s/noindex", root);
    mkdir(dir, 0777);
    put_st("noindex/b.safetensors", B_JSON, 6);
    put_st("noindex/a.safetensors", A_JSON, 16);
    st = dt_ckpt_open(&c, path_of("noindex"), 0, &err);
    CHECK(st == DTCAST_OK && !c.has_index && c.nshards == 2 &&
              strcmp(c.shards[0].name, "a.safetensors") == 0 && c.n == 3,
          "noindex.open", "%s", err.message);
    dt_ckpt_close(&c);

    /* A header whose length runs past the file: the file and an offset named. */
    snprintf(dir, sizeof dir, "%s/bad", root);
    mkdir(dir, 0777);
    put("bad/z.safetensors", "\xff\x00\x00\x00\x00\x00\x00\x00{}", 10);
    st = dt_ckpt_open(&c, path_of("bad"), 0, &err);
    CHECK(st == DTCAST_ERR_BAD_FILE && strstr(err.message, path_of("bad/z.safetensors")) &&
              strcmp(err.file, path_of("bad/z.safetensors")) == 0,
          "bad.refused", "%d: %s (file '%s')", (int)st, err.message, err.file);
    dt_ckpt_close(&c);

    snprintf(dir, sizeof dir, "%s/two", root);
    mkdir(dir, 0777);
    put_text("two/a.safetensors.index.json", "{\"weight_map\": {}}");
    put_text("two/b.safetensors.index.json", "{\"weight_map\": {}}");
    st = dt_ckpt_open(&c, path_of("two"), 0, &err);
    CHECK(st != DTCAST_OK && strstr(err.message, "holds 2 *.safetensors.index.json files"),
          "two_indexes.refused", "%d: %s", (int)st, err.message);
    dt_ckpt_close(&c);

    /* An index that is not JSON: its path and the byte named. */
    snprintf(dir, sizeof dir, "%s/badindex", root);
    mkdir(dir, 0777);
    put_text("badindex/model.safetensors.index.json", "{\"weight_map\": [}");
    st = dt_ckpt_open(&c, path_of("badindex"), 0, &err);
    CHECK(st == DTCAST_ERR_BAD_FILE && strstr(err.message, "model.safetensors.index.json: ") &&
              strstr(err.message, " at byte ") && err.offset >= 0,
          "badindex.refused", "%d: %s (offset %lld)", (int)st, err.message,
          (long long)err.offset);
    dt_ckpt_close(&c);
}

/* The fill callback of the shard writer: item k's bytes are all k + 1. */
static dtcast_status fill_bytes(void *ctx, size_t item, dt_outfile *out, uint64_t nbytes,
                                dt_io_error *err)
{
    (void)ctx;
    uint8_t buf[64];
    memset(buf, (int)(item + 1), sizeof buf);
    return nbytes <= sizeof buf ? dt_outfile_write(out, buf, (size_t)nbytes, err)
                                : dt_io_fail(err, DTCAST_ERR_BAD_FILE, "too long");
}

/* Files in dir; final ones only (not the writers' temporary "<name>.tmpPID.N") when final. */
static int count_files(const char *dir, int final)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | %s | wc -l", dir,
             final ? "grep -v '[.]tmp[0-9][0-9]*[.][0-9]*$'" : "cat");
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p) {
        if (fscanf(p, "%d", &n) != 1)
            n = -1;
        pclose(p);
    }
    return n;
}

/* The write side over the folder m of test_folder: two new shards (the writer's order, the data
 * the fill callback gives), the index with a new weight_map, config.json with a
 * quantization_config (a one-line config.json too), the other files copied; a failed shard
 * leaves nothing behind. */
static void test_write(void)
{
    dt_ckpt c;
    dt_ckpt_out o;
    dt_io_error err = DT_IO_ERROR_INIT;
    put_text("m/config.json", "{\"model_type\": \"x\"}");
    dtcast_status st = dt_ckpt_open(&c, path_of("m"), 0, &err);
    char out[300];
    snprintf(out, sizeof out, "%s/out", root);
    if (st == DTCAST_OK)
        st = dt_ckpt_out_init(&o, &c, out, &err);
    if (st == DTCAST_OK)
        st = dt_ckpt_out_make_dir(&o, &err);
    CHECK(st == DTCAST_OK, "write.open", "%s", err.message);
    if (st != DTCAST_OK) {
        dt_ckpt_close(&c);
        return;
    }
    dt_st_tensor items[2];
    memset(items, 0, sizeof items);
    items[0] = (dt_st_tensor){.name = "z", .type = DTCAST_UINT8, .ndim = 1, .dims = {3}};
    items[1] = (dt_st_tensor){.name = "y", .type = DTCAST_FLOAT32, .ndim = 1, .dims = {2}};
    uint64_t total = 0;
    for (size_t s = 0; st == DTCAST_OK && s < c.nshards; s++)
        st = dt_ckpt_out_shard(&o, s, items, 2, fill_bytes, NULL, &total, &err);
    CHECK(st == DTCAST_OK && total == 2 * (3 + 8), "write.shards", "%s, total %llu",
          err.message, (unsigned long long)total);
    dt_st_index_entry entries[] = {{"y", 0}, {"z", 1}};
    if (st == DTCAST_OK)
        st = dt_ckpt_out_index(&o, entries, 2, total, &err);
    if (st == DTCAST_OK)
        st = dt_ckpt_out_extras(&o, "{\"quant_method\": \"q\"}", 0, &err);
    char outdir_files[300];
    snprintf(outdir_files, sizeof outdir_files, "%s/out", root);
    CHECK(st == DTCAST_OK && count_files(outdir_files, 1) == 0, "write.nothing_before_commit",
          "%s, %d files", err.message, count_files(outdir_files, 1));
    if (st == DTCAST_OK)
        st = dt_ckpt_out_commit(&o, &err);
    /* shards, index, config.json, README.md, tokenizer.json */
    CHECK(st == DTCAST_OK && count_files(outdir_files, 1) == 6, "write.commit", "%s, %d files",
          err.message, count_files(outdir_files, 1));
    dt_ckpt_out_close(&o);
    dt_ckpt_close(&c);

    /* The shard read back: y (F32) before z (U8), as the reference writer orders them. */
    st = dt_ckpt_open(&c, path_of("out/s1.safetensors"), 0, &err);
    size_t iy = st == DTCAST_OK ? dt_ckpt_find(&c, "y") : 0, iz = st == DTCAST_OK ? dt_ckpt_find(&c, "z") : 0;
    CHECK(st == DTCAST_OK && c.n == 2 && iy < c.n && iz < c.n && c.at[iy].at < c.at[iz].at &&
              dt_ckpt_data(&c, iy)[0] == 2 && dt_ckpt_data(&c, iz)[2] == 1,
          "write.shard_read_back", "%s", err.message);
    dt_ckpt_close(&c);
    dt_st_index ix;
    st = dt_ckpt_load_index(path_of("out/model.safetensors.index.json"), &ix, &err);
    CHECK(st == DTCAST_OK && ix.nentries == 2 && ix.has_total_size && ix.total_size == 22 &&
              strcmp(ix.entries[0].name, "y") == 0 &&
              strcmp(ix.shards[ix.entries[1].shard], "s2.safetensors") == 0,
          "write.index_read_back", "%s", err.message);
    dt_st_index_free(&ix);
    /* config.json: valid JSON with both members */
    uint8_t *text = NULL;
    size_t len = 0;
    dt_json_doc doc;
    st = dt_read_file(path_of("out/config.json"), &text, &len, &err);
    if (st == DTCAST_OK)
        st = dt_json_parse(text, len, 0, "config.json", &doc, &err);
    int members = 0;
    if (st == DTCAST_OK) {
        for (const dt_json_node *m = dt_json_first(&doc, &doc.nodes[0]); m; m = dt_json_next(&doc, m))
            members += strcmp(dt_json_key(&doc, m), "model_type") == 0 ||
                       strcmp(dt_json_key(&doc, m), "quantization_config") == 0;
        dt_json_free(&doc);
    }
    CHECK(st == DTCAST_OK && members == 2, "write.config_one_line", "%s: %.*s", err.message,
          (int)len, text ? (const char *)text : "");
    free(text);

    /* A shard that fails: nothing of the job is left in a new folder. */
    st = dt_ckpt_open(&c, path_of("m"), 0, &err);
    snprintf(out, sizeof out, "%s/out2", root);
    if (st == DTCAST_OK)
        st = dt_ckpt_out_init(&o, &c, out, &err);
    if (st == DTCAST_OK)
        st = dt_ckpt_out_make_dir(&o, &err);
    dt_st_tensor big = {.name = "w", .type = DTCAST_FLOAT32, .ndim = 1, .dims = {100}};
    uint64_t t2 = 0;
    if (st == DTCAST_OK)
        st = dt_ckpt_out_shard(&o, 0, &big, 1, fill_bytes, NULL, &t2, &err);
    CHECK(st == DTCAST_ERR_BAD_FILE, "write.fail", "%d", (int)st);
    dt_ckpt_out_close(&o);
    dt_ckpt_close(&c);
    CHECK(count_files(out, 0) == 0, "write.fail_leaves_nothing", "%d files", count_files(out, 0));
}

static int cancel_at_once(void *ctx, uint64_t done, uint64_t total)
{
    (void)done;
    (void)total;
    ++*(int *)ctx;
    return 1;
}

static void count_text(void *ctx, const char *text)
{
    (void)text;
    ++*(int *)ctx;
}

/* The jobs through their requests: the error's fields, a cancel from the progress callback (no
 * output left), a warning through the hooks. */
static void test_jobs(void)
{
    /* A truncated shard: cast's error names the file and the byte. */
    put("cut.safetensors", "\x40\x00\x00\x00\x00\x00\x00\x00{\"a\"", 12);
    dt_cast_request r;
    memset(&r, 0, sizeof r);
    char in[512], out[512];
    snprintf(in, sizeof in, "%s", path_of("cut.safetensors"));
    snprintf(out, sizeof out, "%s", path_of("cut_out.safetensors"));
    r.in = in;
    r.out = out;
    r.in_kind = r.out_kind = DT_FILE_SAFETENSORS;
    r.to = DTCAST_BFLOAT16;
    dtcast_options_init(&r.conversion.options);
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = dt_cast_files(&r, &err);
    CHECK(st != DTCAST_OK && !err.usage && strcmp(err.file, in) == 0 && err.offset >= 0 &&
              strstr(err.message, in),
          "jobs.cast_error_fields", "%d: %s (file '%s', offset %lld)", (int)st, err.message,
          err.file, (long long)err.offset);

    /* A good file, cancelled by the first progress call: an error, and OUT is not there. */
    put_st("good.safetensors", A_JSON, 16);
    snprintf(in, sizeof in, "%s", path_of("good.safetensors"));
    int calls = 0;
    r.hooks.progress = cancel_at_once;
    r.hooks.progress_ctx = &calls;
    st = dt_cast_files(&r, &err);
    struct stat sb;
    CHECK(st != DTCAST_OK && calls == 1 && strstr(err.message, "cancelled") &&
              stat(out, &sb) != 0,
          "jobs.cancel", "%d: %s (%d calls)", (int)st, err.message, calls);
    r.hooks.progress = NULL;
    st = dt_cast_files(&r, &err);
    CHECK(st == DTCAST_OK && stat(out, &sb) == 0, "jobs.cast", "%s", err.message);

    /* dequantize of a plain file: a warning through the hooks, the tensors copied. */
    dt_dequantize_request d;
    memset(&d, 0, sizeof d);
    int warnings = 0;
    snprintf(out, sizeof out, "%s", path_of("plain_out.safetensors"));
    d.in = in;
    d.out = out;
    d.to = DTCAST_BFLOAT16;
    d.threads = 1;
    d.hooks.warn = count_text;
    d.hooks.warn_ctx = &warnings;
    st = dt_dequantize_checkpoint(&d, &err);
    CHECK(st == DTCAST_OK && warnings == 1 && stat(out, &sb) == 0, "jobs.dequantize_warning",
          "%s (%d warnings)", err.message, warnings);

    /* quantize: a usage error (OUT of the wrong kind), then a tensor's error naming it. */
    dt_quantize_request q;
    memset(&q, 0, sizeof q);
    dtcast_quant_params_init(&q.p);
    dtcast_error e;
    dtcast_quant_params_from_recipe(&q.p, "mxfp4", &e);
    q.layout = DT_QL_MXFP4_GPTOSS;
    q.scheme_name = "mxfp4";
    q.layout_name = "gpt-oss";
    q.in = in;
    q.out = path_of("q.npy");
    st = dt_quantize_checkpoint(&q, &err);
    CHECK(st == DTCAST_ERR_INVALID_ARGUMENT && err.usage, "jobs.quantize_usage", "%d: %s",
          (int)st, err.message);
    /* a: BF16 [2, 2]; gpt-oss blocks need a last axis of 32s: the error names the tensor */
    q.out = out;
    q.select.n = 1;
    q.select.pattern[0] = "a";
    st = dt_quantize_checkpoint(&q, &err);
    CHECK(st != DTCAST_OK && !err.usage && strcmp(err.tensor, "a") == 0 &&
              strcmp(err.file, in) == 0,
          "jobs.quantize_tensor_fields", "%d: %s (tensor '%s', file '%s')", (int)st, err.message,
          err.tensor, err.file);
}

/* dt_qgroup_dsv4_codes' sixteen-nibbles-at-a-time pass against the rule written byte by byte
 * (code 8, -0, becomes 0, +0; every other code is kept): every byte value in every position of
 * every run length up to 41, so both the 8-byte words and the tail are covered. */
static void test_dsv4_codes(void)
{
    uint8_t buf[41], want[41];
    int bad = 0;
    size_t bad_n = 0;
    unsigned bad_v = 0;
    for (size_t n = 0; n <= sizeof buf && !bad; n++)
        for (unsigned v = 0; v < 256 && !bad; v++) {
            for (size_t i = 0; i < n; i++) {
                buf[i] = (uint8_t)(v + 37u * i); /* every value at every position over v */
                const unsigned lo = buf[i] & 15u, hi = buf[i] >> 4;
                want[i] = (uint8_t)((lo == 8 ? 0 : lo) | (hi == 8 ? 0 : hi) << 4);
            }
            dt_qgroup_dsv4_codes(buf, n);
            if (n && memcmp(buf, want, n) != 0) {
                bad = 1;
                bad_n = n;
                bad_v = v;
            }
        }
    CHECK(!bad, "quant_layout.dsv4_codes", "length %zu, first byte 0x%02X", bad_n, bad_v);
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/dtcast_test_checkpoint_%ld", (long)getpid());
    mkdir(root, 0777);
    test_folder();
    test_write();
    test_lone();
    test_errors();
    test_jobs();
    test_dsv4_codes();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        printf("note: could not remove %s\n", root);
    return CHECK_EXIT();
}
