/* The write side of checkpoints (checkpoint.h): the one shard writer, the one index writer, and
 * the outputs of a job rewriting a whole checkpoint. Never prints. */
#include "files/checkpoint.h"

#include "files/job.h"
#include "files/json.h"
#include "files/pipeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static dtcast_status oom(dt_io_error *err)
{
    return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
}

typedef struct out_ref {
    const char *name;
    size_t item;
} out_ref;

static int by_ref_name(const void *a, const void *b)
{
    return strcmp(((const out_ref *)a)->name, ((const out_ref *)b)->name);
}

dtcast_status dt_ckpt_write_shard(dt_outfile *out, const char *path, const dt_st_tensor *items,
                                  size_t n, const dt_st_header *meta, const char *shown,
                                  dt_ckpt_fill_fn fill, void *ctx, uint64_t *tensor_bytes,
                                  dt_io_error *err)
{
    dt_st_tensor *e = calloc(n ? n : 1, sizeof *e);
    out_ref *refs = calloc(n ? n : 1, sizeof *refs);
    dtcast_status st = e && refs ? DTCAST_OK : oom(err);
    for (size_t i = 0; st == DTCAST_OK && i < n; i++) {
        e[i].name = items[i].name;
        e[i].type = items[i].type;
        e[i].ndim = items[i].ndim;
        memcpy(e[i].dims, items[i].dims, (size_t)items[i].ndim * sizeof items[i].dims[0]);
        refs[i] = (out_ref){items[i].name, i};
    }
    if (st == DTCAST_OK)
        qsort(refs, n, sizeof *refs, by_ref_name);
    for (size_t i = 1; st == DTCAST_OK && i < n; i++)
        if (strcmp(refs[i - 1].name, refs[i].name) == 0)
            st = dt_io_where(dt_io_fail(err, DTCAST_ERR_BAD_FILE, "%s: two output tensors would be named '%s'", shown,
                                        refs[i].name),
                             err, shown, refs[i].name);
    uint8_t *prefix = NULL;
    size_t prefix_len = 0;
    const char *shown_out = path ? path : out->path;
    if (st == DTCAST_OK) {
        st = dt_st_build(e, n, meta ? meta->has_meta : 0, meta ? meta->meta : NULL,
                         meta ? meta->nmeta : 0, &prefix, &prefix_len, err);
        if (st != DTCAST_OK) {
            dt_io_error inner = *err;
            dt_io_fail(err, st, "%s: %s", shown_out, inner.message);
            dt_io_where(st, err, shown_out, NULL);
        }
    }
    if (st == DTCAST_OK && path)
        st = dt_outfile_open(out, path, err);
    if (st == DTCAST_OK)
        st = dt_outfile_write(out, prefix, prefix_len, err);
    free(prefix);
    for (size_t i = 0; st == DTCAST_OK && i < n; i++) {
        out_ref key = {e[i].name, 0};
        const out_ref *ref = bsearch(&key, refs, n, sizeof *refs, by_ref_name);
        uint64_t nbytes = e[i].end - e[i].begin;
        *tensor_bytes += nbytes;
        st = fill(ctx, ref->item, out, nbytes, err);
    }
    free(e);
    free(refs);
    return st;
}

dtcast_status dt_ckpt_write_index(dt_outfile *out, const char *path, const dt_st_index *ix,
                                  const dt_st_index_entry *entries, size_t n,
                                  uint64_t total_size, const char *shown, dt_io_error *err)
{
    dt_st_index copy = *ix; /* a shallow copy with the new weight_map */
    if (entries) {
        copy.entries = (dt_st_index_entry *)entries;
        copy.nentries = n;
    }
    uint8_t *buf = NULL;
    size_t len = 0;
    dtcast_status st = dt_st_index_build(&copy, total_size, &buf, &len, err);
    if (st != DTCAST_OK) {
        dt_io_error inner = *err;
        dt_io_fail(err, st, "%s: %s", shown, inner.message);
        dt_io_where(st, err, shown, NULL);
    }
    if (st == DTCAST_OK)
        st = dt_outfile_open(out, path, err);
    if (st == DTCAST_OK)
        st = dt_outfile_write(out, buf, len, err);
    free(buf);
    return st;
}

/* ---- a whole checkpoint's outputs --------------------------------------------------------- */

static int is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

dtcast_status dt_ckpt_out_init(dt_ckpt_out *o, const dt_ckpt *in, const char *out,
                               dt_io_error *err)
{
    memset(o, 0, sizeof *o);
    o->in = in;
    o->index.fd = o->config.fd = -1;
    size_t ns = in->nshards ? in->nshards : 1, no = in->nother ? in->nother : 1;
    o->path = strdup(out);
    o->shard_path = calloc(ns, sizeof *o->shard_path);
    o->shard = calloc(ns, sizeof *o->shard);
    o->other = calloc(no, sizeof *o->other);
    if (!o->path || !o->shard_path || !o->shard || !o->other)
        return oom(err);
    for (size_t i = 0; i < in->nother; i++)
        o->other[i].fd = -1;
    for (size_t i = 0; i < in->nshards; i++) {
        o->shard[i].fd = -1;
        o->shard_path[i] = in->folder ? dt_path_join(out, in->shards[i].name) : strdup(out);
        if (!o->shard_path[i])
            return oom(err);
    }
    return DTCAST_OK;
}

