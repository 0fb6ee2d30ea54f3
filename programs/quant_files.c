/* The checkpoint around dtcast quantize and dtcast dequantize (quant_files.h). */
#include "quant_files.h"

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

static int is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

#define join dt_path_join

int qf_open(qf_ckpt *c, const char *cmd, const char *in, const char *out)
{
    memset(c, 0, sizeof *c);
    c->cmd = cmd;
    c->out = out;
    c->index_out.fd = c->config_out.fd = -1;
    dt_file_kind kind = dt_file_kind_of(in);
    int npy_ok = strcmp(cmd, "quantize") == 0;
    /* OUT's kind for a lone file is checked before anything is read. */
    if (!is_dir(in) &&
        (kind == DT_FILE_SAFETENSORS || (kind == DT_FILE_NPY && npy_ok)) &&
        dt_file_kind_of(out) != DT_FILE_SAFETENSORS)
        return cli_usage(cmd, "OUT '%s': a .safetensors file for IN '%s' (or give a folder "
                              "for both)",
                         out, in);
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = dt_ckpt_open(&c->ck, in, npy_ok ? DT_CKPT_NPY : 0, &err);
    for (size_t i = 0; i < c->ck.nwarnings; i++)
        cli_warn("%s", c->ck.warnings[i]);
    if (st == DTCAST_ERR_INVALID_ARGUMENT) /* IN is not a checkpoint */
        return cli_usage(cmd, "%s", err.message);
    if (st != DTCAST_OK)
        return cli_fail("%s", err.message);
    if (c->ck.folder && dt_file_kind_of(out) == DT_FILE_SAFETENSORS)
        return cli_usage(cmd, "OUT '%s': a folder for the checkpoint in '%s'", out, in);
    c->out_path = calloc(c->ck.nshards ? c->ck.nshards : 1, sizeof *c->out_path);
    c->shard_out = calloc(c->ck.nshards ? c->ck.nshards : 1, sizeof *c->shard_out);
    if (!c->out_path || !c->shard_out)
        return cli_fail("out of memory");
    for (size_t i = 0; i < c->ck.nshards; i++) {
        c->shard_out[i].fd = -1;
        c->out_path[i] = c->ck.folder ? join(out, c->ck.shards[i].name) : strdup(out);
        if (!c->out_path[i])
            return cli_fail("out of memory");
    }
    return CLI_OK;
}

void qf_close(qf_ckpt *c)
{
    for (size_t i = 0; i < c->ck.nshards; i++) {
        if (c->shard_out)
            dt_outfile_abort(&c->shard_out[i]);
        if (c->out_path)
            free(c->out_path[i]);
    }
    for (size_t i = 0; c->other_out && i < c->ck.nother; i++)
        dt_outfile_abort(&c->other_out[i]);
    dt_outfile_abort(&c->index_out);
    dt_outfile_abort(&c->config_out);
    free(c->other_out);
    free(c->shard_out);
    free(c->out_path);
    dt_ckpt_close(&c->ck);
    memset(c, 0, sizeof *c);
}

int qf_make_out_dir(const qf_ckpt *c)
{
    if (!c->ck.folder)
        return CLI_OK;
    if (mkdir(c->out, 0777) != 0 && errno != EEXIST)
        return cli_fail("cannot create the folder '%s': %s", c->out, strerror(errno));
    if (!is_dir(c->out))
        return cli_usage(c->cmd, "OUT '%s' must be a folder for the checkpoint in '%s'", c->out,
                         c->ck.in);
    return CLI_OK;
}

uint8_t *qf_read(const qf_ckpt *c, size_t i)
{
    uint8_t *buf = NULL;
    dt_io_error err = DT_IO_ERROR_INIT;
    if (dt_ckpt_read(&c->ck, i, &buf, &err) != DTCAST_OK)
        cli_fail("%s", err.message);
    return buf;
}

int qf_write_index(qf_ckpt *c, const dt_st_index_entry *entries, size_t n, uint64_t total_size)
{
    if (!c->ck.has_index)
        return CLI_OK;
    dt_st_index ix = c->ck.ix; /* a shallow copy with the new weight_map */
    ix.entries = (dt_st_index_entry *)entries;
    ix.nentries = n;
    dt_io_error err = DT_IO_ERROR_INIT;
    uint8_t *buf = NULL;
    size_t len = 0;
    char *path = join(c->out, c->ck.index_name);
    int status = path ? CLI_OK : cli_fail("out of memory");
    if (status == CLI_OK && dt_st_index_build(&ix, total_size, &buf, &len, &err) != DTCAST_OK)
        status = cli_fail("%s: %s", c->ck.index_name, err.message);
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
    dt_io_error err = DT_IO_ERROR_INIT;
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
    if (!c->ck.folder)
        return CLI_OK;
    dt_io_error err = DT_IO_ERROR_INIT;
    int status = CLI_OK;
    if (c->ck.has_config) {
        char *in = join(c->ck.dir, "config.json"), *out = join(c->out, "config.json");
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
    if (status == CLI_OK && c->ck.nother && !(c->other_out = calloc(c->ck.nother, sizeof *c->other_out)))
        status = cli_fail("out of memory");
    for (size_t i = 0; status == CLI_OK && i < c->ck.nother; i++) {
        c->other_out[i].fd = -1;
        if (drop_hf_quant && strcmp(c->ck.other[i], "hf_quant_config.json") == 0)
            continue;
        char *in = join(c->ck.dir, c->ck.other[i]), *out = join(c->out, c->ck.other[i]);
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
    dt_io_error err = DT_IO_ERROR_INIT;
    for (size_t i = 0; i < c->ck.nshards; i++)
        if (dt_outfile_commit(&c->shard_out[i], &err) != DTCAST_OK)
            return cli_fail("%s", err.message);
    for (size_t i = 0; c->other_out && i < c->ck.nother; i++)
        if (c->other_out[i].tmp && dt_outfile_commit(&c->other_out[i], &err) != DTCAST_OK)
            return cli_fail("%s", err.message);
    if (c->config_out.tmp && dt_outfile_commit(&c->config_out, &err) != DTCAST_OK)
        return cli_fail("%s", err.message);
    if (c->index_out.tmp && dt_outfile_commit(&c->index_out, &err) != DTCAST_OK)
        return cli_fail("%s", err.message);
    return CLI_OK;
}
