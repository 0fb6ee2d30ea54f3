/* The conversion settings (profile, rounding, overflow, ...) that cast and compare share: their
 * options, checks, labels, error texts, and the in-memory conversion of a tensor (cli.h). */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char cli_conversion_help[] =
    "Input:\n"
    "      --from TYPE        type of raw input (required for raw data and stdin, unless it\n"
    "                         holds .npy bytes); for .npy, what a uint8/uint16 array holds\n"
    "                         (how dtcast writes types numpy lacks)\n"
    "      --shape DIMS       shape of raw input, e.g. 2x3x4 (default: 1-D, every element);\n"
    "                         for other files, a reshape to the same element count\n"
    "      --format raw       read IN as raw data whatever its name\n"
    "\n"
    "Profile:\n"
    "  -p, --profile P        exact (default)   dtcast_convert with the options below\n"
    "                         onnx[:OPSET]      ONNX Cast at OPSET (default 28)\n"
    "                         pypto             Ascend pypto.cast (1-4 dimensions)\n"
    "                         ort-float16       float32 -> float16 as onnxruntime's float16\n"
    "                                           converter: |x| < 5.96e-08 to 5.96e-08,\n"
    "                                           finite |x| > 65504 to 65504, then rne\n"
    "                         onnxconverter-common\n"
    "                                           the same as onnxconverter-common's (1.16):\n"
    "                                           1e-7 and 1e4 (.onnx: float32 initializers\n"
    "                                           only, as both converters)\n"
    "\n"
    "Profile exact:\n"
    "  -r, --round MODE       rne | round | floor | ceil | trunc | odd | stochastic\n"
    "                         (default: rne; float to integer truncates)\n"
    "      --seed N           --round stochastic: the seed (default 0); the same seed gives\n"
    "                         the same bytes on every thread count and machine\n"
    "      --overflow P       ieee (default) | saturate | inf: float results beyond the max\n"
    "                         finite (inf: as ieee, but Inf/NaN in the directed modes too)\n"
    "      --int-overflow P   wrap (default) | saturate: integer results out of range\n"
    "      --discard-imag     complex to real keeps the real part (else an error)\n"
    "\n"
    "Profile onnx:\n"
    "      --saturate 0|1     float8 targets: 1 (default) clamps to +-max, 0 gives Inf/NaN\n"
    "      --round-mode M     float8e8m0 target: up (default) | down | nearest\n"
    "\n"
    "Profile pypto:\n"
    "      --cast-mode M      CAST_NONE (default) | CAST_RINT | CAST_ROUND | CAST_FLOOR |\n"
    "                         CAST_CEIL | CAST_TRUNC | CAST_ODD\n"
    "\n"
    "Profiles exact and onnx:\n"
    "      --via-float32      round to float32 first, as the ONNX reference does\n"
    "      --float4-nan-max   NaN to a NaN-less type (float4e2m1) gives +max (older ONNX text)\n"
    "      --string-style S   number to string: python (default: 0.1, 1e-05, nan)\n"
    "                         | ort (ONNX Runtime %.8g: 0.1, 1e-05, NaN)\n"
    "      --string-bool-numeric\n"
    "                         string to bool parses the number (\"0\" is false)\n"
    "\n"
    "All profiles:\n"
    "  -T, --threads N        worker threads (0 = automatic, the default)\n"
    "  -h, --help             show this help\n";

/* ---- settings ------------------------------------------------------------------------------- */

void cli_settings_init(cli_settings *s)
{
    memset(s, 0, sizeof *s);
    s->input.from = DTCAST_UNDEFINED;
    s->profile = CLI_PROFILE_EXACT;
    s->opset = DTCAST_ONNX_OPSET_MAX;
    dtcast_options_init(&s->options);
    s->saturate = 1;
    s->round_mode = NULL;
    s->cast_mode = DTCAST_CAST_NONE;
}

/* " (did you mean 'onnx:21'?)" for "onxx:21", over the profile names; "" when none is close. */
static const char *profile_hint(const char *text, char *buf, size_t size)
{
    size_t head = strcspn(text, ":-@");
    char typed[64];
    snprintf(typed, sizeof typed, "%.*s", (int)(head < 60 ? head : 60), text);
    cli_suggest sg;
    cli_suggest_init(&sg, typed);
    const char *name;
    for (int p = 0; (name = dt_profile_name((dt_profile)p)) != NULL; p++) {
        char shown[64];
        /* onnx keeps the opset the user gave. */
        snprintf(shown, sizeof shown, "%s%.40s", name, p == DT_PROFILE_ONNX ? text + head : "");
        cli_suggest_add(&sg, name, shown);
    }
    return cli_suggest_hint(&sg, buf, size);
}

