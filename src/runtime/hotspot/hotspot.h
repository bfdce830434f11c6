/* HotSpot JVMs as a profiler sees them from outside: the VMStructs tables a libjvm.so exports
 * (read once per JVM, every field checked), its code cache (a pc to the code blob holding it),
 * and methods read from the process's memory turned into a class, a name, a descriptor, a
 * source file and the line of a bytecode, with the inlined methods of compiled code.
 * x86_64; JDK 17 to 25. */
#ifndef HS_HOTSPOT_H
#define HS_HOTSPOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/hotspot/hotspot-abi.h"
#include "runtime/proc.h"

struct hs_runtime;


/* The symbols of libjvm.so that lead to its tables, in this order (hs_jvm_sym_names). */
enum hs_jvm_sym {
	HS_JVM_STRUCTS,           /* gHotSpotVMStructs: a VMStructEntry* */
	HS_JVM_STRUCT_STRIDE,     /* gHotSpotVMStructEntryArrayStride, and the offsets in an entry: */
	HS_JVM_STRUCT_TYPE,       /* ...TypeNameOffset (const char*) */
	HS_JVM_STRUCT_FIELD,      /* ...FieldNameOffset (const char*) */
	HS_JVM_STRUCT_TYPESTRING, /* ...TypeStringOffset (const char*) */
	HS_JVM_STRUCT_STATIC,     /* ...IsStaticOffset (int32_t) */
	HS_JVM_STRUCT_OFFSET,     /* ...OffsetOffset (uint64_t) */
	HS_JVM_STRUCT_ADDRESS,    /* ...AddressOffset (void*) */
	HS_JVM_TYPES,             /* gHotSpotVMTypes: a VMTypeEntry* */
	HS_JVM_TYPE_STRIDE,
	HS_JVM_TYPE_NAME, /* ...TypeNameOffset (const char*) */
	HS_JVM_TYPE_SIZE, /* ...SizeOffset (uint64_t) */
	HS_JVM_INTS,      /* gHotSpotVMIntConstants */
	HS_JVM_INT_STRIDE,
	HS_JVM_INT_NAME,
	HS_JVM_INT_VALUE, /* int32_t */
	HS_JVM_LONGS,     /* gHotSpotVMLongConstants */
	HS_JVM_LONG_STRIDE,
	HS_JVM_LONG_NAME,
	HS_JVM_LONG_VALUE, /* uint64_t */
	HS_JVM_NSYMS
};
extern const char *const hs_jvm_sym_names[HS_JVM_NSYMS];

/* How an nmethod keeps its scopes and metadata. */
enum hs_jvm_nm_data {
	HS_JVM_NM_IN_BLOB = 1, /* all in the blob, at offsets from its start (JDK 17) */
	HS_JVM_NM_APART,       /* scopes in _immutable_data, metadata in the blob's _mutable_data
	                        * after the relocations (JDK 24+) */
};

/* The user-space half of the layout: what naming a method reads. Offsets in bytes. */
struct hs_jvm_layout {
	uint16_t method_size;            /* sizeof(Method) */
	uint16_t const_method_constants; /* ConstMethod._constants */
	uint16_t const_method_flags;     /* ConstMethod._flags (u2, JDK 17) or _flags._flags (u4) */
	uint8_t const_method_flags_size;
	uint32_t has_line_table; /* the flag bit of a compressed line number table */
	uint16_t const_method_name, const_method_signature, const_method_idnum; /* u2 each */
	uint16_t pool_size;                                  /* sizeof(ConstantPool): its entries follow it */
	uint16_t pool_holder, pool_length, pool_source_file; /* InstanceKlass*, int, u2 */
	uint16_t klass_name;                                 /* Klass._name (Symbol*) */
	uint16_t klass_constants, klass_methods;             /* InstanceKlass._constants, _methods */
	uint16_t array_data;                                 /* Array<Method*>'s elements, after its int _length */
	uint16_t symbol_length, symbol_body;                 /* Symbol._length (u2), _body */
	uint16_t pc_size, pc_offset, pc_scope;               /* sizeof(PcDesc), _pc_offset, _scope_decode_offset */
	uint8_t nm_data;                                     /* enum hs_jvm_nm_data */
	uint8_t unsigned5_x; /* bytes below this are excluded from UNSIGNED5 (1 from JDK 20) */
	/* HS_JVM_NM_IN_BLOB: offsets (int) from the blob's start, except scopes_data (an address) */
	uint16_t nm_metadata, nm_scopes_data, nm_scopes_pcs, nm_dependencies;
	/* HS_JVM_NM_APART */
	uint16_t nm_immutable, nm_immutable_size;                       /* address, int */
	uint16_t nm_scopes_pcs_off, nm_scopes_data_off;                 /* int, from the immutable data */
	uint16_t blob_mutable, blob_mutable_size, blob_relocation_size; /* address, int, int */
};

