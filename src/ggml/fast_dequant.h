/* The prototypes of fast_dequant.inc's functions (the dequantizers). */
#ifndef DTCAST_GGML_FAST_DEQUANT_H
#define DTCAST_GGML_FAST_DEQUANT_H

#include "ggml.h"

#endif
