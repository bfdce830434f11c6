/* /proc/kallsyms: "ADDRESS TYPE NAME [MODULE]" per line. */
#include "kallsyms.h"

#include <stdbool.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/util.h"

#define KALLSYMS_MAX_SYMS (8u << 20)

/* Sorts by address; among aliases at one address the first is the one shown: the core kernel
 * before modules, a global symbol before a local one, then fewer leading underscores, then the
 * shorter name, then name order (so the choice never depends on the order of the lines). */
static int ksym_cmp(const void *a, const void *b, void *names)
{
	const struct hs_ksym *x = a, *y = b;
	const char *n = names, *nx = n + x->name, *ny = n + y->name;
	size_t ux = strspn(nx, "_"), uy = strspn(ny, "_"), lx, ly;
	int c;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if ((c = strcmp(n + x->module, n + y->module)))
		return c;
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

static uint32_t add_name(struct hs_strbuf *pool, const char *s, size_t n)
{
	uint32_t off = (uint32_t)pool->len;
	hs_strbuf_add(pool, s, n);
	hs_strbuf_addc(pool, '\0');
	return off;
}

int hs_kallsyms_load(const char *path, struct hs_kallsyms **ret)
{
	HS_VEC(struct hs_ksym) syms = {0};
	struct hs_strbuf pool = {0};
	char *line = NULL, lastmod[64] = "";
	uint32_t lastmod_off = 0;
	size_t cap = 0;
	bool nonzero = false;
	FILE *f = fopen(path, "re");
	struct hs_kallsyms *k;

	if (!f)
		return -errno;
	hs_strbuf_addc(&pool, '\0');
	while (getline(&line, &cap, f) > 0 && syms.n < KALLSYMS_MAX_SYMS) {
		char *p = line, *end, *name, *mod = NULL;
		uint64_t addr = strtoull(p, &end, 16);
		char type;
		size_t nlen;
		struct hs_ksym s;

		if (end == p || *end != ' ')
			continue;
		type = end[1];
		if (!type || end[2] != ' ')
			continue;
		/* text symbols only: code addresses are all a profile ever looks up */
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = end + 3;
		nlen = strcspn(name, "\t\n ");
		if (name[nlen] == '\t' && name[nlen + 1] == '[') {
			mod = name + nlen + 2;
			mod[strcspn(mod, "]\n")] = '\0';
		}
		if (!nlen || nlen > 1024)
			continue;
		if (addr)
			nonzero = true;
		s.addr = addr;
		s.name = add_name(&pool, name, nlen);
		s.module = 0;
		s.global = type == 'T' || type == 'W';
		if (mod && *mod) {
			if (strcmp(mod, lastmod)) {
				snprintf(lastmod, sizeof(lastmod), "%s", mod);
				lastmod_off = add_name(&pool, mod, strlen(mod));
			}
			s.module = lastmod_off;
		}
		hs_vec_push(&syms, s);
	}
	free(line);
	fclose(f);
	if (!nonzero) {
		hs_vec_free(&syms);
		hs_strbuf_release(&pool);
		return -ENODATA;
	}
	qsort_r(syms.v, syms.n, sizeof(*syms.v), ksym_cmp, pool.buf);
	{
		size_t kept = 0;
		for (size_t i = 0; i < syms.n; i++)
			if (!kept || syms.v[kept - 1].addr != syms.v[i].addr)
				syms.v[kept++] = syms.v[i];
		syms.n = kept;
	}
	k = hs_xcalloc(1, sizeof(*k));
	k->syms = syms.v;
	k->n = syms.n;
	k->names_len = pool.len;
	k->names = hs_strbuf_detach(&pool);
	/* no sizes in kallsyms: allow up to a page past the last symbol */
	k->text_end = syms.n ? syms.v[syms.n - 1].addr + 4096 : 0;
	*ret = k;
	return 0;
}

void hs_kallsyms_free(struct hs_kallsyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->names);
	free(k);
}

const struct hs_ksym *hs_kallsyms_lookup(const struct hs_kallsyms *k, uint64_t addr)
{
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
	return lo ? &k->syms[lo - 1] : NULL;
}
