/* The mixed workload both benchmarks sample: deep recursion with ~200-byte frames, qsort with a
 * callback, strcmp/memcmp loops, libm floating point. Built -O2 -fomit-frame-pointer, as
 * compilers build programs by default, so that only DWARF unwinding finds its callers. */
#ifndef HS_BENCH_WORKLOAD_H
#define HS_BENCH_WORKLOAD_H

#include <stdint.h>

/* Allocates the inputs; call once. */
void hs_bench_workload_init(void);
/* One iteration (a few hundred microseconds): odd i through the recursion to depth 100, even i
 * directly; i % 3 picks qsort, strings or libm. */
void hs_bench_workload_step(uint64_t i);

#endif
