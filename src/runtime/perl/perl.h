/* Perl's interpreter as a profiler sees it from outside (docs/perl.md): which perl a process runs
 * and where a thread's interpreter is (to hand to the BPF program that reads frames at sample
 * time), the walk of its context stacks that program does, written again for tests, and how a
 * frame is named. Perl 5.36 built with ithreads (Debian 12's) on x86_64; any other is refused. */
#ifndef HS_PERL_H
#define HS_PERL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/interp/interp.h"
#include "runtime/perl/pl-abi.h"
#include "runtime/proc.h"

struct hs_runtime;

#define HS_PL_VERSION(r, v, s) ((r) << 16 | (v) << 8 | (s))

/* A process's perl. */
struct hs_pl_interp {
	unsigned version;            /* HS_PL_VERSION(5, 36, 0) */
	char path[256];              /* the ELF file that holds the interpreter: perl or libperl.so */
	uint64_t curinterp;          /* the address of PL_curinterp (the first interpreter) */
	struct hs_pl_proc_info info; /* for the BPF program: offsets, where a thread's interpreter is */
	/* offsets only user space reads: struct interpreter's Idefstash and Irunops */
	uint16_t interp_defstash, interp_runops;
};

/* Looks for a perl in process pid (its /proc maps and ELF files, read through /proc/PID/root),
 * checks its version and build against what the reader knows, and the interpreter's state in
 * the process against its layout. HS_RT_SUPPORTED with *ret set; HS_RT_UNSUPPORTED with why in
 * one line ("perl 5.38.2 is not supported"; "cannot read" in it when that may pass: the program
 * is still starting); HS_RT_ABSENT when no perl is mapped. Needs the privileges
 * process_vm_readv needs. Returns an enum hs_rt_found. */
int hs_pl_find(int32_t pid, struct hs_pl_interp *ret, char *why, size_t whylen);
/* Whether a mapped file's name is one perl can be in: perl, perl5.36.0, libperl.so.5.36. */
bool hs_pl_maybe_runtime(const char *path);

/* The Perl frames of the thread whose interpreter (my_perl) is at my_perl, as the BPF program
 * reads them (frames.bpf.c): at most max into out, innermost first; returns how many, with
 * enum hs_ip_sample_flag bits in *flags. For tests and for checking the BPF program. */
size_t hs_pl_walk(const struct hs_pl_interp *in, const struct hs_rt_mem *mem, uint64_t my_perl, struct hs_ip_frame *out,
		  size_t max, uint16_t *flags);

/* The name and file of frame f (the struct hs_ip_lang's code_read; proc is a struct
 * hs_pl_interp): "Package::sub", "(eval)", "(require)" or "main". 0 with *c made, or -1 when
 * they cannot be read or are not the frame's any more (a HEK whose hash is not the one the
 * frame saw). An eval's or a required file's frame whose file is gone, or is another string
 * now, has no file. Names are cut at 1 KiB, files at 4 KiB. */
int hs_pl_code_read(const void *proc, const struct hs_rt_mem *mem, const struct hs_ip_frame *f, struct hs_ip_code *c);
/* The name of a package's stash (an HV) at hv, in buf: 0, or -1 when it is no stash. */
int hs_pl_stash_name(const struct hs_pl_interp *in, const struct hs_rt_mem *mem, uint64_t hv, char *buf, size_t size);

/* What perl's native function name is to the merge (the struct hs_ip_lang's native_class). */
enum hs_ip_native hs_pl_native_class(const char *name);

/* Perl as a runtime (runtime/runtime.h): proc is a struct hs_pl_interp. */
extern const struct hs_ip_lang hs_perl_lang;
extern const struct hs_runtime hs_perl_runtime;

#endif
