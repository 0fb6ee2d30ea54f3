/* Messages and argument parsing: --opt=value, --opt value, -o value, -h, "--", "-" (stdin). */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- messages ------------------------------------------------------------------------------- */

int cli_fail(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr, "dtcast: %s\n", line);
    return CLI_FAIL;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fflush(stdout);
    if (cmd)
        fprintf(stderr, "dtcast: %s: %s (see 'dtcast %s --help')\n", cmd, line, cmd);
    else
        fprintf(stderr, "dtcast: %s (see 'dtcast --help')\n", line);
    return CLI_USAGE;
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
    static char spelled[80];
    snprintf(spelled, sizeof spelled, "--%.*s", (int)(len < 70 ? len : 70), name);
    a->spelled = spelled;
    if (!o) {
        cli_usage(a->cmd, "unknown option '%s'", spelled);
        return CLI_ARG_ERROR;
    }
    return take_value(a, o, eq ? eq + 1 : NULL);
}

static int next_short(cli_args *a, const char *arg)
{
    static char spelled[3];
    spelled[0] = '-';
    spelled[1] = arg[1];
    spelled[2] = 0;
    a->spelled = spelled;
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
    if (option)
        return cli_usage(cmd, "%s: unknown type '%s' (see 'dtcast types')", option, text);
    return cli_usage(cmd, "unknown type '%s' (see 'dtcast types')", text);
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
    char list[256] = "";
    for (int i = 0; choices[i]; i++) {
        if (strcasecmp(text, choices[i]) == 0) {
            *index = i;
            return CLI_OK;
        }
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", choices[i]);
    }
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
