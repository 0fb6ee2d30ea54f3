/* Text (src/text/): the exact reference paths behind the fast ones, for tests and tools. */
#ifndef DTCAST_TEXT_INTERNAL_H
#define DTCAST_TEXT_INTERNAL_H

#include "internal.h"

/* dt_text_format with the big-integer digit generation only (no fast path). */
size_t dt_text_format_reference(char *buf, size_t size, const dt_format *f, uint64_t code,
                                dtcast_string_style style);
/* dt_text_parse with the big-integer conversion only (no fast path). */
bool dt_text_parse_reference(const char *s, dt_value *v, dt_int_parts *ip);

/* Parses s (as dt_text_parse) and rounds it once into a code of f (not complex, not string)
 * under r: what dt_encode / dt_encode_int_parts give, with a direct path for RNE into IEEE-style
 * floats when the result is normal. False when s is not a number. */
bool dt_text_parse_to_code(const char *s, const dt_format *f, const dt_rules *r, uint64_t *code);

/* Python-repr formatting of float16, bfloat16, float32 and float64 codes straight from the bits
 * (what dt_text_format gives in the Python style), into buf of at least DT_TEXT_FLOAT_MAX bytes.
 * dt_text_float_is_fast tells which formats; for others dt_text_format_float returns 0. */
#define DT_TEXT_FLOAT_MAX 32
bool dt_text_float_is_fast(const dt_format *f);
size_t dt_text_format_float(char *buf, const dt_format *f, uint64_t code);

#endif
