/* A scratch folder for the harnesses that read files from disk (fuzz_inspect, fuzz_whole): made
 * once under $TMPDIR (or /tmp) on the first call, it holds up to 8 named files; the folder and
 * its files are removed at exit. Header-only: each harness is its own program. */
#ifndef DTCAST_FUZZ_SCRATCH_H
#define DTCAST_FUZZ_SCRATCH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_scratch_dir[64];
static char fuzz_scratch_files[8][96];

static void fuzz_scratch_remove(void)
{
    for (int i = 0; i < 8; i++)
        if (fuzz_scratch_files[i][0])
            unlink(fuzz_scratch_files[i]);
    if (fuzz_scratch_dir[0])
        rmdir(fuzz_scratch_dir);
}

/* The path of FILE in the scratch folder of HARNESS, or NULL when the folder cannot be made
 * (or more than 8 names are asked for). */
static const char *fuzz_scratch_path(const char *harness, const char *file)
{
    if (!fuzz_scratch_dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(fuzz_scratch_dir, sizeof fuzz_scratch_dir, "%s/%.20s.XXXXXX",
                 tmp && strlen(tmp) < 32 ? tmp : "/tmp", harness);
        if (!mkdtemp(fuzz_scratch_dir)) {
            fuzz_scratch_dir[0] = 0;
            return NULL;
        }
        atexit(fuzz_scratch_remove);
    }
    char want[96];
    snprintf(want, sizeof want, "%s/%.30s", fuzz_scratch_dir, file);
    for (int i = 0; i < 8; i++) {
        if (strcmp(fuzz_scratch_files[i], want) == 0)
            return fuzz_scratch_files[i];
        if (!fuzz_scratch_files[i][0]) {
            memcpy(fuzz_scratch_files[i], want, sizeof want);
            return fuzz_scratch_files[i];
        }
    }
    return NULL;
}

#endif /* DTCAST_FUZZ_SCRATCH_H */
