/* Ruby functions read from another process's memory (CRuby 3.1): the name a backtrace would
 * give a frame with its class ("Tree#leaf", "block in Spinner.spin", "Array#map"), its file, and
 * the line of an instruction from the iseq's line table; each object checked for its type and
 * each size bounded, since the memory is the target's to scribble on. Also what the
 * interpreter's native functions are to the merge. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/ruby/ruby.h"
#include "runtime/runtime.h"
#include "util/util.h"

#define NAME_MAX_CHARS 1024
#define PATH_MAX_CHARS 4096
#define ISEQ_MAX_SIZE (1u << 20) /* instructions of an iseq whose lines are read */
#define IVARS_MAX 4096           /* entries of a class's instance variables looked through */
#define CLASS_DEPTH 8            /* singleton classes of singleton classes followed */

/* Objects (3.1's include/ruby/internal/core): flags, then the class. */
#define T_CLASS 0x02
#define T_MODULE 0x03
#define T_STRING 0x05
#define T_ARRAY 0x07
#define T_ICLASS 0x1c
#define FL_SINGLETON 0x1000
#define QNIL 8
/* RString: heap (NOEMBED) {len, ptr} at 16, or up to 23 bytes in place from 16, their count in
 * flags bits 14-18 */
#define STR_NOEMBED 0x2000
#define STR_EMBED_LEN(f) (((f) >> 14) & 0x1f)
/* RArray: heap {len at 16, ptr at 32}, or up to 3 elements in place from 16, their count in
 * flags bits 15-16 */
#define ARY_EMBED 0x2000
#define ARY_EMBED_LEN(f) (((f) >> 15) & 3)
/* RClass: ptr (rb_classext_t) at 24, whose iv_tbl (an st_table) is at 8 */
#define CLASS_EXT 24
#define EXT_IV_TBL 8
/* rb_iseq_constant_body */
#define BODY_TYPE 0
#define BODY_ISEQ_SIZE 4
#define BODY_ENCODED 8
#define BODY_BASE_LABEL 72
#define BODY_INSNS_INFO 120
#define BODY_INSNS_INFO_SIZE 136
#define BODY_SUCC_TABLE 144
#define BODY_LOCAL_ISEQ 176
#define BODY_READ 184
#define ISEQ_TYPE_METHOD 1
/* rb_method_definition_t: type in the low 4 bits of its first byte, original_id at 32 */
#define DEF_ORIGINAL_ID 32
#define DEF_TYPE_ISEQ 0
#define DEF_TYPE_CFUNC 1

static bool imemo_of(uint64_t flags, unsigned kind)
{
	return (flags & HS_RB_T_MASK) == HS_RB_T_IMEMO && HS_RB_IMEMO_KIND(flags) == kind;
}

/* String v's bytes into buf (cap bytes with room for a NUL): its length, or -1 when v is not a
 * String or is longer than cap - 1. */
static int rstring(const struct hs_rt_mem *mem, uint64_t v, char *buf, size_t cap)
{
	uint8_t o[40];
	uint64_t f, len;

	if (!v || (v & 7) || hs_rt_read(mem, v, o, sizeof(o)))
		return -1;
	f = hs_rt_get64(o);
	if ((f & HS_RB_T_MASK) != T_STRING)
		return -1;
	if (f & STR_NOEMBED) {
		len = hs_rt_get64(o + 16);
		if (len >= cap || hs_rt_read(mem, hs_rt_get64(o + 24), buf, len))
			return -1;
	} else {
		len = STR_EMBED_LEN(f);
		if (len > 23 || len >= cap)
			return -1;
		memcpy(buf, o + 16, len);
	}
	buf[len] = 0;
	return (int)len;
}

/* Element i of Array ary, or 0. */
static uint64_t array_at(const struct hs_rt_mem *mem, uint64_t ary, uint64_t i)
{
	uint8_t o[40];
	uint64_t f, len, ptr, v;

	if (!ary || (ary & 7) || hs_rt_read(mem, ary, o, sizeof(o)))
		return 0;
	f = hs_rt_get64(o);
	if ((f & HS_RB_T_MASK) != T_ARRAY)
		return 0;
	if (f & ARY_EMBED) {
		len = ARY_EMBED_LEN(f);
		ptr = ary + 16;
	} else {
		len = hs_rt_get64(o + 16);
		ptr = hs_rt_get64(o + 32);
	}
	if (i >= len || hs_rt_read(mem, ptr + 8 * i, &v, sizeof(v)))
		return 0;
	return v;
}

