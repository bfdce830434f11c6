/* /proc/kallsyms: "ADDRESS TYPE NAME [MODULE]" per line. */
#include "kallsyms.h"

#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/util.h"

/* A kernel with every module loaded has a few hundred thousand symbols in 10 to 40 MiB. */
#define KALLSYMS_MAX_SYMS (4u << 20)
#define KALLSYMS_MAX_BYTES ((size_t)256 << 20)

/* The kernel image's symbols that mark where a section of text ends, not code: _etext (the end
 * of the kernel's text), _einittext (of its init text) and __*_text_end (__entry_text_end,
 * __irqentry_text_end, __hot_text_end ...). What follows one up to the next symbol is in no
 * function (alignment, or no text at all): the kernel's last init function does not reach up
 * to the modules. */
static bool end_marker(const char *name)
{
	size_t n;

	if (!strcmp(name, "_etext") || !strcmp(name, "_einittext"))
		return true;
	n = strlen(name);
	return n > 11 && !strncmp(name, "__", 2) && !strcmp(name + n - 9, "_text_end");
}

/* Sorts by address; among aliases at one address the first is the one shown: the core kernel
 * before modules, a function before an end marker, a global symbol before a local one, then
 * fewer leading underscores, then the shorter name, then name order (so the choice never
 * depends on the order of the lines). */
static int ksym_cmp(const void *a, const void *b, void *names)
{
	const struct hs_ksym *x = a, *y = b;
	const char *n = names, *nx = n + x->name, *ny = n + y->name;
	size_t ux = strspn(nx, "_"), uy = strspn(ny, "_"), lx, ly;
	int c;
	bool mx, my;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if ((c = strcmp(n + x->module, n + y->module)))
		return c;
	mx = !x->module && end_marker(nx);
	my = !y->module && end_marker(ny);
	if (mx != my)
		return mx ? 1 : -1;
	if (x->global != y->global)
		return x->global ? -1 : 1;
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(nx);
	ly = strlen(ny);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(nx, ny);
}


static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int hs_kallsyms_load(const char *path, struct hs_kallsyms **ret)
{
	HS_VEC(struct hs_ksym) syms = {0};
	char *buf = NULL, *p, *end;
	size_t len = 0;
	bool nonzero = false;
	struct hs_kallsyms *k;
	/* the whole file after one NUL byte, so that offset 0 is the empty string */
	int rc = hs_read_file(path, 1, KALLSYMS_MAX_BYTES, &buf, &len);

	if (rc)
		return rc;
	/* parsed in place: names and module names are NUL-terminated inside the buffer, which
	 * becomes the table's string pool */
	end = buf + len;
	for (p = buf + 1; p < end && syms.n < KALLSYMS_MAX_SYMS;) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *q = p, *name, *mod = NULL;
		uint64_t addr = 0;
		int digits = 0, v;
		char type;
		struct hs_ksym s;

		if (!nl)
			nl = end;
		*nl = '\0';
		while ((v = hexval(*q)) >= 0 && digits < 17) {
			addr = addr << 4 | (uint64_t)v;
			q++;
			digits++;
		}
		type = q[0] == ' ' ? q[1] : 0;
		name = q + 3;
		p = nl + 1;
		/* text symbols only: code addresses are all a profile ever looks up */
		if (!digits || digits > 16 || !type || q[2] != ' ' ||
		    (type != 't' && type != 'T' && type != 'w' && type != 'W'))
			continue;
		{
			char *tab = strchr(name, '\t');
			if (tab) {
				*tab = '\0';
				if (tab[1] == '[') {
					char *close = strchr(tab + 2, ']');
					if (close)
						*close = '\0';
					mod = tab + 2;
				}
			}
		}
		if (!*name || strlen(name) > 1024)
			continue;
		if (addr)
			nonzero = true;
		s.addr = addr;
		s.name = (uint32_t)(name - buf);
		s.module = mod && *mod ? (uint32_t)(mod - buf) : 0;
		s.global = type == 'T' || type == 'W';
		hs_vec_push(&syms, s);
	}
	if (!nonzero || len > UINT32_MAX) {
		hs_vec_free(&syms);
		free(buf);
		return -ENODATA;
	}
	{
		/* /proc/kallsyms comes sorted by address: then only the aliases at each address need
		 * choosing among, not a full sort */
		bool sorted = true;
		size_t kept = 0;

		for (size_t i = 1; i < syms.n && sorted; i++)
			sorted = syms.v[i - 1].addr <= syms.v[i].addr;
		if (!sorted)
			qsort_r(syms.v, syms.n, sizeof(*syms.v), ksym_cmp, buf);
		for (size_t i = 0; i < syms.n; i++) {
			if (kept && syms.v[kept - 1].addr == syms.v[i].addr) {
				if (ksym_cmp(&syms.v[i], &syms.v[kept - 1], buf) < 0)
					syms.v[kept - 1] = syms.v[i];
			} else {
				syms.v[kept++] = syms.v[i];
			}
		}
		syms.n = kept;
	}
	k = hs_xcalloc(1, sizeof(*k));
	k->syms = syms.v;
	k->n = syms.n;
	k->names_len = len;
	k->names = buf;
	/* no sizes in kallsyms: allow up to a page past the last symbol */
	k->text_end = syms.n ? syms.v[syms.n - 1].addr + 4096 : 0;
	*ret = k;
	return 0;
}

void hs_kallsyms_free(struct hs_kallsyms *k)
{
	if (!k)
		return;
	if (k->map) {
		munmap(k->map, k->map_len);
	} else {
		free(k->syms);
		free(k->names);
	}
	free(k);
}

bool hs_kallsyms_covers(const struct hs_kallsyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->nranges;

	if (!k->ranges)
		return true;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->ranges[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < k->ranges[lo - 1].end;
}

/* Where the symbol at index i ends, kallsyms giving no sizes: at the next symbol of the same
 * module (the kernel image, a module, the BPF programs, a kind of trampoline), else at the end of
 * its page, or at the next symbol when that comes first: a module's text is one page-aligned
 * allocation, and so are BPF programs and trampolines, and what lies past the last symbol of
 * one is someone else's code, or none. */
static uint64_t symbol_end(const struct hs_kallsyms *k, size_t i)
{
	const struct hs_ksym *s = &k->syms[i], *next = i + 1 < k->n ? &k->syms[i + 1] : NULL;
	long ps = sysconf(_SC_PAGESIZE);
	uint64_t page = ps > 0 ? (uint64_t)ps : 4096, end = (s->addr | (page - 1)) + 1;

	if (!end)
		end = UINT64_MAX;
	if (!next || next->addr <= s->addr) /* the last, or a damaged entry out of order */
		return end;
	if (next->module < k->names_len && !strcmp(k->names + s->module, k->names + next->module))
		return next->addr;
	return HS_MIN(next->addr, end);
}

const struct hs_ksym *hs_kallsyms_lookup(const struct hs_kallsyms *k, uint64_t addr)
{
	const struct hs_ksym *s;
	size_t lo = 0, hi = k->n;

	if (!k->n || addr >= k->text_end)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &k->syms[lo - 1];
	/* a cache entry's symbols are used unchecked (kallsyms-cache.c): names out of the pool
	 * are refused here, the one symbol that is used */
	if (s->name >= k->names_len || s->module >= k->names_len)
		return NULL;
	if ((!s->module && end_marker(k->names + s->name)) || addr >= symbol_end(k, lo - 1))
		return NULL;
	return s;
}
