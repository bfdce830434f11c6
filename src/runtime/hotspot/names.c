/* Methods read from a JVM's memory and checked (a Method*, its ConstMethod, its class's constant
 * pool and method array all agreeing), named as perf maps name them, and a bytecode index turned
 * into its line through the compressed line number table (oops/constMethod.hpp). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/hotspot/hotspot.h"
#include "runtime/hotspot/stream.h"
#include "util/strbuf.h"
#include "util/util.h"

#define MAX_SYMBOL 1024       /* bytes of a name */
#define MAX_LINES (64u << 10) /* bytes of a line number table */
#define MAX_METHODS 65536     /* a class's methods looked at */
#define MAX_HEADER 4096

static int rd(const struct hs_rt_mem *mem, uint64_t addr, void *buf, size_t n)
{
	return mem->read(mem->ctx, addr, buf, n) ? -EFAULT : 0;
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t u16_at(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

/* A Symbol's characters (modified UTF-8, as the class file has them), NUL-terminated. */
static int read_symbol(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, uint64_t sym, char **ret)
{
	uint16_t len;
	char *s;

	if (!sym || rd(mem, sym + jvm->lay.symbol_length, &len, 2))
		return -EFAULT;
	if (len > MAX_SYMBOL)
		return -EOVERFLOW;
	s = hs_xmalloc((size_t)len + 1);
	if (rd(mem, sym + jvm->lay.symbol_body, s, len)) {
		free(s);
		return -EFAULT;
	}
	s[len] = 0;
	if (strlen(s) != len) {
		free(s);
		return -EBADMSG;
	}
	*ret = s;
	return 0;
}

/* The Symbol* of constant pool entry index (a Utf8 entry: the pool's words follow its header). */
static int pool_symbol(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, uint64_t pool, int32_t pool_len,
		       uint32_t index, char **ret)
{
	uint64_t sym;

	if (!index || (int64_t)index >= pool_len)
		return -EBADMSG;
	if (rd(mem, pool + jvm->lay.pool_size + (uint64_t)index * 8, &sym, 8))
		return -EFAULT;
	return read_symbol(jvm, mem, sym, ret);
}

/* Whether the class's method array holds method (at its idnum, unless methods were added or
 * redefined since: then anywhere). */
static int holder_has(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, uint64_t methods, uint32_t idnum,
		      uint64_t method)
{
	int32_t len;
	uint64_t m, buf[256];

	if (!methods || rd(mem, methods, &len, 4))
		return -EFAULT;
	if (len < 0 || len > MAX_METHODS)
		return -EBADMSG;
	methods += jvm->lay.array_data;
	if (idnum < (uint32_t)len && !rd(mem, methods + (uint64_t)idnum * 8, &m, 8) && m == method)
		return 0;
	for (int32_t i = 0; i < len; i += 256) {
		size_t n = (size_t)HS_MIN(len - i, 256);
		if (rd(mem, methods + (uint64_t)i * 8, buf, n * 8))
			return -EFAULT;
		for (size_t k = 0; k < n; k++)
			if (buf[k] == method)
				return 0;
	}
	return -EBADMSG;
}

/* The line number table after the bytecodes: pairs until a 0 byte, read a page at a time until
 * its end is seen. */
static int read_lines(const struct hs_rt_mem *mem, uint64_t at, uint8_t x, uint8_t **ret, size_t *size)
{
	uint8_t *buf = NULL;
	size_t have = 0;

	while (have < MAX_LINES) {
		size_t n = HS_MIN(MAX_LINES - have, 4096 - (size_t)((at + have) & 4095));
		struct hs_jvm_stream s;
		buf = hs_xrealloc(buf, have + n);
		if (rd(mem, at + have, buf + have, n))
			break;
		have += n;
		s = (struct hs_jvm_stream){.p = buf, .n = have, .x = x};
		for (;;) {
			uint8_t b = hs_jvm_stream_byte(&s);
			if (s.bad)
				break;
			if (!b) {
				*ret = buf;
				*size = s.pos;
				return 0;
			}
			if (b == 0xff) {
				hs_jvm_stream_int(&s);
				hs_jvm_stream_int(&s);
			}
		}
	}
	free(buf);
	return -EBADMSG;
}

struct method_raw {
	uint64_t const_method, pool, holder, methods, klass_name;
	uint32_t flags, code_size, name, sig, idnum, source;
	int32_t pool_len;
};

/* The headers of the Method, its ConstMethod, its ConstantPool and its class, cross-checked. */
static int read_raw(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, uint64_t addr, struct method_raw *r)
{
	const struct hs_jvm_layout *l = &jvm->lay;
	const struct hs_jvm_offsets *o = &jvm->info.off;
	uint8_t cm[MAX_HEADER], cp[MAX_HEADER];
	uint64_t pool_of_holder;

	if (!addr || (addr & 7) || rd(mem, addr + o->method_const_method, &r->const_method, 8) || !r->const_method ||
	    rd(mem, r->const_method, cm, o->const_method_size))
		return -EFAULT;
	r->pool = u64_at(cm + l->const_method_constants);
	r->flags = l->const_method_flags_size == 4 ? (uint32_t)u64_at(cm + l->const_method_flags) & 0xffffffffu
						   : u16_at(cm + l->const_method_flags);
	r->code_size = u16_at(cm + o->const_method_code_size);
	r->name = u16_at(cm + l->const_method_name);
	r->sig = u16_at(cm + l->const_method_signature);
	r->idnum = u16_at(cm + l->const_method_idnum);
	if (!r->pool || rd(mem, r->pool, cp, l->pool_size))
		return -EFAULT;
	r->holder = u64_at(cp + l->pool_holder);
	memcpy(&r->pool_len, cp + l->pool_length, 4);
	r->source = u16_at(cp + l->pool_source_file);
	if (!r->holder || rd(mem, r->holder + l->klass_constants, &pool_of_holder, 8) ||
	    rd(mem, r->holder + l->klass_methods, &r->methods, 8) ||
	    rd(mem, r->holder + l->klass_name, &r->klass_name, 8))
		return -EFAULT;
	if (pool_of_holder != r->pool || r->pool_len <= 0 || r->pool_len > 65536)
		return -EBADMSG;
	return holder_has(jvm, mem, r->methods, r->idnum, addr);
}

void hs_jvm_method_release(struct hs_jvm_method *m)
{
	if (!m)
		return;
	free(m->klass);
	free(m->name);
	free(m->signature);
	free(m->file);
	free(m->lines);
	memset(m, 0, sizeof(*m));
}

int hs_jvm_method_read(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, uint64_t addr, struct hs_jvm_method *ret)
{
	struct method_raw r;
	struct hs_jvm_method m = {.unsigned5_x = jvm->lay.unsigned5_x};
	int rc;

	if ((rc = read_raw(jvm, mem, addr, &r)))
		return rc;
	m.const_method = r.const_method;
	m.code_size = r.code_size;
	if ((rc = read_symbol(jvm, mem, r.klass_name, &m.klass)) ||
	    (rc = pool_symbol(jvm, mem, r.pool, r.pool_len, r.name, &m.name)) ||
	    (rc = pool_symbol(jvm, mem, r.pool, r.pool_len, r.sig, &m.signature)))
		goto fail;
	/* external names: "java/util/TimSort" is java.util.TimSort; a hidden class's
	 * "Hot$$Lambda$2+0x0000..." is Hot$$Lambda$2/0x0000... */
	for (char *p = m.klass; *p; p++)
		if (*p == '/')
			*p = '.';
		else if (*p == '+' && !strncmp(p + 1, "0x", 2))
			*p = '/';
	if (r.source && pool_symbol(jvm, mem, r.pool, r.pool_len, r.source, &m.file))
		m.file = NULL;
	if ((r.flags & jvm->lay.has_line_table) &&
	    (rc = read_lines(mem, r.const_method + jvm->info.off.const_method_size + r.code_size, m.unsigned5_x,
			     &m.lines, &m.lines_size)))
		goto fail;
	*ret = m;
	return 0;
fail:
	hs_jvm_method_release(&m);
	return rc;
}

int hs_jvm_method_line(const struct hs_jvm_method *m, int32_t bci)
{
	struct hs_jvm_stream s = {.p = m->lines, .n = m->lines_size, .x = m->unsigned5_x};
	int32_t at = 0, line = 0, best_bci = 0, best = 0;

	/* the line of the entry at bci, else of the last entry before it (Method::line_number_from_bci) */
	while (m->lines) {
		uint8_t b = hs_jvm_stream_byte(&s);
		if (s.bad || !b)
			break;
		if (b == 0xff) {
			at += hs_jvm_stream_int(&s);
			line += hs_jvm_stream_int(&s);
		} else {
			at += b >> 3;
			line += b & 7;
		}
		if (s.bad)
			break;
		if (at == bci)
			return line > 0 ? line : 0;
		if (at < bci && at >= best_bci) {
			best_bci = at;
			best = line;
		}
	}
	return best > 0 ? best : 0;
}

int32_t hs_jvm_method_bci(const struct hs_jvm *jvm, const struct hs_jvm_method *m, uint64_t bcp)
{
	uint64_t code = m->const_method + jvm->info.off.const_method_size;

	return bcp >= code && bcp < code + m->code_size ? (int32_t)(bcp - code) : -1;
}

static const char *primitive(char c)
{
	switch (c) {
	case 'B':
		return "byte";
	case 'C':
		return "char";
	case 'D':
		return "double";
	case 'F':
		return "float";
	case 'I':
		return "int";
	case 'J':
		return "long";
	case 'S':
		return "short";
	case 'Z':
		return "boolean";
	case 'V':
		return "void";
	default:
		return NULL;
	}
}

/* One type of a descriptor at *p, in Java's spelling ("int", "java.lang.String[]"), appended. */
static bool format_type(struct hs_strbuf *sb, const char **p)
{
	int dims = 0;

	while (**p == '[' && dims < 255)
		dims++, (*p)++;
	if (**p == 'L') {
		const char *end = strchr(*p, ';');
		if (!end)
			return false;
		for (const char *c = *p + 1; c < end; c++)
			hs_strbuf_addc(sb, *c == '/' ? '.' : *c);
		*p = end + 1;
	} else {
		const char *t = primitive(**p);
		if (!t)
			return false;
		hs_strbuf_adds(sb, t);
		(*p)++;
	}
	while (dims--)
		hs_strbuf_adds(sb, "[]");
	return true;
}

size_t hs_jvm_method_format(const struct hs_jvm_method *m, char *buf, size_t len)
{
	struct hs_strbuf args = {0}, ret = {0};
	const char *p = m->signature;
	int n;

	if (*p++ == '(') {
		for (bool first = true; *p && *p != ')'; first = false) {
			if (!first)
				hs_strbuf_adds(&args, ", ");
			if (!format_type(&args, &p))
				break;
		}
		if (*p == ')') {
			p++;
			format_type(&ret, &p);
		}
	}
	n = snprintf(buf, len, "%s%s%s.%s(%s)", ret.len ? ret.buf : "", ret.len ? " " : "", m->klass, m->name,
		     args.len ? args.buf : "");
	hs_strbuf_release(&args);
	hs_strbuf_release(&ret);
	return n < 0 ? 0 : (size_t)n;
}
