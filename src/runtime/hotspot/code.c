/* The code cache from outside: code blobs read and checked, a pc to its blob through the code
 * heaps' segment maps (code/heap.hpp), the scopes of an nmethod's pc (its PcDesc, then the
 * scope chain in its debug information, code/debugInfoRec.hpp), and the Java threads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/hotspot/hotspot.h"
#include "runtime/hotspot/stream.h"
#include "util/util.h"

#define MAX_BLOB_HEADER 2048 /* bytes of a blob's header read */
#define MAX_BLOB_SIZE (1u << 30)
#define MAX_SECTION (16u << 20) /* bytes of an nmethod's scopes or PcDescs */
#define MAX_SCOPE_DEPTH 64
#define FREE_SEGMENT 0xff /* a segment map's byte for a free segment */
#define MAX_THREADS_READ 65536

static int rd(const struct hs_rt_mem *mem, uint64_t addr, void *buf, size_t n)
{
	return mem->read(mem->ctx, addr, buf, n) ? -EFAULT : 0;
}

static int rd_u64(const struct hs_rt_mem *mem, uint64_t addr, uint64_t *v)
{
	return rd(mem, addr, v, 8);
}

/* A signed int of width 1, 2, 4 or 8 bytes at p. */
static int64_t get_int(const uint8_t *p, unsigned width)
{
	int8_t b;
	int16_t h;
	int32_t w;
	int64_t q;

	switch (width) {
	case 1:
		memcpy(&b, p, 1);
		return b;
	case 2:
		memcpy(&h, p, 2);
		return h;
	case 4:
		memcpy(&w, p, 4);
		return w;
	default:
		memcpy(&q, p, 8);
		return q;
	}
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

const char *hs_jvm_comp_name(enum hs_jvm_comp c)
{
	static const char *const names[] = {"interpreted", "C1", "C2", "native", "stub"};

	return (unsigned)c < HS_ARRAY_SIZE(names) ? names[c] : "unknown";
}

enum hs_jvm_comp hs_jvm_comp_of_level(int comp_level)
{
	if (comp_level >= 1 && comp_level <= 3)
		return HS_JVM_C1;
	return comp_level == 4 ? HS_JVM_C2 : HS_JVM_NATIVE;
}

int hs_jvm_interpreter(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, uint64_t *begin, uint64_t *end)
{
	const struct hs_jvm_offsets *o = &jvm->info.off;
	uint64_t q, buf;
	int32_t limit;

	if (rd_u64(mem, jvm->info.interpreter, &q) || !q || rd_u64(mem, q + o->stubqueue_buffer, &buf) ||
	    rd(mem, q + o->stubqueue_limit, &limit, 4) || !buf || limit <= 0)
		return -EFAULT;
	*begin = buf;
	*end = buf + (uint32_t)limit;
	return 0;
}

/* The bytes of a blob's header that its fields need. */
static size_t header_span(const struct hs_jvm *jvm)
{
	const struct hs_jvm_offsets *o = &jvm->info.off;
	const uint16_t at[] = {o->blob_name,
			       o->blob_size,
			       o->blob_frame_size,
			       o->blob_frame_complete,
			       o->blob_code_begin,
			       o->blob_code_end,
			       o->nmethod_method,
			       o->nmethod_compile_id,
			       o->nmethod_comp_level,
			       o->nmethod_entry_bci,
			       o->blob_kind == HS_JVM_NONE ? 0 : o->blob_kind};
	size_t span = 0;

	for (size_t i = 0; i < HS_ARRAY_SIZE(at); i++)
		span = HS_MAX(span, (size_t)at[i] + 8);
	return span;
}

static bool is_nmethod(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, const uint8_t *h, uint64_t name)
{
	const struct hs_jvm_offsets *o = &jvm->info.off;
	char s[16] = "";

	if (o->kind_by == HS_JVM_KIND_FIELD)
		return h[o->blob_kind] == o->kind_nmethod;
	/* JDK 17's nmethods are named by their constructors ("nmethod", "native nmethod") */
	return name && !rd(mem, name, s, sizeof(s) - 1) && (!strcmp(s, "nmethod") || !strcmp(s, "native nmethod"));
}

/* The blob's name, cut to fit, read up to the end of its page first. */
static void read_name(const struct hs_rt_mem *mem, uint64_t name, char *buf, size_t len)
{
	size_t n = HS_MIN(len - 1, 4096 - (size_t)(name & 4095));

	buf[0] = 0;
	if (!name || rd(mem, name, buf, n))
		return;
	buf[n] = 0;
	for (size_t i = 0; buf[i]; i++)
		if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] > 0x7e)
			buf[i] = '?';
}

