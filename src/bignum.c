/* A small arbitrary-precision unsigned integer: see bignum.h. */
#include "bignum.h"

#include <string.h>

static void trim(dt_bn *a)
{
    while (a->len > 0 && a->w[a->len - 1] == 0)
        a->len--;
}

void dt_bn_set_u64(dt_bn *a, uint64_t x)
{
    a->w[0] = (uint32_t)x;
    a->w[1] = (uint32_t)(x >> 32);
    a->len = 2;
    trim(a);
}

bool dt_bn_is_zero(const dt_bn *a) { return a->len == 0; }

int dt_bn_bit_length(const dt_bn *a)
{
    if (a->len == 0)
        return 0;
    uint32_t top = a->w[a->len - 1];
    int bits = 0;
    while (top) {
        bits++;
        top >>= 1;
    }
    return (a->len - 1) * 32 + bits;
}

int dt_bn_cmp(const dt_bn *a, const dt_bn *b)
{
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    for (int i = a->len - 1; i >= 0; i--) {
        if (a->w[i] != b->w[i])
            return a->w[i] < b->w[i] ? -1 : 1;
    }
    return 0;
}

bool dt_bn_mul_small(dt_bn *a, uint32_t m)
{
    uint64_t carry = 0;
    for (int i = 0; i < a->len; i++) {
        uint64_t t = (uint64_t)a->w[i] * m + carry;
        a->w[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry) {
        if (a->len == DT_BN_LIMBS)
            return false;
        a->w[a->len++] = (uint32_t)carry;
    }
    trim(a); /* m == 0 */
    return true;
}

bool dt_bn_add_small(dt_bn *a, uint32_t x)
{
    uint64_t carry = x;
    for (int i = 0; i < a->len && carry; i++) {
        uint64_t t = (uint64_t)a->w[i] + carry;
        a->w[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry) {
        if (a->len == DT_BN_LIMBS)
            return false;
        a->w[a->len++] = (uint32_t)carry;
    }
    return true;
}

bool dt_bn_add(dt_bn *a, const dt_bn *b)
{
    int n = a->len > b->len ? a->len : b->len;
    uint64_t carry = 0;
    for (int i = 0; i < n; i++) {
        uint64_t t = carry;
        if (i < a->len)
            t += a->w[i];
        if (i < b->len)
            t += b->w[i];
        a->w[i] = (uint32_t)t;
        carry = t >> 32;
    }
    a->len = n;
    if (carry) {
        if (n == DT_BN_LIMBS)
            return false;
        a->w[a->len++] = (uint32_t)carry;
    }
    return true;
}

void dt_bn_sub(dt_bn *a, const dt_bn *b)
{
    uint32_t borrow = 0;
    for (int i = 0; i < a->len; i++) {
        uint64_t sub = (uint64_t)(i < b->len ? b->w[i] : 0) + borrow;
        borrow = (uint64_t)a->w[i] < sub;
        a->w[i] = (uint32_t)((uint64_t)a->w[i] - sub); /* wraps modulo 2^32 as intended */
    }
    trim(a);
}

bool dt_bn_mul_pow5(dt_bn *a, unsigned n)
{
    static const uint32_t pow5_13 = 1220703125u; /* 5^13, the largest power of 5 in 32 bits */
    for (; n >= 13; n -= 13) {
        if (!dt_bn_mul_small(a, pow5_13))
            return false;
    }
    uint32_t m = 1;
    while (n--)
        m *= 5;
    return dt_bn_mul_small(a, m);
}

bool dt_bn_mul_pow10(dt_bn *a, unsigned n) { return dt_bn_mul_pow5(a, n) && dt_bn_shl(a, n); }

bool dt_bn_shl(dt_bn *a, unsigned n)
{
    if (a->len == 0)
        return true;
    unsigned words = n / 32, bits = n % 32;
    if ((unsigned)a->len + words + 1 > DT_BN_LIMBS) {
        /* Fits only if the top limb does not spill: check exactly. */
        if ((unsigned)a->len + words > DT_BN_LIMBS)
            return false;
        if (bits && (a->w[a->len - 1] >> (32 - bits)) != 0)
            return false;
    }
    int top = a->len + (int)words; /* index of the limb receiving the spill, if any */
    if (bits == 0) {
        memmove(a->w + words, a->w, (size_t)a->len * sizeof a->w[0]);
    } else {
        uint32_t spill = a->w[a->len - 1] >> (32 - bits);
        if (spill)
            a->w[top] = spill;
        for (int i = a->len - 1; i > 0; i--)
            a->w[i + (int)words] = (a->w[i] << bits) | (a->w[i - 1] >> (32 - bits));
        a->w[words] = a->w[0] << bits;
        if (spill)
            top++;
    }
    memset(a->w, 0, words * sizeof a->w[0]);
    a->len = top;
    trim(a);
    return true;
}

void dt_bn_shr1(dt_bn *a)
{
    for (int i = 0; i < a->len; i++) {
        uint32_t next = i + 1 < a->len ? a->w[i + 1] : 0;
        a->w[i] = (a->w[i] >> 1) | (next << 31);
    }
    trim(a);
}

static uint32_t bit_of(const dt_bn *a, int i)
{
    if (i < 0 || i >= a->len * 32)
        return 0;
    return (a->w[i / 32] >> (i % 32)) & 1;
}

uint64_t dt_bn_bits_at(const dt_bn *a, int from)
{
    uint64_t r = 0;
    for (int i = 63; i >= 0; i--)
        r = (r << 1) | bit_of(a, from + i);
    return r;
}

bool dt_bn_any_below(const dt_bn *a, int below)
{
    if (below <= 0)
        return false;
    int full = below / 32;
    for (int i = 0; i < full && i < a->len; i++) {
        if (a->w[i])
            return true;
    }
    if (below % 32 && full < a->len)
        return (a->w[full] & ((UINT32_C(1) << (below % 32)) - 1)) != 0;
    return false;
}
