/* Messages and argument parsing: --opt=value, --opt value, -o value, -h, "--", "-" (stdin). */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- messages ------------------------------------------------------------------------------- */

/* Length of the valid UTF-8 character at p (1 to 4 bytes), or 0 when p does not start one:
 * no overlong forms, no surrogates (ED A0..BF), nothing above U+10FFFF. */
static size_t utf8_length(const unsigned char *p)
{
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return (p[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        /* E0 needs A0..BF after it (else overlong), ED 80..9F (else a surrogate). */
        unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
        return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 ? 3 : 0;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        /* F0 needs 90..BF after it (else overlong), F4 80..8F (else above U+10FFFF). */
        unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
        return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 && (p[3] & 0xc0) == 0x80 ? 4
                                                                                         : 0;
    }
    return 0;
}

void cli_escape(char *out, size_t size, const char *text)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)text;
    size_t used = 0;
    if (size == 0)
        return;
    while (*p) {
        size_t n = utf8_length(p);
        /* C0 controls and DEL; C1 controls are U+0080..U+009F, C2 80..C2 9F in UTF-8. */
        int control = n == 1 ? *p < 0x20 || *p == 0x7f : n == 2 && p[0] == 0xc2 && p[1] < 0xa0;
        size_t count = n ? n : 1;
        int escape = control || n == 0;
        if (used + (escape ? 4 * count : count) >= size)
            break; /* whole characters or escapes only */
        for (size_t i = 0; i < count; i++) {
            if (!escape) {
                out[used++] = (char)p[i];
                continue;
            }
            out[used++] = '\\';
            out[used++] = 'x';
            out[used++] = hex[p[i] >> 4];
            out[used++] = hex[p[i] & 15];
        }
        p += count;
    }
    out[used] = 0;
}

/* One message line on stderr: "dtcast: [warning: ]<message>", or for a usage error
 * "dtcast: <cmd>: <message> (see 'dtcast <cmd> --help')" ("--help" alone without cmd). */
static void print_message(int usage, const char *cmd, const char *prefix, const char *fmt,
                          va_list ap)
{
    char line[1024], shown[4 * sizeof line];
    vsnprintf(line, sizeof line, fmt, ap);
    cli_escape(shown, sizeof shown, line);
    fflush(stdout);
    if (usage && cmd)
        fprintf(stderr, "dtcast: %s: %s (see 'dtcast %s --help')\n", cmd, shown, cmd);
    else if (usage)
        fprintf(stderr, "dtcast: %s (see 'dtcast --help')\n", shown);
    else
        fprintf(stderr, "dtcast: %s%s\n", prefix, shown);
}

int cli_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    print_message(0, NULL, "", fmt, ap);
    va_end(ap);
    return CLI_FAIL;
}

void cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    print_message(0, NULL, "warning: ", fmt, ap);
    va_end(ap);
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    print_message(1, cmd, "", fmt, ap);
    va_end(ap);
    return CLI_USAGE;
}

int cli_in_out(const cli_args *a, const char **in, const char **out)
{
    if (!*in)
        *in = a->value;
    else if (!*out)
        *out = a->value;
    else
        return cli_usage(a->cmd, "unexpected argument '%s' (only IN and OUT)", a->value);
    return CLI_OK;
}

int cli_args_next_option(cli_args *a, const char *help, const char **in, const char **out)
{
    for (;;) {
        int id = cli_args_next(a);
        if (id == CLI_OPT_HELP) {
            fputs(help, stdout);
            return CLI_ARG_HELP;
        }
        if (id != CLI_ARG_POSITIONAL)
            return id;
        if (cli_in_out(a, in, out) != CLI_OK)
            return CLI_ARG_ERROR;
    }
}

int cli_need_in_out(const char *cmd, const char *in, const char *out)
{
    if (!in)
        return cli_usage(cmd, "missing IN and OUT");
    if (!out)
        return cli_usage(cmd, "missing OUT");
    return CLI_OK;
}

/* ---- suggestions ---------------------------------------------------------------------------- */

