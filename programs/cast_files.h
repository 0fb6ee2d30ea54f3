/* dtcast cast on files (cast_files.c): the request the command line builds, and the job. */
#ifndef DTCAST_CAST_FILES_H
#define DTCAST_CAST_FILES_H

#include "cli.h"

#define CLI_MAX_GLOBS 64

typedef struct cli_globs {
    int n;
    const char *pattern[CLI_MAX_GLOBS];
} cli_globs;

typedef enum cli_external {
    CLI_EXTERNAL_AUTO,   /* TensorProto over 2 GiB: external data */
    CLI_EXTERNAL_ALWAYS,
    CLI_EXTERNAL_NEVER
} cli_external;

typedef struct cast_request {
    cli_settings settings;
    const char *to_name;
    dtcast_type to;
    const char *in;
    const char *out;
    int quiet;           /* -q: no progress, no warning */
    int report;          /* --report */
    cli_globs select, exclude;
    cli_external external_data;
    int single_output;   /* set by the job: OUT holds one tensor */
    int float6_packed;   /* --float6-packed: raw float6 input and output four in three bytes */
    /* A sharded checkpoint in steps (docs/files.md, "Sharded checkpoints"): */
    const char *shards;  /* --shards LIST: convert only these shards, write no index; or NULL */
    int index_only;      /* --index-only: convert nothing, write the index of the shards in OUT */
    int raw_codes;       /* --raw-codes: cast the codes of scaled tensors as values */
} cast_request;

/* Returned by cli_cast_files, before anything is written, for string tensors: the command
 * converts those whole in memory (cli_load_tensor, cli_convert_tensor, cli_save_tensor). */
#define CLI_IN_MEMORY (-2)

/* Converts r->in to r->out, streamed; prints errors; returns the exit status. */
int cli_cast_files(const cast_request *r);

#endif /* DTCAST_CAST_FILES_H */
