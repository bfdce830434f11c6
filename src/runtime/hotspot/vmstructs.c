/* Reading a JVM's VMStructs tables (the Serviceability Agent's description of HotSpot's own
 * structures, runtime/vmStructs.cpp) from its memory, bounded, and taking from them the offsets
 * the frame walk and the naming need, each looked up by name and checked. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/hotspot/hotspot.h"
#include "util/util.h"

#define MAX_ENTRIES 16384 /* entries a table: HotSpot has about two thousand */
#define MAX_NAME 128      /* bytes of a name, its NUL included */
#define MAX_STRIDE 512    /* bytes of an entry */
#define MAX_TYPE_SIZE 65536

const char *const hs_jvm_sym_names[HS_JVM_NSYMS] = {
	"gHotSpotVMStructs",
	"gHotSpotVMStructEntryArrayStride",
	"gHotSpotVMStructEntryTypeNameOffset",
	"gHotSpotVMStructEntryFieldNameOffset",
	"gHotSpotVMStructEntryTypeStringOffset",
	"gHotSpotVMStructEntryIsStaticOffset",
	"gHotSpotVMStructEntryOffsetOffset",
	"gHotSpotVMStructEntryAddressOffset",
	"gHotSpotVMTypes",
	"gHotSpotVMTypeEntryArrayStride",
	"gHotSpotVMTypeEntryTypeNameOffset",
	"gHotSpotVMTypeEntrySizeOffset",
	"gHotSpotVMIntConstants",
	"gHotSpotVMIntConstantEntryArrayStride",
	"gHotSpotVMIntConstantEntryNameOffset",
	"gHotSpotVMIntConstantEntryValueOffset",
	"gHotSpotVMLongConstants",
	"gHotSpotVMLongConstantEntryArrayStride",
	"gHotSpotVMLongConstantEntryNameOffset",
	"gHotSpotVMLongConstantEntryValueOffset",
};

/* The types whose fields are kept; the others' entries are read only as far as their type name. */
static const char *const kept_types[] = {
	"Abstract_VM_Version",
	"AbstractInterpreter",
	"Array<Method*>",
	"CodeBlob",
	"CodeCache",
	"CodeHeap",
	"CompiledMethod",
	"ConstantPool",
	"ConstMethod",
	"GrowableArray<int>",
	"GrowableArrayBase",
	"HeapBlock",
	"HeapBlock::Header",
	"InstanceKlass",
	"JavaCallWrapper",
	"JavaFrameAnchor",
	"JavaThread",
	"Klass",
	"Method",
	"nmethod",
	"OSThread",
	"PcDesc",
	"StubQueue",
	"StubRoutines",
	"Symbol",
	"Thread",
	"ThreadsList",
	"ThreadsSMRSupport",
	"VirtualSpace",
};

struct field {
	char type[MAX_NAME], name[MAX_NAME], ftype[MAX_NAME];
	bool is_static;
	uint64_t offset, address;
};

struct named {
	char name[MAX_NAME];
	uint64_t value; /* a type's size, a constant's value (an int's sign-extended) */
};

struct tables {
	const struct hs_rt_mem *mem;
	HS_VEC(struct field) fields;
	HS_VEC(struct named) types, consts;
	char *why;
	size_t whylen;
};

static int fail(struct tables *t, int err, const char *fmt, ...) HS_PRINTF(3, 4);
static int fail(struct tables *t, int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!t->why || !t->whylen)
		return err;
	n = snprintf(t->why, t->whylen, "hotspot: ");
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < t->whylen)
		vsnprintf(t->why + n, t->whylen - (size_t)n, fmt, ap);
	va_end(ap);
	return err;
}

static int rd(struct tables *t, uint64_t addr, void *buf, size_t n)
{
	return t->mem->read(t->mem->ctx, addr, buf, n);
}

static int rd_u64(struct tables *t, uint64_t addr, uint64_t *v)
{
	return rd(t, addr, v, sizeof(*v));
}

/* A NUL-terminated name of at most MAX_NAME - 1 printable characters at addr: 0, 1 when it is
 * longer (not one we look for; *buf is then empty), -EFAULT, or -EBADMSG (a byte that no name
 * has). Read up to the end of its page first, so that a name near the end of a mapping reads. */
