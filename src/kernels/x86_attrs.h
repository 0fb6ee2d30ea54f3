/* The function attributes of the x86 kernel files. Each file compiles its functions for its
 * instruction set through target attributes only: the library runs on any x86-64 and the
 * finder picks the kernels the CPU has at run time (cpu.c). */
#ifndef DTCAST_KERNELS_X86_ATTRS_H
#define DTCAST_KERNELS_X86_ATTRS_H

/* clang 14 crashes in instruction selection on some of these functions when it emits debug
 * information for them (-g): they get none under clang. */
#if defined(__clang__)
#define DT_NODEBUG nodebug,
#else
#define DT_NODEBUG
#endif

/* DT_ISA_AVX2 (AVX2 + F16C + FMA + BMI2) and DT_ISA_AVX512 (F/BW/VL/DQ/VBMI on top) */
#define DT_TARGET_AVX2 __attribute__((DT_NODEBUG target("avx2,f16c,fma,bmi2")))
#define DT_TARGET_AVX512                                                                        \
    __attribute__((DT_NODEBUG target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,f16c,fma,bmi2")))

/* The pieces of a kernel are inlined into it, so that its constant arguments fold away. */
#ifndef DT_INLINE
#define DT_INLINE __attribute__((always_inline)) inline
#endif

#endif
