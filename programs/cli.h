/* The dtcast command-line tool: what the subcommand files share.
 *
 * Conventions: every subcommand is `int cmd_NAME(int argc, char **argv)` with argv[0] the
 * subcommand's name; it returns the process exit status (CLI_OK, CLI_FAIL for runtime and data
 * errors, CLI_USAGE for usage errors) after printing at most one error line on stderr. */
#ifndef DTCAST_CLI_H
#define DTCAST_CLI_H

#include "dtcast.h"
#include "files/npy.h"
#include "files/whole.h"
#include "files/progress.h"

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CLI_PRINTF(f, a)
#endif

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

typedef struct cli_option cli_option;

/* ---- messages (cli_args.c) ------------------------------------------------------------------ */

/* "dtcast: <message>" on stderr; returns CLI_FAIL. */
int cli_fail(const char *fmt, ...) CLI_PRINTF(1, 2);
/* "dtcast: <cmd>: <message> (see 'dtcast <cmd> --help')" on stderr; returns CLI_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);
/* "dtcast: warning: <message>" on stderr. */
void cli_warn(const char *fmt, ...) CLI_PRINTF(1, 2);
/* Copies text for a message or a display: bytes that are not valid UTF-8, and control
 * characters (C0, DEL, C1), become \xNN; valid UTF-8 passes through. Every message above goes
 * through it, so names, values and arguments from the command line or a file print safely.
 * out is always terminated; size of at least 4 * strlen(text) + 1 holds all of it. */
void cli_escape(char *out, size_t size, const char *text);

/* ---- the progress line (cli_progress.c) ------------------------------------------------------ */

typedef struct cli_progress_line {
    int enabled;
    double start, last; /* seconds */
    int shown;          /* a line is on the terminal */
} cli_progress_line;
/* Starts p counting toward total, drawn on stderr through line when want and stderr is a
 * terminal. */
void cli_progress_start(dt_progress *p, cli_progress_line *line, uint64_t total, int want);
/* Clears the line (before other output on stderr, and at the end). */
void cli_progress_clear(dt_progress *p);
/* The same over a line: a job's hooks (files/job.h) take cli_progress_draw with the line as its
 * context, and cli_print_warning / cli_print_report (which clear the line first; a report's
 * lines are escaped as messages are). */
void cli_progress_line_init(cli_progress_line *line, int want);
void cli_progress_line_clear(cli_progress_line *line);
int cli_progress_draw(void *line, uint64_t done, uint64_t total);
void cli_print_warning(void *line, const char *text);
void cli_print_report(void *line, const char *text);
/* A job's hooks drawing on line (no progress line when quiet) and printing. */
struct dt_job_hooks;
void cli_job_hooks(struct dt_job_hooks *hooks, cli_progress_line *line, int quiet);
/* After a job: the line cleared, its error printed (a usage error when err->usage); the exit
 * status. */
int cli_job_status(const char *cmd, cli_progress_line *line, dtcast_status st,
                   const dt_io_error *err);

/* ---- suggestions (cli_args.c) --------------------------------------------------------------- */

/* Edit distance ignoring ASCII case: insertions, deletions, substitutions and swaps of two
 * adjacent characters (optimal string alignment); texts past 63 bytes count as far. */
int cli_edit_distance(const char *a, const char *b);

/* The candidates closest to what the user typed: feed them with cli_suggest_add, then
 * cli_suggest_hint gives " (did you mean 'float16'?)" or "" when none is close. */
typedef struct cli_suggest {
    const char *text;       /* what the user typed */
    int best;               /* distance of the closest candidates so far */
    int n;                  /* how many distinct candidates are at that distance */
    char shown[3][64];      /* the first three of them, as they would be written */
} cli_suggest;

