/* Input and output files of the streaming pipeline (file.h). */
#include "files/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- input ------------------------------------------------------------------------------- */

dtcast_status dt_infile_open(dt_infile *f, const char *path, dt_io_error *err)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    int is_stdin = strcmp(path, "-") == 0;
    f->path = strdup(path);
    if (!f->path)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    f->shown = is_stdin ? "<stdin>" : f->path;
    f->fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY);
    if (f->fd < 0) {
        dtcast_status st = dt_io_fail(err, DTCAST_ERR_IO, "cannot open '%s': %s", path,
                                      strerror(errno));
        dt_infile_close(f);
        return st;
    }
    struct stat sb;
    if (fstat(f->fd, &sb) != 0) {
        dtcast_status st = dt_io_fail(err, DTCAST_ERR_IO, "cannot stat '%s': %s", f->shown,
                                      strerror(errno));
        dt_infile_close(f);
        return st;
    }
    if (S_ISDIR(sb.st_mode)) {
        dtcast_status st = dt_io_fail(err, DTCAST_ERR_IO, "'%s' is a directory", f->shown);
        dt_infile_close(f);
        return st;
    }
    f->seekable = S_ISREG(sb.st_mode);
    f->size = f->seekable ? (uint64_t)sb.st_size : UINT64_MAX;
    if (f->seekable)
        (void)posix_fadvise(f->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    return DTCAST_OK;
}

void dt_infile_close(dt_infile *f)
{
    if (f->map && f->map_len)
        munmap((void *)f->map, f->map_len);
    if (f->fd > STDIN_FILENO)
        close(f->fd);
    free(f->path);
    memset(f, 0, sizeof *f);
    f->fd = -1;
}

static dtcast_status ended_early(const dt_infile *f, uint64_t at, dt_io_error *err)
{
    return dt_io_fail(err, DTCAST_ERR_BAD_FILE, "%s: file ends at byte %llu (truncated)",
                      f->shown, (unsigned long long)at);
}

