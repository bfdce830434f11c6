/* V8 (Node.js) as a profiler sees it from outside: the post-mortem metadata a binary carries
 * (its v8dbg_* symbols), read once per binary and checked against what is known of its V8
 * version, and the code regions of a process (the embedded builtins and their copy).
 * x86_64; full 64-bit pointers with 32-bit Smis (no pointer compression). */
#ifndef HS_V8_H
#define HS_V8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/proc.h"

/* The v8dbg_* symbols of a binary: name (without the prefix) and value, sorted by name. A
 * symbol with no initialised value (in .bss) has value 0 and present set: V8 writes some that
 * way to say a class has a parent, or a constant is 0. */
struct hs_v8_sym {
	char *name;
	int64_t value;
};
struct hs_v8_syms {
	struct hs_v8_sym *v;
	size_t n;
	unsigned version[4]; /* V8's major, minor, build, patch (v8::internal::Version), or 0s */
	uint64_t blob, blob_size; /* the embedded builtins' code: its address in the file, bytes */
	uint64_t bytecode_sizes;  /* interpreter::Bytecodes::kBytecodeSizes: its address, or 0 */
	uint64_t trampoline, trampoline_size; /* the interpreter's entry (a builtin), or 0s */
	uint8_t *sizes; /* bytecodes' sizes [3][nsizes] (operand scales 1, 2, 4), or NULL */
	size_t nsizes;
};

/* Reads the v8dbg_* symbols of elf (its dynamic and static symbol tables), their values from
 * its sections, and the version and builtins' symbols: 0, -ENOENT (no v8dbg_* symbol), or
 * -EBADMSG (over 8192 of them, or values that cannot be read). */
int hs_v8_syms_read(void *elf, struct hs_v8_syms *ret);
void hs_v8_syms_release(struct hs_v8_syms *s);
/* The value of v8dbg_NAME: true and *value, or false when the symbol is absent. */
bool hs_v8_sym(const struct hs_v8_syms *s, const char *name, int64_t *value);

/* What a reader of V8's frames and objects needs, every value checked. Offsets in bytes; those of
 * an object's fields are from its start (a tagged pointer is the start + heap_tag). */
struct hs_v8_layout {
	unsigned major, minor, build, patch;
	/* tagging: a heap object's pointer has (p & heap_tag_mask) == heap_tag; a Smi's value is
	 * its word >> 32 */
	uint8_t heap_tag, heap_tag_mask;
	/* a JavaScript frame's slots, from its frame pointer */
	int8_t fp_context, fp_function, fp_argc, fp_bytecode_array, fp_bytecode_offset;
	/* the interpreter's registers while a bytecode handler runs (x86_64 numbering) */
	uint8_t reg_bytecode_array, reg_bytecode_offset;
	/* frame types (a typed frame's context slot holds type << 1) */
	uint8_t ft_entry, ft_construct_entry, ft_exit, ft_builtin_exit, ft_interpreted, ft_baseline, ft_maglev,
		ft_turbofan, ft_stub, ft_internal, ft_construct, ft_builtin;
	/* instance types */
	uint16_t t_first_nonstring, t_js_function_first, t_js_function_last, t_sfi, t_code, t_bytecode_array, t_script,
		t_scope_info, t_fixed_array, t_byte_array, t_weak_fixed_array, t_instruction_stream;
	/* strings: type & repr_mask is one of the repr_*; type & enc_mask == enc_one_byte for
	 * one-byte strings */
	uint8_t str_repr_mask, str_enc_mask, str_enc_one_byte, str_seq, str_cons, str_external, str_sliced, str_thin;
	uint16_t map_instance_type;                                                 /* u16 */
	uint16_t fn_shared, fn_code;                                                /* JSFunction */
	uint16_t sfi_function_data, sfi_name_or_scope_info, sfi_script, sfi_token_offset; /* i16 */
	uint16_t script_name, script_source, script_line_ends;
	uint16_t array_length, array_data; /* FixedArrayBase's Smi length; FixedArray's and ByteArray's data */
	uint16_t str_length, str_seq_one, str_seq_two, str_cons_first, str_cons_second, str_thin_actual,
		str_sliced_parent, str_sliced_offset, str_external_data;
	uint16_t bytecode_spt, bytecode_data; /* BytecodeArray: source positions, bytecodes */
	uint16_t code_start, code_size, code_flags, code_spt, code_deopt, code_bytecode_offsets;
	uint8_t code_kind_mask, code_kind_shift;
	uint8_t kind_builtin, kind_interpreted, kind_baseline, kind_maglev, kind_turbofan;
	uint8_t scope_nparams, scope_ncontext_locals, scope_first_vars; /* ScopeInfo slots, after the map */
	uint8_t deopt_inlined_count, deopt_literals, deopt_sfi, deopt_inlining_positions;
	uint16_t bytecode_bias; /* an interpreted frame's offset slot: the offset + this */
	/* the interpreter's bytecodes' sizes at operand scales 1, 2 and 4, nsizes each (0: not
	 * known, and baseline code's lines are not) */
	uint8_t sizes[3][256];
	uint16_t nsizes;
};

/* The layout of the binary whose symbols are s: 0; -EOPNOTSUPP with why set in one line when
 * a symbol is missing, a value is out of its range or disagrees with what the reader knows of
 * the version, or the version is not one it reads ("v8 12.4 is not supported"). */
int hs_v8_layout_read(const struct hs_v8_syms *s, struct hs_v8_layout *ret, char *why, size_t whylen);