/* A process's JVM. */
struct hs_jvm {
	unsigned major, minor, security, build;
	char release[96];             /* Abstract_VM_Version::_s_vm_release: "17.0.15+6-Debian-1deb12u1" */
	char path[256];               /* the libjvm.so mapped, as the process names it */
	uint64_t bias;                /* its load bias */
	struct hs_jvm_proc_info info; /* for the BPF program */
	struct hs_jvm_layout lay;
};

enum hs_jvm_found {
	HS_JVM_NOT_JAVA = 0, /* no libjvm.so mapped (yet) */
	HS_JVM_SUPPORTED,    /* *ret describes it */
	HS_JVM_UNSUPPORTED,  /* a libjvm.so whose tables are unreadable, garbage, lack a field or
	                      * disagree with what the reader expects: why says which, in one line
	                      * without newline ("hotspot: no field nmethod._method in the tables") */
};

/* Whether a mapped file's name is one HotSpot is in (libjvm.so): the cheap test before
 * hs_jvm_find(). */
bool hs_jvm_maybe_runtime(const char *path);
/* Looks for a libjvm.so mapped in process pid (its /proc maps and the file, read through
 * /proc/PID/root), reads its symbols and then its tables from the process. *ret is set only for
 * HS_JVM_SUPPORTED, why only for HS_JVM_UNSUPPORTED. Needs what process_vm_readv needs. */
enum hs_jvm_found hs_jvm_find(int32_t pid, struct hs_jvm *ret, char *why, size_t whylen);
/* Reads the tables that the symbols (their addresses in the process, load bias applied) lead
 * to, through mem: 0 and *ret filled (but for path and bias); or -EFAULT (unreadable),
 * -EBADMSG (not tables: strides, strings or counts out of their bounds), -EOPNOTSUPP (a field
 * or constant missing, of another width, out of its type, or a version not supported), with
 * why set. Bounded: at most 16384 entries a table, names of 127 characters. */
int hs_jvm_read_tables(const struct hs_rt_mem *mem, const uint64_t syms[HS_JVM_NSYMS], struct hs_jvm *ret, char *why,
		       size_t whylen);

/* What a code blob is. */
enum hs_jvm_blob_kind {
	HS_JVM_BLOB_OTHER = 0,   /* a stub, an adapter, a buffer: its name says which */
	HS_JVM_BLOB_NMETHOD,     /* compiled Java (or a native method's wrapper) */
	HS_JVM_BLOB_INTERPRETER, /* the template interpreter's code */
};

/* How a Java frame runs. */
enum hs_jvm_comp {
	HS_JVM_INTERPRETED = 0,
	HS_JVM_C1,     /* comp levels 1 to 3 */
	HS_JVM_C2,     /* comp level 4 */
	HS_JVM_NATIVE, /* a native method's wrapper (level 0) */
	HS_JVM_STUB,   /* no Java method: a stub or an adapter between frames */
};
const char *hs_jvm_comp_name(enum hs_jvm_comp c); /* "interpreted", "C1", "C2", "native", "stub" */
enum hs_jvm_comp hs_jvm_comp_of_level(int comp_level);

/* A code blob, read. */
struct hs_jvm_blob {
	uint64_t addr;                 /* its start (the CodeBlob) */
	uint64_t code_begin, code_end; /* its instructions */
	int32_t size, frame_size;      /* bytes; words, return address included */
	int32_t frame_complete;        /* offset from code_begin where its frame is built */
	enum hs_jvm_blob_kind kind;
	char name[64]; /* CodeBlob::_name, cut to fit ("nmethod", "Interpreter", ...) */
	/* HS_JVM_BLOB_NMETHOD */
	uint64_t method; /* Method* */
	int32_t compile_id, comp_level, entry_bci;
};

/* Reads the blob at addr: 0, -EFAULT, or -EBADMSG when its fields do not make a blob (sizes
 * out of range, code outside it). */
int hs_jvm_blob_read(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, uint64_t addr, struct hs_jvm_blob *ret);
/* The blob holding pc, found as the BPF program finds it: the code heap holding pc, its segment
 * map walked back to the block's start, the blob after the block's header. 0, -ENOENT (pc in no
 * heap, or in free space), -EFAULT, -EBADMSG. */
int hs_jvm_blob_at(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, uint64_t pc, struct hs_jvm_blob *ret);
/* Calls fn for each blob in use in the code heaps, in address order, at most max of them; stops
 * when fn returns nonzero and returns that; else 0, or a negative errno when the heaps cannot be
 * read. */
int hs_jvm_blobs_each(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, size_t max,
		      int (*fn)(void *arg, const struct hs_jvm_blob *b), void *arg);
