/* Unit tests for the CFI table compiler: a differential test of our tables against libdw
 * (elfutils) on real system libraries, hotstack itself and this executable, at every row
 * boundary, inside every row and at every row libdw itself enumerates for each FDE; and
 * hand-written CFI (tests/fixtures/cfi/cfi-cases.s, linked into this executable) whose rows must
 * come out exactly, or explicitly unsupported — never wrong. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

#include "unwind/cfi.h"

/* ---- an ELF file and its two tables ---- */

struct cfi_file {
	int fd;
	Elf *elf;
	struct hs_cfi_table *t;
	Dwarf_CFI *cfi; /* libdw's view of the same file */
};

/* Opens path and builds our table and libdw's; false when the file does not exist. */
static bool cfi_file_open(struct cfi_file *f, const char *path)
{
	struct hs_error err = {0};

	memset(f, 0, sizeof(*f));
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return false;
	elf_version(EV_CURRENT);
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf)
		fail_msg("%s: elf_begin: %s", path, elf_errmsg(-1));
	if (hs_cfi_table_build(f->elf, NULL, &f->t, &err) != 0)
		fail_msg("%s: hs_cfi_table_build failed: %s", path, err.detail);
	assert_non_null(f->t);
	f->cfi = dwarf_getcfi_elf(f->elf);
	if (!f->cfi)
		fail_msg("%s: libdw finds no CFI: %s", path, dwarf_errmsg(-1));
	return true;
}

static void cfi_file_close(struct cfi_file *f)
{
	if (f->cfi)
		dwarf_cfi_end(f->cfi);
	hs_cfi_table_free(f->t);
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
}

/* ---- libdw's answer, classified into our rule kinds ---- */

#define KIND_OTHER 100 /* libdw's rule is none of the kinds a row can hold */

struct rule {
	int kind; /* enum hs_cfa_kind or enum hs_rule_kind, or KIND_OTHER */
	int reg;  /* HS_CFA_REG/DEREF: the register; HS_CFA_PLT: the threshold */
	int64_t off;
	char text[160]; /* libdw's rule as written, for messages */
};

/* The whole of libdw's answer at one address. */
struct ld_frame {
	struct rule cfa, ra, rbp, rsp;
	struct rule regs[16];      /* registers 0-15: what libdw says of each */
	int saved[HS_DWARF_NREGS]; /* per register: 1 saved somewhere, 0 same value, -1 undefined */
	bool signal;
};

static const char *const reg_names[] = {"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8",
					"r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rip"};

static const char *reg_name(int reg, char buf[16])
{
	if (reg >= 0 && reg < (int)(sizeof(reg_names) / sizeof(reg_names[0])))
		return reg_names[reg];
	snprintf(buf, 16, "r%d", reg);
	return buf;
}

static void ops_text(const Dwarf_Op *ops, size_t n, char *buf, size_t cap)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && len < cap; i++) {
		const Dwarf_Op *o = &ops[i];
		const char *sep = i ? "; " : "";
		char rb[16];
		int k;

		if (o->atom >= DW_OP_breg0 && o->atom <= DW_OP_breg31)
			k = snprintf(buf + len, cap - len, "%sDW_OP_breg%d (%s): %" PRId64, sep, o->atom - DW_OP_breg0,
				     reg_name(o->atom - DW_OP_breg0, rb), (int64_t)o->number);
		else if (o->atom == DW_OP_bregx)
			k = snprintf(buf + len, cap - len, "%sDW_OP_bregx %s %" PRId64, sep,
				     reg_name((int)o->number, rb), (int64_t)o->number2);
		else if (o->atom >= DW_OP_lit0 && o->atom <= DW_OP_lit31)
			k = snprintf(buf + len, cap - len, "%sDW_OP_lit%d", sep, o->atom - DW_OP_lit0);
		else if (o->atom == DW_OP_regx || (o->atom >= DW_OP_reg0 && o->atom <= DW_OP_reg31))
			k = snprintf(buf + len, cap - len, "%sin %s", sep,
				     reg_name(o->atom == DW_OP_regx ? (int)o->number : o->atom - DW_OP_reg0, rb));
		else if (o->atom == DW_OP_call_frame_cfa)
			k = snprintf(buf + len, cap - len, "%sDW_OP_call_frame_cfa", sep);
		else if (o->atom == DW_OP_plus_uconst)
			k = snprintf(buf + len, cap - len, "%sDW_OP_plus_uconst %" PRId64, sep, (int64_t)o->number);
		else if (o->atom == DW_OP_deref)
			k = snprintf(buf + len, cap - len, "%sDW_OP_deref", sep);
		else if (o->atom == DW_OP_and)
			k = snprintf(buf + len, cap - len, "%sDW_OP_and", sep);
		else if (o->atom == DW_OP_ge)
			k = snprintf(buf + len, cap - len, "%sDW_OP_ge", sep);
		else if (o->atom == DW_OP_shl)
			k = snprintf(buf + len, cap - len, "%sDW_OP_shl", sep);
		else if (o->atom == DW_OP_plus)
			k = snprintf(buf + len, cap - len, "%sDW_OP_plus", sep);
		else if (o->atom == DW_OP_minus)
			k = snprintf(buf + len, cap - len, "%sDW_OP_minus", sep);
		else if (o->atom == DW_OP_stack_value)
			k = snprintf(buf + len, cap - len, "%sDW_OP_stack_value", sep);
		else
			k = snprintf(buf + len, cap - len, "%sop %#x(%" PRIu64 ", %" PRIu64 ")", sep, o->atom,
				     (uint64_t)o->number, (uint64_t)o->number2);
		if (k < 0)
			break;
		len += (size_t)k;
	}
}

/* A symbolic value on the DWARF stack: base + off, or *(base + off). */
enum { V_CONST, V_CFA, V_REG, V_DEREF, V_BAD };
struct val {
	int kind;
	int reg; /* V_REG, V_DEREF: the register (V_DEREF of the CFA is V_BAD) */
	int64_t off;
};

/* Evaluates ops symbolically. *loc_reg is set (>= 0) when the result is "in register N"
 * (DW_OP_regN), *is_value when the expression ends with DW_OP_stack_value. */
static struct val eval_ops(const Dwarf_Op *ops, size_t n, int *loc_reg, bool *is_value)
{
	struct val st[8], bad = {V_BAD, 0, 0};
	size_t sp = 0;