/* Whether p is a heap object's (tagged) pointer. */
bool hs_v8_is_heap(const struct hs_v8_layout *l, uint64_t p);
/* The instance type of the heap object p (from its map): 0, -EBADMSG (not a heap object's
 * pointer), -EFAULT. */
int hs_v8_type(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t p, uint16_t *type);
/* The word at offset off of heap object p: 0 or -EFAULT. */
int hs_v8_field(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t p, uint16_t off, uint64_t *v);
/* A flat run of a string's characters: count of them from the from-th, at data (one byte each,
 * or two). 0, or a negative errno that ends the walk. */
typedef int hs_v8_flat_fn(void *arg, const struct hs_rt_mem *mem, uint64_t data, bool one_byte, uint32_t from,
			  uint32_t count);
/* Calls fn for the flat runs of characters [from, from + count) of string p, in order, through
 * its cons, thin and sliced strings (nested at most 32 deep): 0, or fn's error, -EFAULT, or
 * -EBADMSG (not a string, longer than max). depth: 0. */
int hs_v8_string_each(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t p, uint32_t from,
		      uint32_t count, uint32_t max, hs_v8_flat_fn *fn, void *arg, int depth);
/* The text of string p, as UTF-8, cut to len - 1 bytes (at most 4096 characters read): 0,
 * -EFAULT, or -EBADMSG (not a string, or nested too deep). */
int hs_v8_string(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t p, char *buf, size_t len);

/* A function, as its SharedFunctionInfo says. */
struct hs_v8_function {
	char name[256];  /* its name, or the one V8 inferred for it; "" when anonymous */
	char file[512];  /* its script's name (a path, a file: URL, "node:internal/..."), or "" */
	uint64_t script; /* its Script, or 0 */
	uint64_t data;   /* its function data (a BytecodeArray, baseline code, ...) */
	uint64_t sfi, check; /* where it was read, and its name_or_scope_info then (for a store) */
};
/* Reads SharedFunctionInfo sfi: 0; -EBADMSG when sfi is not one; -EFAULT. */
int hs_v8_sfi_read(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t sfi, struct hs_v8_function *f);

/* A position in a script: its offset (in UTF-16 code units) and the inlining it is in (0: the
 * code's own function; else 1 + the index of an inlining in the code's deoptimisation data). */
struct hs_v8_pos {
	int32_t offset;
	uint16_t inlining;
};
/* The position of the last entry at or before offset (a bytecode offset, or a code offset) of
 * the source position table at table (a ByteArray): 0; -ENOENT when none is; -EBADMSG, -EFAULT. */
int hs_v8_position(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t table, int64_t offset,
		   struct hs_v8_pos *ret);
/* A function of optimised code at a position: its SharedFunctionInfo and the offset in its
 * script. */
struct hs_v8_scope {
	uint64_t sfi;
	int32_t offset;
};
/* The functions optimised code (a Code) runs at pos, innermost (inlined) first, its own last: at
 * most max into out, their count in *n. 0; -EBADMSG when its deoptimisation data does not
 * decode; -EFAULT. */
int hs_v8_inlined(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t code, struct hs_v8_pos pos,
		  struct hs_v8_scope *out, size_t max, size_t *n);
/* The bytecode offset that baseline code (a Code of the baseline kind) runs at pc_offset, from its
 * bytecode offset table (the machine code's length of the prologue, then of each bytecode) and
 * the interpreter's bytecode sizes: 0 and *ret (-1: the function's entry); -ENOENT (not covered,
 * or the sizes not known), -EBADMSG, -EFAULT. */
int hs_v8_baseline_offset(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t code, uint64_t pc_offset,
			  int64_t *ret);
/* The ends of script's lines (offsets of their newlines, the source's length last): V8's when it
 * computed them, else from its source (at most 32 Mi code units). A malloc'ed array and *n: 0,
 * -EBADMSG, -EFAULT. */
int hs_v8_line_ends(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t script, uint32_t **ret,
		    size_t *n);
/* The line and column (1-based; 0s when unknown) of offset by line ends ends[0..n). */
void hs_v8_line_of(const uint32_t *ends, size_t n, int32_t offset, int *line, int *column);

/* A process's V8. */
struct hs_v8 {
	char path[256]; /* the binary that carries V8 (node, or libnode.so.N) */
	uint64_t bias;
	struct hs_v8_layout lay;
	/* the embedded builtins, where the binary has them and where V8 copied them to (the
	 * copy's start, 0 when none): code runs from both */
	uint64_t blob, blob_size, blob_copy;
	uint64_t trampoline, trampoline_size; /* the interpreter's entry, in the binary's text */
	uint64_t jit_lo, jit_hi; /* the code range V8 compiles into (the copy at its end); 0s when
	                          * not made yet */
};

enum hs_v8_found {
	HS_V8_ABSENT = 0, /* no binary with V8's metadata mapped */
	HS_V8_SUPPORTED,
	HS_V8_UNSUPPORTED, /* why says why in one line */
};

/* Whether a mapped file's name is one V8 can be in (node, nodejs, libnode.so*). */
bool hs_v8_maybe_runtime(const char *path);
/* Looks for V8 in process pid: its binary among the mappings, its metadata and layout, and where
 * the builtins were copied to. */
enum hs_v8_found hs_v8_find(int32_t pid, struct hs_v8 *ret, char *why, size_t whylen);

/* V8 as a runtime (runtime/runtime.h): proc is a struct hs_v8. */
struct hs_runtime;
extern const struct hs_runtime hs_v8_runtime;

#endif
