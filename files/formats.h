/* The table of file kinds (formats.c): one row per kind dtcast reads or writes, with its name,
 * the file name endings that select it and what it can hold. dt_file_kind_of (tensor.h) is a
 * lookup in it; the readers and writers of each kind live in their own files (npy.c,
 * onnx_proto.c, safetensors.c; raw data is the pipeline's own layout). */
#ifndef DTCAST_FILES_FORMATS_H
#define DTCAST_FILES_FORMATS_H

#include "files/tensor.h"

#include <stddef.h>

typedef struct dt_file_format {
    dt_file_kind kind;
    const char *name;            /* "npy", "pb", "safetensors", "safetensors-index", "raw" */
    const char *endings[4];      /* file name endings (case-insensitive), NULL-terminated */
    int many_tensors;            /* holds named tensors (a checkpoint): not a one-tensor file */
    int checkpoint;              /* read as a checkpoint (files/checkpoint.h) */
    int one_tensor_checkpoint;   /* read as a one-tensor checkpoint on request (DT_CKPT_NPY) */
    int packs_float6;            /* float6 elements four in three bytes (raw: on request) */
} dt_file_format;

/* Every row, in lookup order; *n receives the count. */
const dt_file_format *dt_file_formats(size_t *n);
/* The row of kind, or NULL for DT_FILE_UNKNOWN. */
const dt_file_format *dt_file_format_of(dt_file_kind kind);
/* The row of kind's name ("npy"), or NULL. */
const char *dt_file_kind_name(dt_file_kind kind);

#endif /* DTCAST_FILES_FORMATS_H */