int hs_jvm_blob_read(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, uint64_t addr, struct hs_jvm_blob *ret)
{
	const struct hs_jvm_offsets *o = &jvm->info.off;
	size_t span = header_span(jvm);
	uint8_t h[MAX_BLOB_HEADER];
	struct hs_jvm_blob b = {.addr = addr};
	uint64_t name, ib, ie;

	if (span > sizeof(h))
		return -EBADMSG;
	if (rd(mem, addr, h, span))
		return -EFAULT;
	name = get_u64(h + o->blob_name);
	b.size = (int32_t)get_int(h + o->blob_size, 4);
	b.frame_size = (int32_t)get_int(h + o->blob_frame_size, 4);
	b.frame_complete = (int32_t)get_int(h + o->blob_frame_complete, o->blob_frame_complete_size);
	if (o->code_by == HS_JVM_CODE_OFFSET) {
		b.code_begin = addr + (uint32_t)get_int(h + o->blob_code_begin, 4);
		b.code_end = addr + (uint32_t)get_int(h + o->blob_code_end, 4);
	} else {
		b.code_begin = get_u64(h + o->blob_code_begin);
		b.code_end = get_u64(h + o->blob_code_end);
	}
	if (b.size <= 0 || (uint32_t)b.size > MAX_BLOB_SIZE || b.code_begin < addr || b.code_begin > b.code_end ||
	    b.code_end > addr + (uint32_t)b.size || b.frame_size < 0 || b.frame_size > 65536)
		return -EBADMSG;
	read_name(mem, name, b.name, sizeof(b.name));
	if (is_nmethod(jvm, mem, h, name)) {
		b.kind = HS_JVM_BLOB_NMETHOD;
		b.method = get_u64(h + o->nmethod_method);
		b.compile_id = (int32_t)get_int(h + o->nmethod_compile_id, 4);
		b.comp_level = (int32_t)get_int(h + o->nmethod_comp_level, o->nmethod_comp_level_size);
		b.entry_bci = (int32_t)get_int(h + o->nmethod_entry_bci, 4);
	} else if (!hs_jvm_interpreter(jvm, mem, &ib, &ie) && ib >= b.code_begin && ib < b.code_end) {
		b.kind = HS_JVM_BLOB_INTERPRETER;
	}
	*ret = b;
	return 0;
}

/* A code heap: its memory and its segment map. */
struct heap {
	uint64_t low, high, segmap;
	unsigned log2;
};

/* The code heaps, at most HS_JVM_MAX_HEAPS: their count, or a negative errno. */
static int read_heaps(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, struct heap *out)
{
	const struct hs_jvm_offsets *o = &jvm->info.off;
	uint64_t arr, data, ptrs[HS_JVM_MAX_HEAPS];
	int32_t len;

	if (rd_u64(mem, jvm->info.code_heaps, &arr) || !arr || rd(mem, arr + o->array_len, &len, 4) ||
	    rd_u64(mem, arr + o->array_data, &data))
		return -EFAULT;
	if (len < 0 || len > HS_JVM_MAX_HEAPS)
		return -EBADMSG;
	if (rd(mem, data, ptrs, (size_t)len * 8))
		return -EFAULT;
	for (int i = 0; i < len; i++) {
		int32_t log2;
		if (rd_u64(mem, ptrs[i] + o->heap_memory_low, &out[i].low) ||
		    rd_u64(mem, ptrs[i] + o->heap_memory_high, &out[i].high) ||
		    rd_u64(mem, ptrs[i] + o->heap_segmap_low, &out[i].segmap) ||
		    rd(mem, ptrs[i] + o->heap_log2_segment, &log2, 4))
			return -EFAULT;
		if (log2 < 4 || log2 > 16 || out[i].low > out[i].high)
			return -EBADMSG;
		out[i].log2 = (unsigned)log2;
	}
	return len;
}

/* The blob of the block starting at segment idx of heap h, when the block is in use. */
static int block_blob(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, const struct heap *h, uint64_t idx,
		      struct hs_jvm_blob *ret)
{
	uint64_t block = h->low + (idx << h->log2);
	uint8_t used;

	if (rd(mem, block + jvm->info.off.block_used, &used, 1))
		return -EFAULT;
	if (!used)
		return -ENOENT;
	return hs_jvm_blob_read(jvm, mem, block + jvm->info.off.block_size, ret);
}

