/* Formatting (see text_shared.h): binary -> text. The output buffer, the Python repr layout of
 * shortest digits (shortest.c, reference.c), the ONNX Runtime layout ("%.8g"), the formatting
 * entry points (dt_text_format, dt_text_format_reference, dt_text_format_complex), and the fast
 * Python repr of IEEE floats straight from the bits (dt_text_format_float). */
#include "text_shared.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- output buffer ------------------------------------------------------------------------- */

typedef struct out_buf {
    char s[128];
    size_t n;
} out_buf;

static void put_char(out_buf *b, char c)
{
    if (b->n + 1 < sizeof b->s)
        b->s[b->n++] = c;
    b->s[b->n] = '\0';
}

static void put_str(out_buf *b, const char *s)
{
    while (*s)
        put_char(b, *s++);
}

static void put_repeat(out_buf *b, char c, int count)
{
    while (count-- > 0)
        put_char(b, c);
}

static void put_unsigned(out_buf *b, uint64_t x)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + x % 10);
        x /= 10;
    } while (x);
    while (n)
        put_char(b, tmp[--n]);
}

/* Copies the result into the caller's buffer: its length, or 0 when it does not fit. */
static size_t deliver(char *buf, size_t size, const out_buf *b)
{
    if (!buf || b->n + 1 > size)
        return 0;
    memcpy(buf, b->s, b->n + 1);
    return b->n;
}

/* ---- Python repr layout -------------------------------------------------------------------- */

/* The precision a float type prints at: float64 and float16 their own, every other float
 * float32's. */
static precision precision_of(const dt_format *f)
{
    if (f->type != DTCAST_FLOAT64 && f->type != DTCAST_FLOAT16)
        f = dt_format_of(DTCAST_FLOAT32); /* every other float prints as float32 would */
    precision p = {f->man_bits + 1, 1 - f->bias - f->man_bits};
    return p;
}

/* CPython's format_float_short for 'r': positional when -4 < point <= 16, else d.ddde+XX.
 * add_dot_0: positional integers get ".0" (float repr); complex parts do not. */
static void put_python_digits(out_buf *b, const digits *g, bool add_dot_0)
{
    if (g->point <= -4 || g->point > 16) {
        put_char(b, g->d[0]);
        if (g->n > 1) {
            put_char(b, '.');
            put_str(b, g->d + 1);
        }
        const int x = g->point - 1;
        put_char(b, 'e');
        put_char(b, x < 0 ? '-' : '+');
        if (x > -10 && x < 10)
            put_char(b, '0');
        put_unsigned(b, (uint64_t)(x < 0 ? -x : x));
    } else if (g->point <= 0) {
        put_str(b, "0.");
        put_repeat(b, '0', -g->point);
        put_str(b, g->d);
    } else if (g->point < g->n) {
        for (int i = 0; i < g->n; i++) {
            if (i == g->point)
                put_char(b, '.');
            put_char(b, g->d[i]);
        }
    } else {
        put_str(b, g->d);
        put_repeat(b, '0', g->point - g->n);
        if (add_dot_0)
            put_str(b, ".0");
    }
}

/* repr of a float value; with `plus`, a '+' before a value without '-' (nan too). */
static bool put_python_float(out_buf *b, const dt_value *v, precision p, bool add_dot_0, bool plus,
                             bool reference)
{
    if (v->cls == DT_NAN) { /* Python ignores the sign of a NaN */
        put_str(b, plus ? "+nan" : "nan");
        return true;
    }
    if (v->neg)
        put_char(b, '-');
    else if (plus)
        put_char(b, '+');
    switch (v->cls) {
    case DT_INF:
        put_str(b, "inf");
        return true;
    case DT_ZERO:
        put_str(b, add_dot_0 ? "0.0" : "0");
        return true;
    default: {
        digits g;
        if (!(reference ? dt_text_reference_shortest_digits(v->sig, v->exp, p, &g)
                        : dt_text_shortest_digits(v->sig, v->exp, p, &g)))
            return false;
        put_python_digits(b, &g, add_dot_0);
        return true;
    }
    }
}

/* ---- ONNX Runtime layout ------------------------------------------------------------------- */

static double value_as_double(const dt_value *v)
{
    switch (v->cls) {
    case DT_ZERO:
        return v->neg ? -0.0 : 0.0;
    case DT_INF:
        return v->neg ? -HUGE_VAL : HUGE_VAL;
    case DT_NAN:
        return NAN;
    default: { /* exact: every float value of every format fits a double */
        const double mag = ldexp((double)v->sig, v->exp);
        return v->neg ? -mag : mag;
    }
    }
}

/* "%.8g" of the value, float64 included (ONNX Runtime converts every float type to double and
 * prints it with "%.8g"), "NaN" whatever the sign, "INF", "-INF". */
