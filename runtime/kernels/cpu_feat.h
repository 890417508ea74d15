/* cpu_feat.h: the instruction sets the runtime dispatches on, asked of
 * the CPU once and kept; cpu_feat.c needs nothing else of the runtime,
 * so any program may link it.  Nothing here owns memory. */
#ifndef OPMIG_CPU_FEAT_H
#define OPMIG_CPU_FEAT_H

/* AVX-512F: code compiled for it (target attributes) may run */
int rt_cpu_avx512f(void);
/* AVX-512 F, BW, DQ and VL, as every AVX-512 CPU since Skylake-SP has
 * them (byte and word lanes, masked 128- and 256-bit forms) */
int rt_cpu_avx512core(void);
/* AVX-512 VBMI and BW: byte permutes across a whole vector */
int rt_cpu_avx512vbmi(void);

#endif