/* The global symbol table (symbol.c's rb_symbols_t): last_id (u32) at 0, ids at 16, an Array
 * of Arrays of 512 (fstring, symbol) pairs by serial number. */
#define IDS_PER_CHUNK 512
#define TLAST_OP_ID 169
#define ID_SCOPE_SHIFT 4

int hs_rb_serial_name(const struct hs_rb_proc *p, const struct hs_rt_mem *mem, uint64_t serial, char *buf, size_t len,
		      uint64_t *sym)
{
	uint8_t t[24];
	uint64_t chunk;

	if (!p->symbols || !serial || hs_rt_read(mem, p->symbols, t, sizeof(t)) || serial > hs_rt_get32(t))
		return -1;
	chunk = array_at(mem, hs_rt_get64(t + 16), serial / IDS_PER_CHUNK);
	if (sym)
		*sym = array_at(mem, chunk, serial % IDS_PER_CHUNK * 2 + 1);
	return rstring(mem, array_at(mem, chunk, serial % IDS_PER_CHUNK * 2), buf, len);
}

int hs_rb_id_name(const struct hs_rb_proc *p, const struct hs_rt_mem *mem, uint64_t id, char *buf, size_t len)
{
	return hs_rb_serial_name(p, mem, id > TLAST_OP_ID ? id >> ID_SCOPE_SHIFT : id, buf, len, NULL);
}

/* Instance variable id of class klass (its st_table of ID to VALUE), or 0. */
static uint64_t class_ivar(const struct hs_rt_mem *mem, uint64_t klass, uint64_t id)
{
	uint8_t st[56], *e;
	uint64_t ext, tbl, start, bound, entries, v = 0;

	if (!id || hs_rt_read(mem, klass + CLASS_EXT, &ext, 8) || hs_rt_read(mem, ext + EXT_IV_TBL, &tbl, 8) || !tbl ||
	    hs_rt_read(mem, tbl, st, sizeof(st)))
		return 0;
	start = hs_rt_get64(st + 32);
	bound = hs_rt_get64(st + 40);
	entries = hs_rt_get64(st + 48);
	if (bound < start || bound - start > IVARS_MAX || bound == start)
		return 0;
	e = hs_xmalloc((bound - start) * 24);
	if (!hs_rt_read(mem, entries + start * 24, e, (bound - start) * 24))
		for (uint64_t i = 0; i < bound - start; i++)
			/* {hash, key, record}; a deleted entry's hash is all ones */
			if (hs_rt_get64(e + i * 24) != ~0ULL && hs_rt_get64(e + i * 24 + 8) == id) {
				v = hs_rt_get64(e + i * 24 + 16);
				break;
			}
	free(e);
	return v;
}

/* The flags of object v (0 when it cannot be read). */
static uint64_t flags_of(const struct hs_rt_mem *mem, uint64_t v)
{
	uint64_t f = 0;

	if (!v || (v & 7) || hs_rt_read(mem, v, &f, 8))
		return 0;
	return f;
}

/* The name of class or module klass, as Module#name gives it ("Zlib::GzipFile"), into buf; *sep
 * is '.' when klass is the singleton class of the class named (its methods are the class's
 * own), else '#'. 0, or -1 when it is not a class or cannot be read. */
