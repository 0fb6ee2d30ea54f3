/* Type promotion (docs/promotion.md, "Operands", "Computing a common type"): what the rule sets
 * share. Not installed.
 *
 * dtcast_promote() (promote.c) checks the operands every rule set needs checked and hands them to
 * one rule set (openvino.c, aclnn.c, torch.c, numpy.c (numpy and numpy+ml_dtypes), jax.c). A rule set only ever sees tensors
 * whose type is a dtcast type (or DTCAST_TYPE_DYNAMIC, for openvino) and Python scalars of a
 * known kind; it refuses what its system refuses, with the system's text, through dt_fail (internal.h) into the caller's
 * dtcast_error (which may be NULL). */
#ifndef DTCAST_PROMOTE_PROMOTE_H
#define DTCAST_PROMOTE_PROMOTE_H

#include "dtcast.h"

#include <stdbool.h>
#include <stddef.h>

/* The categories torch, aclnn, numpy and jax rank types by, lowest first. */
typedef enum pr_category {
    PR_BOOL,
    PR_INT, /* signed and unsigned integers */
    PR_FLOAT,
    PR_COMPLEX,
    PR_OTHER /* string, dynamic */
} pr_category;

pr_category pr_category_of(dtcast_type type);
/* The category of a Python scalar kind (never DTCAST_SCALAR_NONE). */
pr_category pr_scalar_category(dtcast_scalar_kind kind);
/* Signed integers only (not floats, not bool). */
bool pr_is_signed_int(dtcast_type type);
bool pr_is_unsigned_int(dtcast_type type);
/* The complex type whose parts hold a float type's values, as torch's toComplexType and aclnn
 * map them: float16 -> complex32, bfloat16 and float32 -> complex64, float64 -> complex128;
 * DTCAST_UNDEFINED for any other type. */
dtcast_type pr_complex_of(dtcast_type float_type);

bool pr_is_tensor(const dtcast_operand *op);

/* The rule sets. Operands are checked (see above); attrs is never NULL. On success *out is set. */
dtcast_status pr_openvino(const dtcast_operand *a, const dtcast_operand *b,
                          const dtcast_promote_attrs *attrs, dtcast_type *out, dtcast_error *m);
dtcast_status pr_aclnn(const dtcast_operand *a, const dtcast_operand *b, dtcast_type *out,
                       dtcast_error *m);
dtcast_status pr_torch(const dtcast_operand *a, const dtcast_operand *b, dtcast_type *out,
                       dtcast_error *m);
dtcast_status pr_numpy(const dtcast_operand *a, const dtcast_operand *b, dtcast_type *out,
                       dtcast_error *m);
/* numpy with ml_dtypes 0.7.0's types registered (numpy.c) */
dtcast_status pr_numpy_ml_dtypes(const dtcast_operand *a, const dtcast_operand *b,
                                 dtcast_type *out, dtcast_error *m);
dtcast_status pr_jax(const dtcast_operand *a, const dtcast_operand *b,
                     const dtcast_promote_attrs *attrs, dtcast_type *out, dtcast_error *m);

#endif /* DTCAST_PROMOTE_PROMOTE_H */
