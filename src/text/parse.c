/* Parsing (see text_shared.h): text -> decimal. Characters (C locale), scanning one decimal into
 * its digits, sign and point (no arithmetic), the integer parts of a decimal straight from its
 * digits, and the parsing entry points: dt_text_parse tries the fast path (parse_fast.c) and
 * falls back to the exact value (reference.c); dt_text_parse_complex reads Python's forms. */
#include "text_shared.h"

#include <string.h>

/* ---- characters (C locale, independent of setlocale) ---------------------------------------- */

/* dt_text_is_space, dt_text_is_digit, dt_text_skip_space: text_shared.h (parse_fast.c too). */

static char to_lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c; }

/* Whether s starts with word (lower case), ignoring case. */
static bool starts_with_word(const char *s, const char *word)
{
    for (; *word; s++, word++) {
        if (to_lower(*s) != *word)
            return false;
    }
    return true;
}

/* ---- scanning a decimal ------------------------------------------------------------------- */

/* decimal and digit_walk, what a scan yields and how its digits are read: text_shared.h. */

/* Beyond this a decimal exponent only ever means overflow or underflow. */
#define EXP10_CLAMP INT64_C(1000000000000)

/* Reads an optional exponent "e[+-]digits" at s; returns the end, or s when there is none. */
const char *dt_text_scan_exponent(const char *s, int64_t *exp10)
{
    *exp10 = 0;
    if (*s != 'e' && *s != 'E')
        return s;
    const char *p = s + 1;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (!dt_text_is_digit(*p))
        return s; /* "1e", "1e+": the number ends before the 'e' */
    int64_t e = 0;
    for (; dt_text_is_digit(*p); p++) {
        if (e < EXP10_CLAMP)
            e = e * 10 + (*p - '0');
    }
    *exp10 = neg ? -e : e;
    return p;
}

/* Scans one real number at s (no white space). Returns its end, or NULL if none starts at s. */
static const char *scan_decimal(const char *s, decimal *d)
{
    memset(d, 0, sizeof *d);
    const char *p = s;
    if (*p == '+' || *p == '-')
        d->neg = *p++ == '-';
    if (starts_with_word(p, "inf")) {
        d->cls = DT_INF;
        return p + (starts_with_word(p, "infinity") ? 8 : 3);
    }
    if (starts_with_word(p, "nan")) {
        d->cls = DT_NAN;
        return p + 3;
    }
    d->cls = DT_FINITE;
    d->mant = p;
    int64_t int_digits = 0, frac_digits = 0;
    for (; dt_text_is_digit(*p); p++)
        int_digits += int_digits < EXP10_CLAMP;
    if (*p == '.') {
        p++;
        for (; dt_text_is_digit(*p); p++)
            frac_digits = 1;
    }
    if (int_digits == 0 && frac_digits == 0)
        return NULL; /* "", ".", "e5", "+" */
    d->mant_end = p;
    int64_t exp10;
    p = dt_text_scan_exponent(p, &exp10);
    d->point = int_digits + exp10;
    return p;
}

/* ---- decimal -> integer parts ------------------------------------------------------------- */

/* acc = acc * 10 + c modulo 2^64, noting when the true value leaves 64 bits. */
static void push_digit(uint64_t *acc, bool *huge, int c)
{
    if (*acc > (UINT64_MAX - (uint64_t)c) / 10)
        *huge = true;
    *acc = *acc * 10 + (uint64_t)c; /* unsigned: wraps modulo 2^64 */
}