static int class_name(const struct hs_rb_proc *p, const struct hs_rt_mem *mem, uint64_t klass, char *buf, size_t len,
		      char *sep)
{
	uint64_t f = flags_of(mem, klass), path;

	*sep = '#';
	if ((f & HS_RB_T_MASK) == T_ICLASS) {
		/* a module included: the entry's class is its stand-in in the ancestors */
		if (hs_rt_read(mem, klass + 8, &klass, 8))
			return -1;
		f = flags_of(mem, klass);
	}
	for (int depth = 0; f & FL_SINGLETON && depth < CLASS_DEPTH; depth++) {
		uint64_t obj = class_ivar(mem, klass, p->id_attached), of = flags_of(mem, obj);
		if ((of & HS_RB_T_MASK) != T_CLASS && (of & HS_RB_T_MASK) != T_MODULE) {
			snprintf(buf, len, "#<Class:%#" PRIx64 ">", obj);
			return 0;
		}
		*sep = '.';
		klass = obj;
		f = of;
	}
	if ((f & HS_RB_T_MASK) != T_CLASS && (f & HS_RB_T_MASK) != T_MODULE)
		return -1;
	path = class_ivar(mem, klass, p->id_classpath);
	if (!path)
		path = class_ivar(mem, klass, p->id_tmp_classpath);
	if (path && rstring(mem, path, buf, len) >= 0)
		return 0;
	snprintf(buf, len, "#<%s:%#" PRIx64 ">", (f & HS_RB_T_MASK) == T_MODULE ? "Module" : "Class", klass);
	return 0;
}

/* The line of each instruction of an iseq: what line() looks up. */
struct lines {
	uint64_t encoded; /* the iseq's instructions */
	uint32_t size;    /* how many (VALUEs) */
	uint32_t first;   /* its first line */
	uint32_t line[];  /* by instruction, or none (size 0 here) when the iseq has no table */
};

/* Rank of position pos in the iseq's succinct bit vector (iseq.c, VM_INSN_INFO_TABLE_IMPL 2):
 * six 64-bit words of 7-bit ranks for the first 54 positions, then 80-byte blocks of 512. */
static uint32_t succ_rank(const uint8_t *t, size_t tlen, uint32_t pos)
{
	uint32_t x, s, b;
	const uint8_t *blk;
	uint64_t bits;

	if (pos < 54)
		return (uint32_t)(hs_rt_get64(t + pos / 9 * 8) >> (7 * (pos % 9)) & 0x7f);
	x = pos - 54;
	b = x % 512;
	s = b / 64;
	if (48 + (size_t)(x / 512 + 1) * 80 > tlen)
		return 0;
	blk = t + 48 + (size_t)(x / 512) * 80;
	bits = hs_rt_get64(blk + 16 + s * 8) << (63 - b % 64);
	return hs_rt_get32(blk) + (s ? (uint32_t)(hs_rt_get64(blk + 8) >> (9 * (s - 1)) & 0x1ff) : 0) +
	       (uint32_t)__builtin_popcountll(bits);
}

/* The lines of body (read, BODY_READ bytes): NULL when they cannot be read. */
static struct lines *read_lines(const struct hs_rt_mem *mem, const uint8_t *body, uint32_t first, size_t *size)
{
	uint32_t n = hs_rt_get32(body + BODY_ISEQ_SIZE), entries = hs_rt_get32(body + BODY_INSNS_INFO_SIZE);
	struct lines *l;
	uint8_t *info = NULL, *table = NULL;
	size_t tlen = 0;

	if (n > ISEQ_MAX_SIZE || entries > n)
		return NULL;
	*size = sizeof(*l) + (entries ? n : 0) * sizeof(uint32_t);
	l = hs_xcalloc(1, *size);
	l->encoded = hs_rt_get64(body + BODY_ENCODED);
	l->first = first;
	if (!entries)
		return l; /* no table: the iseq's first line stands */
	info = hs_xmalloc((size_t)entries * 12);
	if (hs_rt_read(mem, hs_rt_get64(body + BODY_INSNS_INFO), info, (size_t)entries * 12))
		goto fail;
	if (entries > 1) {
		/* the allocation holds as many words as 54 positions need, up to the first block */
		tlen = n < 54 ? (n + 8) / 9 * 8 : 48 + (size_t)((n - 54) / 512 + 1) * 80;
		table = hs_xmalloc(HS_MAX(tlen, 48));
		memset(table, 0, HS_MAX(tlen, 48));
		if (hs_rt_read(mem, hs_rt_get64(body + BODY_SUCC_TABLE), table, tlen))
			goto fail;
	}
	for (uint32_t pos = 0; pos < n; pos++) {
		uint32_t idx = entries == 1 ? 0 : succ_rank(table, HS_MAX(tlen, 48), pos) - 1;
		/* a rank past the table is garbage: no line rather than a wrong one */
		l->line[pos] = idx < entries ? hs_rt_get32(info + (size_t)idx * 12) : 0;
	}
	l->size = n;
	free(info);
	free(table);
	return l;
fail:
	free(info);
	free(table);
	free(l);
	return NULL;
}

