/* hotstack collapse --inline: addr2line and nm, run the way stackcollapse-perf.pl runs them,
 * and what they printed, kept for the rest of the run (addr2line.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collapse/addr2line.h"

extern char **environ;

/* Runs argv (found in PATH, stderr shared with ours) and returns what it printed. A program
 * that cannot be run prints nothing, as it would under the Perl script's backticks. */
static void run_capture(struct hs_addr2line *a, char *const argv[], struct hs_strbuf *ret)
{
	posix_spawn_file_actions_t fa;
	char buf[65536];
	int out[2], st, rc;
	pid_t pid;
	ssize_t n;

	hs_strbuf_reset(ret);
	if (pipe2(out, O_CLOEXEC))
		return;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	if (rc) {
		if (!a->spawn_warned && a->warn) {
			char msg[256];
			snprintf(msg, sizeof(msg), "--inline: cannot run %s: %s", argv[0], strerror(rc));
			a->warn(a->warn_ctx, msg);
		}
		a->spawn_warned = true;
		close(out[0]);
		return;
	}
	while ((n = read(out[0], buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		hs_strbuf_add(ret, buf, (size_t)n);
	}
	close(out[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

/* What `addr2line -a PC -e MOD -i -f -s -C` prints after its first line. One process per
 * address, as the Perl script runs it: an addr2line asked several addresses can name the
 * function at one of them differently, depending on what it was asked before. */
static void a2l_ask(struct hs_addr2line *a, const char *pc, const char *mod, struct hs_strbuf *ret)
{
	char *argv[] = {"addr2line", "-a", (char *)pc, "-e", (char *)mod, "-i", "-f", "-s", "-C", NULL};
	const char *nl;

	run_capture(a, argv, ret);
	nl = memchr(hs_strbuf_str(ret), '\n', ret->len);
	if (!nl) {
		hs_strbuf_reset(ret);
		return;
	}
	ret->len -= (size_t)(nl + 1 - ret->buf);
	memmove(ret->buf, nl + 1, ret->len + 1);
}

static const struct hs_a2l_nm *nm_get(struct hs_addr2line *a, const char *mod)
{
	char *argv[] = {"nm", (char *)mod, NULL};
	struct hs_strbuf sb = {0};
	struct hs_a2l_nm o;

	for (size_t i = 0; i < a->nm.n; i++)
		if (!strcmp(a->nm.v[i].mod, mod))
			return &a->nm.v[i];
	run_capture(a, argv, &sb);
	o.mod = hs_xstrdup(mod);
	o.len = sb.len;
	o.text = hs_strbuf_detach(&sb);
	hs_vec_push(&a->nm, o);
	return &a->nm.v[a->nm.n - 1];
}

/* The first line of nm's output that is "HEX T NAME" for this exact NAME: its address. */
static bool nm_find(const struct hs_a2l_nm *a, const char *name, size_t nlen, uint64_t *ret)
{
	const char *p = a->text, *end = a->text + a->len;

	while (p && p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *q = p;
		uint64_t v = 0;

		if (!eol)
			eol = end;
		while (q < eol && ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f')))
			v = v << 4 | (uint64_t)(*q <= '9' ? *q - '0' : *q - 'a' + 10), q++;
		if (q > p && eol - q == (ptrdiff_t)(3 + nlen) && q[0] == ' ' && q[2] == ' ' &&
		    !memcmp(q + 3, name, nlen)) {
			*ret = v;
			return true;
		}
		p = eol + 1;
	}
	return false;
}

static uint64_t hex_prefix(const char *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v = v << 4 | (uint64_t)(p[i] <= '9' ? p[i] - '0' : p[i] - 'a' + 10);
	return v;
}

size_t hs_addr2line_drop_discriminator(char *l, size_t n)
{
	static const char pat[] = " (discriminator ";
	const size_t np = sizeof(pat) - 1;
	char *p = l;

	while ((p = memmem(p, n - (size_t)(p - l), pat, np))) {
		char *q = p + np, *rp = NULL, *e = l + n;
		for (char *r = q; r < e && !(*r == ' ' || (*r >= '\t' && *r <= '\r')); r++)
			if (*r == ')' && r > q)
				rp = r;
		if (rp) {
			memmove(p, rp + 1, (size_t)(e - rp - 1));
			return n - (size_t)(rp + 1 - p);
		}
		p++;
	}
	return n;
}

struct icache_key {
	const struct hs_addr2line *a;
	const char *pc, *mod;
};

static bool icache_eq(const void *ctx, uint32_t id)
{
	const struct icache_key *k = ctx;
	const struct hs_a2l_entry *e = &k->a->cache.v[id];

	return !strcmp(e->pc, k->pc) && !strcmp(e->mod, k->mod);
}

static struct hs_a2l_entry *icache_find(struct hs_addr2line *a, const char *pc, const char *mod, uint64_t *hash)
{
	struct icache_key k = {a, pc, mod};
	uint32_t id;

	*hash = hs_hash_combine(hs_hash_mem(pc, strlen(pc)), hs_hash_mem(mod, strlen(mod)));
	id = hs_index_find(&a->ix, *hash, icache_eq, &k);
	return id == UINT32_MAX ? NULL : &a->cache.v[id];
}

static const char *inline_remember(struct hs_addr2line *a, const char *pc, const char *mod, uint64_t h, char *result)
{
	struct hs_a2l_entry e = {hs_xstrdup(pc), hs_xstrdup(mod), result};

	hs_vec_push(&a->cache, e);
	hs_index_insert(&a->ix, h, (uint32_t)(a->cache.n - 1));
	return result;
}

/* The Perl script's inline(): addr2line's function names (and file:line with --context),
 * outermost first, joined with ';'; "" when it has none. Cached per (pc, module), with the
 * first symbol seen, as the Perl script caches it. */
static const char *inline_names(struct hs_addr2line *a, const char *pc, const char *rawfunc, size_t rawlen,
				const char *mod)
{
	struct hs_a2l_entry *e;
	struct hs_strbuf out = {0}, res = {0};
	HS_VEC(char *) items = {0};
	uint64_t h;
	char *p, *end, *one = NULL;
	size_t one_n = 0;

	if ((e = icache_find(a, pc, mod, &h)))
		return e->result;
	a2l_ask(a, pc, mod, &out);

	if (out.len && memmem(out.buf, out.len, "??\n??:0", 7)) {
		/* addr2line knows nothing there: try the symbol's address from nm plus the
		 * offset perf printed (/^(.+)\+0x([0-9a-f]+)$/ on the symbol). */
		size_t hx = rawlen;
		while (hx > 0 && ((rawfunc[hx - 1] >= '0' && rawfunc[hx - 1] <= '9') ||
				  (rawfunc[hx - 1] >= 'a' && rawfunc[hx - 1] <= 'f')))
			hx--;
		if (hx < rawlen && hx >= 4 && !memcmp(rawfunc + hx - 3, "+0x", 3)) {
			uint64_t base;
			if (nm_find(nm_get(a, mod), rawfunc, hx - 3, &base)) {
				char newpc[24];
				const char *r;
				snprintf(newpc, sizeof(newpc), "0x%" PRIx64, base + hex_prefix(rawfunc + hx, rawlen - hx));
				r = inline_names(a, newpc, "", 0, mod);
				hs_strbuf_release(&out);
				return inline_remember(a, pc, mod, h, hs_xstrdup(r));
			}
		}
	}

	/* Lines in pairs, function then file:line; innermost first from addr2line. */
	p = out.buf;
	end = out.buf + out.len;
	while (p && p < end) {
		char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((eol ? eol : end) - p);

		n = hs_addr2line_drop_discriminator(p, n);
		if (!one) {
			one = p;
			one_n = n;
		} else {
			struct hs_strbuf item = {0};
			hs_strbuf_add(&item, one, one_n);
			if (a->context) {
				hs_strbuf_addc(&item, ':');
				hs_strbuf_add(&item, p, n);
			}
			hs_vec_push(&items, hs_strbuf_detach(&item));
			one = NULL;
		}
		p = eol ? eol + 1 : end;
	}
	for (size_t i = items.n; i-- > 0;) {
		if (i + 1 < items.n)
			hs_strbuf_addc(&res, ';');
		hs_strbuf_adds(&res, items.v[i]);
		free(items.v[i]);
	}
	hs_vec_free(&items);
	hs_strbuf_release(&out);
	return inline_remember(a, pc, mod, h, hs_strbuf_detach(&res));
}

void hs_addr2line_release(struct hs_addr2line *a)
{
	for (size_t i = 0; i < a->nm.n; i++) {
		free(a->nm.v[i].mod);
		free(a->nm.v[i].text);
	}
	hs_vec_free(&a->nm);
	for (size_t i = 0; i < a->cache.n; i++) {
		free(a->cache.v[i].pc);
		free(a->cache.v[i].mod);
		free(a->cache.v[i].result);
	}
	hs_vec_free(&a->cache);
	hs_index_release(&a->ix);
}

bool hs_addr2line_skips(const char *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (m[i] == 'p' && n - i >= 9 && !memcmp(m + i, "perf-", 5)) {
			/* \d+ then any byte then "map": the byte is the one after the digits, or
			 * the last digit (a shorter \d+), since "map" cannot start with a digit */
			size_t d = i + 5;
			while (d < n && m[d] >= '0' && m[d] <= '9')
				d++;
			if (d > i + 5 && n - d >= 4 && !memcmp(m + d + 1, "map", 3))
				return true;
			if (d > i + 6 && n - d >= 3 && !memcmp(m + d, "map", 3))
				return true;
		}
		if (m[i] == 'k' && n - i >= 7 && !memcmp(m + i, "kernel.", 7))
			return true;
		if (m[i] == '[' && i + 2 < n && m[i + 1] != ']') {
			const char *rb = memchr(m + i + 1, ']', n - i - 1);
			if (rb)
				return true;
		}
	}
	return false;
}

const char *hs_addr2line_expand(struct hs_addr2line *a, const struct hs_ps_frame *f)
{
	char *pc, *mod;
	const char *r;

	if (hs_addr2line_skips(f->module.p, f->module.n))
		return NULL;
	pc = hs_xstrndup(f->addr.p, f->addr.n);
	mod = hs_xstrndup(f->module.p, f->module.n);
	r = inline_names(a, pc, f->rawsym.p, f->rawsym.n, mod);
	free(pc);
	free(mod);
	return *r && strcmp(r, "??") && strcmp(r, "??:??:0") ? r : NULL;
}