static int parse_profile(cli_settings *s, const char *cmd, const char *flag, const char *text)
{
    const char *name;
    for (int p = 0; (name = dt_profile_name((dt_profile)p)) != NULL; p++)
        if (p != DT_PROFILE_ONNX && strcasecmp(text, name) == 0) { /* onnx: with its opset */
            s->profile = (cli_profile)p;
            return CLI_OK;
        }
    if (strncasecmp(text, "onnx", 4) == 0) {
        const char *opset = text + 4;
        s->profile = CLI_PROFILE_ONNX;
        s->opset = DTCAST_ONNX_OPSET_MAX;
        if (*opset == 0)
            return CLI_OK;
        if (*opset == ':' || *opset == '-' || *opset == '@')
            opset++;
        unsigned long v;
        if (!isdigit((unsigned char)*opset) || strlen(opset) > 3 ||
            (v = strtoul(opset, NULL, 10)) < 1 || v > DTCAST_ONNX_OPSET_MAX ||
            strspn(opset, "0123456789") != strlen(opset))
            return cli_usage(cmd, "%s: bad ONNX opset in '%s' (1 to %d)", flag, text,
                             DTCAST_ONNX_OPSET_MAX);
        s->opset = (int)v;
        return CLI_OK;
    }
    char hint[256];
    if (profile_hint(text, hint, sizeof hint)[0])
        return cli_usage(cmd, "%s: unknown profile '%s'%s", flag, text, hint);
    return cli_usage(cmd, "%s: unknown profile '%s' (one of: exact, onnx[:OPSET], pypto, "
                          "ort-float16, onnxconverter-common)", flag, text);
}

static int parse_round(cli_settings *s, const char *cmd, const char *flag, const char *text)
{
    if (dtcast_round_from_name(text, &s->options.round, NULL) == DTCAST_OK)
        return CLI_OK;
    /* The library's names of its rounding modes. */
    cli_suggest sg;
    const char *name;
    char hint[256];
    cli_suggest_init(&sg, text);
    for (int i = 0; (name = dtcast_round_name((dtcast_round)i)) != NULL; i++)
        cli_suggest_add(&sg, name, NULL);
    if (cli_suggest_hint(&sg, hint, sizeof hint)[0])
        return cli_usage(cmd, "%s: unknown rounding mode '%s'%s", flag, text, hint);
    return cli_usage(cmd,
                     "%s: unknown rounding mode '%s' (one of: rne, round, floor, ceil, trunc, "
                     "odd, stochastic)",
                     flag, text);
}

/* A seed: 0 .. 2^64 - 1, decimal or 0x hexadecimal. */
static int parse_seed(cli_settings *s, const char *cmd, const char *flag, const char *text)
{
    char *end = NULL;
    errno = 0;
    const unsigned long long v = strtoull(text, &end, 0);
    if (!text[0] || text[0] == '-' || text[0] == '+' || isspace((unsigned char)text[0]) ||
        *end || errno == ERANGE)
        return cli_usage(cmd, "%s: '%s' is not a seed (an integer from 0 to 2^64 - 1)", flag,
                         text);
    s->options.seed = (uint64_t)v;
    return CLI_OK;
}