static void put_ort_float(out_buf *b, const dt_value *v, bool plus)
{
    if (v->cls == DT_NAN) {
        put_str(b, plus ? "+NaN" : "NaN");
        return;
    }
    if (v->cls == DT_INF) {
        put_str(b, v->neg ? "-INF" : plus ? "+INF" : "INF");
        return;
    }
    char tmp[48];
    snprintf(tmp, sizeof tmp, plus ? "%+.8g" : "%.8g", value_as_double(v));
    put_str(b, tmp);
}

/* ---- formatting: entry points ------------------------------------------------------------- */

static uint64_t sign_extend(uint64_t code, int bits)
{
    if (bits >= 64)
        return code;
    const uint64_t sign = UINT64_C(1) << (bits - 1);
    code &= (sign << 1) - 1;
    return (code ^ sign) - sign; /* unsigned arithmetic: wraps to two's complement */
}

static void put_integer(out_buf *b, const dt_format *f, uint64_t code)
{
    if (f->bits < 64)
        code &= (UINT64_C(1) << f->bits) - 1;
    if (f->tc == DT_TC_SINT) {
        code = sign_extend(code, f->bits);
        if (code >> 63) {
            put_char(b, '-');
            code = 0 - code; /* the magnitude, 2^63 included */
        }
    }
    put_unsigned(b, code);
}

static bool is_float_class(dt_class_of_type tc) { return tc == DT_TC_FLOAT || tc == DT_TC_E8M0; }

/* One real element of type f, into b. */
static bool put_element(out_buf *b, const dt_format *f, uint64_t code, dtcast_string_style style,
                        bool complex_part, bool plus, bool reference)
{
    const bool ort = style == DTCAST_STRING_ORT;
    switch (f->tc) {
    case DT_TC_BOOL:
        put_str(b, ort ? (code ? "1" : "0") : (code ? "True" : "False"));
        return true;
    case DT_TC_UINT:
    case DT_TC_SINT:
        put_integer(b, f, code);
        return true;
    default:
        break;
    }
    if (!is_float_class(f->tc))
        return false;
    dt_value v;
    dt_decode(f, code, &v);
    if (ort) {
        put_ort_float(b, &v, plus);
        return true;
    }
    return put_python_float(b, &v, precision_of(f), !complex_part, plus, reference);
}

static size_t format_with(char *buf, size_t size, const dt_format *f, uint64_t code,
                          dtcast_string_style style, bool reference)
{
    out_buf b;
    b.n = 0;
    b.s[0] = '\0';
    if (!f || !put_element(&b, f, code, style, false, false, reference))
        return 0;
    return deliver(buf, size, &b);
}

/* ---- Python repr of IEEE floats, fast ----------------------------------------------------------
 *
 * float16, float32, float64 (and bfloat16, which prints as float32 would) straight from the bits:
 * Schubfach's digits, written two at a time, laid out as put_python_digits does, with no
 * intermediate dt_value, digit string or bounded buffer. */

#if defined(__SIZEOF_INT128__)
static const char two_digits[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Number of decimal digits of x > 0: floor(log10 x) + 1 from the bit length. */
static int decimal_length(uint64_t x)
{
    const int t = ((64 - dt_text_leading_zeros64(x)) * 1233) >> 12; /* 1233 / 4096 ~ log10(2) */
    return t + (x >= dt_text_pow10_u64[t]);
}

/* The n = decimal_length(x) digits of x at out (not terminated). */
static void write_digits(char *out, uint64_t x, int n)
{
    char *p = out + n;
    while (x > UINT32_MAX) {
        const uint64_t q = x / 100;
        p -= 2;
        memcpy(p, two_digits + 2 * (x - q * 100), 2);
        x = q;
    }
    uint32_t y = (uint32_t)x;
    while (y >= 100) {
        const uint32_t q = y / 100;
        p -= 2;
        memcpy(p, two_digits + 2 * (y - q * 100), 2);
        y = q;
    }
    if (y >= 10) {
        p -= 2;
        memcpy(p, two_digits + 2 * y, 2);
    } else {
        *--p = (char)('0' + y);
    }
}

/* put_python_digits (with ".0") of dec * 10^exp10, dec > 0, at out; returns the end (NUL). */
static char *put_repr_digits(char *out, uint64_t dec, int exp10)
{
    while (dec % 10 == 0) {
        dec /= 10;
        exp10++;
    }
    const int n = decimal_length(dec), point = n + exp10;
    char d[24];
    write_digits(d, dec, n);
    char *p = out;
    if (point <= -4 || point > 16) {
        *p++ = d[0];
        if (n > 1) {
            *p++ = '.';
            memcpy(p, d + 1, (size_t)(n - 1));
            p += n - 1;
        }
        int x = point - 1;
        *p++ = 'e';
        *p++ = x < 0 ? '-' : '+';
        if (x < 0)
            x = -x;
        if (x >= 100) {
            *p++ = (char)('0' + x / 100);
            x %= 100;
        }
        memcpy(p, two_digits + 2 * x, 2); /* at least two digits: e-05 */
        p += 2;
    } else if (point <= 0) {
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -point; i++)
            *p++ = '0';
        memcpy(p, d, (size_t)n);
        p += n;
    } else if (point < n) {
        memcpy(p, d, (size_t)point);
        p += point;
        *p++ = '.';
        memcpy(p, d + point, (size_t)(n - point));
        p += n - point;
    } else {
        memcpy(p, d, (size_t)n);
        p += n;
        for (int i = n; i < point; i++)
            *p++ = '0';
        *p++ = '.';
        *p++ = '0';
    }
    *p = '\0';
    return p;
}

