/* The trampoline templates and their CFI. CPython 3.12 and 3.13 copy _Py_trampoline_func_start
 * up to _Py_trampoline_func_end for each Python function they run with -X perf or -X perf_jit;
 * the bytes below are that code in pyenv's builds of 3.12.1 and 3.13.0 (objdump of
 * libpython3.1x.so). */
#include "trampoline.h"

#include <string.h>

#include "util/util.h"

/* A row: from pc on, CFA = rsp + cfa_off, the return address at CFA - 8, rbp unchanged. */
#define ROW(at, off)                                                                           \
	{                                                                                      \
		.pc = (at), .cfa_off = (off), .cfa_reg = HS_DWARF_RSP, .cfa_kind = HS_CFA_REG, \
		.ra_kind = HS_RULE_CFA_OFF, .ra_off = -8, .rbp_kind = HS_RULE_SAME             \
	}
#define END(at)                                     \
	{                                           \
		.pc = (at), .cfa_kind = HS_CFA_NONE \
	}

/* sub $8,%rsp; call *%rcx; add $8,%rsp; ret: the evaluator's frame pointer-less call into
 * _PyEval_EvalFrameDefault, the stack kept 16-aligned across it */
static const uint8_t plain_code[] = {0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3};
static struct hs_cfi_row plain_rows[] = {ROW(0, 8), ROW(4, 16), ROW(10, 8), END(11)};

/* the same after endbr64, as a build with indirect-branch tracking (-fcf-protection) has it */
static const uint8_t cet_code[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x83, 0xec, 0x08,
				   0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3};
static struct hs_cfi_row cet_rows[] = {ROW(0, 8), ROW(8, 16), ROW(14, 8), END(15)};

/* no rules for the other registers: the trampoline touches none */
static struct hs_cfi_regs no_regs[1];

static const struct {
	const uint8_t *code;
	uint32_t len;
	struct hs_cfi_table table;
} templates[HS_TRAMP_COUNT] = {
	{plain_code, sizeof(plain_code), {0, plain_rows, HS_ARRAY_SIZE(plain_rows), no_regs, 1, {0}}},
	{cet_code, sizeof(cet_code), {0, cet_rows, HS_ARRAY_SIZE(cet_rows), no_regs, 1, {0}}},
};

int hs_tramp_match(const uint8_t *buf, size_t n, size_t at, uint32_t *off)
{
	if (at >= n)
		return -1;
	for (int i = 0; i < HS_TRAMP_COUNT; i++) {
		uint32_t len = templates[i].len;

		/* the templates do not overlap themselves: at most one start fits */
		for (uint32_t o = 0; o < len && o <= at; o++) {
			if (n - (at - o) < len || memcmp(buf + at - o, templates[i].code, len))
				continue;
			*off = o;
			return i;
		}
	}
	return -1;
}

const struct hs_cfi_table *hs_tramp_table(int ix)
{
	return &templates[ix].table;
}

uint32_t hs_tramp_len(int ix)
{
	return templates[ix].len;
}

bool hs_tramp_named(const char *name)
{
	return name && !strncmp(name, "py::", 4);
}