static void decimal_to_int_parts(const decimal *d, dt_int_parts *ip)
{
    memset(ip, 0, sizeof *ip);
    ip->neg = d->neg;
    if (d->cls != DT_FINITE) {
        ip->cls = d->cls;
        return;
    }
    digit_walk w = {d->mant, d->mant_end};
    int64_t j = 0;
    int c, first_frac = 0;
    bool any = false, rest = false;
    for (; (c = dt_text_next_digit(&w)) >= 0; j++) {
        any |= c != 0;
        if (j < d->point)
            push_digit(&ip->low, &ip->huge, c);
        else if (j == d->point)
            first_frac = c;
        else
            rest |= c != 0;
    }
    if (!any) {
        ip->cls = DT_ZERO;
        return;
    }
    ip->cls = DT_FINITE;
    /* Zeros implied by the exponent: after 84 of them a nonzero integer part has passed 2^64
     * (huge) and its low 64 bits are 0 (10^64 is a multiple of 2^64). */
    int64_t zeros = d->point - j;
    if (zeros > 100)
        zeros = 100;
    for (; zeros > 0; zeros--)
        push_digit(&ip->low, &ip->huge, 0);
    /* When point < 0 the first fraction digit is an implied 0 and every digit went to rest. */
    if (first_frac == 0)
        ip->frac = rest ? DT_FRAC_BELOW : DT_FRAC_ZERO;
    else if (first_frac < 5)
        ip->frac = DT_FRAC_BELOW;
    else if (first_frac == 5)
        ip->frac = rest ? DT_FRAC_ABOVE : DT_FRAC_HALF;
    else
        ip->frac = DT_FRAC_ABOVE;
}

/* ---- parsing: entry points ---------------------------------------------------------------- */

static bool decimal_to_number(const decimal *d, dt_value *v, dt_int_parts *ip, bool reference)
{
    if ((reference || !dt_text_fast_decimal_to_value(d, v)) &&
        !dt_text_reference_decimal_to_value(d, v))
        return false;
    decimal_to_int_parts(d, ip);
    return true;
}

static bool parse_with(const char *s, dt_value *v, dt_int_parts *ip, bool reference)
{
    decimal d;
    const char *p = scan_decimal(dt_text_skip_space(s), &d);
    if (!p || *dt_text_skip_space(p) != '\0')
        return false;
    return decimal_to_number(&d, v, ip, reference);
}

bool dt_text_parse(const char *s, dt_value *v, dt_int_parts *ip)
{
    return dt_text_fast_parse(s, v, ip) || parse_with(s, v, ip, false);
}

bool dt_text_parse_reference(const char *s, dt_value *v, dt_int_parts *ip)
{
    return parse_with(s, v, ip, true);
}

/* +1 or -1 (Python's "j", "+j", "-j" forms). */
static void set_unit(bool neg, dt_value *v, dt_int_parts *ip)
{
    memset(v, 0, sizeof *v);
    memset(ip, 0, sizeof *ip);
    dt_text_set_finite(v, 1, 0, false);
    v->neg = ip->neg = neg;
    ip->cls = DT_FINITE;
    ip->low = 1;
}

static void set_zero(dt_value *v, dt_int_parts *ip)
{
    memset(v, 0, sizeof *v);
    memset(ip, 0, sizeof *ip);
    v->cls = ip->cls = DT_ZERO;
}

static bool is_j(char c) { return c == 'j' || c == 'J'; }

/* CPython's complex_from_string_inner: <float>, <float>j, <float><signed-float>j, and the old
 * forms <float><sign>j, <sign>j, j; white space around, optionally inside parentheses. */
bool dt_text_parse_complex(const char *s, dt_value *re, dt_int_parts *re_ip, dt_value *im,
                           dt_int_parts *im_ip)
{
    decimal a, b;
    const char *p = dt_text_skip_space(s);
    const bool paren = *p == '(';
    if (paren)
        p = dt_text_skip_space(p + 1);
    set_zero(re, re_ip);
    set_zero(im, im_ip);
    const char *end = scan_decimal(p, &a);
    if (end) {
        p = end;
        if (*p == '+' || *p == '-') {
            if (!decimal_to_number(&a, re, re_ip, false))
                return false;
            end = scan_decimal(p, &b);
            if (end) {
                if (!decimal_to_number(&b, im, im_ip, false))
                    return false;
                p = end;
            } else {
                set_unit(*p++ == '-', im, im_ip);
            }
            if (!is_j(*p++))
                return false;
        } else if (is_j(*p)) {
            p++;
            if (!decimal_to_number(&a, im, im_ip, false))
                return false;
        } else if (!decimal_to_number(&a, re, re_ip, false)) {
            return false;
        }
    } else {
        bool neg = false;
        if (*p == '+' || *p == '-')
            neg = *p++ == '-';
        if (!is_j(*p++))
            return false;
        set_unit(neg, im, im_ip);
    }
    p = dt_text_skip_space(p);
    if (paren) {
        if (*p++ != ')')
            return false;
        p = dt_text_skip_space(p);
    }
    return *p == '\0';
}
