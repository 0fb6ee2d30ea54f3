/* A small arbitrary-precision unsigned integer of fixed capacity, for exact decimal <-> binary
 * conversion in text/reference.c. Values live on the stack; nothing is allocated.
 *
 * The capacity covers every number text/reference.c builds: the largest is 5^1200 shifted left
 * by 64 bits (a parsed decimal with 801 digits and an exponent at the edge of the exact range),
 * under 2900 bits. An operation whose result would not fit returns false and leaves the number
 * unspecified; reference.c treats that as a failure it never expects. */
#ifndef DTCAST_BIGNUM_H
#define DTCAST_BIGNUM_H

#include <stdbool.h>
#include <stdint.h>

#define DT_BN_LIMBS 100 /* 3200 bits */

typedef struct dt_bn {
    int len;                 /* limbs in use; w[len - 1] != 0, len == 0 for zero */
    uint32_t w[DT_BN_LIMBS]; /* little-endian limbs */
} dt_bn;

void dt_bn_set_u64(dt_bn *a, uint64_t x);
bool dt_bn_is_zero(const dt_bn *a);
/* Number of significant bits (0 for zero). */
int dt_bn_bit_length(const dt_bn *a);
/* -1, 0, +1 as a <, ==, > b. */
int dt_bn_cmp(const dt_bn *a, const dt_bn *b);

bool dt_bn_mul_small(dt_bn *a, uint32_t m); /* a *= m */
bool dt_bn_add_small(dt_bn *a, uint32_t x); /* a += x */
bool dt_bn_add(dt_bn *a, const dt_bn *b);   /* a += b */
void dt_bn_sub(dt_bn *a, const dt_bn *b);   /* a -= b; requires a >= b */
bool dt_bn_mul_pow5(dt_bn *a, unsigned n);  /* a *= 5^n */
bool dt_bn_mul_pow10(dt_bn *a, unsigned n); /* a *= 10^n */
bool dt_bn_shl(dt_bn *a, unsigned n);       /* a <<= n */
void dt_bn_shr1(dt_bn *a);                  /* a >>= 1 */

/* The 64 bits of a starting at bit `from` (bits below 0 read as zero). */
uint64_t dt_bn_bits_at(const dt_bn *a, int from);
/* Whether any bit of a below bit `below` is set. */
bool dt_bn_any_below(const dt_bn *a, int below);

#endif /* DTCAST_BIGNUM_H */
