/* The reading half of the CFI table compiler: the CIEs and FDEs of .eh_frame (also as
 * .eh_frame_hdr's table lists them) and of .debug_frame, and their CFA programs, each run once
 * into rows kept here for the table that unwind/cfi.c makes of them. Formats follow DWARF 5
 * section 6.4 (call frame information) and the Linux Standard Base's .eh_frame/.eh_frame_hdr
 * description (pointer encodings DW_EH_PE_*, augmentation strings). */
#include "cfi-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/cursor.h"
#include "util/hashmap.h"
#include "util/util.h"

/* ---- the rows being built ---- */

void hs_cfi_builder_init(struct hs_cfi_builder *b, struct hs_cfi_stats *stats)
{
	struct hs_cfi_regs none, lost;

	memset(b, 0, sizeof(*b));
	b->stats = stats;
	memset(&none, 0, sizeof(none));
	memset(&lost, 0, sizeof(lost));
	for (int r = 0; r < 16; r++) {
		if ((HS_CFI_CALLEE_SAVED >> r & 1) && r != HS_DWARF_RBP) {
			lost.mask |= (uint16_t)(1u << r);
			lost.kind[r] = HS_RULE_UNSUPPORTED;
		}
	}
	hs_vec_push(&b->regs, none);
	hs_vec_push(&b->regs, lost);
}

struct regs_key {
	const struct hs_cfi_builder *b;
	const struct hs_cfi_regs *e;
};

static bool regs_eq(const void *ctx, uint32_t id)
{
	const struct regs_key *k = ctx;

	return !memcmp(&k->b->regs.v[id], k->e, sizeof(*k->e));
}

uint16_t hs_cfi_builder_intern_regs(struct hs_cfi_builder *b, const struct hs_cfi_regs *e)
{
	struct regs_key k = {b, e};
	uint64_t h;
	uint32_t id;

	if (!e->mask)
		return 0;
	h = hs_hash_mem(e, sizeof(*e));
	id = hs_index_find(&b->regs_ix, h, regs_eq, &k);
	if (id != UINT32_MAX)
		return (uint16_t)id;
	if (b->regs.n >= HS_CFI_MAX_REGS)
		return HS_CFI_REGS_LOST; /* only a hostile file has that many different sets */
	id = (uint32_t)b->regs.n;
	hs_vec_push(&b->regs, *e);
	hs_index_insert(&b->regs_ix, h, id);
	return (uint16_t)id;
}

void hs_cfi_builder_push_row(struct hs_cfi_builder *b, uint64_t pc, const struct hs_cfi_row *row)
{
	struct hs_cfi_pending_row pr = {pc, b->seq++, *row};

	if (b->rows.n >= HS_CFI_MAX_ROWS) {
		b->err = -EOVERFLOW;
		return;
	}
	hs_vec_push(&b->rows, pr);
}

/* ---- reading bytes ---- */

/* A cursor over [off, end) of p: x86-64 call frame information is little-endian. */
static void reader_init(struct hs_cursor *r, const uint8_t *p, size_t off, size_t end)
{
	hs_cursor_init(r, p, end);
	r->swap = HS_HOST_BIG_ENDIAN;
	hs_cursor_seek(r, off);
}

/* ---- pointer encodings (DW_EH_PE_*) ---- */

#define PE_OMIT 0xff
#define PE_FMT 0x0f
#define PE_APP 0x70
#define PE_INDIRECT 0x80