int cli_edit_distance(const char *a, const char *b)
{
    enum { MAX = 63 };
    size_t m = strlen(a), n = strlen(b);
    if (m > MAX || n > MAX)
        return MAX + 1;
    int d[MAX + 1][MAX + 1];
    for (size_t i = 0; i <= m; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= n; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= m; i++) {
        int ai = tolower((unsigned char)a[i - 1]);
        for (size_t j = 1; j <= n; j++) {
            int bj = tolower((unsigned char)b[j - 1]);
            int v = d[i - 1][j - 1] + (ai != bj);
            if (d[i - 1][j] + 1 < v)
                v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            /* "flaot" -> "float": two adjacent characters swapped is one edit. */
            if (i > 1 && j > 1 && ai == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == bj && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    }
    return d[m][n];
}

void cli_suggest_init(cli_suggest *s, const char *text)
{
    memset(s, 0, sizeof *s);
    s->text = text;
    s->best = INT_MAX;
}

void cli_suggest_add(cli_suggest *s, const char *key, const char *shown)
{
    if (!shown)
        shown = key;
    int d = cli_edit_distance(s->text, key);
    /* Close: one edit for names of up to 5 characters, two beyond (a third of the length). */
    int limit = strlen(key) >= 6 ? 2 : 1;
    if (d > limit || d > s->best)
        return;
    if (d < s->best) {
        s->best = d;
        s->n = 0;
    }
    for (int i = 0; i < s->n && i < 3; i++)
        if (strcmp(s->shown[i], shown) == 0)
            return;
    if (s->n < 3)
        snprintf(s->shown[s->n], sizeof s->shown[0], "%s", shown);
    s->n++;
}

const char *cli_suggest_hint(const cli_suggest *s, char *buf, size_t size)
{
    buf[0] = 0;
    if (s->n == 1)
        snprintf(buf, size, " (did you mean '%s'?)", s->shown[0]);
    else if (s->n == 2)
        snprintf(buf, size, " (did you mean '%s' or '%s'?)", s->shown[0], s->shown[1]);
    else if (s->n == 3)
        snprintf(buf, size, " (did you mean '%s', '%s' or '%s'?)", s->shown[0], s->shown[1],
                 s->shown[2]);
    return buf; /* more than three as close: no suggestion */
}

const char *cli_type_hint(const char *text, char *buf, size_t size)
{
    dtcast_type types[256];
    size_t n = dtcast_type_list(types, 256);
    cli_suggest s;
    cli_suggest_init(&s, text);
    for (size_t i = 0; i < n && i < 256; i++) {
        const char *name = dtcast_type_name(types[i]);
        if (name)
            cli_suggest_add(&s, name, NULL);
    }
    return cli_suggest_hint(&s, buf, size);
}

const char *cli_option_hint(const cli_option *options, const char *spelled, char *buf,
                            size_t size)
{
    buf[0] = 0;
    if (strncmp(spelled, "--", 2) != 0)
        return buf; /* -x: one letter is too short to guess from */
    cli_suggest s;
    cli_suggest_init(&s, spelled + 2);
    for (const cli_option *o = options; o->name; o++) {
        char shown[64];
        snprintf(shown, sizeof shown, "--%s", o->name);
        cli_suggest_add(&s, o->name, shown);
    }
    return cli_suggest_hint(&s, buf, size);
}

/* ---- options -------------------------------------------------------------------------------- */

void cli_args_init(cli_args *a, const char *cmd, int argc, char **argv, const cli_option *options)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    a->argc = argc;
    a->argv = argv;
    a->next = 1; /* argv[0] is the subcommand */
    a->options = options;
}

static const cli_option *find_long(const cli_option *options, const char *name, size_t len)
{
    for (const cli_option *o = options; o->name; o++)
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
            return o;
    return NULL;
}

static const cli_option *find_short(const cli_option *options, char c)
{
    for (const cli_option *o = options; o->name; o++)
        if (o->short_name && o->short_name == c)
            return o;
    return NULL;
}

/* Takes the value of option o: inline (after '=' or glued to a short option) or the next word. */
static int take_value(cli_args *a, const cli_option *o, const char *inline_value)
{
    if (!o->takes_value) {
        if (inline_value) {
            cli_usage(a->cmd, "option '%s' takes no value", a->spelled);
            return CLI_ARG_ERROR;
        }
        a->value = NULL;
        return o->id;
    }
    if (inline_value) {
        a->value = inline_value;
        return o->id;
    }
    if (a->next >= a->argc) {
        cli_usage(a->cmd, "option '%s' needs a value", a->spelled);
        return CLI_ARG_ERROR;
    }
    a->value = a->argv[a->next++];
    return o->id;
}

static int next_long(cli_args *a, const char *arg)
{
    const char *name = arg + 2;
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const cli_option *o = find_long(a->options, name, len);
    snprintf(a->spelled_buf, sizeof a->spelled_buf, "--%.*s", (int)(len < 70 ? len : 70), name);
    a->spelled = a->spelled_buf;
    if (!o) {
        char hint[256];
        cli_usage(a->cmd, "unknown option '%s'%s", a->spelled,
                  cli_option_hint(a->options, a->spelled, hint, sizeof hint));
        return CLI_ARG_ERROR;
    }
    return take_value(a, o, eq ? eq + 1 : NULL);
}

static int next_short(cli_args *a, const char *arg)
{
    snprintf(a->spelled_buf, sizeof a->spelled_buf, "-%c", arg[1]);
    a->spelled = a->spelled_buf;
    const cli_option *o = find_short(a->options, arg[1]);
    if (!o) {
        cli_usage(a->cmd, "unknown option '%s'", arg);
        return CLI_ARG_ERROR;
    }
    if (arg[2] && !o->takes_value) {
        cli_usage(a->cmd, "unknown option '%s'", arg);
        return CLI_ARG_ERROR;
    }
    return take_value(a, o, arg[2] ? arg + 2 : NULL);
}

/* "-5" or "-.5" is a value a user could mean as a positional (never an option of ours). */
static int looks_like_number(const char *arg)
{
    return arg[0] == '-' && (isdigit((unsigned char)arg[1]) || arg[1] == '.');
}

int cli_args_next(cli_args *a)
{
    if (a->next >= a->argc)
        return CLI_ARG_END;
    const char *arg = a->argv[a->next++];
    if (a->only_positional || arg[0] != '-' || arg[1] == 0 || looks_like_number(arg)) {
        a->value = arg;
        return CLI_ARG_POSITIONAL;
    }
    if (strcmp(arg, "--") == 0) {
        a->only_positional = 1;
        return cli_args_next(a);
    }
    if (arg[1] == '-')
        return next_long(a, arg);
    return next_short(a, arg);
}

/* ---- values --------------------------------------------------------------------------------- */

int cli_parse_type(const char *cmd, const char *option, const char *text, dtcast_type *type)
{
    if (dtcast_type_from_name(text, type, NULL) == DTCAST_OK)
        return CLI_OK;
    char hint[256];
    if (!cli_type_hint(text, hint, sizeof hint)[0])
        snprintf(hint, sizeof hint, " (see 'dtcast types')");
    if (option)
        return cli_usage(cmd, "%s: unknown type '%s'%s", option, text, hint);
    return cli_usage(cmd, "unknown type '%s'%s", text, hint);
}

int cli_parse_uint(const char *cmd, const char *option, const char *text, unsigned long max,
                   unsigned long *value)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (!isdigit((unsigned char)text[0]) || *end || errno || v > max)
        return cli_usage(cmd, "%s: '%s' is not a number from 0 to %lu", option, text, max);
    *value = v;
    return CLI_OK;
}