/* A C method's frame: its method entry and its definition. */
static int read_cfunc(const struct hs_rb_proc *p, const struct hs_rt_mem *mem, const struct hs_ip_frame *f,
		      struct hs_ip_code *c)
{
	uint8_t me[40], def[48];
	uint64_t cme = f->fn & HS_RB_ADDR_MASK, cls;
	char name[NAME_MAX_CHARS], klass[NAME_MAX_CHARS], sep;
	size_t n;

	if (hs_rt_read(mem, cme, me, sizeof(me)) || !imemo_of(hs_rt_get64(me), HS_RB_IMEMO_MENT))
		return -1;
	cls = hs_rt_get64(me + HS_RB_ME_CLASS);
	if (hs_rt_get64(me + HS_RB_ME_DEF) != (f->aux & HS_RB_ADDR_MASK) ||
	    hs_rt_read(mem, hs_rt_get64(me + HS_RB_ME_DEF), def, sizeof(def)) ||
	    hs_rb_ident(cls, hs_rt_get64(def + HS_RB_DEF_SERIAL)) != HS_RB_IDENT_OF(f->fn, f->aux) ||
	    (def[0] & 0xf) != DEF_TYPE_CFUNC ||
	    hs_rb_id_name(p, mem, hs_rt_get64(def + DEF_ORIGINAL_ID), name, sizeof(name)) < 0)
		return -1;
	if (class_name(p, mem, cls, klass, sizeof(klass), &sep) < 0) {
		c->name = hs_xstrdup(name);
	} else {
		n = strlen(klass) + strlen(name) + 2;
		c->name = hs_xmalloc(n);
		snprintf(c->name, n, "%s%c%s", klass, sep, name);
	}
	return 0;
}

/* The qualified name of the method a Ruby frame runs in ("Tree#leaf"), from its method entry
 * and the iseq of the method (local_iseq): 0, or -1 when it has none (the top level, a class
 * body, a method defined from a block). */
static int method_name(const struct hs_rb_proc *p, const struct hs_rt_mem *mem, uint64_t cme, uint64_t local, char *buf,
		       size_t len)
{
	uint8_t me[24], q[24], body[BODY_READ];
	char klass[NAME_MAX_CHARS], base[NAME_MAX_CHARS], sep;
	uint8_t type;

	if (!cme || hs_rt_read(mem, cme, me, sizeof(me)) || !imemo_of(hs_rt_get64(me), HS_RB_IMEMO_MENT) ||
	    hs_rt_read(mem, hs_rt_get64(me + HS_RB_ME_DEF), &type, 1) || (type & 0xf) != DEF_TYPE_ISEQ)
		return -1;
	if (hs_rt_read(mem, local, q, sizeof(q)) || !imemo_of(hs_rt_get64(q), HS_RB_IMEMO_ISEQ) ||
	    hs_rt_read(mem, hs_rt_get64(q + HS_RB_ISEQ_BODY), body, sizeof(body)) ||
	    hs_rt_get32(body + BODY_TYPE) != ISEQ_TYPE_METHOD ||
	    rstring(mem, hs_rt_get64(body + BODY_BASE_LABEL), base, sizeof(base)) < 0 ||
	    class_name(p, mem, hs_rt_get64(me + HS_RB_ME_CLASS), klass, sizeof(klass), &sep) < 0)
		return -1;
	return snprintf(buf, len, "%s%c%s", klass, sep, base) < (int)len ? 0 : -1;
}

/* A Ruby frame: its iseq, checked to be the one the frame had (rb-abi.h), and the method it
 * runs in. */
static int read_iseq(const struct hs_rb_proc *p, const struct hs_rt_mem *mem, const struct hs_ip_frame *f,
		     struct hs_ip_code *c)
{
	uint8_t q[24], body[BODY_READ];
	uint64_t iseq = f->fn & HS_RB_ADDR_MASK, cme = f->aux & HS_RB_ADDR_MASK, b, pathobj, lineno, serial = 0;
	char label[NAME_MAX_CHARS], base[NAME_MAX_CHARS], qual[NAME_MAX_CHARS];
	char *path = hs_xmalloc(PATH_MAX_CHARS);
	int nlabel, nbase;
	struct lines *l;
	size_t lsize = 0;

