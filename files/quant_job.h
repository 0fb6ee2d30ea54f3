/* What the quantize and dequantize jobs share (quant_job.c; internal to files/): the input
 * checkpoint with its outputs, and the failure helpers of their steps. */
#ifndef DTCAST_FILES_QUANT_JOB_H
#define DTCAST_FILES_QUANT_JOB_H

#include "files/checkpoint.h"
#include "files/job.h"

#include <stdint.h>

/* A step's result: JOB_OK, or JOB_FAIL / JOB_USAGE with the error in the job's err_out. */
enum { JOB_OK = 0, JOB_FAIL = 1, JOB_USAGE = 2 };

typedef struct dt_qf {
    dt_ckpt ck;
    dt_ckpt_out o;
    const char *cmd; /* "quantize", "dequantize" */
    const char *out;
    dt_io_error *err_out;
    const dt_job_hooks *hooks;
} dt_qf;

/* Writes the error (a usage error when usage) into c->err_out; returns JOB_FAIL or JOB_USAGE. */
int dt_qf_fail(const dt_qf *c, int usage, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
#define FAIL(c, ...) dt_qf_fail((c), 0, __VA_ARGS__)
/* The same, naming the file and the tensor in the record's fields too. */
int dt_qf_fail_at(const dt_qf *c, const char *file, const char *tensor, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Tensor i's failure: its shard's path and its name. */
#define FAIL_T(c, i, ...) dt_qf_fail_at((c), (c)->ck.shards[(c)->ck.at[i].shard].path, (c)->ck.t[i].name, __VA_ARGS__)
#define USAGE(c, ...) dt_qf_fail((c), 1, __VA_ARGS__)
/* JOB_OK for DTCAST_OK, else the step's failure (the message is in c->err_out already). */
int dt_qf_status(const dt_qf *c, dtcast_status st);
/* The job's status from a step's result. */
dtcast_status dt_qf_result(const dt_qf *c, int status);

/* Opens IN for OUT (every shard mapped, every header checked; its warnings through the hooks);
 * a .npy only for quantize. */
int dt_qf_open(dt_qf *c, const char *cmd, const char *in, const char *out, dt_io_error *err,
               const dt_job_hooks *hooks);
/* Removes every output not committed, unmaps and frees. */
void dt_qf_close(dt_qf *c);
/* Tensor i's data in a new buffer; NULL after the error. */
uint8_t *dt_qf_read(const dt_qf *c, size_t i);
/* pack-quantized groups of the plan: their last dimension and bits from X.weight_shape's data
 * (dt_qgroup_set_k), the zero points' shape checked against them; an error names the tensor. */
int dt_qf_pack_shapes(dt_qf *c, dt_qplan *plan);
/* The index (weight_map entries[0, n), total_size), config.json (quantization_config removed
 * when qconfig is NULL, else set to it), the other files (hf_quant_config.json dropped when
 * drop_hf_quant), then every output renamed into place. */
int dt_qf_finish(dt_qf *c, const dt_st_index_entry *entries, size_t n, uint64_t total_size,
                 const char *qconfig, int drop_hf_quant);

#endif /* DTCAST_FILES_QUANT_JOB_H */