	*loc_reg = -1;
	*is_value = false;
	for (size_t i = 0; i < n; i++) {
		const Dwarf_Op *o = &ops[i];
		unsigned a = o->atom;

		if (sp >= sizeof(st) / sizeof(st[0]) - 1)
			return bad;
		if (a == DW_OP_call_frame_cfa) {
			st[sp++] = (struct val){V_CFA, 0, 0};
		} else if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
			st[sp++] = (struct val){V_REG, (int)(a - DW_OP_breg0), (int64_t)o->number};
		} else if (a == DW_OP_bregx) {
			st[sp++] = (struct val){V_REG, (int)o->number, (int64_t)o->number2};
		} else if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
			st[sp++] = (struct val){V_CONST, 0, (int64_t)(a - DW_OP_lit0)};
		} else if (a == DW_OP_const1u || a == DW_OP_const2u || a == DW_OP_const4u || a == DW_OP_const8u ||
			   a == DW_OP_constu || a == DW_OP_const1s || a == DW_OP_const2s || a == DW_OP_const4s ||
			   a == DW_OP_const8s || a == DW_OP_consts) {
			st[sp++] = (struct val){V_CONST, 0, (int64_t)o->number};
		} else if ((a == DW_OP_regx || (a >= DW_OP_reg0 && a <= DW_OP_reg31)) && n == 1) {
			*loc_reg = a == DW_OP_regx ? (int)o->number : (int)(a - DW_OP_reg0);
			return bad;
		} else if (a == DW_OP_plus_uconst && sp >= 1 && st[sp - 1].kind != V_DEREF) {
			st[sp - 1].off += (int64_t)o->number;
		} else if ((a == DW_OP_plus || a == DW_OP_minus) && sp >= 2 && st[sp - 1].kind == V_CONST &&
			   st[sp - 2].kind != V_DEREF) {
			st[sp - 2].off += a == DW_OP_plus ? st[sp - 1].off : -st[sp - 1].off;
			sp--;
		} else if (a == DW_OP_plus && sp >= 2 && st[sp - 2].kind == V_CONST && st[sp - 1].kind != V_DEREF) {
			st[sp - 1].off += st[sp - 2].off;
			st[sp - 2] = st[sp - 1];
			sp--;
		} else if (a == DW_OP_deref && sp >= 1 && st[sp - 1].kind == V_REG) {
			st[sp - 1].kind = V_DEREF;
		} else if (a == DW_OP_stack_value && i == n - 1) {
			*is_value = true;
		} else {
			return bad;
		}
	}
	return sp ? st[sp - 1] : bad;
}

/* ld's PLT rule, "breg7 off; breg16 0; lit15; and; litT; ge; lit3; shl; plus". */
static bool match_plt(const Dwarf_Op *o, size_t n, struct rule *ret)
{
	if (n != 9 || o[0].atom != DW_OP_breg7 || o[1].atom != DW_OP_breg16 || o[1].number != 0 ||
	    o[2].atom != DW_OP_lit15 || o[3].atom != DW_OP_and || o[4].atom < DW_OP_lit0 ||
	    o[4].atom > DW_OP_lit31 || o[5].atom != DW_OP_ge || o[6].atom != DW_OP_lit3 || o[7].atom != DW_OP_shl ||
	    o[8].atom != DW_OP_plus)
		return false;
	ret->kind = HS_CFA_PLT;
	ret->reg = o[4].atom - DW_OP_lit0;
	ret->off = (int64_t)o[0].number;
	return true;
}

static bool fits(int64_t v, int64_t lo, int64_t hi)
{
	return v >= lo && v <= hi;
}

static void classify_cfa(Dwarf_Frame *fr, struct rule *ret)
{
	Dwarf_Op *ops = NULL;
	size_t n = 0;
	struct val v;
	int loc_reg;
	bool is_value;

	memset(ret, 0, sizeof(*ret));
	ret->kind = KIND_OTHER;
	if (dwarf_frame_cfa(fr, &ops, &n) != 0) {
		snprintf(ret->text, sizeof(ret->text), "error: %s", dwarf_errmsg(-1));
		return;
	}
	ops_text(ops, n, ret->text, sizeof(ret->text));
	if (n == 0) {
		snprintf(ret->text, sizeof(ret->text), "undefined");
		return;
	}
	if (match_plt(ops, n, ret)) {
		if (!fits(ret->off, INT32_MIN, INT32_MAX))
			ret->kind = KIND_OTHER;
		return;
	}
	v = eval_ops(ops, n, &loc_reg, &is_value);
	if (is_value || !fits(v.off, INT32_MIN, INT32_MAX))
		return;
	if (v.kind == V_REG || v.kind == V_DEREF) {
		ret->kind = v.kind == V_REG ? HS_CFA_REG : HS_CFA_DEREF;
		ret->reg = v.reg;
		ret->off = v.off;
	}
}

/* Returns 1 when the register is saved somewhere (or moved), 0 for same value, -1 undefined. */
static int classify_reg(Dwarf_Frame *fr, int regno, struct rule *ret)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t n = 0;
	struct val v;
	int loc_reg;
	bool is_value;
	char rb[16];

	memset(ret, 0, sizeof(*ret));
	ret->kind = KIND_OTHER;
	if (dwarf_frame_register(fr, regno, mem, &ops, &n) != 0) {
		snprintf(ret->text, sizeof(ret->text), "error: %s", dwarf_errmsg(-1));
		return 1;
	}
	if (n == 0) {
		ret->kind = ops ? HS_RULE_UNDEFINED : HS_RULE_SAME;
		snprintf(ret->text, sizeof(ret->text), "%s", ops ? "undefined" : "same value");
		return ops ? -1 : 0;
	}
	ops_text(ops, n, ret->text, sizeof(ret->text));
	v = eval_ops(ops, n, &loc_reg, &is_value);
	if (loc_reg >= 0) {
		snprintf(ret->text, sizeof(ret->text), "in %s", reg_name(loc_reg, rb));
		if (loc_reg == regno) {
			ret->kind = HS_RULE_SAME;
			return 0;
		}
		ret->kind = HS_RULE_REGISTER;
		ret->off = loc_reg;
		return 1;
	}
	if (!fits(v.off, INT16_MIN, INT16_MAX))
		return 1;
	if (v.kind == V_CFA) {
		ret->kind = is_value ? HS_RULE_VAL_CFA_OFF : HS_RULE_CFA_OFF;
		ret->off = v.off;
		snprintf(ret->text, sizeof(ret->text), "%s cfa%+" PRId64, is_value ? "is" : "at", v.off);
	} else if (v.kind == V_REG && v.reg == HS_DWARF_RSP && !is_value) {
		ret->kind = HS_RULE_RSP_OFF;
		ret->off = v.off;
		snprintf(ret->text, sizeof(ret->text), "at rsp%+" PRId64, v.off);
	} else if (v.kind == V_REG && v.reg == regno && v.off == 0 && is_value) {
		ret->kind = HS_RULE_SAME;
		return 0;
	}
	return 1;
}

/* False when libdw has no frame at addr. */
static bool ld_frame_at(Dwarf_CFI *cfi, uint64_t addr, struct ld_frame *ret, uint64_t *end)
{
	Dwarf_Frame *fr = NULL;
	Dwarf_Addr s = 0, e = 0;

	if (dwarf_cfi_addrframe(cfi, addr, &fr) != 0)
		return false;
	memset(ret, 0, sizeof(*ret));
	if (dwarf_frame_info(fr, &s, &e, &ret->signal) < 0)
		fail_msg("%#" PRIx64 ": dwarf_frame_info: %s", addr, dwarf_errmsg(-1));
	if (end)
		*end = e;
	classify_cfa(fr, &ret->cfa);
	ret->saved[HS_DWARF_RA] = classify_reg(fr, HS_DWARF_RA, &ret->ra);
	ret->saved[HS_DWARF_RBP] = classify_reg(fr, HS_DWARF_RBP, &ret->rbp);
	ret->saved[HS_DWARF_RSP] = classify_reg(fr, HS_DWARF_RSP, &ret->rsp);
	for (int reg = 0; reg < 16; reg++)
		if (reg != HS_DWARF_RBP && reg != HS_DWARF_RSP)
			ret->saved[reg] = classify_reg(fr, reg, &ret->regs[reg]);
	free(fr);
	if (ret->cfa.kind == HS_CFA_REG || ret->cfa.kind == HS_CFA_DEREF || ret->cfa.kind == HS_CFA_PLT) {
		char rb[16];

		if (ret->cfa.kind == HS_CFA_REG)
			snprintf(ret->cfa.text, sizeof(ret->cfa.text), "%s%+" PRId64, reg_name(ret->cfa.reg, rb),
				 ret->cfa.off);
		else if (ret->cfa.kind == HS_CFA_DEREF)
			snprintf(ret->cfa.text, sizeof(ret->cfa.text), "*(%s%+" PRId64 ")", reg_name(ret->cfa.reg, rb),
				 ret->cfa.off);
		else
			snprintf(ret->cfa.text, sizeof(ret->cfa.text), "plt(rsp%+" PRId64 ", >=%d)", ret->cfa.off,
				 ret->cfa.reg);
	}
	return true;
}