dtcast_status dt_ckpt_out_make_dir(const dt_ckpt_out *o, dt_io_error *err)
{
    if (!o->in->folder)
        return DTCAST_OK;
    if (mkdir(o->path, 0777) != 0 && errno != EEXIST)
        return dt_io_where(dt_io_fail(err, DTCAST_ERR_IO, "cannot create the folder '%s': %s",
                                      o->path, strerror(errno)),
                           err, o->path, NULL);
    if (!is_dir(o->path))
        return dt_io_where(dt_job_fail(err, 1, DTCAST_ERR_INVALID_ARGUMENT,
                                       "OUT '%s' must be a folder for the checkpoint in '%s'",
                                       o->path, o->in->in),
                           err, o->path, NULL);
    return DTCAST_OK;
}

dtcast_status dt_ckpt_out_shard(dt_ckpt_out *o, size_t s, const dt_st_tensor *items, size_t n,
                                dt_ckpt_fill_fn fill, void *ctx, uint64_t *tensor_bytes,
                                dt_io_error *err)
{
    const dt_ckpt_shard *sh = &o->in->shards[s];
    dt_st_header h = sh->h; /* a shallow copy: the metadata without drop_meta */
    dt_st_meta *kept = NULL;
    if (!o->in->npy && o->drop_meta && h.nmeta) {
        if (!(kept = malloc(h.nmeta * sizeof *kept)))
            return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
        size_t k = 0;
        for (size_t i = 0; i < h.nmeta; i++)
            if (strcmp(h.meta[i].key, o->drop_meta) != 0)
                kept[k++] = h.meta[i];
        h.meta = kept;
        h.nmeta = k;
    }
    dtcast_status st = dt_ckpt_write_shard(&o->shard[s], o->shard_path[s], items, n,
                                           o->in->npy ? NULL : &h, sh->path, fill, ctx,
                                           tensor_bytes, err);
    free(kept);
    return st;
}

dtcast_status dt_ckpt_out_index(dt_ckpt_out *o, const dt_st_index_entry *entries, size_t n,
                                uint64_t total_size, dt_io_error *err)
{
    if (!o->in->has_index)
        return DTCAST_OK;
    char *path = dt_path_join(o->path, o->in->index_name);
    dtcast_status st = path ? dt_ckpt_write_index(&o->index, path, &o->in->ix, entries, n,
                                                  total_size, o->in->index_name, err)
                            : oom(err);
    free(path);
    return st;
}

/* A JSON object's text with its top-level member `key` removed (value NULL) or set to the JSON
 * text value; a member that is not there is added after the last one when add (else the text
 * is kept as it is). */
static dtcast_status edit_member(const char *path, const uint8_t *text, size_t len,
                                 const char *key, const char *value, int add, dt_json_buf *b,
                                 dt_io_error *err)
{
    dt_json_doc doc;
    dtcast_status st = dt_json_parse(text, len, 0, path, &doc, err);
    if (st != DTCAST_OK)
        return dt_io_where(st, err, path, NULL);
    const dt_json_node *root = &doc.nodes[0];
    if (root->kind != DT_JSON_OBJECT) {
        dt_json_free(&doc);
        return dt_io_where(dt_io_fail(err, DTCAST_ERR_BAD_FILE, "%s: not a JSON object", path),
                           err, path, NULL);
    }
    const dt_json_node *prev = NULL, *found = NULL, *last = NULL, *after = NULL;
    for (const dt_json_node *m = dt_json_first(&doc, root); m; m = dt_json_next(&doc, m)) {
        if (!found && strcmp(dt_json_key(&doc, m), key) == 0) {
            found = m;
            after = dt_json_next(&doc, m);
        } else if (!found) {
            prev = m;
        }
        last = m;
    }
    if (found && value) { /* the value replaced in place */
        dt_json_put(b, text, found->at);
        dt_json_puts(b, value);
        dt_json_put(b, text + found->end, len - found->end);
    } else if (found) { /* the member and one comma beside it removed */
        size_t from = prev ? prev->end : found->key_at;
        size_t to = prev ? found->end : after ? after->key_at : found->end;
        dt_json_put(b, text, from);
        dt_json_put(b, text + to, len - to);
    } else if (value && add) { /* a member added after the last one, in its indentation */
        size_t at = last ? last->end : root->at + 1;
        size_t indent_at = last ? last->key_at : at;
        size_t line = indent_at;
        while (line > 0 && (text[line - 1] == ' ' || text[line - 1] == '\t'))
            line--;
        /* the last member alone on its line: the new one on a line of its own, indented alike;
         * else (a one-line object) after ", " on the same line */
        int own_line = !last || line == 0 || text[line - 1] == '\n';
        dt_json_put(b, text, at);
        dt_json_puts(b, !last ? "\n" : own_line ? ",\n" : ", ");
        if (last && own_line)
            dt_json_put(b, text + line, indent_at - line);
        else if (!last)
            dt_json_puts(b, "  ");
        dt_json_puts(b, "\"");
        dt_json_puts(b, key);
        dt_json_puts(b, "\": ");
        dt_json_puts(b, value);
        if (!last)
            dt_json_puts(b, "\n");
        dt_json_put(b, text + at, len - at);
    } else {
        dt_json_put(b, text, len);
    }
    dt_json_free(&doc);
    return b->oom ? dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory") : DTCAST_OK;
}

