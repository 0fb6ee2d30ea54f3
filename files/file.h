/* Files as the streaming pipeline sees them: an input read at offsets (pread for regular files,
 * forward-only reads for pipes), and an output written in order to a temporary file that is
 * renamed over the destination only when everything succeeded. */
#ifndef DTCAST_FILES_FILE_H
#define DTCAST_FILES_FILE_H

#include "files/tensor.h"

#include <stdint.h>

typedef struct dt_infile {
    int fd;
    char *path;       /* as given; "-" is stdin */
    const char *shown; /* for messages: the path, or "<stdin>" */
    int seekable;     /* a regular file: reads at any offset, size known */
    uint64_t size;    /* bytes in the file (seekable), else UINT64_MAX */
    uint64_t pos;     /* pipes: bytes consumed so far */
    int at_eof;       /* pipes: the writer closed its end */
    uint8_t peeked[16]; /* pipes: bytes dt_infile_peek read ahead, served first */
    size_t npeeked;
    const uint8_t *map; /* dt_infile_map: the whole file, read-only */
    size_t map_len;
    int spooled;      /* a pipe copied to an unlinked temporary file (dt_infile_spool) */
} dt_infile;

dtcast_status dt_infile_open(dt_infile *f, const char *path, dt_io_error *err);
void dt_infile_close(dt_infile *f);
/* Reads exactly len bytes at offset; a file that ends first is a BAD_FILE error naming the byte.
 * Pipes read forward only: offset must be >= the bytes consumed (bytes between are skipped). */
dtcast_status dt_infile_read(dt_infile *f, uint64_t offset, void *buf, size_t len,
                             dt_io_error *err);
/* Pipes: reads up to len bytes (fewer only at the end); *got receives the count. */
dtcast_status dt_infile_read_some(dt_infile *f, void *buf, size_t len, size_t *got,
                                  dt_io_error *err);
/* Looks at the first len (<= 16) bytes without consuming them (for pipes, before any read);
 * *got is less than len only when the input is shorter. */
dtcast_status dt_infile_peek(dt_infile *f, void *buf, size_t len, size_t *got, dt_io_error *err);
/* Maps a seekable file read-only (for parsing headers: only the pages touched are read). The
 * mapping lives until dt_infile_close. An empty file maps to a non-NULL empty buffer. */
dtcast_status dt_infile_map(dt_infile *f, const uint8_t **buf, size_t *len, dt_io_error *err);
/* Copies a pipe, before any byte of it is consumed (peeked bytes are kept), to a temporary file
 * created in the folder dir and unlinked at once, and reads that file from then on: seekable,
 * size known, fd its own (the disk space goes when the file is closed, whatever happens). Memory:
 * one 1 MiB buffer. A regular file is left as it is. Errors name the input, the folder and the
 * byte offset (a full disk). */
dtcast_status dt_infile_spool(dt_infile *f, const char *dir, dt_io_error *err);
/* Reads a whole pipe (or file) into memory: for formats that cannot be streamed from a pipe. */
dtcast_status dt_infile_slurp(dt_infile *f, uint8_t **buf, size_t *len, dt_io_error *err);

typedef struct dt_outfile {
    int fd;
    char *path; /* destination; "-" is stdout */
    char *tmp;  /* the temporary file written until dt_outfile_commit, or NULL for stdout */
    uint64_t written;
} dt_outfile;

/* Creates a temporary file beside path (or takes stdout for "-"). */
dtcast_status dt_outfile_open(dt_outfile *f, const char *path, dt_io_error *err);
dtcast_status dt_outfile_write(dt_outfile *f, const void *buf, size_t len, dt_io_error *err);
/* Closes the temporary file and renames it to the destination. */
dtcast_status dt_outfile_commit(dt_outfile *f, dt_io_error *err);
/* Removes the temporary file (after an error); safe to call after commit or on a zeroed file. */
void dt_outfile_abort(dt_outfile *f);

#endif /* DTCAST_FILES_FILE_H */