/* The caller's rsp is the CFA: libdw's rule for rsp is "the value CFA+0", or, in a signal
 * frame, "saved at rsp+k" where the CFA is *(rsp+k). */
static bool rsp_is_cfa(const struct ld_frame *f)
{
	if (f->rsp.kind == HS_RULE_VAL_CFA_OFF && f->rsp.off == 0)
		return true;
	return f->rsp.kind == HS_RULE_RSP_OFF && f->cfa.kind == HS_CFA_DEREF && f->cfa.reg == HS_DWARF_RSP &&
	       f->cfa.off == f->rsp.off;
}

/* ---- our row, described the same way ---- */

static void row_cfa_text(const struct hs_cfi_row *r, char *buf, size_t cap)
{
	char rb[16];

	switch (r->cfa_kind) {
	case HS_CFA_NONE: snprintf(buf, cap, "none"); break;
	case HS_CFA_REG: snprintf(buf, cap, "%s%+d", reg_name(r->cfa_reg, rb), r->cfa_off); break;
	case HS_CFA_DEREF: snprintf(buf, cap, "*(%s%+d)", reg_name(r->cfa_reg, rb), r->cfa_off); break;
	case HS_CFA_PLT: snprintf(buf, cap, "plt(rsp%+d, >=%d)", r->cfa_off, r->cfa_reg); break;
	case HS_CFA_UNSUPPORTED: snprintf(buf, cap, "unsupported"); break;
	default: snprintf(buf, cap, "kind %d?", r->cfa_kind); break;
	}
}

static void rule_text(int kind, int off, char *buf, size_t cap)
{
	switch (kind) {
	case HS_RULE_SAME: snprintf(buf, cap, "same value"); break;
	case HS_RULE_CFA_OFF: snprintf(buf, cap, "at cfa%+d", off); break;
	case HS_RULE_VAL_CFA_OFF: snprintf(buf, cap, "is cfa%+d", off); break;
	case HS_RULE_RSP_OFF: snprintf(buf, cap, "at rsp%+d", off); break;
	case HS_RULE_UNDEFINED: snprintf(buf, cap, "undefined"); break;
	case HS_RULE_UNSUPPORTED: snprintf(buf, cap, "unsupported"); break;
	case HS_RULE_REGISTER: snprintf(buf, cap, "in %s", reg_names[off & 15]); break;
	default: snprintf(buf, cap, "kind %d?", kind); break;
	}
}

/* Our rule for register reg (0-15 but rsp and rbp) in row r: the row's set of rules, or the
 * ABI's default where the set has none. */
static int our_reg_rule(const struct hs_cfi_table *t, const struct hs_cfi_row *r, int reg, int16_t *off)
{
	const struct hs_cfi_regs *e;

	assert_true(r->regs < t->nregs);
	e = &t->regs[r->regs];
	*off = 0;
	if (!(e->mask >> reg & 1))
		return HS_CFI_CALLEE_SAVED >> reg & 1 ? HS_RULE_SAME : HS_RULE_UNDEFINED;
	*off = e->off[reg];
	return e->kind[reg];
}

static void row_text(const struct hs_cfi_table *t, const struct hs_cfi_row *r, char *buf, size_t cap)
{
	char cfa[48], ra[32], rbp[32], regs[400] = "";
	size_t len = 0;

	if (!r) {
		snprintf(buf, cap, "no row");
		return;
	}
	row_cfa_text(r, cfa, sizeof(cfa));
	rule_text(r->ra_kind, r->ra_off, ra, sizeof(ra));
	rule_text(r->rbp_kind, r->rbp_off, rbp, sizeof(rbp));
	for (int reg = 0; reg < 16 && len < sizeof(regs); reg++) {
		char rt[32];
		int16_t off = 0;

		if (reg == HS_DWARF_RBP || reg == HS_DWARF_RSP || !(t->regs[r->regs].mask >> reg & 1))
			continue;
		int kind = our_reg_rule(t, r, reg, &off);

		rule_text(kind, off, rt, sizeof(rt));
		len += (size_t)snprintf(regs + len, sizeof(regs) - len, ", %s %s", reg_names[reg], rt);
	}
	snprintf(buf, cap, "cfa %s, ra %s, rbp %s%s%s", cfa, ra, rbp, regs, r->flags & HS_CFI_SIGNAL ? ", signal" : "");
}

static void ld_text(const struct ld_frame *f, char *buf, size_t cap)
{
	char regs[600] = "";
	size_t len = 0;

	for (int reg = 0; reg < 16 && len < sizeof(regs); reg++)
		if (reg != HS_DWARF_RBP && reg != HS_DWARF_RSP && f->saved[reg] > 0)
			len += (size_t)snprintf(regs + len, sizeof(regs) - len, ", %s %s", reg_names[reg],
						f->regs[reg].text);
	snprintf(buf, cap, "cfa %s, ra %s, rbp %s, rsp %s%s%s", f->cfa.text, f->ra.text, f->rbp.text, f->rsp.text, regs,
		 f->signal ? ", signal" : "");
}

/* ---- the comparison ---- */

#define MAX_REPORTED 20
#define ROW_UNSUPPORTED 1 /* listed among the unsupported rows */
#define ROW_FAILED 2      /* its failure printed */

struct diff {
	const char *name;
	struct cfi_file *f;
	uint64_t compared, agree, unsupported, libdw_none, both_none;
	uint64_t fdes, fde_rows, failures;
	uint64_t unsupported_rows; /* distinct rows */
	uint64_t failures_shown;   /* distinct rows (or addresses without a row) */
	uint8_t *row_reported;     /* per row of our table: ROW_* */
	char **unsup_lines;
	size_t n_unsup_lines;
};

static void diff_fail(struct diff *d, uint64_t addr, const char *what, const struct hs_cfi_row *row,
		      const struct ld_frame *ld)
{
	char ours[600], theirs[1200];

	d->failures++;
	if (row) {
		size_t i = (size_t)(row - d->f->t->rows);

		if (d->row_reported[i] & ROW_FAILED)
			return; /* the same row at another address */
		d->row_reported[i] |= ROW_FAILED;
	}
	if (++d->failures_shown > MAX_REPORTED)
		return;
	row_text(d->f->t, row, ours, sizeof(ours));
	if (ld)
		ld_text(ld, theirs, sizeof(theirs));
	else
		snprintf(theirs, sizeof(theirs), "no frame (%s)", dwarf_errmsg(-1));
	print_message("%s %#" PRIx64 ": %s\n    ours:  %s\n    libdw: %s\n", d->name, addr, what, ours, theirs);
}