void cli_suggest_init(cli_suggest *s, const char *text);
/* Compares key with the text; shown is the spelling to suggest (NULL: key itself). */
void cli_suggest_add(cli_suggest *s, const char *key, const char *shown);
/* " (did you mean 'a'?)", " (did you mean 'a' or 'b'?)", " (... 'a', 'b' or 'c'?)", or "". */
const char *cli_suggest_hint(const cli_suggest *s, char *buf, size_t size);
/* The hint for a misspelt type name, over the library's table (dtcast_type_list). */
const char *cli_type_hint(const char *text, char *buf, size_t size);
/* The hint for a misspelt option ("--roud", "--TO") over a command's option table. */
const char *cli_option_hint(const cli_option *options, const char *spelled, char *buf,
                            size_t size);

/* ---- argument parsing (cli_args.c) ---------------------------------------------------------- */

struct cli_option {
    const char *name;  /* long name without the dashes: "to" for --to */
    char short_name;   /* 'h' for -h, or 0 */
    int takes_value;   /* --name VALUE or --name=VALUE */
    int id;            /* what cli_args_next() returns */
};                     /* tables end with an entry whose name is NULL */

enum { CLI_ARG_END = -1, CLI_ARG_POSITIONAL = -2, CLI_ARG_ERROR = -3, CLI_ARG_HELP = -4 };

typedef struct cli_args {
    const char *cmd;
    int argc;
    char **argv;
    int next;
    int only_positional; /* after "--" */
    const cli_option *options;
    const char *value;   /* the option's value, or the positional argument */
    const char *spelled; /* the option as the user wrote it ("--to", "-h"): spelled_buf, so
                          * valid until the next cli_args_next (copy it to keep it) */
    char spelled_buf[80];
} cli_args;

void cli_args_init(cli_args *a, const char *cmd, int argc, char **argv, const cli_option *options);
/* The next option's id (value in a->value), CLI_ARG_POSITIONAL (a->value = the argument),
 * CLI_ARG_END, or CLI_ARG_ERROR after printing a usage error. */
int cli_args_next(cli_args *a);
/* A positional argument of a command taking IN OUT: fills *in, then *out; a third one is a
 * usage error (returns CLI_USAGE after the message), else CLI_OK. */
int cli_in_out(const cli_args *a, const char **in, const char **out);
/* For a command taking IN OUT: the next option id of the command's own (not --help), after
 * taking the positional arguments into *in and *out; CLI_ARG_END; CLI_ARG_HELP after printing
 * help on stdout (for -h/--help: the id CLI_OPT_HELP); CLI_ARG_ERROR after a usage error. */
int cli_args_next_option(cli_args *a, const char *help, const char **in, const char **out);
/* After the options: "missing IN and OUT" / "missing OUT" (CLI_USAGE), else CLI_OK. */
int cli_need_in_out(const char *cmd, const char *in, const char *out);

/* Value parsers: on a bad value they print a usage error naming the option and return CLI_USAGE. */
int cli_parse_type(const char *cmd, const char *option, const char *text, dtcast_type *type);
int cli_parse_uint(const char *cmd, const char *option, const char *text, unsigned long max,
                   unsigned long *value);
/* One of the NULL-terminated choices (case-insensitive); *index receives its position. */
int cli_parse_choice(const char *cmd, const char *option, const char *text,
                     const char *const *choices, int *index);
/* "2x3x4", "2,3,4" or "[2, 3]"; "" or "scalar" is a 0-d shape. */
int cli_parse_shape(const char *cmd, const char *option, const char *text, int64_t *dims,
                    int *ndim);

/* ---- tensors in files (cli_tensor.c) -------------------------------------------------------- */

/* How a tensor file is read: --from, --format raw, --shape (files/tensor.h). */
typedef dt_input cli_input_spec;

/* The kind of a file by its name (raw for any name with format_raw); prints the refusal of an
 * unknown kind and returns CLI_FAIL. */
int cli_file_kind(const char *path, int format_raw, dt_file_kind *kind);
/* Reads IN (.npy, .pb, raw) into t; prints the error and returns its status on failure. */
int cli_load_tensor(const char *cmd, const char *path, const cli_input_spec *spec, dt_tensor *t);
/* Writes t to OUT in the format its name asks for; nothing is left behind on failure. */
int cli_save_tensor(const char *path, const dt_tensor *t);