dtcast_status dt_infile_read_some(dt_infile *f, void *buf, size_t len, size_t *got,
                                  dt_io_error *err)
{
    uint8_t *p = buf;
    size_t done = 0;
    if (f->npeeked && len) { /* what peek read ahead comes first */
        done = len < f->npeeked ? len : f->npeeked;
        memcpy(p, f->peeked, done);
        memmove(f->peeked, f->peeked + done, f->npeeked - done);
        f->npeeked -= done; /* counted in pos below, with the bytes read now */
    }
    while (done < len && !f->at_eof) {
        ssize_t n = read(f->fd, p + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return dt_io_fail(err, DTCAST_ERR_IO, "cannot read '%s' at byte %llu: %s",
                              f->shown, (unsigned long long)(f->pos + done), strerror(errno));
        if (n == 0)
            f->at_eof = 1;
        done += (size_t)n;
    }
    f->pos += done;
    *got = done;
    return DTCAST_OK;
}

dtcast_status dt_infile_read(dt_infile *f, uint64_t offset, void *buf, size_t len,
                             dt_io_error *err)
{
    if (!f->seekable) {
        if (offset < f->pos)
            return dt_io_fail(err, DTCAST_ERR_IO,
                              "%s: a pipe cannot go back to byte %llu (read a file instead)",
                              f->shown, (unsigned long long)offset);
        uint8_t skip[4096];
        while (f->pos < offset) {
            uint64_t left = offset - f->pos;
            size_t got, want = left < sizeof skip ? (size_t)left : sizeof skip;
            dtcast_status st = dt_infile_read_some(f, skip, want, &got, err);
            if (st != DTCAST_OK)
                return st;
            if (got < want)
                return ended_early(f, f->pos, err);
        }
        size_t got;
        dtcast_status st = dt_infile_read_some(f, buf, len, &got, err);
        if (st == DTCAST_OK && got < len)
            return ended_early(f, f->pos, err);
        return st;
    }
    uint8_t *p = buf;
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(f->fd, p + done, len - done, (off_t)(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return dt_io_fail(err, DTCAST_ERR_IO, "cannot read '%s' at byte %llu: %s",
                              f->shown, (unsigned long long)(offset + done), strerror(errno));
        if (n == 0)
            return ended_early(f, offset + done, err);
        done += (size_t)n;
    }
    return DTCAST_OK;
}

dtcast_status dt_infile_peek(dt_infile *f, void *buf, size_t len, size_t *got, dt_io_error *err)
{
    if (len > sizeof f->peeked)
        len = sizeof f->peeked;
    if (f->seekable) {
        ssize_t n = pread(f->fd, buf, len, 0);
        if (n < 0)
            return dt_io_fail(err, DTCAST_ERR_IO, "cannot read '%s': %s", f->shown,
                              strerror(errno));
        *got = (size_t)n;
        return DTCAST_OK;
    }
    size_t n = 0;
    dtcast_status st = dt_infile_read_some(f, f->peeked, len, &n, err);
    if (st != DTCAST_OK)
        return st;
    f->npeeked = n;
    f->pos -= n; /* not consumed */
    memcpy(buf, f->peeked, n);
    *got = n;
    return DTCAST_OK;
}

dtcast_status dt_infile_map(dt_infile *f, const uint8_t **buf, size_t *len, dt_io_error *err)
{
    static const uint8_t empty[1];
    if (!f->seekable)
        return dt_io_fail(err, DTCAST_ERR_IO, "%s: not a regular file", f->shown);
    if (f->size > SIZE_MAX)
        return dt_io_fail(err, DTCAST_ERR_SIZE_OVERFLOW, "%s: too large to map", f->shown);
    if (!f->map) {
        if (f->size == 0) {
            f->map = empty;
            f->map_len = 0;
        } else {
            void *m = mmap(NULL, (size_t)f->size, PROT_READ, MAP_PRIVATE, f->fd, 0);
            if (m == MAP_FAILED)
                return dt_io_fail(err, DTCAST_ERR_IO, "cannot map '%s': %s", f->shown,
                                  strerror(errno));
            f->map = m;
            f->map_len = (size_t)f->size;
        }
    }
    *buf = f->map;
    *len = f->map_len;
    return DTCAST_OK;
}

dtcast_status dt_infile_slurp(dt_infile *f, uint8_t **buf, size_t *len, dt_io_error *err)
{
    size_t cap = f->seekable && f->size < SIZE_MAX ? (size_t)f->size + 1 : (size_t)1 << 16;
    size_t used = 0;
    uint8_t *data = malloc(cap);
    if (!data)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory reading '%s'", f->shown);
    if (f->seekable) {
        f->at_eof = 0;
        f->pos = 0;
        if (lseek(f->fd, 0, SEEK_SET) != 0) {
            free(data);
            return dt_io_fail(err, DTCAST_ERR_IO, "cannot seek '%s': %s", f->shown,
                              strerror(errno));
        }
    }
    for (;;) {
        if (used == cap) {
            uint8_t *bigger = cap <= SIZE_MAX / 2 ? realloc(data, cap * 2) : NULL;
            if (!bigger) {
                free(data);
                return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY,
                                  "out of memory reading '%s' (%zu bytes so far)", f->shown, used);
            }
            data = bigger;
            cap *= 2;
        }
        size_t got;
        dtcast_status st = dt_infile_read_some(f, data + used, cap - used, &got, err);
        if (st != DTCAST_OK) {
            free(data);
            return st;
        }
        used += got;
        if (f->at_eof)
            break;
    }
    *buf = data;
    *len = used;
    return DTCAST_OK;
}

dtcast_status dt_infile_spool(dt_infile *f, const char *dir, dt_io_error *err)
{
    if (f->seekable)
        return DTCAST_OK;
    if (f->pos != 0)
        return dt_io_fail(err, DTCAST_ERR_IO, "%s: a pipe is spooled before it is read",
                          f->shown);
    size_t size = strlen(dir) + 32;
    char *name = malloc(size);
    uint8_t *buf = malloc((size_t)1 << 20);
    if (!name || !buf) {
        free(name);
        free(buf);
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    }
    snprintf(name, size, "%s/.dtcast-spool-XXXXXX", dir);
    int fd = mkstemp(name);
    if (fd < 0) {
        dtcast_status st = dt_io_fail(err, DTCAST_ERR_IO,
                                      "%s: cannot create a temporary file in '%s' to hold the "
                                      "pipe: %s",
                                      f->shown, dir, strerror(errno));
        free(name);
        free(buf);
        return st;
    }
    unlink(name); /* gone from the folder now; its space is freed when fd is closed */
    free(name);
    dtcast_status st = DTCAST_OK;
    uint64_t total = 0;
    while (st == DTCAST_OK && !f->at_eof) {
        size_t got = 0;
        st = dt_infile_read_some(f, buf, (size_t)1 << 20, &got, err);
        for (size_t done = 0; st == DTCAST_OK && done < got;) {
            ssize_t n = write(fd, buf + done, got - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                st = dt_io_fail(err, DTCAST_ERR_IO,
                                "%s: cannot copy the pipe to a temporary file in '%s' at byte "
                                "%llu: %s",
                                f->shown, dir, (unsigned long long)(total + done),
                                n < 0 ? strerror(errno) : "no progress");
            else
                done += (size_t)n;
        }
        total += got;
    }
    free(buf);
    if (st != DTCAST_OK) {
        close(fd);
        return st;
    }
    if (f->fd > STDIN_FILENO)
        close(f->fd);
    f->fd = fd;
    f->seekable = 1;
    f->spooled = 1;
    f->size = total;
    f->pos = 0;
    f->at_eof = 0;
    f->npeeked = 0;
    (void)posix_fadvise(f->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    return DTCAST_OK;
}

/* ---- output ------------------------------------------------------------------------------ */

/* Creates "<path>.tmp<pid>.<n>" exclusively; open() with 0666 lets the umask choose the mode, as
 * for any new file (mkstemp would give 0600). */
static int create_temp(const char *path, char *tmp, size_t size)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(tmp, size, "%s.tmp%ld.%d", path, (long)getpid(), attempt);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

dtcast_status dt_outfile_open(dt_outfile *f, const char *path, dt_io_error *err)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->path = strdup(path);
    if (!f->path)
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    if (strcmp(path, "-") == 0) {
        fflush(stdout);
        f->fd = STDOUT_FILENO;
        return DTCAST_OK;
    }
    size_t size = strlen(path) + 48;
    f->tmp = malloc(size);
    if (!f->tmp) {
        dt_outfile_abort(f);
        return dt_io_fail(err, DTCAST_ERR_OUT_OF_MEMORY, "out of memory");
    }
    f->fd = create_temp(path, f->tmp, size);
    if (f->fd < 0) {
        dtcast_status st = dt_io_fail(err, DTCAST_ERR_IO,
                                      "cannot create a temporary file next to '%s': %s", path,
                                      strerror(errno));
        free(f->tmp);
        f->tmp = NULL;
        dt_outfile_abort(f);
        return st;
    }
    return DTCAST_OK;
}

dtcast_status dt_outfile_write(dt_outfile *f, const void *buf, size_t len, dt_io_error *err)
{
    const uint8_t *p = buf;
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(f->fd, p + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return dt_io_fail(err, DTCAST_ERR_IO, "cannot write '%s' at byte %llu: %s",
                              f->tmp ? f->path : "<stdout>",
                              (unsigned long long)(f->written + done),
                              n < 0 ? strerror(errno) : "no progress");
        done += (size_t)n;
    }
    f->written += done;
    return DTCAST_OK;
}

dtcast_status dt_outfile_commit(dt_outfile *f, dt_io_error *err)
{
    dtcast_status st = DTCAST_OK;
    if (!f->tmp) {
        f->fd = -1; /* stdout stays open */
        return st;
    }
    if (close(f->fd) != 0)
        st = dt_io_fail(err, DTCAST_ERR_IO, "cannot close '%s': %s", f->path, strerror(errno));
    f->fd = -1;
    if (st == DTCAST_OK && rename(f->tmp, f->path) != 0)
        st = dt_io_fail(err, DTCAST_ERR_IO, "cannot rename '%s' to '%s': %s", f->tmp, f->path,
                        strerror(errno));
    if (st != DTCAST_OK) {
        dt_outfile_abort(f);
        return st;
    }
    free(f->tmp);
    f->tmp = NULL;
    free(f->path);
    f->path = NULL;
    return DTCAST_OK;
}

void dt_outfile_abort(dt_outfile *f)
{
    if (f->tmp) {
        if (f->fd >= 0)
            close(f->fd);
        unlink(f->tmp);
        free(f->tmp);
    }
    free(f->path);
    memset(f, 0, sizeof *f);
    f->fd = -1;
}
