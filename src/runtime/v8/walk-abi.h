/* What the BPF program that reads JavaScript frames at sample time (frames.bpf.c) and the user
 * space that loads it share: the offsets it walks a V8 with (layout.c, from the binary's v8dbg_
 * symbols), the process table's value, and the record it writes for a sample. Compiled both by
 * clang for the BPF target and by the C compiler. */
#ifndef HS_V8_WALK_ABI_H
#define HS_V8_WALK_ABI_H

#include "runtime/rt-abi.h"

#define HS_V8_MAX_FRAMES 256 /* frames written per sample; deeper stacks are cut */
#define HS_V8_MAX_STEPS 512  /* frames stepped over per sample, native ones included */
#define HS_V8_CODE_READ 64   /* bytes of a Code object read: its fields lie within */

/* The process table's value, keyed by the process id as the kernel's root namespace sees it. */
struct hs_v8_walk_proc {
	/* where V8 code runs: the builtins in the binary and their copy (0: none yet), and the
	 * code range V8 compiles into */
	hs_u64 blob_lo, blob_hi, copy_lo, copy_hi, jit_lo, jit_hi;
	hs_u64 tramp_off, tramp_size; /* the interpreter's entry: its offset in the builtins, bytes */
	/* instance types */
	hs_u16 t_js_function_first, t_js_function_last, t_sfi, t_code, t_bytecode_array;
	/* fields, in bytes from an object's start */
	hs_u16 map_instance_type, fn_shared, fn_code, code_start, code_size, code_flags, sfi_name;
	/* frame slots, negative, in bytes from the frame pointer */
	hs_s16 fp_context, fp_function, fp_bytecode_array, fp_bytecode_offset;
	/* frame types (the context slot of a typed frame holds type << 1) */
	hs_u8 ft_entry, ft_construct_entry, ft_exit, ft_builtin_exit;
	hs_u8 code_kind_mask, code_kind_shift, kind_baseline, kind_interpreted;
	hs_u8 heap_tag, heap_tag_mask;
	hs_u8 reg_bytecode_array, reg_bytecode_offset; /* 9, 12: read as r9, r12 on x86_64 only */
	hs_u8 pad[4];
};

/* A frame's kind, in the top byte of its b. */
enum hs_v8_frame_kind {
	HS_V8_FRAME_INTERP = 1, /* a = the SharedFunctionInfo (tagged), b = the frame's bytecode offset slot
	                         * (the offset + the layout's bytecode_bias) */
	HS_V8_FRAME_BASELINE,   /* a = the SharedFunctionInfo, b = the baseline Code that holds pc */
	HS_V8_FRAME_OPTIMIZED,  /* a = the SharedFunctionInfo, b = the optimised Code that holds pc */
	HS_V8_FRAME_FUNCTION,   /* a = the SharedFunctionInfo; pc is not in the function's code (a
	                         * loop's code compiled on the stack, or code replaced since): user
	                         * space looks for the code that holds it */
	HS_V8_FRAME_BUILTIN,    /* a builtin or stub running at pc (in the builtins or their copy); a =
	                         * its frame's type, or 0 when it has no frame of its own */
	HS_V8_FRAME_NATIVE,     /* native code runs from here: pc, a = sp, b = fp (as a frame's registers
	                         * are when the native frame at pc is the innermost) */
};
/* In b of a compiled frame or a function's: pc is where it runs (the innermost frame), not a return address. */
#define HS_V8_PC_EXACT (1ULL << 55)
/* In b of a function's frame: its code is optimised code (which may have inlined functions where
 * the frame is, though where is not known). */
#define HS_V8_OPT_CODE (1ULL << 54)
#define HS_V8_FRAME_SHIFT 56
#define HS_V8_VALUE_MASK ((1ULL << HS_V8_FRAME_SHIFT) - 1)

struct hs_v8_rec_frame {
	hs_u64 pc; /* 0 where it is not known (a frame under a builtin that has none of its own) */
	hs_u64 a, b;
	/* a function's frame: its SharedFunctionInfo's name_or_scope_info at the sample, which names
	 * it only while the same (the collector moves what a function shares, and may put another
	 * there) */
	hs_u64 check;
};

enum hs_v8_sample_flag {
	HS_V8_TRUNCATED = 1,  /* more frames than HS_V8_MAX_FRAMES */
	HS_V8_LOST = 2,       /* a frame led nowhere the walk knows: it stopped there */
	HS_V8_READ_FAULT = 4, /* a read of the process's memory failed: the walk stopped */
	HS_V8_TOP_STALE = 8,  /* the innermost frame's function could not be told (a prologue) */
};

/* The record written for each sample of a thread with JavaScript frames: innermost first. A frame
 * of kind HS_V8_FRAME_NATIVE says that the native frames between the one before it and the one after
 * it (or the base) are to be unwound from its registers; the native frames above the first V8
 * frame are unwound from the sample's. */
struct hs_v8_sample {
	struct hs_rt_head head;
	struct hs_v8_rec_frame frames[HS_V8_MAX_FRAMES];
};

#endif
