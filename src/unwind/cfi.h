/* The CFI table compiler: an ELF's call-frame information (.eh_frame, found directly or through
 * .eh_frame_hdr, or .debug_frame) compiled once into a compact table sorted by PC. Each row says,
 * for the PCs up to the next row, how to find the CFA, where the return address and the frame
 * pointer are saved, and, through a shared set of rules, where the code saved the other
 * registers (rbx, r12-r15; every register in signal frames), so that the caller's values can
 * be restored. Rules the table cannot express make an explicit unsupported row or rule — never
 * a wrong answer. x86-64 (DWARF register numbers: 0-15 general, 6 rbp, 7 rsp, 16 RA). */
#ifndef HS_CFI_H
#define HS_CFI_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

enum hs_cfa_kind {
	HS_CFA_NONE = 0,    /* no CFI covers these PCs */
	HS_CFA_REG,         /* CFA = reg + off */
	HS_CFA_DEREF,       /* CFA = *(reg + off) (stack realignment, signal frames) */
	HS_CFA_PLT,         /* CFA = rsp + off + ((pc & 15) >= reg ? 8 : 0): the PLT expression, reg
	                     * holding the threshold */
	HS_CFA_UNSUPPORTED, /* CFI exists but says something the table cannot express */
};

enum hs_rule_kind {
	HS_RULE_SAME = 0,    /* unchanged (also: never mentioned) */
	HS_RULE_CFA_OFF,     /* saved at CFA + off */
	HS_RULE_VAL_CFA_OFF, /* the value is CFA + off */
	HS_RULE_RSP_OFF,     /* saved at rsp + off (DW_CFA_expression "DW_OP_breg7 off": signal frames) */
	HS_RULE_UNDEFINED,   /* no value: for the return address, the outermost frame */
	HS_RULE_UNSUPPORTED, /* a rule the table cannot express */
	HS_RULE_REGISTER,    /* in another register, off's (DW_CFA_register); struct hs_cfi_regs only */
};

#define HS_CFI_SIGNAL 1 /* row flag: a signal frame (augmentation "S"): the caller's PC is exact */

#define HS_DWARF_RBP 6
#define HS_DWARF_RSP 7
#define HS_DWARF_RA 16
#define HS_DWARF_NREGS 17

/* 20 bytes. */
struct hs_cfi_row {
	uint32_t pc;       /* offset from the table's base */
	int32_t cfa_off;
	uint8_t cfa_reg;
	uint8_t cfa_kind;  /* enum hs_cfa_kind */
	uint8_t ra_kind;   /* enum hs_rule_kind */
	uint8_t rbp_kind;  /* enum hs_rule_kind */
	int16_t ra_off;
	int16_t rbp_off;
	uint8_t flags;     /* HS_CFI_SIGNAL */
	uint8_t reserved;
	uint16_t regs;     /* index in the table's regs of the rules for the registers other than
	                    * rsp, rbp and the return address; 0: the ABI's default for all of them */
};

/* The callee-saved registers (System V x86-64 ABI) other than rsp: without a rule they keep
 * their value across a call; the others have none after it. */
#define HS_CFI_CALLEE_SAVED ((1u << 3) | (1u << 6) | (0xfu << 12))

/* The rules of one row for registers 0-15 but rsp and rbp, shared by every row that has the
 * same. A register not in mask has the ABI's default: its value kept when callee-saved, none
 * otherwise. Entry 0 has an empty mask; entry HS_CFI_REGS_LOST, used once a table holds
 * HS_CFI_MAX_REGS entries, makes every callee-saved register unknown. */
struct hs_cfi_regs {
	uint16_t mask;     /* bit i: kind[i] and off[i] hold register i's rule */
	uint16_t at_cfa;   /* the registers of mask whose rule is HS_RULE_CFA_OFF (the common case) */
	uint8_t kind[16];  /* enum hs_rule_kind */
	int16_t off[16];   /* CFA_OFF, VAL_CFA_OFF, RSP_OFF: the offset; REGISTER: the register */
};