	if (hs_rt_read(mem, iseq, q, sizeof(q)) || !imemo_of(hs_rt_get64(q), HS_RB_IMEMO_ISEQ))
		goto fail;
	b = hs_rt_get64(q + HS_RB_ISEQ_BODY);
	if (hs_rt_read(mem, b, body, sizeof(body)))
		goto fail;
	if (cme) {
		uint8_t me[24];
		if (hs_rt_read(mem, cme, me, sizeof(me)) || !imemo_of(hs_rt_get64(me), HS_RB_IMEMO_MENT) ||
		    hs_rt_read(mem, hs_rt_get64(me + HS_RB_ME_DEF) + HS_RB_DEF_SERIAL, &serial, sizeof(serial)))
			goto fail;
	}
	lineno = hs_rt_get64(body + HS_RB_BODY_FIRST_LINENO);
	pathobj = hs_rt_get64(body + HS_RB_BODY_PATHOBJ);
	if (hs_rb_ident(hs_rb_iseq_hash(b, pathobj, hs_rt_get64(body + HS_RB_BODY_LABEL), lineno), serial) !=
		    HS_RB_IDENT_OF(f->fn, f->aux) ||
	    !(lineno & 1))
		goto fail;
	nlabel = rstring(mem, hs_rt_get64(body + HS_RB_BODY_LABEL), label, sizeof(label));
	nbase = rstring(mem, hs_rt_get64(body + BODY_BASE_LABEL), base, sizeof(base));
	if (nlabel < 0 || nbase < 0)
		goto fail;
	/* the file: a String, or an Array [path, realpath] */
	if ((flags_of(mem, pathobj) & HS_RB_T_MASK) == T_ARRAY)
		pathobj = array_at(mem, pathobj, 0);
	if (rstring(mem, pathobj, path, PATH_MAX_CHARS) < 0) {
		free(path);
		path = NULL;
	}
	l = read_lines(mem, body, (uint32_t)(lineno >> 1), &lsize);
	if (!l)
		goto fail;
	/* as rb_profile_frame_full_label: "block in leaf" in Tree#leaf is "block in Tree#leaf" */
	if (method_name(p, mem, cme, hs_rt_get64(body + BODY_LOCAL_ISEQ), qual, sizeof(qual)) || !strcmp(qual, base) ||
	    nbase > nlabel || strcmp(label + nlabel - nbase, base)) {
		c->name = hs_xstrdup(label);
	} else {
		size_t n = (size_t)(nlabel - nbase) + strlen(qual) + 1;
		c->name = hs_xmalloc(n);
		snprintf(c->name, n, "%.*s%s", nlabel - nbase, label, qual);
	}
	c->file = path;
	c->firstline = (uint32_t)(lineno >> 1);
	c->lines = l;
	c->lines_size = lsize;
	return 0;
fail:
	free(path);
	return -1;
}

static int code_read(const void *proc, const struct hs_rt_mem *mem, const struct hs_ip_frame *f, struct hs_ip_code *c)
{
	struct hs_ip_code made = {0};
	int e;

	if ((f->fn & HS_RB_ADDR_MASK) == 0)
		return -1;
	e = f->flags & HS_IP_CFUNC ? read_cfunc(proc, mem, f, &made) : read_iseq(proc, mem, f, &made);
	if (e)
		return -1;
	*c = made;
	return 0;
}

/* The line of the instruction before pc, which points past the one running (vm_backtrace.c's
 * calc_pos). */
static uint32_t line(const struct hs_ip_code *c, const struct hs_ip_frame *f)
{
	const struct lines *l = c->lines;
	uint64_t n;

	if (!l)
		return c->firstline;
	if (!f->extra || f->extra < l->encoded)
		return l->first;
	n = (f->extra - l->encoded) / 8;
	if (!l->size)
		return l->first;
	if (n > l->size)
		return 0;
	return l->line[n ? n - 1 : 0];
}

