/* What the BPF program that reads Python frames at sample time and the user space that loads it
 * share: the offsets it walks an interpreter with, the process table's values, and the record it
 * hands on for each sample. Compiled both by clang for the BPF target and by the C compiler, so
 * it uses only fixed-width types. */
#ifndef HS_PY_ABI_H
#define HS_PY_ABI_H

#include "runtime/rt-abi.h"

#define HS_PY_MAX_FRAMES 1024 /* Python frames read per sample; deeper stacks are cut */
#define HS_PY_MAX_THREADS 256 /* thread states looked at to find the sampled thread's */
#define HS_PY_NONE 0xffff     /* an offset the version does not have */
#define HS_PY_ENTRY_BIT 0x80000000u

/* How a frame says which instruction runs in it. */
enum hs_py_instr {
	HS_PY_INSTR_LASTI_BYTES = 1, /* int f_lasti, a byte offset into co_code (3.8, 3.9) */
	HS_PY_INSTR_LASTI_UNITS,     /* int f_lasti, in 2-byte code units (3.10) */
	HS_PY_INSTR_PTR,             /* a pointer to the instruction running, inside the code
	                              * object at code_code (3.11 prev_instr, 3.12 prev_instr, 3.13
	                              * instr_ptr) */
};

/* How one run of the eval loop is told apart from the next. */
enum hs_py_entry {
	HS_PY_ENTRY_EVERY = 1, /* each frame is a run of its own (3.8-3.10) */
	HS_PY_ENTRY_FLAG,      /* the frame a run started with has a flag at frame_owner (3.11
	                        * is_entry) */
	HS_PY_ENTRY_SHIM,      /* each run starts with a shim frame whose owner (a byte at
	                        * frame_owner) is owner_cstack (3.12, 3.13) */
};

/* Offsets the frame walk uses, per interpreter version (python/layouts.c), all in bytes. */
struct hs_py_offsets {
	hs_u16 runtime_interp_head;  /* _PyRuntime.interpreters.head: the main interpreter */
	hs_u16 interp_tstate_head;   /* PyInterpreterState.tstate_head (threads.head from 3.11) */
	hs_u16 tstate_next;          /* PyThreadState.next */
	hs_u16 tstate_thread_id;     /* PyThreadState.thread_id: the thread's pthread_t */
	hs_u16 tstate_frame;         /* frame (3.8-3.10), cframe (3.11, 3.12), current_frame (3.13) */
	hs_u16 cframe_current_frame; /* _PyCFrame.current_frame (3.11, 3.12), else HS_PY_NONE */
	hs_u16 frame_back;           /* f_back (3.8-3.10), previous (3.11+) */
	hs_u16 frame_code;           /* f_code (3.8-3.12), f_executable (3.13) */
	hs_u16 frame_instr;          /* f_lasti, prev_instr or instr_ptr: see instr */
	hs_u16 frame_owner;          /* is_entry (3.11), owner (3.12+), else HS_PY_NONE */
	hs_u16 code_firstlineno;     /* PyCodeObject.co_firstlineno (an int) */
	hs_u16 code_code;            /* offsetof(PyCodeObject, co_code_adaptive) (3.11+) */
	hs_u8 instr;                 /* enum hs_py_instr */
	hs_u8 entry;                 /* enum hs_py_entry */
	hs_u8 owner_cstack;          /* the shim's owner value (HS_PY_ENTRY_SHIM) */
	hs_u8 pad;
	hs_u16 code_name;     /* PyCodeObject.co_name and co_filename: what tells one code */
	hs_u16 code_filename; /* object from another at the same address (ident) */
};

/* The process table's value, keyed by the process id as the kernel's root namespace sees it. */
struct hs_py_proc_info {
	hs_u64 runtime;   /* address of _PyRuntime */
	hs_u64 code_type; /* address of PyCode_Type: a frame whose code has another type ends the walk */
	struct hs_py_offsets off;
	hs_u16 frame_read; /* bytes read of a frame: to the end of the last field used */
	hs_u16 code_read;  /* bytes read of a code object: likewise */
	hs_u32 version;    /* HS_PY_VERSION(major, minor) */
};

/* One Python frame of a sample. */
struct hs_py_frame {
	hs_u64 code;       /* the code object's address */
	hs_u64 name, file; /* its co_name and co_filename objects: they tell it from another code
	                    * object at the same address later, and name it if it is gone */
	hs_u32 instr;      /* byte offset of the running instruction in the code (0: unknown) */
	hs_u32 line_entry; /* low 31 bits: the code's co_firstlineno (with code, the cache key);
	                     * HS_PY_ENTRY_BIT: the outermost frame of its run of the eval loop */
};

#ifdef __bpf__
#define HS_PY_INLINE static __always_inline
#else
#define HS_PY_INLINE static inline
#endif

/* A code object's address can be another code object's by the time user space reads it (one
 * freed, another made there: exec'd code, modules' <module>, lambdas). Its co_name and
 * co_filename objects, as the program saw them, tell the two apart: folded into 32 bits for
 * keys and checks. */
HS_PY_INLINE hs_u32 hs_py_code_ident(hs_u64 name, hs_u64 file)
{
	hs_u64 h = (name ^ (file << 17 | file >> 47)) * 0x9e3779b97f4a7c15ULL;

	return (hs_u32)(h >> 32) | 1; /* never 0: 0 is "not read" */
}

enum hs_py_sample_flag {
	HS_PY_TRUNCATED = 1,  /* more frames than HS_PY_MAX_FRAMES */
	HS_PY_BAD_CODE = 2,   /* a frame's code object failed the type check: the walk stopped */
	HS_PY_READ_FAULT = 4, /* a read of the interpreter's memory failed: the walk stopped */
	HS_PY_NO_THREAD = 8,  /* no thread state belongs to the sampled thread */
	/* 3.12 and later: the walk ended at a frame that no entry into the eval loop ran (every
	 * run of it starts with a shim): the thread's current frame was read as it changed (a stale
	 * generator frame, left by the run that resumed it before), its callers unknown */
	HS_PY_UNANCHORED = 16,
};

/* The record the program writes for each sample it reads frames for (head.flags: enum
 * hs_py_sample_flag). */
struct hs_py_sample {
	struct hs_rt_head head;
	hs_u32 version; /* the interpreter's, HS_PY_VERSION(major, minor) */
	hs_u32 pad;
	struct hs_py_frame frames[HS_PY_MAX_FRAMES]; /* innermost first; only nframes are sent */
};

#endif
