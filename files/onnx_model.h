/* ONNX models (.onnx) in the cast job: weights-only conversion (docs/onnx_models.md).
 *
 * Every floating-point initializer (and Constant `value` tensor) that the request selects is
 * stored in the target type, under a new name, and a Cast back to its original type writes the
 * original name before any node reads it. Graph inputs, outputs and value_info are untouched,
 * so the model is valid wherever the original was, and runs where it ran. The model is read
 * once from a read-only mapping; the data of external-data tensors is streamed block by block
 * (memory does not grow with the model); the output's external data, when it has any, is one
 * file beside it. Nothing is written when anything fails. */
#ifndef DTCAST_FILES_ONNX_MODEL_H
#define DTCAST_FILES_ONNX_MODEL_H

#include "files/cast.h"
#include "files/pipeline.h"
#include "files/progress.h"

/* Tensors with fewer elements are left as they are: scales, epsilons, clip bounds and shapes,
 * whose exact value matters more than their bytes. */
#define DT_ONNX_MIN_ELEMENTS 16

/* Converts the model r->in to r->out under r (to, conversion, select/exclude, external_data,
 * report, hooks). Errors fill err (err->usage: the request is wrong). */
dtcast_status dt_onnx_model_cast(const dt_cast_request *r, dt_progress *progress,
                                 dt_stream_buffers *buffers, dt_io_error *err);

#endif /* DTCAST_FILES_ONNX_MODEL_H */
