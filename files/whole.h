/* A tensor read, converted and written whole, in memory: .npy, .pb (raw_data or the typed
 * fields) or raw bytes (strings: one element per line). String tensors take this path in the cast
 * job (they cannot be streamed: their elements have no fixed size), and so do the commands that
 * look at one small tensor (compare, promote, the ONNX runner). Never prints; every error names
 * the file. Numbers in files of any size stream through files/cast.h instead. */
#ifndef DTCAST_FILES_WHOLE_H
#define DTCAST_FILES_WHOLE_H

#include "files/cast.h"
#include "files/tensor.h"

/* Reads PATH ("-": stdin) of kind (DT_FILE_NPY, DT_FILE_PB or DT_FILE_RAW) into t: raw data
 * takes spec->from (strings: a line each) and spec's shape; a .npy or .pb must hold spec->from
 * when it is given. Raw data without spec->from that starts as a .npy file does is read as one
 * (a .npy piped into stdin). On failure t is left empty (dt_tensor_init). */
dtcast_status dt_tensor_load(const char *path, dt_file_kind kind, const dt_input *spec,
                             dt_tensor *t, dt_io_error *err);

/* Writes t to PATH ("-": stdout) as kind (.npy, .pb or raw; strings as lines); the output is a
 * temporary file renamed at the end, so nothing is left behind on failure. */
dtcast_status dt_tensor_save(const char *path, dt_file_kind kind, const dt_tensor *t,
                             dt_io_error *err);

/* dst = src converted to `to` under the conversion profile c (the streamed job's options for the
 * same pair: dt_conversion_options). dst is allocated here and named as src; release it with
 * dt_tensor_free_converted. On failure dst is left empty and error holds the library's message. */
dtcast_status dt_tensor_convert(const dt_conversion *c, const dt_tensor *src, dtcast_type to,
                                dt_tensor *dst, dtcast_error *error);

/* Frees a tensor whose strings (if any) a dtcast conversion allocated. */
void dt_tensor_free_converted(dt_tensor *t);

#endif /* DTCAST_FILES_WHOLE_H */