int hs_jvm_blob_at(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, uint64_t pc, struct hs_jvm_blob *ret)
{
	struct heap heaps[HS_JVM_MAX_HEAPS];
	int n = read_heaps(jvm, mem, heaps);

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		const struct heap *h = &heaps[i];
		uint64_t idx;
		uint8_t hop;
		int rc;

		if (pc < h->low || pc >= h->high)
			continue;
		idx = (pc - h->low) >> h->log2;
		/* each byte is how many segments back the block's start is, or a step towards it:
		 * 0 at the start, FREE_SEGMENT in free space */
		for (int hops = 0;; hops++) {
			if (rd(mem, h->segmap + idx, &hop, 1))
				return -EFAULT;
			if (hop == FREE_SEGMENT)
				return -ENOENT;
			if (!hop)
				break;
			if (hop > idx || hops == HS_JVM_MAX_SEGMAP_HOPS)
				return -EBADMSG;
			idx -= hop;
		}
		if ((rc = block_blob(jvm, mem, h, idx, ret)))
			return rc;
		return pc >= ret->addr && pc < ret->addr + (uint32_t)ret->size ? 0 : -ENOENT;
	}
	return -ENOENT;
}

int hs_jvm_blobs_each(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, size_t max,
		      int (*fn)(void *arg, const struct hs_jvm_blob *b), void *arg)
{
	const struct hs_jvm_offsets *o = &jvm->info.off;
	struct heap heaps[HS_JVM_MAX_HEAPS];
	int n = read_heaps(jvm, mem, heaps);
	size_t seen = 0;

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		const struct heap *h = &heaps[i];
		uint64_t nseg = (h->high - h->low) >> h->log2;

		for (uint64_t idx = 0; idx < nseg && seen < max;) {
			uint8_t hdr[64] = {0};
			uint64_t len;
			struct hs_jvm_blob b;
			int rc;

			if (rd(mem, h->low + (idx << h->log2), hdr, o->block_size))
				break;
			len = o->block_length_size == 8 ? get_u64(hdr + o->block_length)
							: (uint32_t)get_int(hdr + o->block_length, 4);
			if (!len || len > nseg - idx)
				break; /* past the last block */
			if (hdr[o->block_used] &&
			    !hs_jvm_blob_read(jvm, mem, h->low + (idx << h->log2) + o->block_size, &b)) {
				seen++;
				if ((rc = fn(arg, &b)))
					return rc;
			}
			idx += len;
		}
	}
	return 0;
}

/* Where an nmethod's PcDescs, scopes and metadata are. */
struct nm_sections {
	uint64_t pcs, pcs_end, data, data_end, meta, meta_end;
};

static int nm_sections(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, uint64_t nm, struct nm_sections *s)
{
	const struct hs_jvm_layout *l = &jvm->lay;
	int32_t a, b, c;
	uint64_t base;

	if (l->nm_data == HS_JVM_NM_IN_BLOB) {
		/* in the blob: metadata, scopes data, PcDescs, then dependencies (nmethod.hpp) */
		if (rd(mem, nm + l->nm_metadata, &a, 4) || rd(mem, nm + l->nm_scopes_pcs, &b, 4) ||
		    rd(mem, nm + l->nm_dependencies, &c, 4) || rd_u64(mem, nm + l->nm_scopes_data, &s->data))
			return -EFAULT;
		s->meta = nm + (uint32_t)a;
		s->meta_end = s->data;
		s->data_end = s->pcs = nm + (uint32_t)b;
		s->pcs_end = nm + (uint32_t)c;
	} else {
		uint64_t mut;
		/* PcDescs then scopes in the immutable data; metadata after the relocations in the
		 * mutable data */
		if (rd_u64(mem, nm + l->nm_immutable, &base) || rd(mem, nm + l->nm_immutable_size, &a, 4) ||
		    rd(mem, nm + l->nm_scopes_pcs_off, &b, 4) || rd(mem, nm + l->nm_scopes_data_off, &c, 4))
			return -EFAULT;
		s->pcs = base + (uint32_t)b;
		s->pcs_end = s->data = base + (uint32_t)c;
		s->data_end = base + (uint32_t)a;
		if (rd_u64(mem, nm + l->blob_mutable, &mut) || rd(mem, nm + l->blob_mutable_size, &a, 4) ||
		    rd(mem, nm + l->blob_relocation_size, &b, 4))
			return -EFAULT;
		s->meta = mut + (uint32_t)b;
		s->meta_end = mut + (uint32_t)a;
	}
	if (s->pcs > s->pcs_end || s->data > s->data_end || s->meta > s->meta_end ||
	    s->pcs_end - s->pcs > MAX_SECTION || s->data_end - s->data > MAX_SECTION ||
	    s->meta_end - s->meta > MAX_SECTION)
		return -EBADMSG;
	return 0;
}

/* The scope decode offset of the first PcDesc at or after pc (a return address has its own;
 * a pc between two calls is described by the next). */