static int rd_name(struct tables *t, uint64_t addr, char *buf)
{
	size_t have = 0;

	while (have < MAX_NAME) {
		size_t n = HS_MIN((size_t)MAX_NAME - have, 4096 - (size_t)((addr + have) & 4095));
		if (rd(t, addr + have, buf + have, n))
			return -EFAULT;
		for (size_t i = have; i < have + n; i++) {
			if (!buf[i])
				return 0;
			if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] > 0x7e)
				return -EBADMSG;
		}
		have += n;
	}
	buf[0] = 0;
	return 1;
}

static bool kept(const char *type)
{
	for (size_t i = 0; i < HS_ARRAY_SIZE(kept_types); i++)
		if (!strcmp(type, kept_types[i]))
			return true;
	return false;
}

/* The values of the symbols that describe one table's entries: its address, its stride, and
 * the offsets in an entry, each below the stride with room for the 8 bytes read there. */
static int table_shape(struct tables *t, const uint64_t *syms, int first, int count, unsigned narrow, uint64_t *base,
		       uint64_t *stride, uint64_t *offs)
{
	if (rd_u64(t, syms[first], base) || rd_u64(t, syms[first + 1], stride))
		return fail(t, -EFAULT, "cannot read %s", hs_jvm_sym_names[first]);
	if (!*stride)
		return fail(t, -EAGAIN, "%s is 0: the tables are not set up yet", hs_jvm_sym_names[first + 1]);
	if (*stride < 8 || *stride > MAX_STRIDE)
		return fail(t, -EBADMSG, "%s is %" PRIu64 ", not an entry's size", hs_jvm_sym_names[first + 1],
			    *stride);
	for (int i = 0; i < count; i++) {
		if (rd_u64(t, syms[first + 2 + i], &offs[i]))
			return fail(t, -EFAULT, "cannot read %s", hs_jvm_sym_names[first + 2 + i]);
		/* narrow: a bit for each offset of an int32_t, the others are 8 bytes */
		if (offs[i] > *stride - (narrow & 1u << i ? 4 : 8))
			return fail(t, -EBADMSG, "%s is %" PRIu64 ", outside an entry of %" PRIu64 " bytes",
				    hs_jvm_sym_names[first + 2 + i], offs[i], *stride);
	}
	if (!*base)
		return fail(t, -EFAULT, "%s is NULL", hs_jvm_sym_names[first]);
	return 0;
}

/* One entry's name at entry + off: 0 (and the name), 1 at the table's end (a NULL name), 2 for
 * a name too long to be one we look for, or a negative errno. */
static int entry_name(struct tables *t, const char *table, size_t i, uint64_t entry, uint64_t off, char *buf)
{
	uint64_t p;
	int rc;

	if (rd_u64(t, entry + off, &p))
		return fail(t, -EFAULT, "%s: cannot read entry %zu", table, i);
	if (!p)
		return 1;
	rc = rd_name(t, p, buf);
	if (rc < 0)
		return fail(t, rc, "%s: entry %zu: %s", table, i,
			    rc == -EFAULT ? "name unreadable" : "name is not text");
	return rc ? 2 : 0;
}

static int read_structs(struct tables *t, const uint64_t *syms)
{
	uint64_t base, stride, o[6]; /* type, field, type string, static, offset, address */
	uint8_t e[MAX_STRIDE];
	size_t i;
	int rc;

	if ((rc = table_shape(t, syms, HS_JVM_STRUCTS, 6, 1u << 3, &base, &stride, o)))
		return rc;
	for (i = 0; i < MAX_ENTRIES; i++) {
		struct field f = {0};
		int32_t st;

		if ((rc = entry_name(t, "gHotSpotVMStructs", i, base + i * stride, o[0], f.type)) == 1)
			return 0;
		if (rc < 0)
			return rc;
		if (rc || !kept(f.type))
			continue;
		if (rd(t, base + i * stride, e, stride))
			return fail(t, -EFAULT, "gHotSpotVMStructs: cannot read entry %zu", i);
		if ((rc = entry_name(t, "gHotSpotVMStructs", i, base + i * stride, o[1], f.name)) < 0 ||
		    (rc == 0 && (rc = entry_name(t, "gHotSpotVMStructs", i, base + i * stride, o[2], f.ftype)) < 0))
			return rc;
		memcpy(&st, e + o[3], 4);
		memcpy(&f.offset, e + o[4], 8);
		memcpy(&f.address, e + o[5], 8);
		f.is_static = st != 0;
		hs_vec_push(&t->fields, f);
	}
	return fail(t, -EBADMSG, "gHotSpotVMStructs: no end within %d entries", MAX_ENTRIES);
}