static int parse_cast_mode(cli_settings *s, const char *cmd, const char *flag, const char *text)
{
    if (dtcast_pypto_mode_from_name(text, &s->cast_mode, NULL) == DTCAST_OK)
        return CLI_OK;
    /* Also "rint", "cast_rint" in any case. */
    char upper[40];
    const char *body = strncasecmp(text, "cast_", 5) == 0 ? text + 5 : text;
    snprintf(upper, sizeof upper, "CAST_%.30s", body);
    for (char *p = upper; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    if (dtcast_pypto_mode_from_name(upper, &s->cast_mode, NULL) == DTCAST_OK)
        return CLI_OK;
    /* The library's mode names, compared with and without CAST_ ("flor" -> CAST_FLOOR). */
    cli_suggest sg;
    const char *name;
    char hint[256];
    cli_suggest_init(&sg, text);
    for (int i = 0; (name = dtcast_pypto_mode_name((dtcast_pypto_mode)i)) != NULL; i++) {
        cli_suggest_add(&sg, name, NULL);
        if (strncmp(name, "CAST_", 5) == 0)
            cli_suggest_add(&sg, name + 5, name);
    }
    if (cli_suggest_hint(&sg, hint, sizeof hint)[0])
        return cli_usage(cmd, "%s: unknown mode '%s'%s", flag, text, hint);
    return cli_usage(cmd,
                     "%s: unknown mode '%s' (one of: CAST_NONE, CAST_RINT, CAST_ROUND, "
                     "CAST_FLOOR, CAST_CEIL, CAST_TRUNC, CAST_ODD)",
                     flag, text);
}

static int parse_saturate(cli_settings *s, const char *cmd, const char *flag, const char *text)
{
    static const char *const choices[] = {"0", "1", "false", "true", NULL};
    int i;
    if (cli_parse_choice(cmd, flag, text, choices, &i) != CLI_OK)
        return CLI_USAGE;
    s->saturate = i % 2;
    return CLI_OK;
}

static int parse_enum_option(cli_settings *s, const char *cmd, int id, const char *flag,
                             const char *text)
{
    static const char *const overflow[] = {"ieee", "saturate", "inf", NULL};
    static const dtcast_float_overflow overflow_value[] = {
        DTCAST_FLOAT_OVERFLOW_IEEE, DTCAST_FLOAT_OVERFLOW_SATURATE, DTCAST_FLOAT_OVERFLOW_INF};
    static const char *const int_overflow[] = {"wrap", "saturate", NULL};
    static const char *const round_mode[] = {"up", "down", "nearest", NULL};
    static const char *const style[] = {"python", "ort", NULL};
    int i;
    switch (id) {
    case CLI_OPT_OVERFLOW:
        if (cli_parse_choice(cmd, flag, text, overflow, &i) != CLI_OK)
            return CLI_USAGE;
        s->options.float_overflow = overflow_value[i];
        return CLI_OK;
    case CLI_OPT_INT_OVERFLOW:
        if (cli_parse_choice(cmd, flag, text, int_overflow, &i) != CLI_OK)
            return CLI_USAGE;
        s->options.int_overflow = i ? DTCAST_INT_OVERFLOW_SATURATE : DTCAST_INT_OVERFLOW_WRAP;
        return CLI_OK;
    case CLI_OPT_ROUND_MODE:
        if (cli_parse_choice(cmd, flag, text, round_mode, &i) != CLI_OK)
            return CLI_USAGE;
        s->round_mode = round_mode[i];
        return CLI_OK;
    case CLI_OPT_STRING_STYLE:
        if (cli_parse_choice(cmd, flag, text, style, &i) != CLI_OK)
            return CLI_USAGE;
        s->options.string_style = i ? DTCAST_STRING_ORT : DTCAST_STRING_PYTHON;
        return CLI_OK;
    default:
        return -1;
    }
}

int cli_settings_option(cli_settings *s, const char *cmd, const cli_args *a, int id)
{
    if (id < CLI_OPT_FROM || id > CLI_OPT_SEED)
        return -1;
    s->given |= 1u << id;
    snprintf(s->given_spelling[id], sizeof s->given_spelling[id], "%s", a->spelled);
    const char *flag = s->given_spelling[id];
    unsigned long n;
    switch (id) {
    case CLI_OPT_FROM:
        return cli_parse_type(cmd, flag, a->value, &s->input.from);
    case CLI_OPT_SHAPE:
        s->input.has_shape = 1;
        return cli_parse_shape(cmd, flag, a->value, s->input.dims, &s->input.ndim);
    case CLI_OPT_PROFILE:
        return parse_profile(s, cmd, flag, a->value);
    case CLI_OPT_ROUND:
        return parse_round(s, cmd, flag, a->value);
    case CLI_OPT_SATURATE:
        return parse_saturate(s, cmd, flag, a->value);
    case CLI_OPT_CAST_MODE:
        return parse_cast_mode(s, cmd, flag, a->value);
    case CLI_OPT_DISCARD_IMAG:
        s->options.discard_imaginary = 1;
        return CLI_OK;
    case CLI_OPT_STRING_BOOL_NUMERIC:
        s->options.string_to_bool_numeric = 1;
        return CLI_OK;
    case CLI_OPT_FLOAT4_NAN_MAX:
        s->options.float4_nan_as_max = 1;
        return CLI_OK;
    case CLI_OPT_VIA_FLOAT32:
        s->options.via_float32 = 1;
        return CLI_OK;
    case CLI_OPT_THREADS:
        if (cli_parse_uint(cmd, flag, a->value, 1024, &n) != CLI_OK)
            return CLI_USAGE;
        s->options.threads = (unsigned)n;
        return CLI_OK;
    case CLI_OPT_SEED:
        return parse_seed(s, cmd, flag, a->value);
    default:
        return parse_enum_option(s, cmd, id, flag, a->value);
    }
}

/* What a profile does not take, and what to use instead. */
typedef struct refused_flag {
    cli_profile profile;
    int id;
    const char *why;
} refused_flag;

static const refused_flag refused_flags[] = {
    {CLI_PROFILE_EXACT, CLI_OPT_SATURATE, "it is an ONNX attribute: use --overflow saturate"},
    {CLI_PROFILE_EXACT, CLI_OPT_ROUND_MODE, "it is an ONNX attribute: use --round or --profile onnx"},
    {CLI_PROFILE_EXACT, CLI_OPT_CAST_MODE, "it is a pypto mode: use --round or --profile pypto"},
    {CLI_PROFILE_ONNX, CLI_OPT_ROUND,
     "ONNX Cast rounds to nearest even (float to integer truncates); use --round-mode for "
     "float8e8m0 or --profile exact"},
    {CLI_PROFILE_ONNX, CLI_OPT_OVERFLOW, "use --saturate 0|1 (float8 targets)"},
    {CLI_PROFILE_ONNX, CLI_OPT_INT_OVERFLOW, "ONNX Cast wraps integers; use --profile exact"},
    {CLI_PROFILE_ONNX, CLI_OPT_CAST_MODE, "it is a pypto mode: use --profile pypto"},
    {CLI_PROFILE_ONNX, CLI_OPT_DISCARD_IMAG, "ONNX Cast does not take complex types"},
    {CLI_PROFILE_PYPTO, CLI_OPT_ROUND, "use --cast-mode"},
    {CLI_PROFILE_PYPTO, CLI_OPT_OVERFLOW, "pypto.cast saturates integers and has no float option"},
    {CLI_PROFILE_PYPTO, CLI_OPT_INT_OVERFLOW, "pypto.cast saturates integer results"},
    {CLI_PROFILE_PYPTO, CLI_OPT_SATURATE, "it is an ONNX attribute: use --profile onnx"},
    {CLI_PROFILE_PYPTO, CLI_OPT_ROUND_MODE, "it is an ONNX attribute: use --profile onnx"},
    {CLI_PROFILE_PYPTO, CLI_OPT_DISCARD_IMAG, "pypto.cast does not take complex types"},
    {CLI_PROFILE_PYPTO, CLI_OPT_STRING_STYLE, "pypto.cast does not take strings"},
    {CLI_PROFILE_PYPTO, CLI_OPT_STRING_BOOL_NUMERIC, "pypto.cast does not take strings"},
    {CLI_PROFILE_PYPTO, CLI_OPT_FLOAT4_NAN_MAX, "pypto.cast does not take float4e2m1"},
    {CLI_PROFILE_PYPTO, CLI_OPT_VIA_FLOAT32, "pypto.cast rounds once"},
    {CLI_PROFILE_ONNX, CLI_OPT_SEED, "ONNX Cast does not round stochastically; use --profile exact"},
    {CLI_PROFILE_PYPTO, CLI_OPT_SEED, "pypto.cast does not round stochastically; use --profile exact"},
#define CONVERTER_FLAGS(P)                                                                      \
    {P, CLI_OPT_ROUND, "the converter rounds to nearest even"},                                 \
    {P, CLI_OPT_SEED, "the converter rounds to nearest even"},                                  \
    {P, CLI_OPT_OVERFLOW, "the converter clamps to its bound"},                                 \
    {P, CLI_OPT_INT_OVERFLOW, "the converter writes float16 only"},                             \
    {P, CLI_OPT_SATURATE, "it is an ONNX attribute: use --profile onnx"},                       \
    {P, CLI_OPT_ROUND_MODE, "it is an ONNX attribute: use --profile onnx"},                     \
    {P, CLI_OPT_CAST_MODE, "it is a pypto mode: use --profile pypto"},                          \
    {P, CLI_OPT_DISCARD_IMAG, "the converter takes float32 only"},                              \
    {P, CLI_OPT_VIA_FLOAT32, "the converter rounds once"},                                      \
    {P, CLI_OPT_FLOAT4_NAN_MAX, "the converter writes float16 only"},                           \
    {P, CLI_OPT_STRING_STYLE, "the converter takes float32 only"},                              \
    {P, CLI_OPT_STRING_BOOL_NUMERIC, "the converter takes float32 only"}
    CONVERTER_FLAGS(CLI_PROFILE_ORT_FLOAT16),
    CONVERTER_FLAGS(CLI_PROFILE_ONNXCONVERTER_COMMON),
#undef CONVERTER_FLAGS
};

void cli_profile_label(const cli_settings *s, char *buf, size_t size)
{
    dt_profile_label(s->profile, s->opset, buf, size);
}

int cli_settings_check(const cli_settings *s, const char *cmd)
{
    char profile[32];
    cli_profile_label(s, profile, sizeof profile);
    for (size_t i = 0; i < sizeof refused_flags / sizeof refused_flags[0]; i++) {
        const refused_flag *r = &refused_flags[i];
        if (r->profile == s->profile && (s->given & (1u << r->id)))
            return cli_usage(cmd, "%s is not an option of %s %s: %s",
                             s->given_spelling[r->id],
                             cli_settings_flag(s, CLI_OPT_PROFILE, "--profile"), profile, r->why);
    }
    if ((s->given & (1u << CLI_OPT_SEED)) && s->options.round != DTCAST_ROUND_STOCHASTIC)
        return cli_usage(cmd, "%s is for --round stochastic", s->given_spelling[CLI_OPT_SEED]);
    /* The attributes an older opset lacks, named as the user gave them (the library would name
     * the ONNX attribute). */
    if (s->profile == CLI_PROFILE_ONNX && s->saturate == 0 && s->opset < 19)
        return cli_usage(cmd, "%s 0 needs ONNX opset 19 or later (Cast-%d has no saturate "
                              "attribute)", s->given_spelling[CLI_OPT_SATURATE], s->opset);
    if (s->profile == CLI_PROFILE_ONNX && s->round_mode && s->opset < 24)
        return cli_usage(cmd, "%s needs ONNX opset 24 or later (Cast-%d has no round_mode "
                              "attribute)", s->given_spelling[CLI_OPT_ROUND_MODE], s->opset);
    return CLI_OK;
}

const char *cli_settings_flag(const cli_settings *s, int id, const char *flag)
{
    return (s->given & (1u << id)) && s->given_spelling[id][0] ? s->given_spelling[id] : flag;
}

const char *cli_error_text(const cli_settings *s, dtcast_status status, const char *message,
                           char *buf, size_t size)
{
    const char *why = message && message[0] ? message : dtcast_status_string(status);
    static const char field[] = "(set discard_imaginary)";
    const char *at = why ? strstr(why, field) : NULL;
    if (!why)
        return "failed";
    if (!at)
        return why;
    /* The library names its option field; the user gives a flag. */
    snprintf(buf, size, "%.*s(give %s)%s", (int)(at - why), why,
             cli_settings_flag(s, CLI_OPT_DISCARD_IMAG, "--discard-imag"), at + strlen(field));
    return buf;
}

/* ---- conversion ----------------------------------------------------------------------------- */

void cli_conversion(const cli_settings *s, dt_conversion *c)
{
    memset(c, 0, sizeof *c);
    c->profile = s->profile;
    c->opset = s->opset;
    c->options = s->options;
    c->saturate = s->saturate;
    c->round_mode = s->round_mode;
    c->cast_mode = s->cast_mode;
}

int cli_convert_tensor(const cli_settings *s, const dt_tensor *src, dtcast_type to,
                       dt_tensor *dst, const char *what)
{
    dt_conversion c;
    cli_conversion(s, &c);
    dtcast_error error;
    memset(&error, 0, sizeof error);
    dtcast_status st = dt_tensor_convert(&c, src, to, dst, &error);
    if (st == DTCAST_OK)
        return CLI_OK;
    char a[32], b[32], profile[32], why[sizeof error.message + 64];
    cli_profile_label(s, profile, sizeof profile);
    return cli_fail("%s: cannot cast %s to %s (profile %s): %s", what,
                    cli_type_label(src->type, a, sizeof a), cli_type_label(to, b, sizeof b),
                    profile, cli_error_text(s, st, error.message, why, sizeof why));
}
