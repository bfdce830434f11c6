/* Addresses to names: ELF symbols of the files processes mapped (each file loaded once, shared
 * by build-id or inode), the vdso from a process's memory, and the kernel from kallsyms. Names
 * are never taken from a file that is not the one that was mapped: a dso whose file was
 * replaced or deleted, and whose mapped copy was not captured, gets no names at all. */
#ifndef HS_SYMBOLIZER_H
#define HS_SYMBOLIZER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"
#include "symbolize/elf-symtab.h"
#include "symbolize/kallsyms.h"

struct hs_symbolizer_opts {
	const char *kallsyms_path; /* NULL = /proc/kallsyms; "" = no kernel symbols */
	bool no_dwarf;             /* no DWARF: no inline frames, no source lines (symbols only) */
	/* with kallsyms_path NULL: the running kernel's files (NULL = hs_running_kernel), its
	 * symbols taken from the user's cache where they are there (tests give others) */
	const struct hs_kernel_files *kernel;
	/* kallsyms_path is a copy of the running kernel's symbols (perf's build-id cache keeps the
	 * first it made): an address in none of them has the running kernel's read, once */
	bool kallsyms_running;
};

struct hs_symbolizer_stats {
	uint64_t files_loaded;
	uint64_t files_unreadable;   /* could not be opened or parsed */
	uint64_t files_mismatched;   /* the file at the path is not the one that was mapped */
	uint64_t files_minidebuginfo; /* named from their MiniDebugInfo (.gnu_debugdata) */
	uint64_t jit_jitdump;        /* JIT addresses named from a jitdump */
	uint64_t jit_perf_map;       /* ... from a perf map */
	uint64_t jit_unnamed;        /* ... by neither */
	uint64_t dwarf_restarts;     /* files' DWARF begun again to keep within HS_SYM_DWARF_BUDGET */
};

struct hs_symbolizer {
	struct hs_symbolizer_opts opts;
	struct hs_kallsyms *kallsyms;
	int kallsyms_state; /* 0 not tried, 1 loaded, negative errno when unavailable */
	bool kallsyms_loading;    /* a prefetch thread is reading kallsyms */
	pthread_t kallsyms_thread;
	struct hs_kallsyms *kallsyms_pending;
	int kallsyms_pending_rc;
	bool kallsyms_reread; /* read again for an address the table does not cover or name */
	HS_VEC(struct hs_elf_symtab *) tables;
	struct hs_u64map by_key; /* hs_dso_elf_key of the file -> index in tables */
	struct hs_symbolizer_stats stats;
	HS_VEC(char *) mismatched; /* paths of files that are not the ones mapped (at most 64) */
	HS_VEC(struct hs_sym_dwarf *) dwarfs; /* DWARF of files, opened on first use */
	struct hs_u64map dwarf_by_key;        /* hs_dso_elf_key -> index in dwarfs */
	struct hs_u64map dwarf_by_dso;        /* dso id -> index in dwarfs, or ~1 when it has none */
	unsigned dwarf_threads;               /* prefetch threads not joined yet */
	uint64_t dwarf_cost;                  /* of all files' DWARF (struct hs_dwarf_file.cost) */
};

/* What the DWARF of all files may hold (libdw's line tables above all) before the files that
 * hold the most are begun again, forgetting their units: without it, the DWARF of a large
 * program built with -g (a Python's) kept tens of megabytes for as long as it was mapped. A
 * unit looked up again is read again (a few milliseconds for a large one). */
#define HS_SYM_DWARF_BUDGET ((uint64_t)16 << 20)

/* DWARF files opened in threads of their own at most at once. */
#define HS_SYM_MAX_DWARF_THREADS 8

struct hs_sym_dwarf; /* defined in symbolizer.c */

/* One function of an address's inline chain. */
struct hs_sym_frame {
	const char *name;        /* as the symbol table or DWARF names it (mangled for C++ and Rust:
	                          * the caller demangles); borrowed from the symbolizer */
	const char *file;        /* source file, or NULL */
	int64_t line;            /* 0 when unknown */
};

struct hs_sym {
	const char *name;   /* NULL when the address has no symbol; borrowed from the symbolizer */
	uint64_t offset;    /* from the symbol's start */
	const char *module; /* kernel only: module name, or NULL for the kernel image */
};

