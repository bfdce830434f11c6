/* What a BPF program that walks HotSpot's Java frames at sample time and the user space that
 * reads a JVM's VMStructs tables share: the addresses and offsets it walks with, each taken
 * from the JVM's own tables and checked (hotspot/vmstructs.c). Fixed-width types only, so that
 * clang -target bpf compiles it too. */
#ifndef HS_HOTSPOT_ABI_H
#define HS_HOTSPOT_ABI_H

#ifdef __bpf__
typedef __u8 hs_u8;
typedef __u16 hs_u16;
typedef __u32 hs_u32;
typedef __u64 hs_u64;
#else
#include <stdint.h>
typedef uint8_t hs_u8;
typedef uint16_t hs_u16;
typedef uint32_t hs_u32;
typedef uint64_t hs_u64;
#endif

#define HS_JVM_NONE 0xffff         /* an offset the version does not have */
#define HS_JVM_MAX_HEAPS 8         /* code heaps looked at (HotSpot has at most 3 today) */
#define HS_JVM_MAX_SEGMAP_HOPS 512 /* hops back through a segment map to a block's start */

/* How a code blob says what it is. */
enum hs_jvm_kind_by {
	HS_JVM_KIND_FIELD = 1, /* a byte at blob_kind, HS_JVM's kind_nmethod for an nmethod (JDK 23+) */
	HS_JVM_KIND_NAME,      /* the string at blob_name: "nmethod" (and "native nmethod") for an
	                        * nmethod; CodeBlob has no kind field (JDK 17) */
};

/* How a code blob gives the bounds of its code. */
enum hs_jvm_code_by {
	HS_JVM_CODE_ADDR = 1, /* 64-bit addresses at blob_code_begin and blob_code_end (JDK 17) */
	HS_JVM_CODE_OFFSET,   /* 32-bit offsets from the blob's start (_code_offset, _data_offset: JDK 23+) */
};

