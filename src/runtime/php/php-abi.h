/* What PHP's frame reader (frames.bpf.c) and user space share: a process's description in the
 * reader's process table, the layout of the Zend engine's structures it walks, and what a frame
 * of its record (struct hs_ip_sample, runtime/interp/ip-abi.h) holds. Compiled both by clang
 * for the BPF target and by the C compiler. */
#ifndef HS_PHP_ABI_H
#define HS_PHP_ABI_H

#include "runtime/rt-abi.h"

/* Offsets of the fields read, in bytes (Zend/zend_compile.h, zend_types.h of the version). */
struct hs_php_offsets {
	/* zend_execute_data: the frame of a function being run, on the engine's VM stack */
	hs_u16 ex_opline;    /* const zend_op *: the instruction it is at (saved before calls) */
	hs_u16 ex_func;      /* zend_function * */
	hs_u16 ex_type_info; /* This.u1.type_info: u32, the call's ZEND_CALL_* flags in its top 16 bits */
	hs_u16 ex_prev;      /* prev_execute_data: the frame that called it */
	hs_u16 ex_read;      /* bytes read of a frame: past the last of these */
	/* zend_function (a union: the fields common to its members, then zend_op_array's) */
	hs_u16 fn_type;       /* u8: 1 internal (C), 2 user, 4 eval'd code */
	hs_u16 fn_name;       /* zend_string *function_name; NULL for a file's top level and eval */
	hs_u16 fn_scope;      /* zend_class_entry * */
	hs_u16 fn_read;       /* bytes read of any function: past the fields above */
	hs_u16 op_last;       /* u32: its instructions */
	hs_u16 op_opcodes;    /* zend_op *: the first */
	hs_u16 op_filename;   /* zend_string * */
	hs_u16 op_line_start; /* u32 */
	hs_u16 op_read;       /* bytes read of a user function: past the fields above */
	hs_u16 op_size;       /* sizeof(zend_op) */
	hs_u16 op_lineno;     /* u32, in a zend_op */
};

/* The reader's process-table value. */
struct hs_php_proc_info {
	hs_u64 current_ex; /* the address of executor_globals.current_execute_data: the innermost frame */
	struct hs_php_offsets off;
	hs_u16 pad[3];
};

#define HS_PHP_TYPE_INTERNAL 1
#define HS_PHP_TYPE_USER 2
#define HS_PHP_TYPE_EVAL 4
/* ZEND_CALL_TOP in type_info: the frame is the first of a run of execute_ex (a C function, the
 * start of the script, a generator's resumption called it) */
#define HS_PHP_CALL_TOP (1u << 17)

/* A frame of the record: fn is the zend_function; aux is hs_php_aux() of its function_name,
 * (user functions) its filename, and what it is: a user function's instructions (its opcodes,
 * which the copies of a closure's function share: each closure made has a copy of its own), a
 * C function's address. The frames of a function are told apart by aux alone (the names store
 * keys them so: hs_ip_lang.by_aux), and another function at the same place later, as when
 * PHP-FPM without opcache frees each request's functions, is not named after this one. extra
 * is the zend_op its line was read from (0: the function's first line, or a C function); line
 * is that line. */
static inline hs_u64 hs_php_aux(hs_u64 name, hs_u64 file, hs_u64 what)
{
	return name ^ (file << 21 | file >> 43) ^ what * 0x9e3779b97f4a7c15ULL;
}

#endif