/* The types (name and size) or the int or long constants (name and value). */
static int read_named(struct tables *t, const uint64_t *syms, int first, const char *table, int value_size)
{
	uint64_t base, stride, o[2];
	size_t i;
	int rc;

	if ((rc = table_shape(t, syms, first, 2, value_size == 4 ? 2u : 0u, &base, &stride, o)))
		return rc;
	for (i = 0; i < MAX_ENTRIES; i++) {
		struct named n = {0};

		if ((rc = entry_name(t, table, i, base + i * stride, o[0], n.name)) == 1)
			return 0;
		if (rc < 0)
			return rc;
		if (rc)
			continue;
		if (value_size == 4) {
			int32_t v;
			if (rd(t, base + i * stride + o[1], &v, 4))
				return fail(t, -EFAULT, "%s: cannot read entry %zu", table, i);
			n.value = (uint64_t)(int64_t)v;
		} else if (rd_u64(t, base + i * stride + o[1], &n.value)) {
			return fail(t, -EFAULT, "%s: cannot read entry %zu", table, i);
		}
		hs_vec_push(value_size ? &t->consts : &t->types, n);
	}
	return fail(t, -EBADMSG, "%s: no end within %d entries", table, MAX_ENTRIES);
}

static const struct named *find_named(const struct tables *t, bool consts, const char *name)
{
	const struct named *v = consts ? t->consts.v : t->types.v;
	size_t n = consts ? t->consts.n : t->types.n;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

/* Whether name is the alternative at a ('|'-separated, up to the next '|' or the end). */
static bool is_alt(const char *a, const char *name)
{
	size_t l = strlen(name);

	return !strncmp(a, name, l) && (!a[l] || a[l] == '|');
}

static const char *next_alt(const char *a)
{
	const char *bar = strchr(a, '|');

	return bar ? bar + 1 : NULL;
}

/* The field of the first of the '|'-separated names that is in the table, of one of types. */
static const struct field *find_field(const struct tables *t, const char *types, const char *names)
{
	for (const char *b = names; b; b = next_alt(b))
		for (size_t i = 0; i < t->fields.n; i++) {
			const struct field *f = &t->fields.v[i];
			if (!is_alt(b, f->name))
				continue;
			for (const char *a = types; a; a = next_alt(a))
				if (is_alt(a, f->type))
					return f;
		}
	return NULL;
}

/* The size of a field's type: 8 for a pointer, else the types table's (const or not). */
static int field_width(const struct tables *t, const struct field *f, uint64_t *ret)
{
	const char *ty = f->ftype;
	const struct named *n;

	if (strchr(ty, '*')) { /* "Method*", "JavaThread *const *const" */
		*ret = 8;
		return 0;
	}
	if (!strncmp(ty, "const ", 6))
		ty += 6;
	if (!(n = find_named(t, false, ty)))
		return -1;
	*ret = n->value;
	return 0;
}

/* An instance field of one of types, whose width is one of widths (a bit per byte count: 1 << w;
 * 0 for a struct of any size) and which lies inside its type: its offset into *off, its width into *width (when not NULL). */
static int want_field(struct tables *t, const char *types, const char *names, unsigned widths, uint16_t *off,
		      uint8_t *width)
{
	const struct field *f = find_field(t, types, names);
	const struct named *ty;
	uint64_t w;

	if (!f)
		return fail(t, -EOPNOTSUPP, "no field %s.%s in the tables", types, names);
	if (f->is_static)
		return fail(t, -EOPNOTSUPP, "field %s.%s is static", f->type, f->name);
	if (field_width(t, f, &w) || (widths && (w > 8 || !(widths & (1u << w)))))
		return fail(t, -EOPNOTSUPP, "field %s.%s is of type %s, not of the width expected", f->type, f->name,
			    f->ftype);
	if (!(ty = find_named(t, false, f->type)) || ty->value > MAX_TYPE_SIZE || f->offset + w > ty->value)
		return fail(t, -EOPNOTSUPP, "field %s.%s at %" PRIu64 " is outside its type", f->type, f->name,
			    f->offset);
	if (f->offset > 0xfffe)
		return fail(t, -EOPNOTSUPP, "field %s.%s at %" PRIu64 " is too far", f->type, f->name, f->offset);
	*off = (uint16_t)f->offset;
	if (width)
		*width = (uint8_t)w;
	return 0;
}

/* A static field's address (its value lives there in the process). */
static int want_static(struct tables *t, const char *types, const char *names, uint64_t *addr)
{
	const struct field *f = find_field(t, types, names);

	if (!f)
		return fail(t, -EOPNOTSUPP, "no field %s::%s in the tables", types, names);
	if (!f->is_static || !f->address)
		return fail(t, -EOPNOTSUPP, "field %s::%s has no address", f->type, f->name);
	*addr = f->address;
	return 0;
}

static int want_size(struct tables *t, const char *type, uint64_t max, uint16_t *ret)
{
	const struct named *n = find_named(t, false, type);

	if (!n || !n->value || n->value > max)
		return fail(t, -EOPNOTSUPP, "type %s: %s", type, n ? "size out of range" : "not in the tables");
	*ret = (uint16_t)n->value;
	return 0;
}

static int want_const(struct tables *t, const char *names, int64_t *ret)
{
	for (const char *a = names; a; a = next_alt(a)) {
		size_t l = strchr(a, '|') ? (size_t)(strchr(a, '|') - a) : strlen(a);
		char name[MAX_NAME];
		const struct named *n;
		if (l >= sizeof(name))
			continue;
		memcpy(name, a, l);
		name[l] = 0;
		if ((n = find_named(t, true, name))) {
			*ret = (int64_t)n->value;
			return 0;
		}
	}
	return fail(t, -EOPNOTSUPP, "no constant %s in the tables", names);
}

static bool has_field(const struct tables *t, const char *types, const char *names)
{
	return find_field(t, types, names) != NULL;
}

#define W1 (1u << 1)
#define W2 (1u << 2)
#define W4 (1u << 4)
#define W8 (1u << 8)

/* a sum of two offsets (a struct's field's field), checked to fit */
static int sum_off(struct tables *t, const char *what, uint16_t a, uint16_t b, uint16_t *ret)
{
	if ((uint32_t)a + b > 0xfffe)
		return fail(t, -EOPNOTSUPP, "%s is too far", what);
	*ret = (uint16_t)(a + b);
	return 0;
}

static int rd_static_int(struct tables *t, const char *type, const char *name, int32_t *v)
{
	uint64_t a;
	int rc;

	if ((rc = want_static(t, type, name, &a)))
		return rc;
	if (rd(t, a, v, sizeof(*v)))
		return fail(t, -EFAULT, "cannot read %s::%s", type, name);
	return 0;
}

static int take_version(struct tables *t, struct hs_jvm *j)
{
	const char *names[] = {"_vm_major_version", "_vm_minor_version", "_vm_security_version", "_vm_build_number"};
	unsigned *dst[] = {&j->major, &j->minor, &j->security, &j->build};
	uint64_t a, s;
	int64_t oop;
	char rel[MAX_NAME];
	int rc;

	for (size_t i = 0; i < HS_ARRAY_SIZE(names); i++) {
		int32_t v;
		if ((rc = rd_static_int(t, "Abstract_VM_Version", names[i], &v)))
			return rc;
		if (v < 0 || v > 0xffff)
			return fail(t, -EBADMSG, "Abstract_VM_Version::%s is %d", names[i], v);
		*dst[i] = (unsigned)v;
	}
	if (!(rc = want_static(t, "Abstract_VM_Version", "_s_vm_release", &a)) && !rd_u64(t, a, &s) && s &&
	    !rd_name(t, s, rel))
		snprintf(j->release, sizeof(j->release), "%.*s", (int)sizeof(j->release) - 1, rel);
	if (j->major < 17 || j->major > 25)
		return fail(t, -EOPNOTSUPP, "JDK %u is not supported (17 to 25 are)", j->major);
	if ((rc = want_const(t, "oopSize", &oop)))
		return rc;
	if (oop != 8)
		return fail(t, -EOPNOTSUPP, "oopSize is %" PRId64 ", not 8", oop);
	j->info.version = j->major << 24 | j->minor << 16 | j->security << 8 | (j->build & 0xff);
	/* UNSIGNED5 excludes the zero byte from JDK 20 on (compressedStream.hpp) */
	j->lay.unsigned5_x = j->major >= 20;
	return 0;
}

static int take_code_cache(struct tables *t, struct hs_jvm *j)
{
	struct hs_jvm_offsets *o = &j->info.off;
	uint16_t memory, segmap, low, high, header;
	int rc;

	if ((rc = want_static(t, "CodeCache", "_heaps", &j->info.code_heaps)) ||
	    (rc = want_static(t, "CodeCache", "_low_bound", &j->info.code_low)) ||
	    (rc = want_static(t, "CodeCache", "_high_bound", &j->info.code_high)) ||
	    (rc = want_field(t, "GrowableArrayBase", "_len", W4, &o->array_len, NULL)) ||
	    (rc = want_field(t, "GrowableArray<int>", "_data", W8, &o->array_data, NULL)) ||
	    (rc = want_field(t, "CodeHeap", "_memory", 0, &memory, NULL)) ||
	    (rc = want_field(t, "CodeHeap", "_segmap", 0, &segmap, NULL)) ||
	    (rc = want_field(t, "VirtualSpace", "_low", W8, &low, NULL)) ||
	    (rc = want_field(t, "VirtualSpace", "_high", W8, &high, NULL)) ||
	    (rc = sum_off(t, "CodeHeap._memory._low", memory, low, &o->heap_memory_low)) ||
	    (rc = sum_off(t, "CodeHeap._memory._high", memory, high, &o->heap_memory_high)) ||
	    (rc = sum_off(t, "CodeHeap._segmap._low", segmap, low, &o->heap_segmap_low)) ||
	    (rc = want_field(t, "CodeHeap", "_log2_segment_size", W4, &o->heap_log2_segment, NULL)) ||
	    (rc = want_size(t, "HeapBlock", 64, &o->block_size)) ||
	    (rc = want_field(t, "HeapBlock", "_header", 0, &header, NULL)) ||
	    (rc = want_field(t, "HeapBlock::Header", "_used", W1, &o->block_used, NULL)) ||
	    (rc = want_field(t, "HeapBlock::Header", "_length", W4 | W8, &o->block_length, &o->block_length_size)))
		return rc;
	if (header + o->block_used >= o->block_size || header + o->block_length + o->block_length_size > o->block_size)
		return fail(t, -EOPNOTSUPP, "HeapBlock::Header is outside HeapBlock");
	o->block_used += header;
	o->block_length += header;
	return 0;
}

static int take_nmethod_data(struct tables *t, struct hs_jvm_layout *l)
{
	bool immutable = has_field(t, "nmethod", "_immutable_data"),
	     mutable = has_field(t, "CodeBlob", "_mutable_data");
	uint16_t scopes_data_at;
	int rc;

	if (immutable != mutable)
		return fail(t, -EOPNOTSUPP, "nmethod keeps its scopes and metadata in a way not supported");
	if (!immutable) {
		l->nm_data = HS_JVM_NM_IN_BLOB;
		if ((rc = want_field(t, "nmethod", "_metadata_offset", W4, &l->nm_metadata, NULL)) ||
		    (rc = want_field(t, "CompiledMethod|nmethod", "_scopes_data_begin", W8, &scopes_data_at, NULL)) ||
		    (rc = want_field(t, "nmethod", "_scopes_pcs_offset", W4, &l->nm_scopes_pcs, NULL)) ||
		    (rc = want_field(t, "nmethod", "_dependencies_offset", W4, &l->nm_dependencies, NULL)))
			return rc;
		l->nm_scopes_data = scopes_data_at;
		return 0;
	}
	l->nm_data = HS_JVM_NM_APART;
	if ((rc = want_field(t, "nmethod", "_immutable_data", W8, &l->nm_immutable, NULL)) ||
	    (rc = want_field(t, "nmethod", "_immutable_data_size", W4, &l->nm_immutable_size, NULL)) ||
	    (rc = want_field(t, "nmethod", "_scopes_pcs_offset", W4, &l->nm_scopes_pcs_off, NULL)) ||
	    (rc = want_field(t, "nmethod", "_scopes_data_offset", W4, &l->nm_scopes_data_off, NULL)) ||
	    (rc = want_field(t, "CodeBlob", "_mutable_data", W8, &l->blob_mutable, NULL)) ||
	    (rc = want_field(t, "CodeBlob", "_mutable_data_size", W4, &l->blob_mutable_size, NULL)) ||
	    (rc = want_field(t, "CodeBlob", "_relocation_size", W4, &l->blob_relocation_size, NULL)))
		return rc;
	return 0;
}

static int take_blobs(struct tables *t, struct hs_jvm *j)
{
	struct hs_jvm_offsets *o = &j->info.off;
	struct hs_jvm_layout *l = &j->lay;
	unsigned w;
	int64_t v;
	int rc;

	if ((rc = want_field(t, "CodeBlob", "_name", W8, &o->blob_name, NULL)) ||
	    (rc = want_field(t, "CodeBlob", "_size", W4, &o->blob_size, NULL)) ||
	    (rc = want_field(t, "CodeBlob", "_frame_size", W4, &o->blob_frame_size, NULL)) ||
	    (rc = want_field(t, "CodeBlob", "_frame_complete_offset", W2 | W4, &o->blob_frame_complete,
			     &o->blob_frame_complete_size)))
		return rc;
	o->code_by = has_field(t, "CodeBlob", "_code_offset") ? HS_JVM_CODE_OFFSET : HS_JVM_CODE_ADDR;
	w = o->code_by == HS_JVM_CODE_OFFSET ? W4 : W8;
	if ((rc = want_field(t, "CodeBlob", "_code_begin|_code_offset", w, &o->blob_code_begin, NULL)) ||
	    (rc = want_field(t, "CodeBlob", "_code_end|_data_offset", w, &o->blob_code_end, NULL)))
		return rc;
	o->kind_by = has_field(t, "CodeBlob", "_kind") ? HS_JVM_KIND_FIELD : HS_JVM_KIND_NAME;
	o->blob_kind = HS_JVM_NONE;
	if (o->kind_by == HS_JVM_KIND_FIELD) {
		if ((rc = want_field(t, "CodeBlob", "_kind", W1, &o->blob_kind, NULL)) ||
		    (rc = want_const(t, "CodeBlobKind::Nmethod", &v)))
			return rc;
		if (v < 0 || v > 255)
			return fail(t, -EOPNOTSUPP, "CodeBlobKind::Nmethod is %" PRId64, v);
		o->kind_nmethod = (uint8_t)v;
	}
	if ((rc = want_field(t, "nmethod|CompiledMethod", "_method", W8, &o->nmethod_method, NULL)) ||
	    (rc = want_field(t, "nmethod", "_compile_id", W4, &o->nmethod_compile_id, NULL)) ||
	    (rc = want_field(t, "nmethod", "_comp_level", W1 | W4, &o->nmethod_comp_level,
			     &o->nmethod_comp_level_size)) ||
	    (rc = want_field(t, "nmethod", "_entry_bci", W4, &o->nmethod_entry_bci, NULL)) ||
	    (rc = take_nmethod_data(t, l)) || (rc = want_size(t, "PcDesc", 64, &l->pc_size)) ||
	    (rc = want_field(t, "PcDesc", "_pc_offset", W4, &l->pc_offset, NULL)) ||
	    (rc = want_field(t, "PcDesc", "_scope_decode_offset", W4, &l->pc_scope, NULL)) ||
	    (rc = want_static(t, "AbstractInterpreter", "_code", &j->info.interpreter)) ||
	    (rc = want_field(t, "StubQueue", "_stub_buffer", W8, &o->stubqueue_buffer, NULL)) ||
	    (rc = want_field(t, "StubQueue", "_buffer_limit", W4, &o->stubqueue_limit, NULL)) ||
	    (rc = want_static(t, "StubRoutines", "_call_stub_return_address", &j->info.call_stub_return)) ||
	    (rc = want_const(t, "InvocationEntryBci", &v)))
		return rc;
	if (v != -1)
		return fail(t, -EOPNOTSUPP, "InvocationEntryBci is %" PRId64 ", not -1", v);
	return 0;
}

static int take_methods(struct tables *t, struct hs_jvm *j)
{
	struct hs_jvm_offsets *o = &j->info.off;
	struct hs_jvm_layout *l = &j->lay;
	uint16_t array_size;
	int64_t bit;
	int rc;

	if ((rc = want_size(t, "Method", 4096, &l->method_size)) ||
	    (rc = want_field(t, "Method", "_constMethod", W8, &o->method_const_method, NULL)) ||
	    (rc = want_size(t, "ConstMethod", 4096, &o->const_method_size)) ||
	    (rc = want_field(t, "ConstMethod", "_constants", W8, &l->const_method_constants, NULL)) ||
	    (rc = want_field(t, "ConstMethod", "_flags._flags|_flags", W2 | W4, &l->const_method_flags,
			     &l->const_method_flags_size)) ||
	    (rc = want_const(t, "ConstMethodFlags::_misc_has_linenumber_table|ConstMethod::_has_linenumber_table",
			     &bit)) ||
	    (rc = want_field(t, "ConstMethod", "_code_size", W2, &o->const_method_code_size, NULL)) ||
	    (rc = want_field(t, "ConstMethod", "_name_index", W2, &l->const_method_name, NULL)) ||
	    (rc = want_field(t, "ConstMethod", "_signature_index", W2, &l->const_method_signature, NULL)) ||
	    (rc = want_field(t, "ConstMethod", "_method_idnum", W2, &l->const_method_idnum, NULL)) ||
	    (rc = want_size(t, "ConstantPool", 4096, &l->pool_size)) ||
	    (rc = want_field(t, "ConstantPool", "_pool_holder", W8, &l->pool_holder, NULL)) ||
	    (rc = want_field(t, "ConstantPool", "_length", W4, &l->pool_length, NULL)) ||
	    (rc = want_field(t, "ConstantPool", "_source_file_name_index", W2, &l->pool_source_file, NULL)) ||
	    (rc = want_field(t, "Klass", "_name", W8, &l->klass_name, NULL)) ||
	    (rc = want_field(t, "InstanceKlass", "_constants", W8, &l->klass_constants, NULL)) ||
	    (rc = want_field(t, "InstanceKlass", "_methods", W8, &l->klass_methods, NULL)) ||
	    (rc = want_size(t, "Array<Method*>", 64, &array_size)) ||
	    (rc = want_field(t, "Symbol", "_length", W2, &l->symbol_length, NULL)) ||
	    (rc = want_field(t, "Symbol", "_body[0]", W1, &l->symbol_body, NULL)))
		return rc;
	if (bit <= 0 || bit > UINT32_MAX || (bit & (bit - 1)))
		return fail(t, -EOPNOTSUPP, "the line number table's flag is %" PRId64 ", not a bit", bit);
	l->has_line_table = (uint32_t)bit;
	/* Array<T> is an int _length then T _data[1] (oops/array.hpp): for a pointer, 16 bytes */
	if (array_size != 16)
		return fail(t, -EOPNOTSUPP, "Array<Method*> is %u bytes, not 16", array_size);
	l->array_data = 8;
	return 0;
}

static int take_threads(struct tables *t, struct hs_jvm *j)
{
	struct hs_jvm_offsets *o = &j->info.off;
	uint16_t sp, fp, pc;
	int rc;

	if ((rc = want_static(t, "ThreadsSMRSupport", "_java_thread_list", &j->info.java_threads)) ||
	    (rc = want_field(t, "ThreadsList", "_length", W4, &o->threads_list_length, NULL)) ||
	    (rc = want_field(t, "ThreadsList", "_threads", W8, &o->threads_list_threads, NULL)) ||
	    (rc = want_field(t, "JavaThread|Thread", "_osthread", W8, &o->thread_osthread, NULL)) ||
	    (rc = want_field(t, "OSThread", "_thread_id", W4, &o->osthread_thread_id, NULL)) ||
	    (rc = want_field(t, "JavaThread", "_anchor", 0, &o->thread_anchor, NULL)) ||
	    (rc = want_field(t, "JavaThread", "_thread_state", W4, &o->thread_state, NULL)) ||
	    (rc = want_field(t, "JavaFrameAnchor", "_last_Java_sp", W8, &sp, NULL)) ||
	    (rc = want_field(t, "JavaFrameAnchor", "_last_Java_fp", W8, &fp, NULL)) ||
	    (rc = want_field(t, "JavaFrameAnchor", "_last_Java_pc", W8, &pc, NULL)) ||
	    (rc = sum_off(t, "JavaThread._anchor._last_Java_sp", o->thread_anchor, sp, &o->anchor_sp)) ||
	    (rc = sum_off(t, "JavaThread._anchor._last_Java_fp", o->thread_anchor, fp, &o->anchor_fp)) ||
	    (rc = sum_off(t, "JavaThread._anchor._last_Java_pc", o->thread_anchor, pc, &o->anchor_pc)))
		return rc;
	return 0;
}

/* x86_64's interpreter frame (cpu/x86/frame_x86.hpp, the same from JDK 9 to 25): below the saved
 * frame pointer, the sender's sp, the last sp, the Method*, the mirror, the mdp, the cache, the
 * locals, the bcp. VMStructs publishes the first two: they must be where that layout has them. */
static int take_frames(struct tables *t, struct hs_jvm *j)
{
	struct hs_jvm_offsets *o = &j->info.off;
	int64_t sender, last, wrapper;
	uint16_t anchor;
	int rc;

	if ((rc = want_const(t, "frame::interpreter_frame_sender_sp_offset", &sender)) ||
	    (rc = want_const(t, "frame::interpreter_frame_last_sp_offset", &last)) ||
	    (rc = want_const(t, "frame::entry_frame_call_wrapper_offset", &wrapper)) ||
	    (rc = want_field(t, "JavaCallWrapper", "_anchor", 0, &anchor, NULL)))
		return rc;
	if (wrapper >= 0 || wrapper < -64)
		return fail(t, -EOPNOTSUPP, "the entry frame has its call wrapper at %" PRId64 " words", wrapper);
	/* an entry frame's JavaCallWrapper keeps the thread's frame anchor of when Java was called */
	o->entry_wrapper = (uint8_t)-wrapper;
	o->wrapper_anchor = anchor;
	if (sender != -1 || last != -2)
		return fail(t, -EOPNOTSUPP,
			    "the interpreter's frame has its sender sp at %" PRId64 " and last sp at %" PRId64
			    " words, not -1 and -2",
			    sender, last);
	o->interp_sender_sp = 1;
	o->interp_last_sp = 2;
	o->interp_method = 3;
	o->interp_bcp = 8;
	return 0;
}

int hs_jvm_read_tables(const struct hs_rt_mem *mem, const uint64_t syms[HS_JVM_NSYMS], struct hs_jvm *ret, char *why,
		       size_t whylen)
{
	struct tables t = {.mem = mem, .why = why, .whylen = whylen};
	struct hs_jvm j = {0};
	int rc;

	if ((rc = read_structs(&t, syms)) || (rc = read_named(&t, syms, HS_JVM_TYPES, "gHotSpotVMTypes", 0)) ||
	    (rc = read_named(&t, syms, HS_JVM_INTS, "gHotSpotVMIntConstants", 4)) ||
	    (rc = read_named(&t, syms, HS_JVM_LONGS, "gHotSpotVMLongConstants", 8)))
		goto out;
	if ((rc = take_version(&t, &j)) || (rc = take_code_cache(&t, &j)) || (rc = take_blobs(&t, &j)) ||
	    (rc = take_methods(&t, &j)) || (rc = take_threads(&t, &j)) || (rc = take_frames(&t, &j)))
		goto out;
	*ret = j;
out:
	hs_vec_free(&t.fields);
	hs_vec_free(&t.types);
	hs_vec_free(&t.consts);
	return rc;
}