/* Reads a pointer in encoding enc; application (pcrel, datarel) only when apply is set. */
static uint64_t rd_encoded(struct hs_cursor *r, uint8_t enc, const struct hs_cfi_section *s, bool apply)
{
	uint64_t field = s->vaddr + r->pos, v;

	switch (enc & PE_FMT) {
	case 0x00: /* absptr */
		v = hs_cursor_uint(r, s->addr_size);
		break;
	case 0x01:
		v = hs_cursor_uleb128(r);
		break;
	case 0x02:
		v = hs_cursor_u16(r);
		break;
	case 0x03:
		v = hs_cursor_u32(r);
		break;
	case 0x04:
		v = hs_cursor_u64(r);
		break;
	case 0x09:
		v = (uint64_t)hs_cursor_sleb128(r);
		break;
	case 0x0a:
		v = (uint64_t)(int64_t)(int16_t)hs_cursor_u16(r);
		break;
	case 0x0b:
		v = (uint64_t)(int64_t)(int32_t)hs_cursor_u32(r);
		break;
	case 0x0c:
		v = hs_cursor_u64(r);
		break;
	default:
		hs_cursor_fail(r);
		return 0;
	}
	if (!apply)
		return v;
	switch (enc & PE_APP) {
	case 0x00:
		break;
	case 0x10: /* pcrel */
		v += field;
		break;
	case 0x30: /* datarel */
		v += s->datarel;
		break;
	default: /* textrel, funcrel, aligned: not used for x86-64 FDE addresses */
		hs_cursor_fail(r);
		break;
	}
	return v;
}

/* ---- CIEs ---- */

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	uint8_t addr_size;
	bool has_z;
	bool signal;
	bool ok;
	size_t insns, insns_end; /* offsets in the section */
};

/* Reads the length that starts a CIE or an FDE (DWARF 5 section 7.2.2: 32 bits, or 0xffffffff
 * then 64) and ends the cursor where the entry ends. False when the entry runs past the section. */
static bool entry_start(struct hs_cursor *r, uint64_t *len, bool *is64)
{
	*len = hs_cursor_u32(r);
	*is64 = *len == 0xffffffff;
	if (*is64)
		*len = hs_cursor_u64(r);
	if (hs_cursor_failed(r) || *len > hs_cursor_remaining(r))
		return false;
	return hs_cursor_limit(r, r->pos + (size_t)*len);
}

static bool parse_cie(const struct hs_cfi_section *s, size_t off, struct cie *c)
{
	struct hs_cursor r;
	uint64_t len;
	const char *aug;
	size_t aug_end = 0;
	uint8_t version;
	bool is64;

	reader_init(&r, s->data, off, s->size);
	memset(c, 0, sizeof(*c));
	c->fde_enc = 0; /* absptr */
	c->addr_size = s->addr_size;
	if (!entry_start(&r, &len, &is64))
		return false;
	hs_cursor_skip(&r, is64 ? 8 : 4); /* the CIE id, already checked by the caller */
	version = hs_cursor_u8(&r);
	if (version != 1 && version != 3 && version != 4)
		return false;
	aug = hs_cursor_string(&r, NULL);
	if (!aug)
		return false;
	if (version == 4) {
		c->addr_size = hs_cursor_u8(&r);
		hs_cursor_u8(&r); /* segment selector size */
		if (c->addr_size != 4 && c->addr_size != 8)
			return false;
	}
	if (!strcmp(aug, "eh"))
		hs_cursor_uint(&r, s->addr_size); /* an old GCC's exception-table pointer */
	c->code_align = hs_cursor_uleb128(&r);
	c->data_align = hs_cursor_sleb128(&r);
	c->ra_reg = version == 1 ? hs_cursor_u8(&r) : hs_cursor_uleb128(&r);
	if (aug[0] == 'z') {
		uint64_t n = hs_cursor_uleb128(&r);
		c->has_z = true;
		if (hs_cursor_failed(&r) || n > hs_cursor_remaining(&r))
			return false;
		aug_end = r.pos + (size_t)n;
		for (const char *a = aug + 1; *a; a++) {
			switch (*a) {
			case 'R':
				c->fde_enc = hs_cursor_u8(&r);
				break;
			case 'P': {
				uint8_t enc = hs_cursor_u8(&r);
				rd_encoded(&r, enc & ~PE_INDIRECT, s, false);
				break;
			}
			case 'L':
				hs_cursor_u8(&r);
				break;
			case 'S':
				c->signal = true;
				break;
			default: /* 'B', 'G' and others: the length lets us skip what we do not know */
				break;
			}
		}
		hs_cursor_seek(&r, aug_end);
	} else if (aug[0] && strcmp(aug, "eh")) {
		return false; /* an augmentation we cannot skip */
	}
	if (hs_cursor_failed(&r) || !c->code_align)
		return false;
	c->insns = r.pos;
	c->insns_end = r.len;
	c->ok = true;
	return true;
}