void hs_symbolizer_init(struct hs_symbolizer *s, const struct hs_symbolizer_opts *opts);
/* Frees every table and clears dso->sym of every dso of model m (m may be NULL). */
void hs_symbolizer_release(struct hs_symbolizer *s, struct hs_model *m);
/* Forgets what belongs only to the dsos renumber marks gone (hs_model_unmapped_dsos()): their
 * symbol tables and DWARF, unless a dso kept shares the file; the rest is keyed by the new ids.
 * Names handed out before from a table freed here are gone with it. Call before
 * hs_model_drop_dsos(). */
void hs_symbolizer_forget(struct hs_symbolizer *s, struct hs_model *m, const uint32_t *renumber);
/* Gives back the pages of the files it reads in place (the DWARF files libelf maps, the kernel's
 * symbols from the cache): they stay in the page cache, and the next lookups fault in only what
 * they read. What a recording of months keeps resident is then what a period reads, not every
 * page it ever read. */
void hs_symbolizer_drop_pages(struct hs_symbolizer *s);

/* Symbol for a file offset in dso (address - map start + map pgoff). Returns true when found. */
bool hs_symbolize_user(struct hs_symbolizer *s, struct hs_dso *dso, uint64_t file_offset, struct hs_sym *ret);
/* The inline chain at a file offset in dso, innermost first: functions inlined there, then the
 * function the code belongs to (named after its symbol when the symbol table has it), each with
 * file and line where DWARF tells them. Returns how many (0: nothing known); *sym_off is the
 * offset from the symbol's start when there is a symbol. */
int hs_symbolize_user_frames(struct hs_symbolizer *s, struct hs_dso *dso, uint64_t file_offset,
			     struct hs_sym_frame *out, int max, uint64_t *sym_off);
/* JIT code (anonymous executable memory): what pid's runtime says is at addr at time. */
struct hs_jit_sym {
	const char *name;    /* borrowed from the model's JIT store */
	const char *file;    /* source file (jitdump debug information), or NULL */
	uint32_t line;
	uint64_t offset;     /* from the code's start */
	uint32_t code;       /* jitdump code id (struct hs_jit_code.id), 0 for a perf map's name */
};
/* Names addr from the jitdump code there at time, else, with perf_maps, from the process's perf
 * map (which the caller has read: names in it are only known late, often at the end of a
 * recording). Returns false when neither names it. */
bool hs_symbolize_jit(struct hs_symbolizer *s, struct hs_model *m, int32_t pid, uint64_t addr, uint64_t time,
		      bool perf_maps, struct hs_jit_sym *ret);

/* Starts opening dso's DWARF (with its separate debug file) in a thread of its own, for a
 * file that will surely be needed (a perf.data lists the files that had samples): the first
 * lookup in it waits for the thread. Nothing when no_dwarf is set, when the DWARF is open
 * already, or when HS_SYM_MAX_DWARF_THREADS are busy. */
void hs_symbolizer_prefetch_dwarf(struct hs_symbolizer *s, struct hs_dso *dso);
/* Whether dso's DWARF is still being opened by a prefetch thread (a lookup now would wait). */
bool hs_symbolizer_dwarf_pending(struct hs_symbolizer *s, struct hs_dso *dso);

/* What a kernel address in no symbol of the kernel's table is named: a BPF program that the
 * kernel does not list (net.core.bpf_jit_kallsyms 0), code past the end of a section. */
#define HS_KERNEL_UNKNOWN "[kernel: unknown]"

/* Symbol for a kernel address. The first address that the cached kernel symbols cannot answer
 * for (a BPF program, a trampoline, a new module), or that is in no symbol of the running
 * kernel's table (a BPF program loaded since it was read), has kallsyms read again, once a run.
 * An address in no symbol then is HS_KERNEL_UNKNOWN; false only without kernel symbols at all.
 * The name is borrowed until the next call. */
bool hs_symbolize_kernel(struct hs_symbolizer *s, uint64_t addr, struct hs_sym *ret);
/* Loads kallsyms now (they can change later as modules come and go). Returns 0 or -errno. */
int hs_symbolizer_load_kernel(struct hs_symbolizer *s);
/* Starts reading kallsyms in a thread of its own (reading /proc/kallsyms costs the kernel tens
 * of milliseconds), for a run that will surely need kernel symbols; the first kernel lookup
 * waits for it. */
void hs_symbolizer_prefetch_kernel(struct hs_symbolizer *s);
/* The build-id of the running kernel (from /sys/kernel/notes); returns its size, 0 if unknown. */
size_t hs_running_kernel_build_id(uint8_t *buf, size_t cap);

/* The loaded table of a dso (loading it on first use), or NULL. */
const struct hs_elf_symtab *hs_symbolizer_table(struct hs_symbolizer *s, struct hs_dso *dso);

#endif
