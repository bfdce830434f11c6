/* CPython's interpreters as a profiler sees them from outside: which version a process runs
 * and where its runtime state is (to hand to the BPF program that reads frames at sample
 * time), and code objects read from the process's memory turned into a name, a file and the
 * line of an instruction. Versions 2.7 and 3.6 to 3.13; per-version layouts in layouts.c, 3.13's read
 * from the interpreter's own _Py_DebugOffsets. */
#ifndef HS_PYTHON_H
#define HS_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/proc.h"
#include "runtime/python/py-abi.h"

struct hs_runtime;

#define HS_PY_VERSION(major, minor) ((major) << 8 | (minor))


/* The user-space half of a version's layout: the code object and the strings and bytes it
 * points to. */
struct hs_py_code_layout {
	uint16_t code_name, code_qualname;      /* co_name; co_qualname (3.11+, else HS_PY_NONE) */
	uint16_t code_filename, code_linetable; /* co_lnotab (3.8, 3.9) or co_linetable */
	uint16_t code_firstlineno;
	uint16_t code_size; /* bytes read of a code object: past the last of these fields */
	uint16_t unicode_state, unicode_length, unicode_ascii_data, unicode_compact_data;
	uint16_t bytes_size, bytes_data;
	bool names_bytes; /* 2.7: names and file names are str, PyStringObject (read as bytes) */
};

/* A process's interpreter. */
struct hs_py_interp {
	unsigned version;            /* HS_PY_VERSION(3, 11) */
	char path[256];              /* the ELF file that holds the runtime: python3.X or libpython3.X.so */
	struct hs_py_proc_info info; /* for the BPF program: addresses in the process, offsets */
	struct hs_py_code_layout code;
	/* addresses of PyUnicode_Type and PyBytes_Type in the process: a code object's name,
	 * file or line table of another type is refused (0: not checked) */
	uint64_t str_type, bytes_type;
};

enum hs_py_found {
	HS_PY_NOT_PYTHON = 0, /* no CPython runtime mapped (yet) */
	HS_PY_SUPPORTED,      /* *ret describes it */
	HS_PY_UNSUPPORTED,    /* a CPython outside 3.6-3.13, or whose layout check failed: why says
	                       * which, in one line without newline ("python 3.14 is not supported") */
};

/* Looks for a CPython runtime mapped in process pid (its /proc maps and ELF files, read through
 * /proc/PID/root) and reads its version from the process. *ret is set only for
 * HS_PY_SUPPORTED, why only for HS_PY_UNSUPPORTED. Needs the privileges process_vm_readv needs. */
enum hs_py_found hs_py_find(int32_t pid, struct hs_py_interp *ret, char *why, size_t whylen);
/* 3.13's _Py_DebugOffsets, the bytes at the start of _PyRuntime (dbg, this many), checked
 * against in's offsets (hs_py_layout(3.13)'s): HS_PY_SUPPORTED when every field both know
 * agrees, and in's offsets are then the process's own; else HS_PY_UNSUPPORTED, and why says
 * which field differs (or that dbg is not 3.13's, or is a free-threaded build's). */
#define HS_PY_DEBUG_OFFSETS_SIZE 584
enum hs_py_found hs_py_check_debug_offsets(const void *dbg, struct hs_py_interp *in, char *why, size_t whylen);
/* Whether a mapped file's name is one a CPython runtime can be in (python3.X, libpython3.X.so):
 * the cheap test before hs_py_find(). */
bool hs_py_maybe_runtime(const char *path);

/* A code object, read. */
struct hs_py_code {
	char *name; /* co_qualname where the version has it, else co_name; UTF-8 */
	char *file; /* co_filename */
	int firstlineno;
	uint32_t ident;     /* hs_py_code_ident() of its co_name and co_filename objects */
	uint8_t *linetable; /* the line table's bytes, in the version's format */
	size_t linetable_size;
	unsigned version;
};

/* Reads the code object at addr: 0, or -1 when it cannot be read or does not look like one (of
 * another type than in->info.code_type, a name or file that is not a compact str, a line table
 * that is not bytes, sizes over their caps: names 1 KiB characters, files 4 KiB, line tables
 * 1 MiB). On success *ret owns what it points to, until hs_py_code_release(); on failure *ret
 * is untouched. */
int hs_py_code_read(const struct hs_py_interp *in, const struct hs_rt_mem *mem, uint64_t addr, struct hs_py_code *ret);
void hs_py_code_release(struct hs_py_code *c);
/* A code object that is gone, as far as its co_name and co_filename objects (at name and file)
 * still tell: no line table (its lines are its first). 0, or -1 when they are no strings. */
int hs_py_code_from_strings(const struct hs_py_interp *in, const struct hs_rt_mem *mem, uint64_t name, uint64_t file,
			    uint32_t firstlineno, struct hs_py_code *ret);
/* The source line of the instruction at byte offset instr in the code; 0 when unknown. */
int hs_py_code_line(const struct hs_py_code *c, uint32_t instr);

/* The Python frames of the thread whose pthread_t (its fs base on x86_64 glibc) is fsbase, as
 * the BPF program reads them at sample time (the algorithm is written out at the top of
 * walk.c): at most max frames into out, innermost first; returns how many, with the walk's
 * enum hs_py_sample_flag bits in *flags. For tests and for checking the BPF program. */
size_t hs_py_walk(const struct hs_py_interp *in, const struct hs_rt_mem *mem, uint64_t fsbase, struct hs_py_frame *out,
		  size_t max, uint16_t *flags);

/* The layout of a version, or NULL when it has none here. For 3.13, hs_py_find() reads the
 * offsets from the process instead (its _Py_DebugOffsets), and checks them against this. */
const struct hs_py_interp *hs_py_layout(unsigned version);

/* CPython as a runtime (runtime/runtime.h): proc is a struct hs_py_interp. */
extern const struct hs_runtime hs_python_runtime;

#endif