/* The interpreter's machinery between a Ruby frame and the native code it calls, or between a
 * C method and the blocks it yields to: calls, yields, the frames rb_ensure and rb_rescue put
 * around a C method's work, require's loading of a file (the Ruby frames either side say what
 * ran). Most of it is static in a stripped libruby, and left out as such; these are the names
 * it exports. */
/* clang-format off */
static const char *const plumbing_exact[] = {
	"rb_yield", "rb_yield_values", "rb_yield_values2", "rb_yield_values_kw", "rb_yield_splat",
	"rb_yield_splat_kw", "rb_yield_block", "rb_ensure", "rb_rescue", "rb_rescue2", "rb_vrescue2",
	"rb_protect", "rb_catch", "rb_catch_obj", "rb_block_call", "rb_block_call_kw", "rb_iterate",
	"rb_each", "rb_apply", "rb_call_super", "rb_call_super_kw", "rb_current_receiver",
	"rb_obj_call_init", "rb_obj_call_init_kw", "rb_class_new_instance", "rb_class_new_instance_kw",
	"rb_class_new_instance_pass_kw", "rb_proc_call", "rb_proc_call_kw", "rb_proc_call_with_block",
	"rb_proc_call_with_block_kw", "rb_method_call", "rb_method_call_kw", "rb_method_call_with_block",
	"rb_method_call_with_block_kw", "rb_check_funcall", "rb_check_funcall_kw", "rb_require_string",
	"rb_require", "rb_f_require", "rb_load", "rb_load_protect", "rb_exec_recursive",
	"rb_exec_recursive_paired", "rb_exec_recursive_outer", "rb_eval_string", "rb_eval_string_protect",
	"rb_ec_stack_check", "rb_stack_check", "rb_vm_invoke_proc", "rb_fiber_start", "rb_nogvl",
	"rb_thread_call_without_gvl", "rb_thread_call_without_gvl2", "rb_thread_call_with_gvl",
};

static const char *const plumbing_prefix[] = {
	"rb_funcall", "rb_yield_", "rb_vm_call", "vm_call", "vm_invoke", "invoke_block", "invoke_iseq",
	"rb_iterate", "rb_block_call", "rb_ec_",
};
/* clang-format on */

bool hs_rb_maybe(const char *path)
{
	const char *b;

	if (!path)
		return false;
	b = strrchr(path, '/');
	b = b ? b + 1 : path;
	if (!strncmp(b, "libruby", 7))
		return strstr(b, ".so") != NULL;
	if (strncmp(b, "ruby", 4))
		return false;
	for (b += 4; *b; b++)
		if (!isdigit((unsigned char)*b) && *b != '.')
			return false;
	return true;
}

static enum hs_ip_native native_class(const char *name)
{
	size_t n;
	const char *end;
	bool plt;

	if (!name)
		return HS_IP_NATIVE_OTHER;
	/* a compiler's suffix (".constprop.0", ".cold"), or a PLT stub's: a stub of the loop
	 * runs no loop, it is machinery like those of what it calls */
	end = strpbrk(name, ".@");
	n = end ? (size_t)(end - name) : strlen(name);
	plt = end && !strcmp(end, "@plt");
	if (n == 10 && !strncmp(name, "rb_vm_exec", n))
		return plt ? HS_IP_NATIVE_PLUMBING : HS_IP_NATIVE_LOOP;
	for (size_t i = 0; i < HS_ARRAY_SIZE(plumbing_exact); i++)
		if (strlen(plumbing_exact[i]) == n && !strncmp(name, plumbing_exact[i], n))
			return HS_IP_NATIVE_PLUMBING;
	for (size_t i = 0; i < HS_ARRAY_SIZE(plumbing_prefix); i++)
		if (!strncmp(name, plumbing_prefix[i], strlen(plumbing_prefix[i])))
			return HS_IP_NATIVE_PLUMBING;
	return HS_IP_NATIVE_OTHER;
}

const struct hs_ip_lang hs_rb_lang = {
	.id = HS_RT_RUBY,
	.tag = "ruby",
	.name = "Ruby",
	.native_class = native_class,
	.maybe = hs_rb_maybe,
	.code_read = code_read,
	.line = line,
	.proc_size = sizeof(struct hs_rb_proc),
};