static void note_unsupported(struct diff *d, uint64_t addr, const struct hs_cfi_row *row, const struct ld_frame *ld)
{
	size_t i = (size_t)(row - d->f->t->rows);
	char ours[600], theirs[1200], line[1900];

	d->unsupported++;
	if (d->row_reported[i] & ROW_UNSUPPORTED)
		return;
	d->row_reported[i] |= ROW_UNSUPPORTED;
	d->unsupported_rows++;
	row_text(d->f->t, row, ours, sizeof(ours));
	ld_text(ld, theirs, sizeof(theirs));
	snprintf(line, sizeof(line), "  %#" PRIx64 ": ours: %s\n      libdw: %s\n", addr, ours, theirs);
	d->unsup_lines = realloc(d->unsup_lines, (d->n_unsup_lines + 1) * sizeof(*d->unsup_lines));
	assert_non_null(d->unsup_lines);
	d->unsup_lines[d->n_unsup_lines] = strdup(line);
	assert_non_null(d->unsup_lines[d->n_unsup_lines]);
	d->n_unsup_lines++;
}

static bool same_rule(int kind, int off, const struct rule *ld)
{
	if (kind != ld->kind)
		return false;
	return kind == HS_RULE_SAME || kind == HS_RULE_UNDEFINED || off == ld->off;
}

/* Compares our row at addr with libdw's frame there. */
static void check_addr(struct diff *d, uint64_t addr)
{
	const struct hs_cfi_row *row = hs_cfi_table_find(d->f->t, addr);
	bool ours = row && row->cfa_kind != HS_CFA_NONE;
	struct ld_frame ld;
	bool unsup = false, bad = false;
	char what[200] = "";

	if (!ld_frame_at(d->f->cfi, addr, &ld, NULL)) {
		if (ours)
			d->libdw_none++;
		else
			d->both_none++;
		return;
	}
	d->compared++;
	if (!ours) {
		diff_fail(d, addr, "libdw has CFI here, our table none", row, &ld);
		return;
	}
	if (!!(row->flags & HS_CFI_SIGNAL) != ld.signal) {
		diff_fail(d, addr, "signal-frame flag differs", row, &ld);
		return;
	}
	if (row->cfa_kind == HS_CFA_UNSUPPORTED) {
		note_unsupported(d, addr, row, &ld);
		return;
	}
	if (ld.cfa.kind == KIND_OTHER || row->cfa_kind != ld.cfa.kind || row->cfa_reg != ld.cfa.reg ||
	    row->cfa_off != ld.cfa.off) {
		bad = true;
		snprintf(what, sizeof(what), "CFA differs");
	} else if (!rsp_is_cfa(&ld) && row->ra_kind != HS_RULE_UNSUPPORTED) {
		bad = true;
		snprintf(what, sizeof(what), "the caller's rsp is not the CFA, yet the row is not unsupported");
	}
	if (row->ra_kind == HS_RULE_UNSUPPORTED) {
		unsup = true;
	} else if (!bad && !same_rule(row->ra_kind, row->ra_off, &ld.ra)) {
		bad = true;
		snprintf(what, sizeof(what), "return address differs");
	}
	if (row->rbp_kind == HS_RULE_UNSUPPORTED) {
		unsup = true;
	} else if (!bad && !same_rule(row->rbp_kind, row->rbp_off, &ld.rbp)) {
		bad = true;
		snprintf(what, sizeof(what), "rbp differs");
	}
	/* every other register: saved where libdw says, with the same value kept or lost; libdw
	 * applies the ABI's rules (callee-saved registers keep their value, the others have none)
	 * where the CFI says nothing, as the unwinder does where a row's set of rules has none */
	for (int reg = 0; reg < 16 && !bad; reg++) {
		int16_t off = 0;
		int kind;

		if (reg == HS_DWARF_RBP || reg == HS_DWARF_RSP)
			continue;
		kind = our_reg_rule(d->f->t, row, reg, &off);
		/* elfutils' x86_64_abi_cfi (0.188 and later) gives its same-value rule for rbx to
		 * register 0, rax: where the CFI says nothing of them, libdw keeps rax and loses rbx,
		 * which the psABI has the other way round */
		if (!(d->f->t->regs[row->regs].mask >> reg & 1) &&
		    ((reg == 0 && ld.regs[reg].kind == HS_RULE_SAME) ||
		     (reg == 3 && ld.regs[reg].kind == HS_RULE_UNDEFINED)))
			continue;
		if (kind == HS_RULE_UNSUPPORTED) {
			unsup = true;
		} else if (!same_rule(kind, off, &ld.regs[reg])) {
			bad = true;
			snprintf(what, sizeof(what), "the rule of %s differs", reg_names[reg]);
		}
	}
	if (bad)
		diff_fail(d, addr, what, row, &ld);
	else if (unsup)
		note_unsupported(d, addr, row, &ld);
	else
		d->agree++;
}

/* Reads a DW_EH_PE-encoded pointer at *p; false for encodings x86-64 files do not use. */
static bool read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t field_vaddr, bool apply,
			 uint64_t *ret)
{
	const uint8_t *q = *p;
	uint64_t v = 0;
	size_t size;

	if (enc == DW_EH_PE_omit)
		return false;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: case DW_EH_PE_udata8: case DW_EH_PE_sdata8: size = 8; break;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: size = 4; break;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: size = 2; break;
	default: return false;
	}
	if ((size_t)(end - q) < size)
		return false;
	for (size_t i = 0; i < size; i++)
		v |= (uint64_t)q[i] << (8 * i);
	if ((enc & 0x08) && size < 8 && (v >> (8 * size - 1)) & 1)
		v |= ~0ull << (8 * size);
	*p = q + size;
	if (apply) {
		switch (enc & 0x70) {
		case DW_EH_PE_absptr: break;
		case DW_EH_PE_pcrel: v += field_vaddr; break;
		default: return false;
		}
	}
	*ret = v;
	return true;
}

/* The FDE pointer encoding of a CIE, from its augmentation ("zR", "zPLR", "zRS" ...). */
static uint8_t cie_fde_encoding(const Dwarf_CIE *cie)
{
	const uint8_t *p = cie->augmentation_data, *end = p + cie->augmentation_data_size;
	const char *a = cie->augmentation;
	uint64_t dummy;

	if (a[0] != 'z')
		return DW_EH_PE_absptr;
	for (a++; *a && p < end; a++) {
		if (*a == 'R')
			return *p;
		if (*a == 'L')
			p++;
		else if (*a == 'P') {
			uint8_t enc = *p++;

			if (!read_encoded(&p, end, enc & 0x7f, 0, false, &dummy))
				return DW_EH_PE_omit;
		} else if (*a != 'S' && *a != 'B')
			return DW_EH_PE_omit;
	}
	return DW_EH_PE_absptr;
}

/* Every FDE of .eh_frame as libdw's dwarf_next_cfi lists it: compared at its start and at the
 * start and last byte of every row libdw computes for it. */