/* config.json's text with its quantization_config member removed, or set to qconfig, and
 * o->config_key's member set when it is there. */
static dtcast_status edit_config(const dt_ckpt_out *o, const char *path, const uint8_t *text,
                                 size_t len, const char *qconfig, dt_json_buf *b,
                                 dt_io_error *err)
{
    if (!o->config_key)
        return edit_member(path, text, len, "quantization_config", qconfig, 1, b, err);
    dt_json_buf first = {0};
    dtcast_status st = edit_member(path, text, len, "quantization_config", qconfig, 1, &first,
                                   err);
    if (st == DTCAST_OK)
        st = edit_member(path, (const uint8_t *)first.data, first.len, o->config_key, o->config_value, 0, b, err);
    free(first.data);
    return st;
}

dtcast_status dt_ckpt_out_extras(dt_ckpt_out *o, const char *qconfig, int drop_hf_quant,
                                 dt_io_error *err)
{
    const dt_ckpt *c = o->in;
    if (!c->folder)
        return DTCAST_OK;
    dtcast_status st = DTCAST_OK;
    if (c->has_config) {
        char *in = dt_path_join(c->dir, "config.json"), *out = dt_path_join(o->path, "config.json");
        uint8_t *text = NULL;
        size_t len = 0;
        dt_json_buf b = {0};
        if (!in || !out)
            st = oom(err);
        else if ((st = dt_read_file(in, &text, &len, err)) == DTCAST_OK)
            st = edit_config(o, in, text, len, qconfig, &b, err);
        if (st == DTCAST_OK && (st = dt_outfile_open(&o->config, out, err)) == DTCAST_OK)
            st = dt_outfile_write(&o->config, b.data, b.len, err);
        free(b.data);
        free(text);
        free(in);
        free(out);
    }
    for (size_t i = 0; st == DTCAST_OK && i < c->nother; i++) {
        if (drop_hf_quant && strcmp(c->other[i], "hf_quant_config.json") == 0)
            continue;
        char *in = dt_path_join(c->dir, c->other[i]), *out = dt_path_join(o->path, c->other[i]);
        dt_infile f;
        memset(&f, 0, sizeof f);
        f.fd = -1;
        if (!in || !out)
            st = oom(err);
        else if ((st = dt_infile_open(&f, in, err)) == DTCAST_OK &&
                 (st = dt_outfile_open(&o->other[i], out, err)) == DTCAST_OK)
            st = dt_stream_copy(&f, 0, f.size, &o->other[i], NULL, NULL, err);
        dt_infile_close(&f);
        free(in);
        free(out);
    }
    return st;
}

dtcast_status dt_ckpt_out_commit(dt_ckpt_out *o, dt_io_error *err)
{
    dtcast_status st = DTCAST_OK;
    for (size_t i = 0; st == DTCAST_OK && i < o->in->nshards; i++)
        st = dt_outfile_commit(&o->shard[i], err);
    for (size_t i = 0; st == DTCAST_OK && i < o->in->nother; i++)
        if (o->other[i].tmp)
            st = dt_outfile_commit(&o->other[i], err);
    if (st == DTCAST_OK && o->config.tmp)
        st = dt_outfile_commit(&o->config, err);
    if (st == DTCAST_OK && o->index.tmp)
        st = dt_outfile_commit(&o->index, err);
    return st;
}

void dt_ckpt_out_close(dt_ckpt_out *o)
{
    for (size_t i = 0; o->in && i < o->in->nshards; i++) {
        if (o->shard)
            dt_outfile_abort(&o->shard[i]);
        if (o->shard_path)
            free(o->shard_path[i]);
    }
    for (size_t i = 0; o->in && o->other && i < o->in->nother; i++)
        dt_outfile_abort(&o->other[i]);
    dt_outfile_abort(&o->index);
    dt_outfile_abort(&o->config);
    free(o->other);
    free(o->shard);
    free(o->shard_path);
    free(o->path);
    memset(o, 0, sizeof *o);
}
