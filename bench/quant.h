/* dtcast-bench --quant: the scaled quantization schemes (bench/quant.c). */
#ifndef DTCAST_BENCH_QUANT_H
#define DTCAST_BENCH_QUANT_H

/* argv[0] is "--quant"; options: --n ELEMENTS, --runs R, --filter SUBSTRING, --threads T */
int dt_bench_quant(int argc, char **argv);

#endif
