/* Kernel symbols from /proc/kallsyms (or a file in its format), modules included, and their
 * per-user cache (kallsyms-cache.c). */
#ifndef HS_KALLSYMS_H
#define HS_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hs_ksym {
	uint64_t addr;
	uint32_t name;   /* offset in names */
	uint32_t module; /* offset in names of the module name, 0 for the kernel itself */
	bool global;     /* T or W: shown in preference to a local alias */
};

/* Addresses [start, end). */
struct hs_krange {
	uint64_t start, end;
};

struct hs_kallsyms {
	/* sorted by addr; from a cache entry, as the entry has them: a damaged entry may hold
	 * names outside the pool or addresses out of order (see hs_kallsyms_lookup()) */
	struct hs_ksym *syms;
	size_t n;
	char *names;          /* names[0] is "" */
	size_t names_len;
	uint64_t text_end;    /* end of the last symbol's page range, as far as kallsyms tells */
	/* A table from the cache leaves out text that comes and goes without a module load
	 * (BPF programs, ftrace and kprobe trampolines): it answers only inside these ranges,
	 * the text of the kernel and of each module (sorted, disjoint). NULL for a table read
	 * from a file, which answers everywhere. */
	const struct hs_krange *ranges;
	size_t nranges;
	void *map; /* the cache entry that syms, names and ranges point into, or NULL */
	size_t map_len;
};

/* The files that describe the running kernel: its symbols and what keys their cache. */
struct hs_kernel_files {
	const char *kallsyms; /* /proc/kallsyms */
	const char *modules;  /* /proc/modules: names, sizes, states, load addresses */
	const char *boot_id;  /* /proc/sys/kernel/random/boot_id */
};

extern const struct hs_kernel_files hs_running_kernel;

/* Loads the text symbols of path. Returns 0, -errno, or -ENODATA when every address reads as
 * zero (kptr_restrict hides them). */
int hs_kallsyms_load(const char *path, struct hs_kallsyms **ret);
/* Loads the running kernel's text symbols (f: hs_running_kernel, or files in the same formats)
 * through the cache entry "kallsyms" of hs_cache_dir(): from the entry when its key (boot id
 * and a hash of the modules file) matches, else, or when fresh is set, from f->kallsyms,
 * writing the entry. A table from the entry covers only part of the addresses: see
 * hs_kallsyms_covers(). Returns as hs_kallsyms_load(). */
int hs_kallsyms_load_kernel(const struct hs_kernel_files *f, bool fresh, struct hs_kallsyms **ret);
/* Frees a table of either kind; accepts NULL. */
void hs_kallsyms_free(struct hs_kallsyms *k);
/* Whether hs_kallsyms_lookup() answers for addr exactly as a fresh read of the file would:
 * always for a table read from a file; for one from the cache, when addr is in the text of
 * the kernel or of a module it holds (elsewhere only a fresh read can tell). */
bool hs_kallsyms_covers(const struct hs_kallsyms *k, uint64_t addr);
/* The symbol whose code holds addr, or NULL where addr is in none. kallsyms gives no sizes: a
 * symbol reaches to the next one of its module (the kernel image, a module, [bpf], a
 * [__builtin__*] kind of trampoline), the last one of a module to the end of its page (or the
 * next symbol, when it comes first). The kernel's end markers (_etext, _einittext, __*_text_end)
 * are no functions: an address from one to the next symbol is in none. Its name and module
 * offsets are inside names, whatever the table came from: a symbol of a damaged cache entry
 * whose offsets are not is NULL. */
const struct hs_ksym *hs_kallsyms_lookup(const struct hs_kallsyms *k, uint64_t addr);

#endif
