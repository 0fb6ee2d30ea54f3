/* The prototypes of fast_kquants.inc's functions (the K-quant quantizers). */
#ifndef DTCAST_GGML_FAST_KQUANTS_H
#define DTCAST_GGML_FAST_KQUANTS_H

#include "ggml.h"

#endif