static void check_fdes(struct diff *d)
{
	Elf *elf = d->f->elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	Elf_Data *data = NULL;
	const unsigned char *ident;
	Dwarf_Off off = 0, next;
	Dwarf_Off cie_off = (Dwarf_Off)-1;
	uint8_t fde_enc = DW_EH_PE_omit;

	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".eh_frame") && sh.sh_type == SHT_PROGBITS) {
			data = elf_getdata(scn, NULL);
			break;
		}
	}
	if (!data) {
		print_message("%s: no .eh_frame section: FDE walk skipped\n", d->name);
		return;
	}
	ident = (const unsigned char *)elf_getident(elf, NULL);
	for (;; off = next) {
		Dwarf_CFI_Entry e;
		const uint8_t *p, *end;
		uint64_t start, range, a, fde_vaddr;
		int rc = dwarf_next_cfi(ident, data, true, off, &next, &e);

		if (rc > 0)
			break;
		if (rc < 0) {
			if (next == (Dwarf_Off)-1 || next <= off)
				break;
			continue;
		}
		if (dwarf_cfi_cie_p(&e))
			continue;
		if (e.fde.CIE_pointer != cie_off) {
			Dwarf_CFI_Entry c;
			Dwarf_Off cnext;

			cie_off = e.fde.CIE_pointer;
			fde_enc = DW_EH_PE_omit;
			if (dwarf_next_cfi(ident, data, true, cie_off, &cnext, &c) == 0 && dwarf_cfi_cie_p(&c))
				fde_enc = cie_fde_encoding(&c.cie);
		}
		p = e.fde.start;
		end = e.fde.end;
		fde_vaddr = sh.sh_addr + (uint64_t)(p - (const uint8_t *)data->d_buf);
		if (!read_encoded(&p, end, fde_enc, fde_vaddr, true, &start) ||
		    !read_encoded(&p, end, fde_enc & 0x0f, 0, false, &range)) {
			print_message("%s: FDE at .eh_frame+%#" PRIx64 ": cannot decode its range\n", d->name,
				      (uint64_t)off);
			continue;
		}
		if (range == 0)
			continue;
		d->fdes++;
		for (a = start; a < start + range;) {
			struct ld_frame ld;
			uint64_t row_end = 0;

			check_addr(d, a);
			if (!ld_frame_at(d->f->cfi, a, &ld, &row_end) || row_end <= a)
				break;
			d->fde_rows++;
			if (row_end - 1 > a)
				check_addr(d, row_end - 1);
			a = row_end;
		}
	}
}

/* Every row of our table: its first byte, a byte inside, its last byte; and hs_cfi_table_find
 * returns that row for each. */
static void check_rows(struct diff *d)
{
	const struct hs_cfi_table *t = d->f->t;

	for (size_t i = 0; i < t->n; i++) {
		const struct hs_cfi_row *r = &t->rows[i];
		uint64_t start = t->base + r->pc, last;

		if (i + 1 < t->n && t->rows[i + 1].pc < r->pc)
			fail_msg("%s: rows %zu and %zu out of order (pc %#x, %#x)", d->name, i, i + 1, r->pc,
				 t->rows[i + 1].pc);
		if (i + 1 < t->n && t->rows[i + 1].pc == r->pc)
			continue;
		if (hs_cfi_table_find(t, start) != r)
			fail_msg("%s: hs_cfi_table_find(%#" PRIx64 ") is not row %zu", d->name, start, i);
		if (r->cfa_kind == HS_CFA_NONE)
			continue; /* a gap: whatever libdw has there, the FDE walk finds */
		check_addr(d, start);
		if (i + 1 == t->n)
			continue; /* the last row's end is not known */
		last = t->base + t->rows[i + 1].pc - 1;
		if (hs_cfi_table_find(t, last) != r)
			fail_msg("%s: hs_cfi_table_find(%#" PRIx64 ") is not row %zu", d->name, last, i);
		if (last > start + 1)
			check_addr(d, start + (last - start) / 2);
		if (last > start)
			check_addr(d, last);
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The differential test of one file. Returns the number of failures; a file that is not there
 * fails the test when required, and skips it when not. */
static uint64_t diff_file(const char *path, bool required)
{
	struct cfi_file f;
	struct diff d = {0};
	const char *slash = strrchr(path, '/');
	double t0 = now(), t1;

	if (!cfi_file_open(&f, path)) {
		if (required)
			fail_msg("cannot open '%s': %s", path, strerror(errno));
		hs_test_skip("cannot open '%s': %s", path, strerror(errno));
	}
	t1 = now();
	d.name = slash ? slash + 1 : path;
	d.f = &f;
	d.row_reported = calloc(f.t->n + 1, 1);
	assert_non_null(d.row_reported);
	check_rows(&d);
	check_fdes(&d);

	print_message("%s: %" PRIu64 " addresses compared, %" PRIu64 " agree, %" PRIu64 " unsupported (%" PRIu64
		      " rows), %" PRIu64 " where libdw has no frame, %" PRIu64 " failures (%" PRIu64 " rows)\n",
		      path, d.compared, d.agree, d.unsupported, d.unsupported_rows, d.libdw_none, d.failures,
		      d.failures_shown);
	print_message("    table: %zu rows (%zu bytes), %u CIEs, %u FDEs, %u unsupported rows, %u bad entries%s%s; "
		      "libdw: %" PRIu64 " FDEs, %" PRIu64 " rows; build %.2fs, compare %.2fs\n",
		      f.t->n, hs_cfi_table_bytes(f.t), f.t->stats.cies, f.t->stats.fdes, f.t->stats.unsupported,
		      f.t->stats.bad_entries, f.t->stats.from_eh_frame_hdr ? ", via .eh_frame_hdr" : "",
		      f.t->stats.from_debug_frame ? ", from .debug_frame" : "", d.fdes, d.fde_rows, t1 - t0,
		      now() - t1);
	if (d.failures_shown > MAX_REPORTED)
		print_message("    (%" PRIu64 " more rows with failures not shown)\n", d.failures_shown - MAX_REPORTED);
	if (d.n_unsup_lines)
		print_message("  unsupported rows of %s:\n", d.name);
	for (size_t i = 0; i < d.n_unsup_lines; i++) {
		print_message("%s", d.unsup_lines[i]);
		free(d.unsup_lines[i]);
	}
	free(d.unsup_lines);
	free(d.row_reported);
	if (d.compared == 0)
		fail_msg("%s: nothing compared", path);
	cfi_file_close(&f);
	return d.failures;
}

/* The real path of a system library, from the directories a Debian x86-64 system uses. */
static const char *system_lib(const char *name, char *buf, size_t cap)
{
	static const char *const dirs[] = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char p[512];

		snprintf(p, sizeof(p), "%s/%s", dirs[i], name);
		if (realpath(p, buf))
			return buf;
	}
	snprintf(buf, cap, "/lib/x86_64-linux-gnu/%s", name);
	return buf;
}

static void test_diff_libc(void **state)
{
	char p[4096];

	assert_int_equal(diff_file(system_lib("libc.so.6", p, sizeof(p)), true), 0);
}

static void test_diff_libstdcxx(void **state)
{
	char p[4096];

	assert_int_equal(diff_file(system_lib("libstdc++.so.6", p, sizeof(p)), false), 0);
}

static void test_diff_libm(void **state)
{
	char p[4096];

	assert_int_equal(diff_file(system_lib("libm.so.6", p, sizeof(p)), false), 0);
}

static void test_diff_ld_so(void **state)
{
	char p[4096];

	assert_int_equal(diff_file(system_lib("ld-linux-x86-64.so.2", p, sizeof(p)), false), 0);
}

static void test_diff_hotstack(void **state)
{
	assert_int_equal(diff_file(BUILDDIR "/hotstack", false), 0);
}

/* This executable: the fixtures below, and whatever the toolchain put in (.plt, crt files). */
static void test_diff_self(void **state)
{
	char p[4096];

	assert_non_null(realpath("/proc/self/exe", p));
	assert_int_equal(diff_file(p, true), 0);
}

/* ---- hand-written CFI: tests/fixtures/cfi/cfi-cases.s ---- */

extern const char hs_cfi_fx_expr[], hs_cfi_fx_expr_unknown[], hs_cfi_fx_expr_back[];
extern const char hs_cfi_fx_reg[], hs_cfi_fx_reg_ra[], hs_cfi_fx_reg_rbp[], hs_cfi_fx_reg_back[];
extern const char hs_cfi_fx_state[], hs_cfi_fx_state_body[], hs_cfi_fx_state_ret1[], hs_cfi_fx_state_mid[],
	hs_cfi_fx_state_ret2[], hs_cfi_fx_state_inner[], hs_cfi_fx_state_outer[], hs_cfi_fx_state_end[];
extern const char hs_cfi_fx_signal[], hs_cfi_fx_signal_body[];
extern const char hs_cfi_fx_plt[], hs_cfi_fx_plt_a[], hs_cfi_fx_plt_b[], hs_cfi_fx_plt_shl4[], hs_cfi_fx_plt_rip4[];
extern const char hs_cfi_fx_deref[], hs_cfi_fx_deref_a[], hs_cfi_fx_deref_rbp[], hs_cfi_fx_deref_plus[];
extern const char hs_cfi_fx_misc[], hs_cfi_fx_misc_undef[], hs_cfi_fx_misc_val[], hs_cfi_fx_misc_saved[],
	hs_cfi_fx_misc_restored[], hs_cfi_fx_misc_far[], hs_cfi_fx_misc_huge[], hs_cfi_fx_misc_rsp[];
extern const char hs_cfi_fx_regs[], hs_cfi_fx_regs_rbx[], hs_cfi_fx_regs_cfa_rbx[], hs_cfi_fx_regs_other[],
	hs_cfi_fx_regs_expr[];

static int bias_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	*(uint64_t *)data = info->dlpi_addr;
	return 1; /* the first object is the executable */
}

