/* Tests of files/checkpoint.h, the checkpoint the jobs read: a model folder with an index, two
 * shards, config.json, another file, a sub-folder, a shard the index does not list and a second
 * index (the shards, tensors, absolute offsets, other files and warnings expected from how the
 * files were written here, byte by byte); a lone file; a .npy with and without DT_CKPT_NPY; a
 * folder without an index; two tensors of one name over two shards; a broken shard (the error
 * names the file and the byte offset); a folder of two indexes without model.safetensors's. */
#include "check.h"
#include "files/checkpoint.h"

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

int main(void)
{
    snprintf(root, sizeof root, "/tmp/dtcast_test_checkpoint_%ld", (long)getpid());
    mkdir(root, 0777);
    test_folder();
    test_lone();
    test_errors();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        printf("note: could not remove %s\n", root);
    return CHECK_EXIT();
}
