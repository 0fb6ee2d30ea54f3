/* The checkpoint around dtcast quantize and dtcast dequantize (quant_files.h). */
#define _DEFAULT_SOURCE 1 /* madvise: glibc makes posix_madvise(POSIX_MADV_DONTNEED) a no-op */

#include "quant_files.h"

#include "cast_files.h"
#include "files/json.h"
#include "files/npy.h"
#include "files/pipeline.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static char *join(const char *dir, const char *name)
{
    size_t d = strlen(dir);
    char *p = malloc(d + strlen(name) + 2);
    if (p)
        sprintf(p, "%s%s%s", dir, d && dir[d - 1] != '/' ? "/" : "", name);
    return p;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int add_shard(qf_ckpt *c, const char *name)
{
    qf_shard *grown = realloc(c->shards, (c->nshards + 1) * sizeof *grown);
    if (!grown)
        return cli_fail("out of memory");
    c->shards = grown;
    qf_shard *s = &c->shards[c->nshards++];
    memset(s, 0, sizeof *s);
    s->file.fd = -1;
    s->name = strdup(name);
    s->in_path = c->folder ? join(c->in_dir, name) : strdup(c->in);
    s->out_path = c->folder ? join(c->out, name) : strdup(c->out);
    if (!s->name || !s->in_path || !s->out_path)
        return cli_fail("out of memory");
    return CLI_OK;
}

static int add_other(qf_ckpt *c, const char *name)
{
    char **grown = realloc(c->other, (c->nother + 1) * sizeof *grown);
    if (!grown)
        return cli_fail("out of memory");
    c->other = grown;
    if (!(c->other[c->nother] = strdup(name)))
        return cli_fail("out of memory");
    c->nother++;
    return CLI_OK;
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The folder's files: an index (*.safetensors.index.json, model.safetensors.index.json first),
 * the shards, config.json and the others. */
static int scan_folder(qf_ckpt *c, const char *index_name)
{
    DIR *d = opendir(c->in_dir);
    if (!d)
        return cli_fail("cannot read the folder '%s': %s", c->in_dir, strerror(errno));
    char **names = NULL;
    size_t n = 0;
    int status = CLI_OK;
    for (struct dirent *e; status == CLI_OK && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char **grown = realloc(names, (n + 1) * sizeof *grown);
        if (!grown || !(grown[n] = strdup(e->d_name))) {
            names = grown ? grown : names;
            status = cli_fail("out of memory");
            break;
        }
        names = grown;
        n++;
    }
    closedir(d);
    if (status == CLI_OK)
        qsort(names, n, sizeof *names, by_str);
    /* The index: the one named, else model.safetensors.index.json, else the only one. */
    const char *ixname = index_name;
    size_t nindex = 0;
    for (size_t i = 0; status == CLI_OK && !index_name && i < n; i++)
        if (ends_with(names[i], ".safetensors.index.json")) {
            nindex++;
            if (!ixname || strcmp(names[i], "model.safetensors.index.json") == 0)
                ixname = names[i];
        }
    if (status == CLI_OK && nindex > 1 && strcmp(ixname, "model.safetensors.index.json") != 0)
        status = cli_fail("%s holds %zu *.safetensors.index.json files: give the one to use",
                          c->in_dir, nindex);
    if (status == CLI_OK && ixname && !(c->index_name = strdup(ixname)))
        status = cli_fail("out of memory");
    if (status == CLI_OK && c->index_name) {
        char *path = join(c->in_dir, c->index_name);
        dt_io_error err = {""};
        dt_infile f;
        uint8_t *json = NULL;
        size_t len = 0;
        if (!path || dt_infile_open(&f, path, &err) != DTCAST_OK) {
            status = path ? cli_fail("%s", err.message) : cli_fail("out of memory");
        } else {
            dtcast_status st = dt_infile_slurp(&f, &json, &len, &err);
            dt_infile_close(&f);
            if (st == DTCAST_OK)
                st = dt_st_index_parse(json, len, &c->ix, &err);
            if (st != DTCAST_OK)
                status = cli_fail("%s: %s", path, err.message);
            c->has_index = st == DTCAST_OK;
        }
        free(json);
        free(path);
        for (size_t i = 0; status == CLI_OK && i < c->ix.nshards; i++)
            status = add_shard(c, c->ix.shards[i]);
    }
    for (size_t i = 0; status == CLI_OK && i < n; i++) {
        const char *name = names[i];
        char *path = join(c->in_dir, name);
        int dir = path && is_dir(path);
        free(path);
        if (c->index_name && strcmp(name, c->index_name) == 0)
            continue;
        if (dir) {
            cli_warn("%s/%s: a folder inside the model folder is not copied", c->in_dir, name);
        } else if (strcmp(name, "config.json") == 0) {
            c->has_config = 1;
        } else if (ends_with(name, ".safetensors")) {
            int listed = 0;
            for (size_t k = 0; k < c->nshards; k++)
                listed |= strcmp(c->shards[k].name, name) == 0;
            if (!c->has_index)
                status = add_shard(c, name);
            else if (!listed)
                cli_warn("%s/%s: not in the index: left out", c->in_dir, name);
        } else if (ends_with(name, ".safetensors.index.json")) {
            cli_warn("%s/%s: another index: left out", c->in_dir, name);
        } else {
            status = add_other(c, name);
        }
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (status == CLI_OK && c->nshards == 0)
        status = cli_fail("%s: no *.safetensors file (and no index)", c->in_dir);
    return status;
}

/* A .npy as a one-tensor shard (quantize). */
static int open_npy(qf_ckpt *c, qf_shard *s)
{
    dt_io_error err = {""};
    dt_npy_info info;
    if (dt_npy_read_header(s->map, s->map_len, s->file.size, DTCAST_UNDEFINED, &info, &err) !=
        DTCAST_OK)
        return cli_fail("%s: %s", c->in, err.message);
    if (info.strings || info.fortran || !dt_layout_is_native(&info.layout))
        return cli_fail("%s: %s arrays are not quantized (give a C-order little-endian float "
                        "array)",
                        c->in, info.descr);
    s->h.tensors = calloc(1, sizeof *s->h.tensors);
    const char *slash = strrchr(c->in, '/');
    char *stem = strdup(slash ? slash + 1 : c->in);
    if (!s->h.tensors || !stem) {
        free(stem);
        return cli_fail("out of memory");
    }
    char *dot = strrchr(stem, '.');
    if (dot && dot != stem)
        *dot = '\0';
    s->h.ntensors = 1;
    s->h.data_start = info.data_offset;
    dt_st_tensor *t = &s->h.tensors[0];
    t->name = stem;
    t->type = info.type;
    t->ndim = info.ndim;
    memcpy(t->dims, info.dims, sizeof t->dims);
    t->count = info.count;
    t->begin = 0;
    t->end = info.data_bytes;
    return CLI_OK;
}

int qf_open(qf_ckpt *c, const char *cmd, const char *in, const char *out)
{
    memset(c, 0, sizeof *c);
    c->cmd = cmd;
    c->in = in;
    c->out = out;
    c->index_out.fd = c->config_out.fd = -1;
    int status = CLI_OK;
    dt_file_kind kind = dt_file_kind_of(in);
    if (is_dir(in)) {
        c->folder = 1;
        if (!(c->in_dir = strdup(in)))
            return cli_fail("out of memory");
        status = scan_folder(c, NULL);
    } else if (kind == DT_FILE_SAFETENSORS_INDEX) {
        c->folder = 1;
        const char *slash = strrchr(in, '/');
        c->in_dir = slash ? strndup(in, (size_t)(slash - in)) : strdup(".");
        if (!c->in_dir)
            return cli_fail("out of memory");
        status = scan_folder(c, slash ? slash + 1 : in);
    } else if (kind == DT_FILE_SAFETENSORS || (kind == DT_FILE_NPY && strcmp(cmd, "quantize") == 0)) {
        c->npy = kind == DT_FILE_NPY;
        if (!(c->in_dir = strdup("")))
            return cli_fail("out of memory");
        if (dt_file_kind_of(out) != DT_FILE_SAFETENSORS)
            return cli_usage(cmd, "OUT '%s': a .safetensors file for IN '%s' (or give a folder "
                                  "for both)",
                             out, in);
        status = add_shard(c, in);
    } else {
        char why[512];
        if (kind == DT_FILE_UNKNOWN || kind == DT_FILE_RAW || kind == DT_FILE_PB)
            return cli_usage(cmd, "IN '%s': give a .safetensors file, a *.safetensors.index.json, "
                                  "a model folder%s (%s)",
                             in, strcmp(cmd, "quantize") == 0 ? " or a .npy" : "",
                             dt_file_kind_refusal(in, why, sizeof why) ? why : "not one of those");
        return cli_usage(cmd, "IN '%s' is not a checkpoint", in);
    }
    if (status == CLI_OK && c->folder && dt_file_kind_of(out) == DT_FILE_SAFETENSORS)
        status = cli_usage(cmd, "OUT '%s': a folder for the checkpoint in '%s'", out, in);
    size_t total = 0;
    for (size_t i = 0; status == CLI_OK && i < c->nshards; i++) {
        qf_shard *s = &c->shards[i];
        dt_io_error err = {""};
        if (dt_infile_open(&s->file, s->in_path, &err) != DTCAST_OK ||
            dt_infile_map(&s->file, &s->map, &s->map_len, &err) != DTCAST_OK) {
            status = cli_fail("%s", err.message);
            break;
        }
        if (c->npy)
            status = open_npy(c, s);
        else if (dt_st_read_header(&s->file, &s->h, &err) != DTCAST_OK)
            status = strstr(err.message, s->in_path) ? cli_fail("%s", err.message)
                                                     : cli_fail("%s: %s", s->in_path, err.message);
        total += s->h.ntensors;
    }
    if (status != CLI_OK)
        return status;
    c->t = calloc(total ? total : 1, sizeof *c->t);
    c->at = calloc(total ? total : 1, sizeof *c->at);
    if (!c->t || !c->at)
        return cli_fail("out of memory");
    for (size_t i = 0; i < c->nshards; i++) {
        const dt_st_header *h = &c->shards[i].h;
        for (size_t k = 0; k < h->ntensors; k++) {
            const dt_st_tensor *e = &h->tensors[k];
            dt_qt *t = &c->t[c->n];
            if (e->ndim > DTCAST_MAX_DIMS)
                return cli_fail("%s: tensor '%s' has %d axes (at most %d)",
                                c->shards[i].in_path, e->name, e->ndim, DTCAST_MAX_DIMS);
            t->name = e->name;
            t->type = e->type;
            t->ndim = e->ndim;
            memcpy(t->dims, e->dims, (size_t)e->ndim * sizeof e->dims[0]);
            c->at[c->n] = (qf_tensor){e, i, h->data_start + e->begin, e->end - e->begin};
            c->n++;
        }
    }
    /* Names are unique over the shards (the plan looks them up). */
    const char **names = malloc((c->n ? c->n : 1) * sizeof *names);
    if (!names)
        return cli_fail("out of memory");
    for (size_t i = 0; i < c->n; i++)
        names[i] = c->t[i].name;
    qsort(names, c->n, sizeof *names, by_str);
    for (size_t i = 1; status == CLI_OK && i < c->n; i++)
        if (strcmp(names[i - 1], names[i]) == 0)
            status = cli_fail("%s: two tensors are named '%s'", in, names[i]);
    free(names);
    return status;
}

void qf_close(qf_ckpt *c)
{
    for (size_t i = 0; i < c->nshards; i++) {
        qf_shard *s = &c->shards[i];
        dt_outfile_abort(&s->out);
        if (c->npy)
            free(s->h.tensors ? s->h.tensors[0].name : NULL);
        if (c->npy) {
            free(s->h.tensors);
            s->h.tensors = NULL;
            s->h.ntensors = 0;
        }
        dt_st_header_free(&s->h);
        dt_infile_close(&s->file);
        free(s->name);
        free(s->in_path);
        free(s->out_path);
    }
    for (size_t i = 0; i < c->nother; i++) {
        if (c->other_out)
            dt_outfile_abort(&c->other_out[i]);
        free(c->other[i]);
    }
    dt_outfile_abort(&c->index_out);
    dt_outfile_abort(&c->config_out);
    free(c->other_out);
    free(c->other);
    free(c->shards);
    free(c->t);
    free(c->at);
    free(c->in_dir);
    free(c->index_name);
    dt_st_index_free(&c->ix);
    memset(c, 0, sizeof *c);
}

int qf_make_out_dir(const qf_ckpt *c)
{
    if (!c->folder)
        return CLI_OK;
    if (mkdir(c->out, 0777) != 0 && errno != EEXIST)
        return cli_fail("cannot create the folder '%s': %s", c->out, strerror(errno));
    if (!is_dir(c->out))
        return cli_usage(c->cmd, "OUT '%s' must be a folder for the checkpoint in '%s'", c->out,
                         c->in);
    return CLI_OK;
}

uint8_t *qf_read(const qf_ckpt *c, size_t i)
{
    const qf_tensor *t = &c->at[i];
    if (t->bytes > SIZE_MAX - 64) {
        cli_fail("tensor '%s' is too large", c->t[i].name);
        return NULL;
    }
    uint8_t *buf = malloc(t->bytes ? (size_t)t->bytes : 1);
    if (!buf) {
        cli_fail("out of memory for tensor '%s' (%llu bytes)", c->t[i].name,
                 (unsigned long long)t->bytes);
        return NULL;
    }
    memcpy(buf, qf_data(c, i), (size_t)t->bytes);
    qf_release(c, t->shard, t->at, t->bytes);
    return buf;
}

void qf_release(const qf_ckpt *c, size_t s, uint64_t at, uint64_t len)
{
    const qf_shard *sh = &c->shards[s];
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || !sh->map || !sh->map_len || len == 0)
        return;
    uint64_t lo = at / (uint64_t)page * (uint64_t)page, hi = at + len;
    if (hi > sh->map_len)
        hi = sh->map_len;
    if (hi > lo)
        (void)madvise((void *)(sh->map + lo), (size_t)(hi - lo), MADV_DONTNEED);
}

uint64_t qf_input_bytes(const qf_ckpt *c)
{
    uint64_t total = 0;
    for (size_t i = 0; i < c->nshards; i++)
        total += c->shards[i].file.size;
    return total;
}

int qf_write_index(qf_ckpt *c, const dt_st_index_entry *entries, size_t n, uint64_t total_size)
{
    if (!c->has_index)
        return CLI_OK;
    dt_st_index ix = c->ix; /* a shallow copy with the new weight_map */
    ix.entries = (dt_st_index_entry *)entries;
    ix.nentries = n;
    dt_io_error err = {""};
    uint8_t *buf = NULL;
    size_t len = 0;
    char *path = join(c->out, c->index_name);
    int status = path ? CLI_OK : cli_fail("out of memory");
    if (status == CLI_OK && dt_st_index_build(&ix, total_size, &buf, &len, &err) != DTCAST_OK)
        status = cli_fail("%s: %s", c->index_name, err.message);
    if (status == CLI_OK && (dt_outfile_open(&c->index_out, path, &err) != DTCAST_OK ||
                             dt_outfile_write(&c->index_out, buf, len, &err) != DTCAST_OK))
        status = cli_fail("%s", err.message);
    free(buf);
    free(path);
    return status;
}

/* config.json's text with its quantization_config member removed, or set to qconfig. */
static int edit_config(const char *path, const uint8_t *text, size_t len, const char *qconfig,
                       dt_json_buf *b)
{
    dt_json_doc doc;
    dt_io_error err = {""};
    if (dt_json_parse(text, len, 0, path, &doc, &err) != DTCAST_OK)
        return cli_fail("%s", err.message);
    const dt_json_node *root = &doc.nodes[0];
    if (root->kind != DT_JSON_OBJECT) {
        dt_json_free(&doc);
        return cli_fail("%s: not a JSON object", path);
    }
    const dt_json_node *prev = NULL, *found = NULL, *last = NULL, *after = NULL;
    for (const dt_json_node *m = dt_json_first(&doc, root); m; m = dt_json_next(&doc, m)) {
        if (!found && strcmp(dt_json_key(&doc, m), "quantization_config") == 0) {
            found = m;
            after = dt_json_next(&doc, m);
        } else if (!found) {
            prev = m;
        }
        last = m;
    }
    if (found && qconfig) { /* the value replaced in place */
        dt_json_put(b, text, found->at);
        dt_json_puts(b, qconfig);
        dt_json_put(b, text + found->end, len - found->end);
    } else if (found) { /* the member and one comma beside it removed */
        size_t from = prev ? prev->end : found->key_at;
        size_t to = prev ? found->end : after ? after->key_at : found->end;
        dt_json_put(b, text, from);
        dt_json_put(b, text + to, len - to);
    } else if (qconfig) { /* a member added after the last one, in its indentation */
        size_t at = last ? last->end : root->at + 1;
        size_t indent_at = last ? last->key_at : at;
        size_t line = indent_at;
        while (line > 0 && text[line - 1] != '\n')
            line--;
        dt_json_put(b, text, at);
        dt_json_puts(b, last ? ",\n" : "\n");
        if (last)
            dt_json_put(b, text + line, indent_at - line);
        else
            dt_json_puts(b, "  ");
        dt_json_puts(b, "\"quantization_config\": ");
        dt_json_puts(b, qconfig);
        if (!last)
            dt_json_puts(b, "\n");
        dt_json_put(b, text + at, len - at);
    } else {
        dt_json_put(b, text, len);
    }
    dt_json_free(&doc);
    return b->oom ? cli_fail("out of memory") : CLI_OK;
}

int qf_write_extras(qf_ckpt *c, const char *qconfig, int drop_hf_quant)
{
    if (!c->folder)
        return CLI_OK;
    dt_io_error err = {""};
    int status = CLI_OK;
    if (c->has_config) {
        char *in = join(c->in_dir, "config.json"), *out = join(c->out, "config.json");
        uint8_t *text = NULL;
        size_t len = 0;
        dt_json_buf b = {0};
        if (!in || !out)
            status = cli_fail("out of memory");
        else if (dt_read_file(in, &text, &len, &err) != DTCAST_OK)
            status = cli_fail("%s", err.message);
        else
            status = edit_config(in, text, len, qconfig, &b);
        if (status == CLI_OK && (dt_outfile_open(&c->config_out, out, &err) != DTCAST_OK ||
                                 dt_outfile_write(&c->config_out, b.data, b.len, &err) != DTCAST_OK))
            status = cli_fail("%s", err.message);
        free(b.data);
        free(text);
        free(in);
        free(out);
    }
    if (status == CLI_OK && c->nother && !(c->other_out = calloc(c->nother, sizeof *c->other_out)))
        status = cli_fail("out of memory");
    for (size_t i = 0; status == CLI_OK && i < c->nother; i++) {
        c->other_out[i].fd = -1;
        if (drop_hf_quant && strcmp(c->other[i], "hf_quant_config.json") == 0)
            continue;
        char *in = join(c->in_dir, c->other[i]), *out = join(c->out, c->other[i]);
        dt_infile f;
        memset(&f, 0, sizeof f);
        f.fd = -1;
        if (!in || !out)
            status = cli_fail("out of memory");
        else if (dt_infile_open(&f, in, &err) != DTCAST_OK ||
                 dt_outfile_open(&c->other_out[i], out, &err) != DTCAST_OK ||
                 dt_stream_copy(&f, 0, f.size, &c->other_out[i], NULL, NULL, &err) != DTCAST_OK)
            status = cli_fail("%s", err.message);
        dt_infile_close(&f);
        free(in);
        free(out);
    }
    return status;
}

int qf_commit(qf_ckpt *c)
{
    dt_io_error err = {""};
    for (size_t i = 0; i < c->nshards; i++)
        if (dt_outfile_commit(&c->shards[i].out, &err) != DTCAST_OK)
            return cli_fail("%s", err.message);
    for (size_t i = 0; c->other_out && i < c->nother; i++)
        if (c->other_out[i].tmp && dt_outfile_commit(&c->other_out[i], &err) != DTCAST_OK)
            return cli_fail("%s", err.message);
    if (c->config_out.tmp && dt_outfile_commit(&c->config_out, &err) != DTCAST_OK)
        return cli_fail("%s", err.message);
    if (c->index_out.tmp && dt_outfile_commit(&c->index_out, &err) != DTCAST_OK)
        return cli_fail("%s", err.message);
    return CLI_OK;
}