struct self {
	struct cfi_file f;
	uint64_t bias; /* runtime address - ELF virtual address */
};

static int self_setup(void **state)
{
	struct self *s = calloc(1, sizeof(*s));

	if (!s || !cfi_file_open(&s->f, "/proc/self/exe"))
		return -1;
	dl_iterate_phdr(bias_cb, &s->bias);
	*state = s;
	return 0;
}

static int self_teardown(void **state)
{
	struct self *s = *state;

	if (s)
		cfi_file_close(&s->f);
	free(s);
	return 0;
}

/* Our row at a fixture label; the label's own row must start there. */
static const struct hs_cfi_row *row_at(void **state, const char *label, const void *addr)
{
	struct self *s = *state;
	uint64_t vaddr = (uint64_t)(uintptr_t)addr - s->bias;
	const struct hs_cfi_row *r = hs_cfi_table_find(s->f.t, vaddr);
	char text[600];

	if (!r)
		fail_msg("%s (%#" PRIx64 "): no row", label, vaddr);
	row_text(s->f.t, r, text, sizeof(text));
	print_message("  %-26s %#" PRIx64 ": %s\n", label, vaddr, text);
	return r;
}

#define ROW(label) row_at(state, #label, label)

static void assert_cfa(const struct hs_cfi_row *r, int kind, int reg, int32_t off)
{
	assert_int_equal(r->cfa_kind, kind);
	assert_int_equal(r->cfa_reg, reg);
	assert_int_equal(r->cfa_off, off);
}

static void assert_rule(int kind, int16_t off, int want_kind, int16_t want_off)
{
	assert_int_equal(kind, want_kind);
	if (want_kind != HS_RULE_SAME && want_kind != HS_RULE_UNDEFINED && want_kind != HS_RULE_UNSUPPORTED)
		assert_int_equal(off, want_off);
}

static void assert_ra(const struct hs_cfi_row *r, int kind, int16_t off)
{
	assert_rule(r->ra_kind, r->ra_off, kind, off);
}

static void assert_rbp(const struct hs_cfi_row *r, int kind, int16_t off)
{
	assert_rule(r->rbp_kind, r->rbp_off, kind, off);
}

/* Register reg's rule in row r (the ABI's default where the row's set has none). */
static void assert_reg(void **state, const struct hs_cfi_row *r, int reg, int kind, int16_t off)
{
	struct self *s = *state;
	int16_t got_off;
	int got = our_reg_rule(s->f.t, r, reg, &got_off);

	assert_rule(got, got_off, kind, off);
}

/* The registers of 0-15 (but rsp and rbp) whose rule is not the ABI's default. */
static unsigned int saved_mask(void **state, const struct hs_cfi_row *r)
{
	struct self *s = *state;

	return s->f.t->regs[r->regs].mask;
}

/* An expression CFA we do not know: an explicit unsupported row, and the next rule is plain. */
static void test_fixture_expr(void **state)
{
	const struct hs_cfi_row *r = ROW(hs_cfi_fx_expr);

	assert_cfa(r, HS_CFA_REG, HS_DWARF_RSP, 8);
	assert_ra(r, HS_RULE_CFA_OFF, -8);
	assert_int_equal(ROW(hs_cfi_fx_expr_unknown)->cfa_kind, HS_CFA_UNSUPPORTED);
	r = ROW(hs_cfi_fx_expr_back);
	assert_cfa(r, HS_CFA_REG, HS_DWARF_RSP, 8);
	assert_ra(r, HS_RULE_CFA_OFF, -8);
}

/* DW_CFA_register for the return address, then for rbp. */
static void test_fixture_register(void **state)
{
	const struct hs_cfi_row *r = ROW(hs_cfi_fx_reg_ra);

	assert_ra(r, HS_RULE_UNSUPPORTED, 0);
	r = ROW(hs_cfi_fx_reg_rbp);
	assert_cfa(r, HS_CFA_REG, HS_DWARF_RSP, 8);
	assert_ra(r, HS_RULE_CFA_OFF, -8);
	assert_rbp(r, HS_RULE_UNSUPPORTED, 0);
	r = ROW(hs_cfi_fx_reg_back);
	assert_ra(r, HS_RULE_CFA_OFF, -8);
	assert_rbp(r, HS_RULE_SAME, 0);
}