/* The interpreter's code, [*begin, *end): 0 or -EFAULT (not set up yet, or unreadable). */
int hs_jvm_interpreter(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, uint64_t *begin, uint64_t *end);

/* One Java method of a compiled frame: its Method* and the bytecode index running in it. */
struct hs_jvm_scope {
	uint64_t method;
	int32_t bci;
};
/* The methods that the nmethod nm runs at pc, innermost (the inlined leaf) first, the nmethod's
 * own method last: at most max into out, their count in *n. 0; -ENOENT when no debug
 * information covers pc (a native wrapper); -EFAULT; -EBADMSG when the scopes do not decode. */
int hs_jvm_scopes(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, const struct hs_jvm_blob *nm, uint64_t pc,
		  struct hs_jvm_scope *out, size_t max, size_t *n);

/* A method, read and checked. */
struct hs_jvm_method {
	char *klass;     /* dotted: "java.util.TimSort" */
	char *name;      /* "mergeLo", "<init>" */
	char *signature; /* the JVM descriptor: "(I)J" */
	char *file;      /* the source file, "TimSort.java", or NULL when the class has none */
	uint64_t const_method;
	uint32_t code_size; /* bytes of bytecode */
	uint8_t *lines;     /* the compressed line number table, or NULL */
	size_t lines_size;
	uint8_t unsigned5_x;
};
/* Reads the Method* at addr and checks it: its ConstMethod's constant pool must be its class's,
 * and the class's methods must list it; so a Method* that has been freed or reused reads as
 * -EBADMSG, never as another method. 0 (*ret owns its strings until hs_jvm_method_release()),
 * -EFAULT or -EBADMSG; *ret untouched on failure. Names capped at 1024 bytes, line tables at
 * 64 KiB. */
int hs_jvm_method_read(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, uint64_t addr,
		       struct hs_jvm_method *ret);
void hs_jvm_method_release(struct hs_jvm_method *m);
/* The source line of bytecode index bci; 0 when unknown. */
int hs_jvm_method_line(const struct hs_jvm_method *m, int32_t bci);
/* The bytecode index of an interpreted frame's bytecode pointer, or -1 outside the method. */
int32_t hs_jvm_method_bci(const struct hs_jvm *jvm, const struct hs_jvm_method *m, uint64_t bcp);
/* The method as perf maps and async-profiler spell it, "long Hot.fib(int)", into buf (cut to
 * len, always terminated); returns the length it needed, like snprintf. */
size_t hs_jvm_method_format(const struct hs_jvm_method *m, char *buf, size_t len);

/* A Java thread. */
struct hs_jvm_thread {
	uint64_t addr;                      /* the JavaThread */
	int32_t tid;                        /* in the process's pid namespace */
	int32_t state;                      /* JavaThreadState */
	uint64_t last_sp, last_fp, last_pc; /* its JavaFrameAnchor: 0 while it runs Java code */
};
/* The JVM's Java threads (ThreadsSMRSupport's list), at most max into out, their count in *n:
 * 0, or -EFAULT. */
int hs_jvm_threads(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, struct hs_jvm_thread *out, size_t max,
		   size_t *n);

/* One frame of a walk. */
struct hs_jvm_frame {
	enum hs_jvm_comp comp;
	uint64_t pc;
	uint64_t blob;      /* the code blob holding pc (the interpreter's, for an interpreted frame) */
	uint64_t method;    /* Method*: of the interpreted frame, or the nmethod's (0 for a stub) */
	int32_t bci;        /* an interpreted frame's bytecode index, else -1 (hs_jvm_scopes() has
	                     * a compiled frame's) */
	int32_t compile_id; /* a compiled frame's nmethod's */
};

enum hs_jvm_walk_end {
	HS_JVM_WALK_ENTRY = 1, /* the call stub's return: C++ called Java there (the usual end) */
	HS_JVM_WALK_NATIVE,    /* a pc outside the code cache (native code) */
	HS_JVM_WALK_FAULT,     /* a read failed or a frame could not be stepped over */
	HS_JVM_WALK_MAX,       /* max frames */
};

/* Walks a thread's Java frames from the registers of its innermost Java frame (from its
 * JavaFrameAnchor when it is out of Java: hs_jvm_threads()), as the BPF program walks at sample
 * time: at most max into out, innermost first, their count in *n and why the walk ended in
 * *end. For tests and for checking the BPF program; returns 0. */
int hs_jvm_walk(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, uint64_t sp, uint64_t fp, uint64_t pc,
		struct hs_jvm_frame *out, size_t max, size_t *n, enum hs_jvm_walk_end *end);

/* HotSpot as a runtime (runtime/runtime.h): proc is a struct hs_jvm. */
extern const struct hs_runtime hs_hotspot_runtime;

#endif
