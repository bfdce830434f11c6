/* CRuby as a profiler sees it from outside (docs/ruby.md): which interpreter a process runs and
 * where its running thread's frames are (for the BPF program that reads them at sample time),
 * and functions read from the process's memory turned into a name, a file and the line of an
 * instruction. CRuby 3.1 only. */
#ifndef HS_RUBY_H
#define HS_RUBY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/interp/interp.h"
#include "runtime/proc.h"
#include "runtime/ruby/rb-abi.h"

struct hs_runtime;

/* A process's interpreter (plain data: the names store keeps a copy). */
struct hs_rb_proc {
	struct hs_rb_proc_info info; /* for the BPF program */
	char path[256];              /* the ELF file that holds it: libruby-3.1.so.3.1, ruby */
	char version[16];            /* its ruby_version: "3.1.2" */
	uint64_t symbols;            /* the address of its global symbol table (IDs to names) */
	uint64_t vm_ptr;             /* the address of ruby_current_vm_ptr */
	/* the IDs of the instance variables a class keeps its name in, and a singleton class
	 * its object in (0: not known; the class is not named) */
	uint64_t id_classpath, id_tmp_classpath, id_attached;
};

enum hs_rb_found {
	HS_RB_NOT_RUBY = 0, /* no CRuby mapped (yet) */
	HS_RB_SUPPORTED,    /* *ret describes it */
	HS_RB_UNSUPPORTED,  /* another version, or a build whose checks failed: why says which in
	                     * one line ("ruby 3.2.0 is not supported"); "cannot read" when the
	                     * interpreter is not set up yet */
};

/* Looks for CRuby in process pid (its /proc maps and ELF files, read through /proc/PID/root),
 * checks its version and build, and reads where its frames are. *ret is set only for
 * HS_RB_SUPPORTED, why only for HS_RB_UNSUPPORTED. Needs the privileges process_vm_readv needs. */
enum hs_rb_found hs_rb_find(int32_t pid, struct hs_rb_proc *ret, char *why, size_t whylen);

/* Whether a file of that path can hold CRuby: libruby*.so*, ruby, ruby3.1 and the like. */
bool hs_rb_maybe(const char *path);

/* The name of ID id in p's symbol table, into buf (len bytes, NUL-ended): its length, or -1. */
int hs_rb_id_name(const struct hs_rb_proc *p, const struct hs_rt_mem *mem, uint64_t id, char *buf, size_t len);
/* The same by the ID's serial number, with the Symbol beside the name in *sym (unless NULL). */
int hs_rb_serial_name(const struct hs_rb_proc *p, const struct hs_rt_mem *mem, uint64_t serial, char *buf, size_t len,
		      uint64_t *sym);

/* The execution context of p's main thread, or 0 (walk.c). */
uint64_t hs_rb_main_ec(const struct hs_rb_proc *p, const struct hs_rt_mem *mem);
/* Walks the frames of execution context ec as the BPF program does, innermost first, into out
 * (at most max): how many; *flags says why the walk stopped early (HS_IP_* sample flags). */
size_t hs_rb_walk(const struct hs_rt_mem *mem, uint64_t ec, struct hs_ip_frame *out, size_t max, uint16_t *flags);

/* The interpreter's language (names.c). */
extern const struct hs_ip_lang hs_rb_lang;
extern const struct hs_runtime hs_ruby_runtime;

#endif
