/* Inline frames and source lines from DWARF, through libdw: for an address of an ELF file, the
 * chain of functions inlined at it (innermost first) down to the function the code belongs to,
 * each with its file and line. Each compile unit's functions are indexed by address the first
 * time an address falls in it, so a lookup descends one function's scopes, not the whole unit. */
#ifndef HS_DWARF_LINES_H
#define HS_DWARF_LINES_H

#include <elfutils/libdw.h>
#include <stdint.h>

#include "symbolize/line-table.h"
#include "util/hashmap.h"
#include "util/util.h"

struct hs_src_frame {
	const char *name;     /* DW_AT_name (or the linkage name when there is no other); borrowed */
	const char *linkage;  /* DW_AT_linkage_name, mangled, or NULL; borrowed */
	const char *file;     /* source file, absolute where DW_AT_comp_dir allows, or NULL; borrowed */
	int64_t line;         /* 0 when unknown */
};

/* Caps: inline depth per address; functions indexed per compile unit. */
#define HS_DWARF_MAX_INLINE 64
#define HS_DWARF_MAX_FUNCS_PER_CU (4u << 20)

struct hs_dwarf_cu;     /* a compile unit's function index, in dwarf-lines.c */
struct hs_dwarf_arange; /* an address range of a compile unit, in dwarf-lines.c */

/* Address ranges read from .debug_aranges at most (a cap on what a file makes us allocate). */
#define HS_DWARF_MAX_ARANGES (16u << 20)

/* The DWARF of one file and the indexes built from it. Owns neither dw nor its ELF. */
struct hs_dwarf_file {
	Dwarf *dw;
	HS_VEC(struct hs_dwarf_cu *) cus;
	struct hs_u64map cu_ix; /* CU DIE offset -> index in cus */
	/* the units' address ranges, from .debug_aranges, sorted; where they cannot be read or
	 * do not tell for an address, libdw's own index of them is used */
	struct hs_dwarf_arange *ar;
	size_t nar;
	int ar_state;     /* 0 not read yet, 1 read, -1 libdw's only */
	int ar_complete;  /* every unit that can hold code has its set: 1, 0, -1 not known yet */
	uint64_t *ar_units; /* the units that have a set, sorted, until ar_complete is known */
	size_t nar_units;
	uint64_t libdw_units; /* lookups of a unit that libdw's index answered */
	/* the sections the units' line tables are read from here (line-table.h): 0 not found yet,
	 * 1 found, -1 not there or not to be read here (a relocatable file) */
	struct hs_line_sections sec;
	int sec_state;
	uint64_t libdw_lines; /* units whose line table libdw read instead */
	/* what libdw and these indexes are reckoned to hold for the units looked up so far, in
	 * bytes: mostly their line tables, which libdw keeps until dwarf_end() */
	uint64_t cost;
};

void hs_dwarf_file_init(struct hs_dwarf_file *f, Dwarf *dw);
void hs_dwarf_file_release(struct hs_dwarf_file *f);
/* Builds the address index every lookup starts with, ahead of the first (lookups build it
 * otherwise): for a thread that opens a file's DWARF before it is used. */
void hs_dwarf_file_index(struct hs_dwarf_file *f);
/* The DIE of the compile unit whose code holds vaddr, as dwarf_addrdie() finds it, into *ret;
 * false when none does. */
bool hs_dwarf_unit(struct hs_dwarf_file *f, uint64_t vaddr, Dwarf_Die *ret);

/* file joined to dir when it is relative ("../src/x.c" in "/b/build" is "/b/build/../src/x.c"),
 * then normalised: empty and "." components dropped, "DIR/.." replaced by the directory above
 * only in an absolute path where DIR is a directory and not a symbolic link (lstat), else kept.
 * dir may be NULL. Returns a string the caller frees. */
char *hs_source_path(const char *dir, const char *file);

/* Frames for vaddr (an ELF virtual address), innermost first, in out[0..max). Returns how many
 * (0: no function of the debug information covers vaddr; then, if out[0].file is not NULL, it
 * holds the line alone). Strings live as long as the Dwarf. */
int hs_dwarf_frames(struct hs_dwarf_file *f, uint64_t vaddr, struct hs_src_frame *out, int max);

#endif
