/* What the runtimes' frame readers (BPF programs run at sample time, one per runtime) and the
 * user space that loads them share: the slots the dispatcher runs them from, and the head of the
 * record each writes for a sample. Compiled both by clang for the BPF target and by the C
 * compiler, so it uses only fixed-width types. */
#ifndef HS_RT_ABI_H
#define HS_RT_ABI_H

#ifdef __bpf__
typedef __u8 hs_u8;
typedef __u16 hs_u16;
typedef __s16 hs_s16;
typedef __u32 hs_u32;
typedef __u64 hs_u64;
#else
#include <stdint.h>
typedef uint8_t hs_u8;
typedef uint16_t hs_u16;
typedef int16_t hs_s16;
typedef uint32_t hs_u32;
typedef uint64_t hs_u64;
#endif

/* A runtime's id: its reader's slot in the dispatcher's program array and its records' tag. */
#define HS_RT_PYTHON 1
#define HS_RT_HOTSPOT 2
#define HS_RT_V8 3
#define HS_RT_RUBY 4
#define HS_RT_PHP 5
#define HS_RT_PERL 6
#define HS_RT_SLOTS 8 /* slot 0 is unused: an id of 0 is no runtime */

/* A record and its sample are stamped this close together (either may be first); records are
 * put this much before their time in the stream, so that each precedes its sample. */
#define HS_RT_STACK_EARLY_NS 200000

/* The head of every reader's record, written just before the kernel writes the sample itself;
 * time is bpf_ktime_get_ns(), CLOCK_MONOTONIC like the samples'. What follows is the
 * runtime's: nframes frames of its own kind. */
struct hs_rt_head {
	hs_u64 time;
	hs_u32 pid, tid; /* root namespace */
	hs_u32 cpu;
	hs_u16 nframes;
	hs_u16 flags; /* the runtime's */
};

#endif