/* ---- the CFA program ---- */

enum {
	RULE_UNSPEC = 0, /* initial: callee-saved registers keep their value */
	RULE_UNDEF,
	RULE_SAME,
	RULE_OFFSET,
	RULE_VAL_OFFSET,
	RULE_REGISTER,
	RULE_EXPR,
	RULE_VAL_EXPR,
};

struct rule {
	uint8_t kind;
	uint8_t reg;
	int64_t off;
	uint32_t expr, len; /* offsets in the section for expressions */
};

struct state {
	bool cfa_is_expr;
	uint64_t cfa_reg;
	int64_t cfa_off;
	uint32_t cfa_expr, cfa_len;
	bool broken; /* an instruction we cannot follow was met: rows from here are unsupported */
	struct rule regs[HS_DWARF_NREGS];
};

/* Tokens of the DWARF expressions that occur in real CFI. */
struct op {
	uint8_t code;
	int64_t a;
};

static int parse_ops(const uint8_t *p, size_t len, struct op *ops, int max)
{
	struct hs_cursor r;
	int n = 0;

	reader_init(&r, p, 0, len);
	while (hs_cursor_remaining(&r)) {
		uint8_t c = hs_cursor_u8(&r);
		struct op o = {c, 0};

		if (n == max)
			return -1;
		if (c >= 0x70 && c <= 0x8f) /* DW_OP_breg0..31 */
			o.a = hs_cursor_sleb128(&r);
		else if (c == 0x23) /* DW_OP_plus_uconst */
			o.a = (int64_t)hs_cursor_uleb128(&r);
		else if (c == 0x92) { /* DW_OP_bregx: normalise to bregN */
			uint64_t reg = hs_cursor_uleb128(&r);
			if (reg > 31)
				return -1;
			o.code = (uint8_t)(0x70 + reg);
			o.a = hs_cursor_sleb128(&r);
		} else if (c == 0x08) /* DW_OP_const1u */
			o.a = (int64_t)hs_cursor_u8(&r);
		else if (c == 0x06 || c == 0x1a || c == 0x2a || c == 0x24 || c == 0x22 || (c >= 0x30 && c <= 0x4f))
			; /* deref, and, ge, shl, plus, lit0..31: no operand */
		else
			return -1;
		if (hs_cursor_failed(&r))
			return -1;
		ops[n++] = o;
	}
	return n;
}

/* An operand scaled by the CIE's alignment factor; saturated where a hostile file would
 * overflow, so that the rule is out of range (unsupported) rather than wrapped. */
static int64_t scaled(int64_t v, int64_t factor)
{
	int64_t r;

	if (__builtin_mul_overflow(v, factor, &r))
		return (v < 0) != (factor < 0) ? INT64_MIN : INT64_MAX;
	return r;
}

static int64_t uscaled(uint64_t v, int64_t factor)
{
	return scaled(v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v, factor);
}

/* The same for a negated unsigned operand (DW_CFA_GNU_negative_offset_extended). */
static int64_t nscaled(uint64_t v, int64_t factor)
{
	return scaled(v > (uint64_t)INT64_MAX ? -INT64_MAX : -(int64_t)v, factor);
}

