/* Addresses to names: ELF symbols of the files processes mapped (each file loaded once, shared
 * by build-id or inode), the vdso from a process's memory, and the kernel from kallsyms. Names
 * are never taken from a file that is not the one that was mapped: a dso whose file was
 * replaced or deleted, and whose mapped copy was not captured, gets no names at all. */
#ifndef HS_SYMBOLIZER_H
#define HS_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"
#include "symbolize/elf-symtab.h"
#include "symbolize/kallsyms.h"

struct hs_symbolizer_opts {
	const char *kallsyms_path; /* NULL = /proc/kallsyms; "" = no kernel symbols */
};

struct hs_symbolizer_stats {
	uint64_t files_loaded;
	uint64_t files_unreadable;   /* could not be opened or parsed */
	uint64_t files_mismatched;   /* the file at the path is not the one that was mapped */
};

struct hs_symbolizer {
	struct hs_symbolizer_opts opts;
	struct hs_kallsyms *kallsyms;
	int kallsyms_state; /* 0 not tried, 1 loaded, negative errno when unavailable */
	HS_VEC(struct hs_elf_symtab *) tables;
	struct hs_u64map by_key; /* hs_dso_elf_key of the file -> index in tables */
	struct hs_symbolizer_stats stats;
	HS_VEC(char *) mismatched; /* paths of files that are not the ones mapped (at most 64) */
};

struct hs_sym {
	const char *name;   /* NULL when the address has no symbol; borrowed from the symbolizer */
	uint64_t offset;    /* from the symbol's start */
	const char *module; /* kernel only: module name, or NULL for the kernel image */
};

void hs_symbolizer_init(struct hs_symbolizer *s, const struct hs_symbolizer_opts *opts);
/* Frees every table and clears dso->sym of every dso of model m (m may be NULL). */
void hs_symbolizer_release(struct hs_symbolizer *s, struct hs_model *m);

/* Symbol for a file offset in dso (address - map start + map pgoff). Returns true when found. */
bool hs_symbolize_user(struct hs_symbolizer *s, struct hs_dso *dso, uint64_t file_offset, struct hs_sym *ret);
/* Symbol for a kernel address. */
bool hs_symbolize_kernel(struct hs_symbolizer *s, uint64_t addr, struct hs_sym *ret);
/* Loads kallsyms now (they can change later as modules come and go). Returns 0 or -errno. */
int hs_symbolizer_load_kernel(struct hs_symbolizer *s);
/* The build-id of the running kernel (from /sys/kernel/notes); returns its size, 0 if unknown. */
size_t hs_running_kernel_build_id(uint8_t *buf, size_t cap);

/* The loaded table of a dso (loading it on first use), or NULL. */
const struct hs_elf_symtab *hs_symbolizer_table(struct hs_symbolizer *s, struct hs_dso *dso);

#endif