/* remember_state/restore_state, nested. */
static void test_fixture_state(void **state)
{
	const struct hs_cfi_row *body = ROW(hs_cfi_fx_state_body), *r;
	const unsigned int rbx = 1u << 3;

	assert_cfa(body, HS_CFA_REG, HS_DWARF_RBP, 16);
	assert_ra(body, HS_RULE_CFA_OFF, -8);
	assert_rbp(body, HS_RULE_CFA_OFF, -16);
	assert_int_equal(saved_mask(state, body), rbx);
	assert_reg(state, body, 3, HS_RULE_CFA_OFF, -24);

	r = ROW(hs_cfi_fx_state_ret1);
	assert_cfa(r, HS_CFA_REG, HS_DWARF_RSP, 8);
	assert_rbp(r, HS_RULE_SAME, 0);
	assert_int_equal(saved_mask(state, r), 0);

	/* restored after the first return: as in the body */
	r = ROW(hs_cfi_fx_state_mid);
	assert_cfa(r, HS_CFA_REG, HS_DWARF_RBP, 16);
	assert_rbp(r, HS_RULE_CFA_OFF, -16);
	assert_int_equal(saved_mask(state, r), rbx);

	r = ROW(hs_cfi_fx_state_ret2);
	assert_cfa(r, HS_CFA_REG, HS_DWARF_RSP, 8);
	assert_rbp(r, HS_RULE_SAME, 0);
	assert_int_equal(saved_mask(state, r), 0);

	/* the inner state: rbx popped, the frame still there */
	r = ROW(hs_cfi_fx_state_inner);
	assert_cfa(r, HS_CFA_REG, HS_DWARF_RBP, 16);
	assert_rbp(r, HS_RULE_CFA_OFF, -16);
	assert_int_equal(saved_mask(state, r), 0);

	/* the outer state: rbx saved again */
	r = ROW(hs_cfi_fx_state_outer);
	assert_cfa(r, HS_CFA_REG, HS_DWARF_RBP, 16);
	assert_rbp(r, HS_RULE_CFA_OFF, -16);
	assert_int_equal(saved_mask(state, r), rbx);

	r = ROW(hs_cfi_fx_state_end);
	assert_cfa(r, HS_CFA_REG, HS_DWARF_RSP, 8);
}

/* A signal frame ("zRS") as glibc's __restore_rt writes it. */
static void test_fixture_signal(void **state)
{
	const struct hs_cfi_row *r = ROW(hs_cfi_fx_signal);

	assert_true(r->flags & HS_CFI_SIGNAL);
	assert_cfa(r, HS_CFA_DEREF, HS_DWARF_RSP, 160);
	assert_ra(r, HS_RULE_RSP_OFF, 168);
	assert_rbp(r, HS_RULE_RSP_OFF, 120);
	assert_int_equal(saved_mask(state, r), 1u << 3);
	assert_reg(state, r, 3, HS_RULE_RSP_OFF, 128);
	assert_true(ROW(hs_cfi_fx_signal_body)->flags & HS_CFI_SIGNAL);
	/* the signal flag belongs to the CIE of that FDE only */
	assert_false(ROW(hs_cfi_fx_plt)->flags & HS_CFI_SIGNAL);
	assert_false(ROW(hs_cfi_fx_state)->flags & HS_CFI_SIGNAL);
}

/* ld's PLT expression, with its offset and threshold, and two expressions that look like it. */
static void test_fixture_plt(void **state)
{
	const struct hs_cfi_row *r = ROW(hs_cfi_fx_plt);

	assert_cfa(r, HS_CFA_REG, HS_DWARF_RSP, 16);
	r = ROW(hs_cfi_fx_plt_a);
	assert_cfa(r, HS_CFA_PLT, 11, 8);
	assert_ra(r, HS_RULE_CFA_OFF, -8);
	assert_cfa(ROW(hs_cfi_fx_plt_b), HS_CFA_PLT, 10, 16);
	assert_int_equal(ROW(hs_cfi_fx_plt_shl4)->cfa_kind, HS_CFA_UNSUPPORTED);
	assert_int_equal(ROW(hs_cfi_fx_plt_rip4)->cfa_kind, HS_CFA_UNSUPPORTED);
}

/* GCC's stack realignment: CFA = *(rbp-8), rbp saved at rbp+0 (no row kind); a deref plus. */
static void test_fixture_deref(void **state)
{
	const struct hs_cfi_row *r = ROW(hs_cfi_fx_deref_a);

	assert_cfa(r, HS_CFA_DEREF, HS_DWARF_RBP, -8);
	assert_ra(r, HS_RULE_CFA_OFF, -8);
	assert_rbp(r, HS_RULE_SAME, 0);
	r = ROW(hs_cfi_fx_deref_rbp);
	assert_cfa(r, HS_CFA_DEREF, HS_DWARF_RBP, -8);
	assert_rbp(r, HS_RULE_UNSUPPORTED, 0);
	assert_int_equal(ROW(hs_cfi_fx_deref_plus)->cfa_kind, HS_CFA_UNSUPPORTED);
}

/* Undefined return address, val_offset, clobbered registers, offsets over a row's fields. */
static void test_fixture_misc(void **state)
{
	const struct hs_cfi_row *r = ROW(hs_cfi_fx_misc_undef);

	assert_cfa(r, HS_CFA_REG, HS_DWARF_RSP, 8);
	assert_ra(r, HS_RULE_UNDEFINED, 0);

	r = ROW(hs_cfi_fx_misc_val);
	assert_cfa(r, HS_CFA_REG, HS_DWARF_RSP, 48);
	assert_ra(r, HS_RULE_CFA_OFF, -8);
	assert_rbp(r, HS_RULE_VAL_CFA_OFF, -16);
	assert_int_equal(saved_mask(state, r), 0);

	r = ROW(hs_cfi_fx_misc_saved);
	assert_rbp(r, HS_RULE_CFA_OFF, -16);
	assert_int_equal(saved_mask(state, r), (1u << 3) | (1u << 12) | (1u << 15));
	assert_reg(state, r, 3, HS_RULE_CFA_OFF, -24);
	assert_reg(state, r, 12, HS_RULE_CFA_OFF, -32);
	assert_reg(state, r, 15, HS_RULE_CFA_OFF, -40);
	assert_reg(state, r, 13, HS_RULE_SAME, 0);
	assert_reg(state, r, 0, HS_RULE_UNDEFINED, 0);

	r = ROW(hs_cfi_fx_misc_restored);
	assert_int_equal(saved_mask(state, r), 1u << 12);

	/* rbp at cfa-40000 does not fit the row's int16: unsupported, not truncated */
	r = ROW(hs_cfi_fx_misc_far);
	assert_cfa(r, HS_CFA_REG, HS_DWARF_RSP, 40016);
	assert_rbp(r, HS_RULE_UNSUPPORTED, 0);

	/* a CFA offset over int32 */
	assert_int_equal(ROW(hs_cfi_fx_misc_huge)->cfa_kind, HS_CFA_UNSUPPORTED);
}