#define HS_CFI_REGS_LOST 1
#define HS_CFI_MAX_REGS 65535u

struct hs_cfi_stats {
	uint32_t cies, fdes;
	uint32_t rows;            /* in the compiled table */
	uint32_t unsupported;     /* rows marked unsupported */
	uint32_t bad_entries;     /* CIEs/FDEs that did not parse (skipped) */
	bool from_eh_frame_hdr;   /* FDEs were enumerated through .eh_frame_hdr's table */
	bool from_debug_frame;
};

struct hs_cfi_table {
	uint64_t base;            /* ELF virtual address of pc 0 */
	struct hs_cfi_row *rows;  /* sorted by pc; each holds until the next */
	size_t n;
	struct hs_cfi_regs *regs; /* indexed by hs_cfi_row.regs; at least 2 entries */
	size_t nregs;
	struct hs_cfi_stats stats;
	/* where rows and regs are read in place, a cache file's mapping (cfi-cache.c), or NULL
	 * (on the heap): a lookup brings in the few pages it reads, which the page cache keeps */
	void *map;
	size_t map_len;
};

/* Caps on what a file can make the compiler do. */
#define HS_CFI_MAX_ROWS (32u << 20)
#define HS_CFI_MAX_STATE_DEPTH 64

/* Compiles the CFI of elf: its .eh_frame (through .eh_frame_hdr where present) and its
 * .debug_frame, or, when it has none, that of debug_elf (a separate debug file; may be NULL).
 * Returns 0 (*ret set; a file without CFI gives an empty table),
 * -EOVERFLOW over a cap. Malformed entries are skipped and counted, their PCs left uncovered. */
int hs_cfi_table_build(Elf *elf, Elf *debug_elf, struct hs_cfi_table **ret, struct hs_error *err);
/* Compiles raw .eh_frame bytes (and, when hdr_size is not 0, its .eh_frame_hdr, whose table then
 * enumerates the FDEs), as if placed at the given addresses: JIT code's unwinding information,
 * which pointer encodings relative to those places (pcrel, datarel) make position-dependent.
 * Returns as hs_cfi_table_build(). */
int hs_cfi_table_build_eh_frame(const void *eh_frame, size_t eh_frame_size, uint64_t eh_frame_vaddr,
				const void *hdr, size_t hdr_size, uint64_t hdr_vaddr, struct hs_cfi_table **ret,
				struct hs_error *err);
void hs_cfi_table_free(struct hs_cfi_table *t);

/* One function as an FDE describes it: the code [start, start + size), ELF virtual addresses. */
struct hs_cfi_function {
	uint64_t start, size;
};
/* The functions that elf's .eh_frame describes (through .eh_frame_hdr where present, as
 * hs_cfi_table_build() reads them, without running their programs): what names the functions
 * of a stripped file that its .dynsym lacks. Sorted by start, one per start (the largest);
 * *ret is malloc'd (NULL when n is 0). Returns 0 (none when the file has no .eh_frame), or
 * -EOVERFLOW past HS_CFI_MAX_ROWS functions. */
int hs_cfi_functions(Elf *elf, struct hs_cfi_function **ret, size_t *n);
/* The row covering vaddr (an ELF virtual address), or NULL when vaddr is outside every row
 * (rows of kind HS_CFA_NONE are returned as they are: no CFI there). */
const struct hs_cfi_row *hs_cfi_table_find(const struct hs_cfi_table *t, uint64_t vaddr);
/* Bytes the table occupies on the heap (a mapped one: its structure alone). */
size_t hs_cfi_table_bytes(const struct hs_cfi_table *t);
/* The pages of a mapped table given back (they stay in the page cache; the next lookups bring
 * in what they read): a table read in place costs what its lookups touch since. */
void hs_cfi_table_drop_pages(const struct hs_cfi_table *t);

#endif
