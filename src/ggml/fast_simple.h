/* The prototypes of fast_simple.inc's functions (the simple types' quantizers (Q4_0 .. Q8_1, MXFP4, TQ*, Q1_0, Q2_0)). */
#ifndef DTCAST_GGML_FAST_SIMPLE_H
#define DTCAST_GGML_FAST_SIMPLE_H

#include "ggml.h"

#endif
