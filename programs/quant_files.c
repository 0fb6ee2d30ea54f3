/* The checkpoint around dtcast quantize and dtcast dequantize (quant_files.h): the command
 * line's side of files/checkpoint.h (its errors and warnings printed). */
#include "quant_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

int qf_fail(const qf_ckpt *c, dtcast_status st, const dt_io_error *err)
{
    if (st == DTCAST_OK)
        return CLI_OK;
    if (!err->message[0]) /* printed already */
        return CLI_FAIL;
    if (st == DTCAST_ERR_INVALID_ARGUMENT)
        return cli_usage(c->cmd, "%s", err->message);
    return cli_fail("%s", err->message);
}

int qf_open(qf_ckpt *c, const char *cmd, const char *in, const char *out)
{
    memset(c, 0, sizeof *c);
    c->cmd = cmd;
    c->out = out;
    dt_file_kind kind = dt_file_kind_of(in);
    int npy_ok = strcmp(cmd, "quantize") == 0;
    /* OUT's kind for a lone file is checked before anything is read. */
    if (!is_dir(in) && (kind == DT_FILE_SAFETENSORS || (kind == DT_FILE_NPY && npy_ok)) &&
        dt_file_kind_of(out) != DT_FILE_SAFETENSORS)
        return cli_usage(cmd, "OUT '%s': a .safetensors file for IN '%s' (or give a folder "
                              "for both)",
                         out, in);
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = dt_ckpt_open(&c->ck, in, npy_ok ? DT_CKPT_NPY : 0, &err);
    for (size_t i = 0; i < c->ck.nwarnings; i++)
        cli_warn("%s", c->ck.warnings[i]);
    if (st != DTCAST_OK) /* DTCAST_ERR_INVALID_ARGUMENT: IN is not a checkpoint */
        return qf_fail(c, st, &err);
    if (c->ck.folder && dt_file_kind_of(out) == DT_FILE_SAFETENSORS)
        return cli_usage(cmd, "OUT '%s': a folder for the checkpoint in '%s'", out, in);
    return qf_fail(c, dt_ckpt_out_init(&c->o, &c->ck, out, &err), &err);
}

void qf_close(qf_ckpt *c)
{
    dt_ckpt_out_close(&c->o);
    dt_ckpt_close(&c->ck);
    memset(c, 0, sizeof *c);
}

uint8_t *qf_read(const qf_ckpt *c, size_t i)
{
    uint8_t *buf = NULL;
    dt_io_error err = DT_IO_ERROR_INIT;
    if (dt_ckpt_read(&c->ck, i, &buf, &err) != DTCAST_OK)
        cli_fail("%s", err.message);
    return buf;
}

int qf_finish(qf_ckpt *c, const dt_st_index_entry *entries, size_t n, uint64_t total_size,
              const char *qconfig, int drop_hf_quant)
{
    dt_io_error err = DT_IO_ERROR_INIT;
    dtcast_status st = dt_ckpt_out_index(&c->o, entries, n, total_size, &err);
    if (st == DTCAST_OK)
        st = dt_ckpt_out_extras(&c->o, qconfig, drop_hf_quant, &err);
    if (st == DTCAST_OK)
        st = dt_ckpt_out_commit(&c->o, &err);
    return qf_fail(c, st, &err);
}
