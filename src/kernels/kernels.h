/* Fast paths: conversions that give exactly the reference path's bits, faster. */
#ifndef DTCAST_KERNELS_H
#define DTCAST_KERNELS_H

#include "internal.h"

typedef struct dt_kernel dt_kernel;

/* A kernel converting sf -> df under r bit-identically to dt_decode/dt_encode, or NULL when
 * there is none (then the reference path runs). Looked up once per dtcast_convert call. */
const dt_kernel *dt_kernel_find(const dt_format *df, const dt_format *sf, const dt_rules *r);

/* Converts elements [begin, end); begin is a multiple of 8 (so packed outputs never share a
 * byte between two calls). Padding bits after the last element are the caller's business. */
void dt_kernel_run(const dt_kernel *k, void *dst, const void *src, size_t begin, size_t end);

#endif
