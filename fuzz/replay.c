/* A main for the fuzz harnesses without libFuzzer: runs LLVMFuzzerTestOneInput once on each file
 * named on the command line (a corpus replay, no campaign), and prints how many it ran.
 *
 *   cc ... fuzz/fuzz_npy.c fuzz/replay.c libdtcast.a -o fuzz_npy && ./fuzz_npy examples/a.npy
 *
 * make test builds every harness this way, plain and under ASan+UBSan, and replays the checked-in
 * seeds (fuzz/corpus/<name>/): a harness that no longer compiles, or a seed that crashes, fails
 * there, before anyone runs make fuzz. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    enum { LIMIT = 1 << 20 }; /* libFuzzer's default -max_len is far below this */
    uint8_t *buf = malloc(LIMIT);
    if (!buf)
        return 2;
    int ran = 0;
    for (int i = 1; i < argc; i++) {
        FILE *fh = fopen(argv[i], "rb");
        if (!fh) {
            fprintf(stderr, "%s: cannot open\n", argv[i]);
            free(buf);
            return 2;
        }
        size_t n = fread(buf, 1, LIMIT, fh);
        fclose(fh);
        LLVMFuzzerTestOneInput(buf, n);
        ran++;
    }
    free(buf);
    printf("PASS %s: %d inputs replayed\n", argv[0], ran);
    return 0;
}