static int find_pc(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, const struct nm_sections *s, int64_t off,
		   int32_t *scope)
{
	const struct hs_jvm_layout *l = &jvm->lay;
	size_t n = (size_t)(s->pcs_end - s->pcs) / l->pc_size, lo = 0, hi = n;
	uint8_t *pcs;
	int rc = -ENOENT;

	if (!n)
		return -ENOENT;
	pcs = hs_xmalloc(n * l->pc_size);
	if (rd(mem, s->pcs, pcs, n * l->pc_size)) {
		free(pcs);
		return -EFAULT;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (get_int(pcs + mid * l->pc_size + l->pc_offset, 4) < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n) {
		*scope = (int32_t)get_int(pcs + lo * l->pc_size + l->pc_scope, 4);
		rc = *scope > 0 ? 0 : -ENOENT; /* 0 is DebugInformationRecorder::serialized_null */
	}
	free(pcs);
	return rc;
}

/* Decodes the scope chain from decode offset at: each scope is its sender's decode offset, the
 * method's index in the metadata (1-based) and the bci + 1 (code/scopeDesc.cpp). */
static int decode_scopes(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, const struct nm_sections *s,
			 int32_t at, struct hs_jvm_scope *out, size_t max, size_t *n)
{
	size_t size = (size_t)(s->data_end - s->data), k = 0;
	struct hs_jvm_stream st = {.n = size, .x = jvm->lay.unsigned5_x};
	uint8_t *data = hs_xmalloc(size ? size : 1);
	int rc = 0;

	if (rd(mem, s->data, data, size)) {
		free(data);
		return -EFAULT;
	}
	st.p = data;
	for (int depth = 0; at > 0 && k < max; depth++) {
		uint32_t sender, index, bci;
		uint64_t method;

		if (depth == MAX_SCOPE_DEPTH || (size_t)at >= size) {
			rc = -EBADMSG;
			break;
		}
		st.pos = (size_t)at;
		sender = hs_jvm_stream_uint(&st);
		index = hs_jvm_stream_uint(&st);
		bci = hs_jvm_stream_uint(&st);
		if (st.bad || !index || index > (s->meta_end - s->meta) / 8 || sender > INT32_MAX) {
			rc = -EBADMSG;
			break;
		}
		if (rd_u64(mem, s->meta + (uint64_t)(index - 1) * 8, &method)) {
			rc = -EFAULT;
			break;
		}
		out[k++] = (struct hs_jvm_scope){method, (int32_t)bci - 1};
		at = (int32_t)sender;
	}
	free(data);
	if (!rc)
		*n = k;
	return rc;
}

int hs_jvm_scopes(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, const struct hs_jvm_blob *nm, uint64_t pc,
		  struct hs_jvm_scope *out, size_t max, size_t *n)
{
	struct nm_sections s;
	int32_t at;
	int rc;

	if (nm->kind != HS_JVM_BLOB_NMETHOD || pc < nm->code_begin || pc > nm->code_end)
		return -ENOENT;
	if ((rc = nm_sections(jvm, mem, nm->addr, &s)) ||
	    (rc = find_pc(jvm, mem, &s, (int64_t)(pc - nm->code_begin), &at)))
		return rc;
	return decode_scopes(jvm, mem, &s, at, out, max, n);
}

int hs_jvm_threads(const struct hs_jvm *jvm, const struct hs_rt_mem *mem, struct hs_jvm_thread *out, size_t max,
		   size_t *n)
{
	const struct hs_jvm_offsets *o = &jvm->info.off;
	uint64_t list, arr;
	uint32_t len;
	size_t k = 0;

	if (rd_u64(mem, jvm->info.java_threads, &list) || !list || rd(mem, list + o->threads_list_length, &len, 4) ||
	    rd_u64(mem, list + o->threads_list_threads, &arr))
		return -EFAULT;
	for (uint32_t i = 0; i < len && i < MAX_THREADS_READ && k < max; i++) {
		struct hs_jvm_thread t = {0};
		uint64_t os;

		if (rd_u64(mem, arr + (uint64_t)i * 8, &t.addr) || rd_u64(mem, t.addr + o->thread_osthread, &os) ||
		    !os || rd(mem, os + o->osthread_thread_id, &t.tid, 4) ||
		    rd(mem, t.addr + o->thread_state, &t.state, 4) || rd_u64(mem, t.addr + o->anchor_sp, &t.last_sp) ||
		    rd_u64(mem, t.addr + o->anchor_fp, &t.last_fp) || rd_u64(mem, t.addr + o->anchor_pc, &t.last_pc))
			continue; /* a thread being made or ended */
		out[k++] = t;
	}
	*n = k;
	return 0;
}
