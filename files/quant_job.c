/* What the quantize and dequantize jobs share (quant_job.h). */
#include "files/quant_job.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int dt_qf_fail(const dt_qf *c, int usage, const char *fmt, ...)
{
    char text[sizeof c->err_out->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    /* The status of the jobs' own messages: "out of memory", "cannot ..." (a system call on a
     * file failed: IO), else the input breaks its format (BAD_FILE). A failure passed up from a
     * reader or writer keeps the status its record holds (dt_qf_status). */
    dt_job_fail(c->err_out, usage,
                usage ? DTCAST_ERR_INVALID_ARGUMENT
                : strncmp(text, "out of memory", 13) == 0 ? DTCAST_ERR_OUT_OF_MEMORY
                : strncmp(text, "cannot ", 7) == 0        ? DTCAST_ERR_IO
                                                          : DTCAST_ERR_BAD_FILE,
                "%s", text);
    dt_io_where(DTCAST_ERR_BAD_FILE, c->err_out, NULL, NULL); /* the offset a message names */
    return usage ? JOB_USAGE : JOB_FAIL;
}

int dt_qf_fail_at(const dt_qf *c, const char *file, const char *tensor, const char *fmt, ...)
{
    char text[sizeof c->err_out->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    int status = dt_qf_fail(c, 0, "%s", text);
    dt_io_where(DTCAST_ERR_BAD_FILE, c->err_out, file, tensor);
    return status;
}

int dt_qf_status(const dt_qf *c, dtcast_status st)
{
    if (st == DTCAST_OK)
        return JOB_OK;
    return c->err_out->usage ? JOB_USAGE : JOB_FAIL;
}

dtcast_status dt_qf_result(const dt_qf *c, int status)
{
    if (status == JOB_OK)
        return DTCAST_OK;
    if (c->err_out->usage)
        return DTCAST_ERR_INVALID_ARGUMENT;
    return c->err_out->status != DTCAST_OK ? c->err_out->status : DTCAST_ERR_BAD_FILE;
}

static int is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

int dt_qf_open(dt_qf *c, const char *cmd, const char *in, const char *out, dt_io_error *err,
               const dt_job_hooks *hooks)
{
    memset(c, 0, sizeof *c);
    c->cmd = cmd;
    c->out = out;
    c->err_out = err;
    c->hooks = hooks;
    dt_file_kind kind = dt_file_kind_of(in);
    int npy_ok = strcmp(cmd, "quantize") == 0;
    /* OUT's kind for a lone file is checked before anything is read. */
    if (!is_dir(in) && (kind == DT_FILE_SAFETENSORS || (kind == DT_FILE_NPY && npy_ok)) &&
        dt_file_kind_of(out) != DT_FILE_SAFETENSORS)
        return USAGE(c, "OUT '%s': a .safetensors file for IN '%s' (or give a folder for both)",
                     out, in);
    dtcast_status st = dt_ckpt_open(&c->ck, in, npy_ok ? DT_CKPT_NPY : 0, err);
    for (size_t i = 0; i < c->ck.nwarnings; i++)
        dt_job_warn(hooks, "%s", c->ck.warnings[i]);
    if (st != DTCAST_OK) /* DTCAST_ERR_INVALID_ARGUMENT: IN is not a checkpoint */
        return st == DTCAST_ERR_INVALID_ARGUMENT ? USAGE(c, "%s", err->message) : JOB_FAIL;
    if (c->ck.folder && dt_file_kind_of(out) == DT_FILE_SAFETENSORS)
        return USAGE(c, "OUT '%s': a folder for the checkpoint in '%s'", out, in);
    return dt_qf_status(c, dt_ckpt_out_init(&c->o, &c->ck, out, err));
}

void dt_qf_close(dt_qf *c)
{
    dt_ckpt_out_close(&c->o);
    dt_ckpt_close(&c->ck);
    memset(c, 0, sizeof *c);
}

uint8_t *dt_qf_read(const dt_qf *c, size_t i)
{
    uint8_t *buf = NULL;
    dt_ckpt_read(&c->ck, i, &buf, c->err_out);
    return buf;
}

static dtcast_status read_mapped(void *ctx, size_t i, void *buf, size_t len, dt_io_error *err)
{
    (void)err;
    memcpy(buf, dt_ckpt_data(&((dt_qf *)ctx)->ck, i), len);
    return DTCAST_OK;
}

int dt_qf_pack_shapes(dt_qf *c, dt_qplan *plan)
{
    dt_io_error e = DT_IO_ERROR_INIT;
    if (dt_qplan_pack_shapes(plan, c->ck.t, read_mapped, c, &e) != DTCAST_OK)
        return FAIL(c, "%s", e.message);
    return JOB_OK;
}

int dt_qf_finish(dt_qf *c, const dt_st_index_entry *entries, size_t n, uint64_t total_size,
                 const char *qconfig, int drop_hf_quant)
{
    dtcast_status st = dt_ckpt_out_index(&c->o, entries, n, total_size, c->err_out);
    if (st == DTCAST_OK)
        st = dt_ckpt_out_extras(&c->o, qconfig, drop_hf_quant, c->err_out);
    if (st == DTCAST_OK)
        st = dt_ckpt_out_commit(&c->o, c->err_out);
    return dt_qf_status(c, st);
}