static size_t put_literal(char *buf, const char *s)
{
    const size_t n = strlen(s);
    memcpy(buf, s, n + 1);
    return n;
}

bool dt_text_float_is_fast(const dt_format *f)
{
    return f->type == DTCAST_FLOAT32 || f->type == DTCAST_FLOAT64 || f->type == DTCAST_FLOAT16 ||
           f->type == DTCAST_BFLOAT16;
}

size_t dt_text_format_float(char *buf, const dt_format *f, uint64_t code)
{
    if (f->type == DTCAST_BFLOAT16) { /* the float32 with the same value prints the same */
        code = (code & 0xFFFF) << 16;
        f = dt_format_of(DTCAST_FLOAT32);
    } else if (!dt_text_float_is_fast(f)) {
        return 0;
    }
    const int mb = f->man_bits;
    if (f->bits < 64)
        code &= (UINT64_C(1) << f->bits) - 1;
    const uint64_t man = code & ((UINT64_C(1) << mb) - 1);
    const uint64_t be = (code >> mb) & ((UINT64_C(1) << f->exp_bits) - 1);
    const bool neg = (code >> (f->bits - 1)) & 1;
    if (be == (UINT64_C(1) << f->exp_bits) - 1)
        return put_literal(buf, man ? "nan" : neg ? "-inf" : "inf");
    char *p = buf;
    if (neg)
        *p++ = '-';
    if (be == 0 && man == 0)
        return (size_t)(p - buf) + put_literal(p, "0.0");
    /* The canonical c * 2^q of dt_text_shortest_digits: normals carry the hidden bit,
     * subnormals sit at the smallest exponent; the neighbour below is closer only at a power of
     * two above it. */
    const uint64_t c = be ? man | UINT64_C(1) << mb : man;
    const int q = (be ? (int)be : 1) - f->bias - mb;
    const bool closer_below = man == 0 && be > 1;
    uint64_t dec;
    int exp10;
    if (!dt_text_schubfach(c, q, closer_below, &dec, &exp10))
        return format_with(buf, DT_TEXT_FLOAT_MAX, f, code, DTCAST_STRING_PYTHON, false);
    return (size_t)(put_repr_digits(p, dec, exp10) - buf);
}
#else
bool dt_text_float_is_fast(const dt_format *f)
{
    (void)f;
    return false;
}

size_t dt_text_format_float(char *buf, const dt_format *f, uint64_t code)
{
    (void)buf;
    (void)f;
    (void)code;
    return 0;
}
#endif

size_t dt_text_format(char *buf, size_t size, const dt_format *f, uint64_t code,
                      dtcast_string_style style)
{
    if (f && style != DTCAST_STRING_ORT && dt_text_float_is_fast(f)) {
        if (buf && size >= DT_TEXT_FLOAT_MAX)
            return dt_text_format_float(buf, f, code);
        char tmp[DT_TEXT_FLOAT_MAX];
        const size_t n = dt_text_format_float(tmp, f, code);
        if (!buf || n + 1 > size)
            return 0;
        memcpy(buf, tmp, n + 1);
        return n;
    }
    return format_with(buf, size, f, code, style, false);
}

size_t dt_text_format_reference(char *buf, size_t size, const dt_format *f, uint64_t code,
                                dtcast_string_style style)
{
    return format_with(buf, size, f, code, style, true);
}

/* Python: "(re+imj)", or "imj" alone when the real part is +0. ORT style (dtcast's choice; ONNX
 * Runtime has no complex strings): "(re+imj)" always, parts as "%.8g", NaN, INF. */
size_t dt_text_format_complex(char *buf, size_t size, const dt_format *part, uint64_t re,
                              uint64_t im, dtcast_string_style style)
{
    out_buf b = {{0}, 0};
    if (!part || !is_float_class(part->tc))
        return 0;
    dt_value v;
    dt_decode(part, re, &v);
    const bool bare = style != DTCAST_STRING_ORT && v.cls == DT_ZERO && !v.neg;
    if (!bare) {
        put_char(&b, '(');
        if (!put_element(&b, part, re, style, true, false, false))
            return 0;
    }
    if (!put_element(&b, part, im, style, true, !bare, false))
        return 0;
    put_char(&b, 'j');
    if (!bare)
        put_char(&b, ')');
    return deliver(buf, size, &b);
}