/* Bits one element occupies in a packed buffer (1, 2, 4, 8, ... 128); 0 for strings. */
int cli_element_stride_bits(dtcast_type type);
/* The encoding of element index (up to 128 bits: code[0] low, code[1] high). */
void cli_element_code(const void *data, dtcast_type type, size_t index, uint64_t code[2]);
/* Writes an encoding as element 0 of buf (at least 16 bytes). */
void cli_element_store(void *buf, dtcast_type type, const uint64_t code[2]);
/* "0x7e", "0x3f800000": as many hex digits as the element has. */
void cli_format_code(char *buf, size_t size, dtcast_type type, const uint64_t code[2]);
/* The low `bits` binary digits of an encoding (groups of four joined by '_' beyond 8 bits). */
void cli_format_binary(char *buf, size_t size, int bits, const uint64_t code[2]);
/* The value of element index as text (dtcast_format_element; strings quoted, escaped as
 * cli_escape does). */
void cli_format_value(char *buf, size_t size, const dt_tensor *t, size_t index,
                      dtcast_string_style style);
/* A type's name for messages: canonical name, or "type 123". */
const char *cli_type_label(dtcast_type type, char *buf, size_t size);
/* "2x3x4" (or "scalar"). */
void cli_format_shape(char *buf, size_t size, int ndim, const int64_t *dims);

/* ---- conversion settings shared by cast and compare (cli_settings.c) -------------------------- */

/* The file layer's profiles (files/cast.h), under the CLI's names. */
typedef dt_profile cli_profile;
#define CLI_PROFILE_EXACT DT_PROFILE_EXACT
#define CLI_PROFILE_ONNX DT_PROFILE_ONNX
#define CLI_PROFILE_PYPTO DT_PROFILE_PYPTO
#define CLI_PROFILE_ORT_FLOAT16 DT_PROFILE_ORT_FLOAT16
#define CLI_PROFILE_ONNXCONVERTER_COMMON DT_PROFILE_ONNXCONVERTER_COMMON

/* Option ids of the conversion flags; commands add their own ids from CLI_OPT_COMMAND on. */
enum {
    CLI_OPT_HELP = 1,
    CLI_OPT_TO,
    CLI_OPT_FROM,
    CLI_OPT_SHAPE,
    CLI_OPT_PROFILE,
    CLI_OPT_ROUND,
    CLI_OPT_OVERFLOW,
    CLI_OPT_INT_OVERFLOW,
    CLI_OPT_SATURATE,
    CLI_OPT_ROUND_MODE,
    CLI_OPT_CAST_MODE,
    CLI_OPT_DISCARD_IMAG,
    CLI_OPT_STRING_STYLE,
    CLI_OPT_STRING_BOOL_NUMERIC,
    CLI_OPT_FLOAT4_NAN_MAX,
    CLI_OPT_THREADS,
    CLI_OPT_VIA_FLOAT32,
    CLI_OPT_SEED,
    CLI_OPT_COMMAND = 100
};

/* The table entries of the conversion flags (no terminator), for a command's option table. */
#define CLI_CONVERSION_OPTIONS                                                                   \
    {"from", 0, 1, CLI_OPT_FROM}, {"shape", 0, 1, CLI_OPT_SHAPE},                                \
        {"profile", 'p', 1, CLI_OPT_PROFILE}, {"round", 'r', 1, CLI_OPT_ROUND},                  \
        {"overflow", 0, 1, CLI_OPT_OVERFLOW}, {"int-overflow", 0, 1, CLI_OPT_INT_OVERFLOW},      \
        {"saturate", 0, 1, CLI_OPT_SATURATE}, {"round-mode", 0, 1, CLI_OPT_ROUND_MODE},          \
        {"cast-mode", 0, 1, CLI_OPT_CAST_MODE}, {"discard-imag", 0, 0, CLI_OPT_DISCARD_IMAG},    \
        {"string-style", 0, 1, CLI_OPT_STRING_STYLE},                                            \
        {"string-bool-numeric", 0, 0, CLI_OPT_STRING_BOOL_NUMERIC},                              \
        {"float4-nan-max", 0, 0, CLI_OPT_FLOAT4_NAN_MAX}, {"threads", 'T', 1, CLI_OPT_THREADS},  \
        {"via-float32", 0, 0, CLI_OPT_VIA_FLOAT32}, {"seed", 0, 1, CLI_OPT_SEED}

