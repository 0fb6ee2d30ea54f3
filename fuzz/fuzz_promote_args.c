/* libFuzzer harness for the promotion CLI's argument parser: the input, split at NUL bytes and
 * newlines into up to 24 arguments, goes to cmd_promote() (dtcast promote ...) as argv. It must
 * return a CLI status (0, 1 or 2), never crash, read past an argument or leak. Output goes to
 * /dev/null. FUZZ_NEEDS_CLI: fuzz/run links the CLI's objects (programs/ without main). */
#include "programs/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (!freopen("/dev/null", "w", stdout))
        return 0;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 2048)
        return 0;
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[26];
    int argc = 0;
    argv[argc++] = (char *)"promote";
    char *p = buf, *end = buf + size;
    while (p <= end && argc < 25) {
        char *q = p;
        while (q < end && *q != '\0' && *q != '\n')
            q++;
        *q = '\0';
        argv[argc++] = p;
        p = q + 1;
    }
    argv[argc] = NULL;
    int status = cmd_promote(argc, argv);
    if (status < 0 || status > 2)
        abort();
    free(buf);
    return 0;
}