/* The other registers' rules: each as written, and the ABI's default for the rest. */
static void test_fixture_regs(void **state)
{
	const struct hs_cfi_row *r = ROW(hs_cfi_fx_regs_rbx);

	assert_cfa(r, HS_CFA_REG, HS_DWARF_RSP, 16);
	assert_reg(state, r, 3, HS_RULE_CFA_OFF, -16);
	assert_int_equal(saved_mask(state, r), 1u << 3);
	/* the CFA on rbx, which the frame saved: the caller's rbx comes from its slot */
	r = ROW(hs_cfi_fx_regs_cfa_rbx);
	assert_cfa(r, HS_CFA_REG, 3, 16);
	assert_reg(state, r, 3, HS_RULE_CFA_OFF, -16);
	r = ROW(hs_cfi_fx_regs_other);
	assert_reg(state, r, 3, HS_RULE_CFA_OFF, -16);
	assert_reg(state, r, 12, HS_RULE_REGISTER, 0);
	assert_reg(state, r, 13, HS_RULE_VAL_CFA_OFF, -8);
	assert_reg(state, r, 14, HS_RULE_UNDEFINED, 0);
	assert_reg(state, r, 1, HS_RULE_SAME, 0);
	assert_reg(state, r, 10, HS_RULE_CFA_OFF, -24);
	assert_reg(state, r, 15, HS_RULE_SAME, 0);
	assert_reg(state, r, 11, HS_RULE_UNDEFINED, 0);
	assert_int_equal(saved_mask(state, r), (1u << 1) | (1u << 3) | (1u << 10) | (7u << 12));
	/* rows with the same rules share one set */
	assert_int_equal(ROW(hs_cfi_fx_regs_cfa_rbx)->regs, ROW(hs_cfi_fx_regs_rbx)->regs);
	/* an rbp-relative slot: unsupported, the rest of the set unchanged */
	r = ROW(hs_cfi_fx_regs_expr);
	assert_reg(state, r, 15, HS_RULE_UNSUPPORTED, 0);
	assert_reg(state, r, 12, HS_RULE_REGISTER, 0);
	assert_reg(state, r, 10, HS_RULE_CFA_OFF, -24);
}

/* CFA = rdi+0 but the caller's rsp is in r8 (as in glibc's __longjmp, where the return address
 * is in a register too; glibc's setcontext saves rsp at cfa+160 with a plain return address):
 * the table takes the CFA for the caller's rsp, so such a row must be unsupported. */
static void test_fixture_rsp_not_cfa(void **state)
{
	const struct hs_cfi_row *r = ROW(hs_cfi_fx_misc_rsp);

	assert_true(r->cfa_kind == HS_CFA_UNSUPPORTED || r->ra_kind == HS_RULE_UNSUPPORTED);
}

/* Compiled from nothing: an ELF without CFI gives an empty table. */
/* Operands whose scaling by the data alignment factor (-8) overflows 64 bits, as a hostile file
 * has them (found by fuzzing): the rows they make are unsupported, never wrapped into a small
 * wrong offset. */
static void test_overflowing_operands(void **state)
{
	/* CIE: "zR", code align 1, data align -8, RA r16, pcrel sdata4; CFA rsp+8, RA at CFA-8 */
	static const uint8_t cie[] = {20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1, 0, 0};
	/* FDE over 32 bytes of code at 0x10000: at +4, DW_CFA_def_cfa_sf rsp with a factored
	 * offset of 2^62 (sleb); at +8, DW_CFA_offset_extended rbp with 2^63 (uleb); at +12,
	 * DW_CFA_def_cfa_sf rsp, -2^62 */
	uint8_t fde[] = {44, 0, 0, 0, 28, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0, 0, 0,
			 0x44, 0x12, 7, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0xc0, 0x00,
			 0x44, 0x05, 6, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01,
			 0x44, 0x12, 7, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 0, 0, 0};
	uint8_t eh[sizeof(cie) + sizeof(fde) + 4];
	int32_t begin = -(int32_t)(32 + sizeof(cie) + 8);
	struct hs_cfi_table *t;
	struct hs_error err = {0};
	const struct hs_cfi_row *row;

	(void)state;
	fde[0] = (uint8_t)(sizeof(fde) - 4);
	fde[4] = (uint8_t)(sizeof(cie) + 4);
	memcpy(fde + 8, &begin, 4);
	memcpy(eh, cie, sizeof(cie));
	memcpy(eh + sizeof(cie), fde, sizeof(fde));
	memset(eh + sizeof(cie) + sizeof(fde), 0, 4);
	assert_int_equal(hs_cfi_table_build_eh_frame(eh, sizeof(eh), 0x10020, NULL, 0, 0, &t, &err), 0);
	row = hs_cfi_table_find(t, 0x10000);
	assert_non_null(row);
	assert_int_equal(row->cfa_kind, HS_CFA_REG);
	assert_int_equal(row->cfa_off, 8);
	for (uint64_t pc = 0x10004; pc < 0x10010; pc += 4) {
		row = hs_cfi_table_find(t, pc);
		assert_true(!row || row->cfa_kind == HS_CFA_UNSUPPORTED || row->cfa_kind == HS_CFA_NONE ||
			    row->rbp_kind == HS_RULE_UNSUPPORTED);
	}
	hs_cfi_table_free(t);
}

/* An FDE whose length is shorter than its CIE pointer (found by reading past the end of the
 * section): a bad entry, nothing read past its length. */
static void test_fde_shorter_than_its_cie_pointer(void **state)
{
	/* the CIE of test_overflowing_operands but udata4 addresses, then an FDE of length 2 whose
	 * pointer (read past its end) would lead back to that CIE; the section ends there */
	static const uint8_t eh[] = {16, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x03, 0x0c, 7, 8,
				     2, 0, 0, 0, 24, 0, 0, 0};
	uint8_t *copy = malloc(sizeof(eh)); /* exactly the section: a read past it is caught */
	struct hs_cfi_table *t = NULL;
	struct hs_error err = {0};

	(void)state;
	assert_non_null(copy);
	memcpy(copy, eh, sizeof(eh));
	assert_int_equal(hs_cfi_table_build_eh_frame(copy, sizeof(eh), 0x1000, NULL, 0, 0, &t, &err), 0);
	assert_int_equal(t->n, 0);
	assert_int_equal(t->stats.fdes, 0);
	assert_int_equal(t->stats.bad_entries, 1);
	hs_cfi_table_free(t);
	free(copy);
}

static void test_no_cfi(void **state)
{
	/* a minimal ELF64 header with no sections */
	unsigned char img[sizeof(Elf64_Ehdr)] = {0};
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	struct hs_cfi_table *t = NULL;
	struct hs_error err = {0};
	Elf *elf;

	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)img, sizeof(img));
	assert_non_null(elf);
	assert_int_equal(hs_cfi_table_build(elf, NULL, &t, &err), 0);
	assert_non_null(t);
	assert_null(hs_cfi_table_find(t, 0x1000));
	hs_cfi_table_free(t);
	hs_cfi_table_free(NULL);
	elf_end(elf);
}

/* `test-cfi NAME` runs the one test NAME, and exits 77 when it skipped (meson runs each
 * differential test so: a library that is not installed is a skipped test, not a pass). */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_cfi),
		cmocka_unit_test(test_overflowing_operands),
		cmocka_unit_test(test_fde_shorter_than_its_cie_pointer),
		cmocka_unit_test(test_fixture_expr),
		cmocka_unit_test(test_fixture_register),
		cmocka_unit_test(test_fixture_state),
		cmocka_unit_test(test_fixture_signal),
		cmocka_unit_test(test_fixture_plt),
		cmocka_unit_test(test_fixture_deref),
		cmocka_unit_test(test_fixture_misc),
		cmocka_unit_test(test_fixture_rsp_not_cfa),
		cmocka_unit_test(test_fixture_regs),
		cmocka_unit_test(test_diff_self),
		cmocka_unit_test(test_diff_libc),
		cmocka_unit_test(test_diff_libstdcxx),
		cmocka_unit_test(test_diff_libm),
		cmocka_unit_test(test_diff_ld_so),
		cmocka_unit_test(test_diff_hotstack),
	};

	if (hs_test_select(argc, argv, tests, HS_ARRAY_SIZE(tests)) < 0)
		return 2;
	return hs_test_status(cmocka_run_group_tests(tests, self_setup, self_teardown));
}