/* Help text of the conversion flags. */
extern const char cli_conversion_help[];

typedef struct cli_settings {
    cli_input_spec input;
    cli_profile profile;
    int opset;                   /* onnx */
    dtcast_options options;      /* exact (and the shared fields of the others) */
    int64_t saturate;            /* onnx */
    const char *round_mode;      /* onnx, or NULL */
    dtcast_pypto_mode cast_mode; /* pypto */
    /* Which flags the user gave, so a profile can refuse the ones it does not take. */
    unsigned given;
    char given_spelling[CLI_OPT_SEED + 1][24];
} cli_settings;

void cli_settings_init(cli_settings *s);
/* Handles one of the conversion option ids; returns CLI_OK or CLI_USAGE (message printed), or -1
 * when id is not a conversion flag. */
int cli_settings_option(cli_settings *s, const char *cmd, const cli_args *a, int id);
/* After parsing: refuses flags the chosen profile does not take. */
int cli_settings_check(const cli_settings *s, const char *cmd);
/* Converts src to type `to` under the settings into dst (allocated here; free it with
 * dt_tensor_free_converted). Prints the error naming `what` (the input) on failure. */
int cli_convert_tensor(const cli_settings *s, const dt_tensor *src, dtcast_type to,
                       dt_tensor *dst, const char *what);
/* The settings as the file layer's conversion profile (files/cast.h). */
void cli_conversion(const cli_settings *s, dt_conversion *c);
/* The flag of option id as the user spelled it ("-r"), or flag when it was not given. */
const char *cli_settings_flag(const cli_settings *s, int id, const char *flag);
/* A conversion error's text for the user (message, else the status's), with the library's
 * option field names replaced by the flags that set them; buf holds a rewritten text. */
const char *cli_error_text(const cli_settings *s, dtcast_status status, const char *message,
                           char *buf, size_t size);
/* "exact", "onnx:25", "pypto". */
void cli_profile_label(const cli_settings *s, char *buf, size_t size);

/* ---- type names (cmd_info.c) ---------------------------------------------------------------- */

/* The names other than the canonical one that dtcast_type_from_name() maps to type, comma
 * separated (the ONNX name and code first). */
void cli_type_aliases(dtcast_type type, char *buf, size_t size);

/* ---- subcommands ---------------------------------------------------------------------------- */

int cmd_cast(int argc, char **argv);
int cmd_cast_gguf(int argc, char **argv); /* cmd_cast_gguf.c: cast with a .gguf OUT */
int cmd_info(int argc, char **argv);
int cmd_table(int argc, char **argv);
int cmd_types(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_onnx_test(int argc, char **argv);
int cmd_onnx_run(int argc, char **argv);          /* cmd_onnx_run.c */
int cmd_promote(int argc, char **argv);         /* cmd_promote.c */
int cmd_convert_promote(int argc, char **argv); /* cmd_promote.c */
int cmd_quantize(int argc, char **argv);        /* cmd_quantize.c */
int cmd_dequantize(int argc, char **argv);      /* cmd_dequantize.c */
int cmd_convert_layout(int argc, char **argv);  /* cmd_convert_layout.c */
int cmd_inspect(int argc, char **argv);         /* cmd_inspect.c */
int cmd_diff(int argc, char **argv);            /* cmd_diff.c */

#endif /* DTCAST_CLI_H */