static bool fits16(int64_t v)
{
	return v >= INT16_MIN && v <= INT16_MAX;
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* CFA expression patterns: "bregN off; deref", "bregN off", and the PLT's
 * "breg7 off; breg16 0; lit15; and; litT; ge; lit3; shl; plus". */
static void cfa_from_expr(const struct hs_cfi_section *s, uint32_t expr, uint32_t len, struct hs_cfi_row *row)
{
	struct op o[12];
	int n = parse_ops(s->data + expr, len, o, 12);

	row->cfa_kind = HS_CFA_UNSUPPORTED;
	if ((n == 1 || (n == 2 && o[1].code == 0x06)) && o[0].code >= 0x70 && o[0].code <= 0x80 && fits32(o[0].a)) {
		row->cfa_kind = n == 2 ? HS_CFA_DEREF : HS_CFA_REG;
		row->cfa_reg = (uint8_t)(o[0].code - 0x70);
		row->cfa_off = (int32_t)o[0].a;
	} else if (n == 9 && o[0].code == 0x77 && o[1].code == 0x80 && o[1].a == 0 && o[2].code == 0x3f &&
		   o[3].code == 0x1a && o[4].code >= 0x30 && o[4].code <= 0x4f && o[5].code == 0x2a &&
		   o[6].code == 0x33 && o[7].code == 0x24 && o[8].code == 0x22 && fits32(o[0].a)) {
		row->cfa_kind = HS_CFA_PLT;
		row->cfa_reg = (uint8_t)(o[4].code - 0x30);
		row->cfa_off = (int32_t)o[0].a;
	}
}

/* A register rule as the table holds it. */
static uint8_t rule_kind(const struct hs_cfi_section *s, const struct rule *ru, bool is_ra, int16_t *off)
{
	struct op o[4];
	int n;

	*off = 0;
	switch (ru->kind) {
	case RULE_UNSPEC:
		return is_ra ? HS_RULE_UNSUPPORTED : HS_RULE_SAME;
	case RULE_SAME:
		return is_ra ? HS_RULE_UNSUPPORTED : HS_RULE_SAME;
	case RULE_UNDEF:
		return HS_RULE_UNDEFINED;
	case RULE_OFFSET:
		if (!fits16(ru->off))
			return HS_RULE_UNSUPPORTED;
		*off = (int16_t)ru->off;
		return HS_RULE_CFA_OFF;
	case RULE_VAL_OFFSET:
		if (is_ra || !fits16(ru->off))
			return HS_RULE_UNSUPPORTED;
		*off = (int16_t)ru->off;
		return HS_RULE_VAL_CFA_OFF;
	case RULE_EXPR:
		n = parse_ops(s->data + ru->expr, ru->len, o, 4);
		if (n == 1 && o[0].code == 0x77 && fits16(o[0].a)) {
			*off = (int16_t)o[0].a;
			return HS_RULE_RSP_OFF;
		}
		return HS_RULE_UNSUPPORTED;
	default:
		return HS_RULE_UNSUPPORTED;
	}
}

/* The rules of registers 0-15 but rsp and rbp that differ from the ABI's default. */
static uint16_t regs_of(struct hs_cfi_builder *b, const struct hs_cfi_section *s, const struct state *st)
{
	struct hs_cfi_regs e;

	memset(&e, 0, sizeof(e));
	for (int r = 0; r < 16; r++) {
		const struct rule *ru = &st->regs[r];
		bool callee = HS_CFI_CALLEE_SAVED >> r & 1;
		int16_t off;
		uint8_t k;

		if (r == HS_DWARF_RSP || r == HS_DWARF_RBP || ru->kind == RULE_UNSPEC ||
		    ru->kind == (callee ? RULE_SAME : RULE_UNDEF))
			continue;
		if (ru->kind == RULE_REGISTER) {
			k = ru->reg < 16 ? HS_RULE_REGISTER : HS_RULE_UNSUPPORTED;
			off = ru->reg;
		} else {
			k = rule_kind(s, ru, false, &off);
		}
		e.mask |= (uint16_t)(1u << r);
		if (k == HS_RULE_CFA_OFF)
			e.at_cfa |= (uint16_t)(1u << r);
		e.kind[r] = k;
		e.off[r] = k == HS_RULE_UNSUPPORTED || k == HS_RULE_UNDEFINED || k == HS_RULE_SAME ? 0 : off;
	}
	return hs_cfi_builder_intern_regs(b, &e);
}

static void state_to_row(struct hs_cfi_builder *b, const struct hs_cfi_section *s, const struct cie *c,
			 const struct state *st, struct hs_cfi_row *row)
{
	memset(row, 0, sizeof(*row));
	if (c->signal)
		row->flags |= HS_CFI_SIGNAL;
	if (st->broken) {
		row->cfa_kind = HS_CFA_UNSUPPORTED;
		return;
	}
	if (st->cfa_is_expr) {
		cfa_from_expr(s, st->cfa_expr, st->cfa_len, row);
	} else if (st->cfa_reg < HS_DWARF_NREGS && fits32(st->cfa_off)) {
		row->cfa_kind = HS_CFA_REG;
		row->cfa_reg = (uint8_t)st->cfa_reg;
		row->cfa_off = (int32_t)st->cfa_off;
	} else {
		row->cfa_kind = HS_CFA_UNSUPPORTED;
	}
	/* The caller's rsp is the CFA. A frame that says otherwise (setcontext: rsp saved in a
	 * context structure) cannot be followed, except the signal frame's form of the same thing:
	 * CFA = *(rsp + k) with rsp saved at rsp + k. */
	{
		const struct rule *sp = &st->regs[HS_DWARF_RSP];
		int16_t k;
		bool ok = sp->kind == RULE_UNSPEC || (sp->kind == RULE_VAL_OFFSET && sp->off == 0);
		if (!ok && sp->kind == RULE_EXPR && rule_kind(s, sp, false, &k) == HS_RULE_RSP_OFF)
			ok = row->cfa_kind == HS_CFA_DEREF && row->cfa_reg == HS_DWARF_RSP && row->cfa_off == k;
		if (!ok)
			row->cfa_kind = HS_CFA_UNSUPPORTED;
	}
	if (c->ra_reg < HS_DWARF_NREGS)
		row->ra_kind = rule_kind(s, &st->regs[c->ra_reg], true, &row->ra_off);
	else
		row->ra_kind = HS_RULE_UNSUPPORTED;
	row->rbp_kind = rule_kind(s, &st->regs[HS_DWARF_RBP], false, &row->rbp_off);
	row->regs = regs_of(b, s, st);
}

/* Gives register reg the rule ru; a register the table does not track is left out, its
 * operands read all the same. */
static void set_rule(struct state *st, uint64_t reg, struct rule ru)
{
	if (reg < HS_DWARF_NREGS)
		st->regs[reg] = ru;
}

/* DW_CFA_restore: the rule the CIE's initial instructions gave reg (the default while they run). */
static void restore_rule(struct state *st, const struct state *initial, uint64_t reg)
{
	if (reg < HS_DWARF_NREGS)
		st->regs[reg] = initial ? initial->regs[reg] : (struct rule){0};
}

/* Runs instructions [off, end) from state st. With emit, rows are pushed for [loc, ...) and loc
 * advances up to pc_end; without (a CIE's initial instructions), only st changes. */
static void run_program(struct hs_cfi_builder *b, const struct hs_cfi_section *s, const struct cie *c, size_t off,
			size_t end, struct state *st, const struct state *initial, uint64_t *loc, uint64_t pc_end,
			bool emit)
{
	struct hs_cursor r;
	HS_VEC(struct state) stack = {0}; /* remember_state: rare, and too big for the C stack */
	struct hs_cfi_row row;

	reader_init(&r, s->data, off, end);
	while (hs_cursor_remaining(&r) && !hs_cursor_failed(&r) && !st->broken) {
		uint8_t op = hs_cursor_u8(&r), hi = op >> 6, lo = op & 0x3f;
		uint64_t reg = 0, newloc = *loc;
		bool advance = false;

		if (hi == 1) { /* DW_CFA_advance_loc */
			newloc = *loc + lo * c->code_align;
			advance = true;
		} else if (hi == 2) { /* DW_CFA_offset */
			int64_t o = uscaled(hs_cursor_uleb128(&r), c->data_align);
			set_rule(st, lo, (struct rule){RULE_OFFSET, 0, o, 0, 0});
		} else if (hi == 3) { /* DW_CFA_restore */
			restore_rule(st, initial, lo);
		} else {
			switch (op) {
			case 0x00: /* nop */
				break;
			case 0x01: /* set_loc */
				newloc = rd_encoded(&r, c->fde_enc, s, true);
				advance = true;
				break;
			case 0x02: /* advance_loc1 */
			case 0x03: /* advance_loc2 */
			case 0x04: /* advance_loc4 */
			case 0x1d: /* MIPS_advance_loc8 */
				newloc = *loc + hs_cursor_uint(&r, op == 0x1d ? 8 : 1u << (op - 0x02)) * c->code_align;
				advance = true;
				break;
			case 0x05: /* offset_extended */
			case 0x11: /* offset_extended_sf */
			case 0x2f: /* GNU_negative_offset_extended */
			case 0x14: /* val_offset */
			case 0x15: { /* val_offset_sf */
				uint8_t kind;
				int64_t o;
				reg = hs_cursor_uleb128(&r);
				if (op == 0x11 || op == 0x15)
					o = scaled(hs_cursor_sleb128(&r), c->data_align);
				else if (op == 0x2f)
					o = nscaled(hs_cursor_uleb128(&r), c->data_align);
				else
					o = uscaled(hs_cursor_uleb128(&r), c->data_align);
				kind = op == 0x14 || op == 0x15 ? RULE_VAL_OFFSET : RULE_OFFSET;
				set_rule(st, reg, (struct rule){kind, 0, o, 0, 0});
				break;
			}
			case 0x06: /* restore_extended */
				restore_rule(st, initial, hs_cursor_uleb128(&r));
				break;
			case 0x07: /* undefined */
			case 0x08: /* same_value */
				reg = hs_cursor_uleb128(&r);
				set_rule(st, reg, (struct rule){op == 0x07 ? RULE_UNDEF : RULE_SAME, 0, 0, 0, 0});
				break;
			case 0x09: { /* register */
				uint64_t other;
				reg = hs_cursor_uleb128(&r);
				other = hs_cursor_uleb128(&r);
				other = other < 255 ? other : 255;
				set_rule(st, reg, (struct rule){RULE_REGISTER, (uint8_t)other, 0, 0, 0});
				break;
			}
			case 0x0a: /* remember_state */
				if (stack.n == HS_CFI_MAX_STATE_DEPTH) {
					st->broken = true;
					break;
				}
				hs_vec_push(&stack, *st);
				break;
			case 0x0b: /* restore_state */
				if (!stack.n) {
					st->broken = true;
					break;
				}
				/* the CFA rule is restored too: GCC and LLVM rely on it */
				*st = stack.v[--stack.n];
				break;
			case 0x0c: /* def_cfa */
			case 0x12: /* def_cfa_sf */
				st->cfa_is_expr = false;
				st->cfa_reg = hs_cursor_uleb128(&r);
				if (op == 0x0c)
					st->cfa_off = (int64_t)hs_cursor_uleb128(&r);
				else
					st->cfa_off = scaled(hs_cursor_sleb128(&r), c->data_align);
				break;
			case 0x0d: /* def_cfa_register */
				st->cfa_reg = hs_cursor_uleb128(&r);
				if (st->cfa_is_expr)
					st->broken = true;
				break;
			case 0x0e: /* def_cfa_offset */
			case 0x13: /* def_cfa_offset_sf */
				if (op == 0x0e)
					st->cfa_off = (int64_t)hs_cursor_uleb128(&r);
				else
					st->cfa_off = scaled(hs_cursor_sleb128(&r), c->data_align);
				if (st->cfa_is_expr)
					st->broken = true;
				break;
			case 0x0f: { /* def_cfa_expression */
				uint64_t n = hs_cursor_uleb128(&r);
				size_t at = r.pos;
				if (!hs_cursor_skip(&r, n))
					break;
				st->cfa_is_expr = true;
				st->cfa_expr = (uint32_t)at;
				st->cfa_len = (uint32_t)n;
				break;
			}
			case 0x10: /* expression */
			case 0x16: { /* val_expression */
				uint8_t kind;
				uint64_t n;
				size_t at;
				reg = hs_cursor_uleb128(&r);
				n = hs_cursor_uleb128(&r);
				at = r.pos;
				if (!hs_cursor_skip(&r, n))
					break;
				kind = op == 0x10 ? RULE_EXPR : RULE_VAL_EXPR;
				set_rule(st, reg, (struct rule){kind, 0, 0, (uint32_t)at, (uint32_t)n});
				break;
			}
			case 0x2e: /* GNU_args_size: matters to exception landing pads, not to unwinding */
				hs_cursor_uleb128(&r);
				break;
			default: /* GNU_window_save (SPARC, AArch64) and anything unknown */
				st->broken = true;
				break;
			}
		}
		if (advance && emit && !hs_cursor_failed(&r)) {
			if (newloc < *loc || newloc > pc_end) {
				st->broken = true; /* a location outside the FDE */
				break;
			}
			if (newloc > *loc) {
				state_to_row(b, s, c, st, &row);
				hs_cfi_builder_push_row(b, *loc, &row);
			}
			*loc = newloc;
		}
	}
	if (hs_cursor_failed(&r))
		st->broken = true;
	hs_vec_free(&stack);
}

/* ---- FDEs ---- */

struct cie_cache {
	struct hs_u64map ix; /* section offset -> index in v */
	HS_VEC(struct cie) v;
	HS_VEC(struct state) initial;
};

static const struct cie *get_cie(struct hs_cfi_builder *b, struct cie_cache *cc, const struct hs_cfi_section *s,
				 size_t off, const struct state **initial)
{
	uint64_t ix;
	struct cie c;
	struct state st;

	if (hs_u64map_get(&cc->ix, off, &ix)) {
		*initial = &cc->initial.v[ix];
		return cc->v.v[ix].ok ? &cc->v.v[ix] : NULL;
	}
	memset(&st, 0, sizeof(st));
	if (parse_cie(s, off, &c)) {
		uint64_t loc = 0;
		run_program(b, s, &c, c.insns, c.insns_end, &st, NULL, &loc, 0, false);
		b->stats->cies++;
	} else {
		c.ok = false;
		b->stats->bad_entries++;
	}
	ix = cc->v.n;
	hs_vec_push(&cc->v, c);
	hs_vec_push(&cc->initial, st);
	hs_u64map_put(&cc->ix, off, ix);
	*initial = &cc->initial.v[ix];
	return c.ok ? &cc->v.v[ix] : NULL;
}

/* Parses the entry at off. Returns the offset of the next entry, or 0 at the end (a zero
 * terminator, or a length running past the section). */
static size_t do_entry(struct hs_cfi_builder *b, struct cie_cache *cc, const struct hs_cfi_section *s, size_t off)
{
	struct hs_cursor r;
	uint64_t len, id, pc_begin, pc_range, loc;
	size_t id_pos, next;
	bool is64;
	const struct cie *c;
	const struct state *initial;
	struct state st;
	struct hs_cfi_row row;

	reader_init(&r, s->data, off, s->size);
	/* a 32-bit length of 0 is the terminator */
	if (!entry_start(&r, &len, &is64) || (len == 0 && !is64))
		return 0;
	/* the CIE pointer is inside the entry too: a length too short for it ends the entry */
	next = r.len;
	id_pos = r.pos;
	id = is64 ? hs_cursor_u64(&r) : hs_cursor_u32(&r);
	if (hs_cursor_failed(&r))
		goto bad;
	if (s->eh ? id == 0 : id == (is64 ? ~0ULL : 0xffffffffULL))
		return next; /* a CIE: read when an FDE points to it */
	/* .eh_frame: distance back from this field to the CIE; .debug_frame: offset of the CIE */
	if (s->eh) {
		if (id > id_pos)
			goto bad;
		c = get_cie(b, cc, s, id_pos - (size_t)id, &initial);
	} else {
		if (id >= s->size)
			goto bad;
		c = get_cie(b, cc, s, (size_t)id, &initial);
	}
	if (!c)
		goto bad;
	if (s->eh) {
		pc_begin = rd_encoded(&r, c->fde_enc, s, true);
		pc_range = rd_encoded(&r, c->fde_enc & PE_FMT, s, false);
	} else {
		pc_begin = hs_cursor_uint(&r, c->addr_size);
		pc_range = hs_cursor_uint(&r, c->addr_size);
	}
	if (c->has_z) {
		if (!hs_cursor_skip(&r, hs_cursor_uleb128(&r)))
			goto bad;
	}
	if (hs_cursor_failed(&r) || pc_begin + pc_range < pc_begin)
		goto bad;
	if (!pc_range || !pc_begin)
		return next; /* a discarded function (address 0, or nothing covered) */
	b->stats->fdes++;
	if (b->functions) {
		struct hs_cfi_function f = {pc_begin, pc_range};
		if (b->functions->n >= HS_CFI_MAX_ROWS)
			b->err = -EOVERFLOW;
		else
			hs_vec_push(b->functions, f);
		return next;
	}
	st = *initial;
	loc = pc_begin;
	run_program(b, s, c, r.pos, r.len, &st, initial, &loc, pc_begin + pc_range, true);
	if (loc < pc_begin + pc_range) {
		state_to_row(b, s, c, &st, &row);
		hs_cfi_builder_push_row(b, loc, &row);
	}
	/* the end of the function: no CFI until another FDE says otherwise */
	memset(&row, 0, sizeof(row));
	hs_cfi_builder_push_row(b, pc_begin + pc_range, &row);
	return next;
bad:
	b->stats->bad_entries++;
	return next;
}

/* Enumerates FDEs through .eh_frame_hdr's sorted table. Returns false when the header is not
 * usable (then .eh_frame is walked from its start). */
static bool walk_hdr(struct hs_cfi_builder *b, struct cie_cache *cc, const struct hs_cfi_section *hdr,
		     const struct hs_cfi_section *eh)
{
	struct hs_cursor r;
	struct hs_cfi_section hs = *hdr;
	uint8_t version, ptr_enc, cnt_enc, tab_enc;
	uint64_t count;

	reader_init(&r, hdr->data, 0, hdr->size);
	hs.datarel = hdr->vaddr;
	version = hs_cursor_u8(&r);
	ptr_enc = hs_cursor_u8(&r);
	cnt_enc = hs_cursor_u8(&r);
	tab_enc = hs_cursor_u8(&r);
	if (hs_cursor_failed(&r) || version != 1 || cnt_enc == PE_OMIT || tab_enc == PE_OMIT || ptr_enc == PE_OMIT)
		return false;
	rd_encoded(&r, ptr_enc, &hs, true);
	count = rd_encoded(&r, cnt_enc, &hs, true);
	if (hs_cursor_failed(&r) || count > hdr->size)
		return false;
	for (uint64_t i = 0; i < count && !b->err; i++) {
		uint64_t fde;
		rd_encoded(&r, tab_enc, &hs, true); /* initial location */
		fde = rd_encoded(&r, tab_enc, &hs, true);
		if (hs_cursor_failed(&r))
			return i > 0;
		if (fde < eh->vaddr || fde - eh->vaddr >= eh->size) {
			b->stats->bad_entries++;
			continue;
		}
		do_entry(b, cc, eh, (size_t)(fde - eh->vaddr));
	}
	return true;
}

static void walk_all(struct hs_cfi_builder *b, struct cie_cache *cc, const struct hs_cfi_section *s)
{
	size_t off = 0;

	while (off < s->size && !b->err) {
		size_t next = do_entry(b, cc, s, off);
		if (!next || next <= off)
			break;
		off = next;
	}
}

static void cie_cache_release(struct cie_cache *cc)
{
	hs_u64map_release(&cc->ix);
	hs_vec_free(&cc->v);
	hs_vec_free(&cc->initial);
}

void hs_cfi_walk_eh_frame(struct hs_cfi_builder *b, const struct hs_cfi_section *eh, const struct hs_cfi_section *hdr)
{
	struct cie_cache cc = {{0}, {0}, {0}};

	if (hdr && walk_hdr(b, &cc, hdr, eh))
		b->stats->from_eh_frame_hdr = true;
	else
		walk_all(b, &cc, eh);
	cie_cache_release(&cc);
}

void hs_cfi_walk_debug_frame(struct hs_cfi_builder *b, const struct hs_cfi_section *df)
{
	struct cie_cache cc = {{0}, {0}, {0}};

	walk_all(b, &cc, df);
	cie_cache_release(&cc);
}

bool hs_cfi_eh_frame_hdr_ptr(const struct hs_cfi_section *hdr, uint64_t *ret)
{
	struct hs_cursor r;
	struct hs_cfi_section hs = *hdr;
	uint8_t ptr_enc;
	uint64_t ptr;

	reader_init(&r, hdr->data, 0, hdr->size);
	hs.datarel = hdr->vaddr;
	hs_cursor_u8(&r); /* version */
	ptr_enc = hs_cursor_u8(&r);
	hs_cursor_u16(&r); /* the encodings of the count and of the table */
	ptr = rd_encoded(&r, ptr_enc, &hs, true);
	if (hs_cursor_failed(&r))
		return false;
	*ret = ptr;
	return true;
}