int cli_parse_choice(const char *cmd, const char *option, const char *text,
                     const char *const *choices, int *index)
{
    char list[256] = "", hint[256];
    cli_suggest s;
    cli_suggest_init(&s, text);
    for (int i = 0; choices[i]; i++) {
        if (strcasecmp(text, choices[i]) == 0) {
            *index = i;
            return CLI_OK;
        }
        cli_suggest_add(&s, choices[i], NULL);
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", choices[i]);
    }
    if (cli_suggest_hint(&s, hint, sizeof hint)[0])
        return cli_usage(cmd, "%s: unknown value '%s'%s", option, text, hint);
    return cli_usage(cmd, "%s: unknown value '%s' (one of: %s)", option, text, list);
}

int cli_parse_shape(const char *cmd, const char *option, const char *text, int64_t *dims,
                    int *ndim)
{
    const char *p = text;
    int n = 0;
    while (*p == ' ' || *p == '[' || *p == '(')
        p++;
    if (*p == 0 || *p == ']' || *p == ')' || strcasecmp(p, "scalar") == 0) {
        *ndim = 0;
        return CLI_OK;
    }
    for (;;) {
        while (*p == ' ')
            p++;
        if (!isdigit((unsigned char)*p))
            return cli_usage(cmd, "%s: bad shape '%s' (write it as 2x3x4)", option, text);
        char *end;
        errno = 0;
        long long d = strtoll(p, &end, 10);
        if (errno || d < 0)
            return cli_usage(cmd, "%s: dimension too large in '%s'", option, text);
        if (n == DT_MAX_DIMS)
            return cli_usage(cmd, "%s: more than %d dimensions in '%s'", option, DT_MAX_DIMS,
                             text);
        dims[n++] = d;
        p = end;
        while (*p == ' ')
            p++;
        if (*p == 'x' || *p == 'X' || *p == ',' || *p == '*') {
            p++;
            continue;
        }
        while (*p == ' ' || *p == ']' || *p == ')')
            p++;
        if (*p)
            return cli_usage(cmd, "%s: bad shape '%s' (write it as 2x3x4)", option, text);
        break;
    }
    *ndim = n;
    return CLI_OK;
}
