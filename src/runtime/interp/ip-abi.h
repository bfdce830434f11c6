/* What the frame readers of the scripting runtimes read from outside as Python is (Ruby, PHP,
 * Perl: docs/interpreters.md) share with user space: the record each writes for a sample, one
 * frame per function the interpreter runs, innermost first. What a frame's words hold is the
 * language's (its frames.bpf.c and its runtime.c say); what is common is how its names are kept
 * (interp.h) and how it is merged into the native stack (profile/builder-interp.c). Compiled
 * both by clang for the BPF target and by the C compiler. */
#ifndef HS_IP_ABI_H
#define HS_IP_ABI_H

#include "runtime/rt-abi.h"

#define HS_IP_MAX_FRAMES 1024 /* frames read per sample; deeper stacks are cut */

/* A frame's flags: the low byte is common, the rest the language's. */
enum hs_ip_frame_flag {
	/* the outermost frame of its run of the interpreter's loop (the frame a native call into
	 * the interpreter started): the merge puts each run where the native stack has its loop */
	HS_IP_ENTRY = 1,
	/* a function implemented in C (a Ruby C method, a PHP internal function): its native
	 * frames follow it in the native stack, under the run it is the innermost of */
	HS_IP_CFUNC = 2,
};

/* One frame. fn and aux name it: the names store reads and keeps its name and file by
 * (process, fn, aux); a frame that may hold another function later at the same address says
 * which in aux (or in fn's bits the language keeps). extra and line say where in it: line is
 * its source line read at sample time, or 0 when the language's line() finds it from extra. */
struct hs_ip_frame {
	hs_u64 fn;
	hs_u64 aux;
	hs_u64 extra;
	hs_u32 line;
	hs_u32 flags; /* enum hs_ip_frame_flag, and the language's from bit 8 */
};

/* head.flags */
enum hs_ip_sample_flag {
	HS_IP_TRUNCATED = 1,  /* more frames than HS_IP_MAX_FRAMES */
	HS_IP_READ_FAULT = 2, /* a read of the interpreter's memory failed: the walk stopped */
	HS_IP_BAD_FRAME = 4,  /* a frame failed its checks: the walk stopped */
};

/* The record a reader writes for each sample it reads frames for. */
struct hs_ip_sample {
	struct hs_rt_head head;
	struct hs_ip_frame frames[HS_IP_MAX_FRAMES]; /* innermost first; only nframes are sent */
};

#endif
