/* What the BPF program that reads Java frames at sample time (frames.bpf.c) and the user space
 * that loads it share: the offsets it walks a HotSpot JVM with (read from the JVM's own VMStructs
 * tables, vmstructs.c), the process table's value, and the record it writes for a
 * sample. Compiled both by clang for the BPF target and by the C compiler. */
#ifndef HS_JVM_WALK_ABI_H
#define HS_JVM_WALK_ABI_H

#include "runtime/rt-abi.h"

#define HS_JVM_MAX_FRAMES 256  /* Java frames read per sample; deeper stacks are cut */
#define HS_JVM_MAX_THREADS 1024 /* Java threads looked at to find the sampled thread's */
#define HS_JVM_WALK_HEAPS 4      /* code heaps (3 with segmented code cache, 1 without) */
#define HS_JVM_BLOB_READ 512    /* bytes of a code blob's header read at most */

/* Offsets the walk uses, in bytes unless said. */
struct hs_jvm_walk_offsets {
	hs_u16 array_len, array_data;       /* GrowableArrayBase::_len, GrowableArray<T>::_data */
	hs_u16 heap_low, heap_high;         /* CodeHeap::_memory + VirtualSpace::_low_boundary, _high_boundary */
	hs_u16 heap_segmap, heap_log2_seg;  /* CodeHeap::_segmap + VirtualSpace::_low, ::_log2_segment_size */
	hs_u16 block_used, block_size;      /* HeapBlock::Header::_used; sizeof(HeapBlock) */
	hs_u16 stubq_buffer, stubq_limit;   /* StubQueue::_stub_buffer, ::_buffer_limit */
	hs_u16 list_length, list_threads;   /* ThreadsList::_length, ::_threads */
	hs_u16 thread_osthread, osthread_tid; /* (Java)Thread::_osthread, OSThread::_thread_id */
	hs_u16 thread_anchor;               /* JavaThread::_anchor */
	hs_u16 anchor_sp, anchor_pc, anchor_fp; /* JavaFrameAnchor::_last_Java_sp, _pc, _fp */
	hs_u16 wrapper_anchor;              /* JavaCallWrapper::_anchor */
	hs_u16 blob_frame_size;             /* CodeBlob::_frame_size (int, in words) */
	hs_u16 blob_frame_complete;         /* CodeBlob::_frame_complete_offset (int or int16_t) */
	hs_u16 blob_code;                   /* CodeBlob::_code_begin (a pointer) or _code_offset (an int) */
	hs_u16 nm_compile_id, nm_comp_level; /* nmethod::_compile_id (int), ::_comp_level */
	hs_u16 blob_read;                   /* bytes of a blob read: past the last of these */
	hs_s16 interp_method, interp_bcp;   /* slots of an interpreted frame's Method* and bcp, and */
	hs_s16 interp_sender_sp;            /* its caller's stack pointer, in words from its frame
	                                     * pointer (all below it; bcp lowest) */
	hs_s16 entry_wrapper;               /* the entry frame's JavaCallWrapper*, words from its fp */
	hs_u8 frame_complete_size;          /* 4 or 2 */
	hs_u8 comp_level_size;              /* 4 or 1 */
	hs_u8 code_is_offset;               /* blob_code is an int offset from the blob (JDK 21+) */
	hs_u8 pad[1];
};

/* The process table's value, keyed by the process id as the kernel's root namespace sees it.
 * The addresses are of the JVM's statics; what they point to is set up while the JVM starts, and
 * read by the program into the fields after ready once it is (it writes them into the table). */
struct hs_jvm_walk_proc {
	hs_u64 heaps;          /* &CodeCache::_heaps */
	hs_u64 interp;         /* &AbstractInterpreter::_code */
	hs_u64 call_stub_ret;  /* &StubRoutines::_call_stub_return_address */
	hs_u64 thread_list;    /* &ThreadsSMRSupport::_java_thread_list */
	struct hs_jvm_walk_offsets off;
	hs_u32 version;        /* the JDK's feature version (17, 25) */
	hs_u32 ready;          /* the fields below are read (set by the program) */
	hs_u64 interp_lo, interp_hi;
	hs_u64 stub_ret;
	hs_u32 nheaps, pad;
	struct {
		hs_u64 lo, hi, segmap;
		hs_u32 log2_seg, pad;
	} heap[HS_JVM_WALK_HEAPS];
};

/* The kind of a frame, in the top byte of its b. */
enum hs_jvm_frame_kind {
	HS_JVM_FRAME_INTERP = 1,   /* a = Method*, b = bcp */
	HS_JVM_FRAME_COMPILED,     /* a = the code blob, b = compile id (low 32 bits), comp level (next 8) */
	HS_JVM_FRAME_NATIVE,     /* native code runs from here: pc, a = sp, b = fp (as a frame's registers
	                      * are when the native frame at pc is the innermost) */
};
#define HS_JVM_FRAME_SHIFT 56
#define HS_JVM_VALUE_MASK ((1ULL << HS_JVM_FRAME_SHIFT) - 1)

struct hs_jvm_rec_frame {
	hs_u64 pc;
	hs_u64 a, b;
};

enum hs_jvm_sample_flag {
	HS_JVM_TRUNCATED = 1,  /* more frames than HS_JVM_MAX_FRAMES */
	HS_JVM_LOST = 2,       /* a return address led nowhere the walk knows: it stopped there */
	HS_JVM_READ_FAULT = 4, /* a read of the JVM's memory failed: the walk stopped */
	HS_JVM_FROM_ANCHOR = 8, /* the thread was outside Java code: the walk started at its last Java frame */
};

/* The record written for each sample of a Java thread with Java frames: innermost first. A frame
 * of kind HS_JVM_FRAME_NATIVE says that the native frames between the one before it and the one after
 * it (or the base) are to be unwound from its registers. */
struct hs_jvm_sample {
	struct hs_rt_head head;
	struct hs_jvm_rec_frame frames[HS_JVM_MAX_FRAMES];
};

#endif