/* Offsets in bytes into HotSpot's structures, as the process's VMStructs tables give them. */
struct hs_jvm_offsets {
	/* CodeCache::_heaps is a GrowableArray<CodeHeap*>* */
	hs_u16 array_len;         /* GrowableArrayBase._len (int) */
	hs_u16 array_data;        /* GrowableArray<T>._data (T*) */
	hs_u16 heap_memory_low;   /* CodeHeap._memory + VirtualSpace._low: the heap's first byte */
	hs_u16 heap_memory_high;  /* CodeHeap._memory + VirtualSpace._high: one past its committed end */
	hs_u16 heap_segmap_low;   /* CodeHeap._segmap + VirtualSpace._low: the segment map's bytes */
	hs_u16 heap_log2_segment; /* CodeHeap._log2_segment_size (int) */
	hs_u16 block_size;        /* sizeof(HeapBlock): the blob starts this far after its block */
	hs_u16 block_used;        /* HeapBlock._header._used (bool) */
	hs_u16 block_length;      /* HeapBlock._header._length, in segments */
	hs_u8 block_length_size;  /* its width: 8 (JDK 17) or 4 */
	hs_u8 kind_by;            /* enum hs_jvm_kind_by */
	/* CodeBlob */
	hs_u16 blob_name;               /* const char* */
	hs_u16 blob_kind;               /* CodeBlobKind, one byte (HS_JVM_KIND_FIELD), else HS_JVM_NONE */
	hs_u16 blob_size;               /* int: bytes of the blob, header included */
	hs_u16 blob_frame_size;         /* int: the frame's size in words, return address included */
	hs_u16 blob_frame_complete;     /* _frame_complete_offset: before it, the frame is being built */
	hs_u8 blob_frame_complete_size; /* its width: 4 (int, JDK 17) or 2 (int16_t) */
	hs_u8 code_by;                  /* enum hs_jvm_code_by */
	hs_u16 blob_code_begin;         /* _code_begin or _code_offset */
	hs_u16 blob_code_end;           /* _code_end or _data_offset */
	/* nmethod */
	hs_u16 nmethod_method;         /* Method* */
	hs_u16 nmethod_compile_id;     /* int: tells one nmethod from the next at the same address */
	hs_u16 nmethod_comp_level;     /* CompLevel: 1-3 C1, 4 C2, 0 a native wrapper */
	hs_u8 nmethod_comp_level_size; /* 4 (int, JDK 17) or 1 */
	hs_u8 kind_nmethod;            /* CodeBlobKind::Nmethod (HS_JVM_KIND_FIELD) */
	hs_u16 nmethod_entry_bci;      /* int: InvocationEntryBci (-1), else an on-stack-replacement method */
	/* Method and ConstMethod: an interpreted frame's bytecode pointer to a BCI */
	hs_u16 method_const_method;    /* Method._constMethod */
	hs_u16 const_method_size;      /* sizeof(ConstMethod): the bytecodes follow it */
	hs_u16 const_method_code_size; /* ConstMethod._code_size (u2) */
	/* threads */
	hs_u16 threads_list_length;             /* ThreadsList._length (uint) */
	hs_u16 threads_list_threads;            /* ThreadsList._threads (JavaThread* const*) */
	hs_u16 thread_osthread;                 /* JavaThread (JDK 17) or Thread._osthread */
	hs_u16 osthread_thread_id;              /* OSThread._thread_id: the kernel's tid, as the process's pid
	                              * namespace sees it (int) */
	hs_u16 thread_anchor;                   /* JavaThread._anchor: the JavaFrameAnchor, a thread's last
	                              * Java frame when it is outside Java code */
	hs_u16 anchor_sp, anchor_fp, anchor_pc; /* JavaFrameAnchor._last_Java_sp, _fp, _pc */
	hs_u16 thread_state;                    /* JavaThread._thread_state (int) */
	/* the interpreter's code: AbstractInterpreter::_code is a StubQueue* */
	hs_u16 stubqueue_buffer; /* StubQueue._stub_buffer (address) */
	hs_u16 stubqueue_limit;  /* StubQueue._buffer_limit (int): its length */
	/* an interpreted frame's slots, each n words below its frame pointer (the slot at
	 * fp - 8 * n), from x86_64's frame layout (frame_x86.hpp) */
	hs_u8 interp_sender_sp; /* the caller's sp (n = 1) */
	hs_u8 interp_last_sp;   /* the expression stack's top before a call (n = 2) */
	hs_u8 interp_method;    /* the frame's Method* (n = 3) */
	hs_u8 interp_bcp;       /* its bytecode pointer (n = 8) */
	hs_u8 entry_wrapper;    /* an entry frame's JavaCallWrapper* (n = 6) */
	hs_u16 wrapper_anchor;  /* JavaCallWrapper._anchor */
};

/* The process table's value for a JVM, keyed by its pid as the kernel's root namespace sees it:
 * addresses are the process's, of the variables (read them at sample time: they are set as the
 * JVM starts, and the code heaps' committed ends grow). */
struct hs_jvm_proc_info {
	hs_u64 code_heaps;          /* &CodeCache::_heaps */
	hs_u64 code_low, code_high; /* &CodeCache::_low_bound, &CodeCache::_high_bound: every heap is
	                             * inside [*code_low, *code_high) */
	hs_u64 interpreter;         /* &AbstractInterpreter::_code */
	hs_u64 call_stub_return;    /* &StubRoutines::_call_stub_return_address: the pc an entry
	                            * frame (C++ calling Java) returns to */
	hs_u64 java_threads;        /* &ThreadsSMRSupport::_java_thread_list (a ThreadsList*) */
	struct hs_jvm_offsets off;
	hs_u32 version; /* major << 24 | minor << 16 | security << 8 | (build & 0xff) */
	hs_u32 pad;
};

#endif
