/* Which instruction sets the kernels may use: cpuid + xgetbv once (pthread_once), lowered by
 * the DTCAST_ISA environment variable (portable|sse2|avx2|avx512, read once) and by
 * dt_isa_pin() (tests). */
#include "kernels.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(DT_HAVE_X86)
static bool has_bf16 = false, has_fp16 = false;

#include <cpuid.h>
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static dt_isa detected = DT_ISA_PORTABLE;
static dt_isa env_limit = DT_ISA_AVX512;
static atomic_int pinned = -1;
static atomic_bool no_tables16 = false;

void dt_tables16_disable(bool off) { atomic_store_explicit(&no_tables16, off, memory_order_relaxed); }
bool dt_tables16_disabled(void) { return atomic_load_explicit(&no_tables16, memory_order_relaxed); }

#if defined(DT_HAVE_X86)
static uint64_t read_xcr0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static dt_isa probe(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return DT_ISA_SSE2;
    const bool osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, f16c = (c >> 29) & 1,
               fma = (c >> 12) & 1;
    if (!osxsave || !avx || !f16c || !fma)
        return DT_ISA_SSE2;
    const uint64_t xcr0 = read_xcr0();
    if ((xcr0 & 6) != 6) /* the OS saves XMM and YMM state */
        return DT_ISA_SSE2;
    if (__get_cpuid_max(0, NULL) < 7)
        return DT_ISA_SSE2;
    __cpuid_count(7, 0, a, b, c, d);
    const bool avx2 = (b >> 5) & 1, bmi2 = (b >> 8) & 1;
    if (!avx2 || !bmi2)
        return DT_ISA_SSE2;
    const bool f = (b >> 16) & 1, dq = (b >> 17) & 1, bw = (b >> 30) & 1, vl = (b >> 31) & 1,
               vbmi = (c >> 1) & 1;
    if (!(f && dq && bw && vl && vbmi) || (xcr0 & 0xE6) != 0xE6) /* + opmask, ZMM state */
        return DT_ISA_AVX2;
    has_fp16 = (d >> 23) & 1; /* leaf 7.0 EDX: AVX512-FP16 */
    __cpuid_count(7, 1, a, b, c, d);
    has_bf16 = (a >> 5) & 1;
    return DT_ISA_AVX512;
}

bool dt_cpu_has_avx512bf16(void)
{
    dt_isa_detected();
    return has_bf16;
}

bool dt_cpu_has_avx512fp16(void)
{
    dt_isa_detected();
    return has_fp16;
}
dt_cpu_id dt_cpu_id_get(void)
{
    dt_cpu_id id = {DT_CPU_OTHER, 0, 0};
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return id;
    char v[12]; /* the vendor string, in ebx edx ecx order */
    memcpy(v, &b, 4);
    memcpy(v + 4, &d, 4);
    memcpy(v + 8, &c, 4);
    id.vendor = memcmp(v, "GenuineIntel", 12) == 0   ? DT_CPU_INTEL
                : memcmp(v, "AuthenticAMD", 12) == 0 ? DT_CPU_AMD
                                                     : DT_CPU_OTHER;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return id;
    /* eax: [27:20] extended family, [19:16] extended model, [11:8] family, [7:4] model */
    const unsigned fam = (a >> 8) & 0xF, model = (a >> 4) & 0xF;
    id.family = fam == 0xF ? fam + ((a >> 20) & 0xFF) : fam;
    id.model = fam == 0x6 || fam == 0xF ? model | (((a >> 16) & 0xF) << 4) : model;
    return id;
}
#else
static dt_isa probe(void) { return DT_ISA_PORTABLE; }
dt_cpu_id dt_cpu_id_get(void)
{
    const dt_cpu_id id = {DT_CPU_OTHER, 0, 0};
    return id;
}
#endif

static void init(void)
{
    detected = probe();
    const char *e = getenv("DTCAST_ISA");
    if (e && *e) {
        static const char *const names[] = {"portable", "sse2", "avx2", "avx512"};
        for (int i = 0; i < 4; i++)
            if (strcmp(e, names[i]) == 0)
                env_limit = (dt_isa)i;
    }
}

dt_isa dt_isa_detected(void)
{
    pthread_once(&once, init);
    return detected;
}

dt_isa dt_isa_active(void)
{
    pthread_once(&once, init);
    dt_isa isa = detected < env_limit ? detected : env_limit;
    int p = atomic_load_explicit(&pinned, memory_order_relaxed);
    if (p >= 0 && (dt_isa)p < isa)
        isa = (dt_isa)p;
    return isa;
}

void dt_isa_pin(int isa) { atomic_store_explicit(&pinned, isa, memory_order_relaxed); }

const char *dt_isa_name(dt_isa isa)
{
    switch (isa) {
    case DT_ISA_SSE2:
        return "sse2";
    case DT_ISA_AVX2:
        return "avx2";
    case DT_ISA_AVX512:
        return "avx512";
    default:
        return "portable";
    }
}
