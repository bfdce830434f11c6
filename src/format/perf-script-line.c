/* One line of perf script text, matched the way FlameGraph's stackcollapse-perf.pl matches it:
 * its header and frame patterns are regular expressions with backtracking; the matchers below
 * reach the same splits without backtracking (the comments say why each shortcut is exact).
 * Character classes are Perl's on bytes: \s is [ \t\n\v\f\r], \w is [0-9A-Za-z_], \d is [0-9]. */
#include "perf-script.h"

#include <string.h>

static inline bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static inline bool is_word(unsigned char c)
{
	return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '_';
}

static inline int hex_val(unsigned char c)
{
	if (is_digit(c))
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

static uint64_t parse_dec(const char *s, size_t n, bool *overflow)
{
	uint64_t v = 0;

	*overflow = false;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10) {
			*overflow = true;
			return UINT64_MAX;
		}
		v = v * 10 + d;
	}
	return v;
}

static int64_t parse_id(const char *s, size_t n)
{
	bool ovf;
	uint64_t v;

	if (!n)
		return -1;
	v = parse_dec(s, n, &ovf);
	return ovf || v > INT32_MAX ? -1 : (int64_t)v;
}

static struct hs_ps_str str(const char *line, size_t b, size_t e)
{
	return (struct hs_ps_str){line + b, e - b};
}

/* "SEC.FRAC" as nanoseconds, FRAC of 1 to 9 digits (perf prints 6, or 9 with --ns). */
static uint64_t parse_time(const char *s, size_t n)
{
	const char *dot = memchr(s, '.', n);
	size_t ni = dot ? (size_t)(dot - s) : n;
	uint64_t sec, frac = 0;
	size_t k;
	bool ovf;

	sec = parse_dec(s, ni, &ovf);
	if (ovf || sec > UINT64_MAX / 1000000000u)
		return 0;
	if (dot) {
		for (k = ni + 1; k < n && k < ni + 10; k++)
			frac = frac * 10 + (unsigned)(s[k] - '0');
		for (; k < ni + 10; k++)
			frac *= 10;
	}
	return sec * 1000000000u + frac;
}

/*
 * The header pattern is /^(\S.+?)\s+(\d+)\/{0,}(\d+){0,}\s+/: the command name is the shortest
 * prefix of at least two bytes, starting with a non-space, that is followed by blanks, a
 * number (or "number/number"), and another blank. Where a blank run is followed by such a
 * number, every position inside the run is too, so the shortest prefix ends where the run
 * starts (or at 2, inside a run that starts at 1): trying each run once is enough. Within a
 * run's number the greedy split is the only one that can match, since whatever a shorter
 * digit run leaves is a digit or a '/', never the blank the pattern needs next.
 *
 * The event pattern is /:\s*(\d+)*\s+(\S+):\s*$/: the line (trailing blanks aside) ends in
 * ':', the name is the whole non-blank token before that colon, and what lies between the
 * previous ':' and the token must be blanks, optional digits (the period), blanks.
 */
bool hs_perf_script_parse_header(const char *s, size_t n, struct hs_ps_sample *ret)
{
	size_t e = 2, j = 0, k = 0, k2 = 0, k3 = 0, i, t;
	bool found = false;

	if (n < 2 || hs_ps_is_space((unsigned char)s[0]))
		return false;
	while (e < n) {
		if (!hs_ps_is_space((unsigned char)s[e])) {
			e++;
			continue;
		}
		for (j = e; j < n && hs_ps_is_space((unsigned char)s[j]); j++)
			;
		for (k = j; k < n && is_digit((unsigned char)s[k]); k++)
			;
		if (k > j) {
			for (k2 = k; k2 < n && s[k2] == '/'; k2++)
				;
			for (k3 = k2; k3 < n && is_digit((unsigned char)s[k3]); k3++)
				;
			if (k3 < n && hs_ps_is_space((unsigned char)s[k3])) {
				found = true;
				break;
			}
		}
		e = j;
	}
	if (!found)
		return false;

	*ret = (struct hs_ps_sample){.comm = str(s, 0, e)};
	if (k3 > k2) {
		ret->pid_text = str(s, j, k);
		ret->tid_text = str(s, k2, k3);
	} else {
		ret->pid_text = str(s, j, j);
		ret->tid_text = str(s, j, k);
	}
	ret->pid = parse_id(ret->pid_text.p, ret->pid_text.n);
	ret->tid = parse_id(ret->tid_text.p, ret->tid_text.n);
	ret->cpu = -1;

	/* Not part of the Perl patterns, for other readers: "[CPU]" and "SEC.FRAC:" after the ids. */
	for (i = k3; i < n && hs_ps_is_space((unsigned char)s[i]); i++)
		;
	if (i < n && s[i] == '[') {
		size_t d = i + 1;
		while (d < n && is_digit((unsigned char)s[d]))
			d++;
		if (d > i + 1 && d < n && s[d] == ']' && d - i <= 10) {
			ret->cpu = (int)parse_id(s + i + 1, d - i - 1);
			for (i = d + 1; i < n && hs_ps_is_space((unsigned char)s[i]); i++)
				;
		}
	}
	if (i < n && is_digit((unsigned char)s[i])) {
		size_t d = i;
		while (d < n && is_digit((unsigned char)s[d]))
			d++;
		if (d < n && s[d] == '.') {
			d++;
			while (d < n && is_digit((unsigned char)s[d]))
				d++;
		}
		if (d < n && s[d] == ':') {
			ret->time_text = str(s, i, d);
			ret->time_ns = parse_time(s + i, d - i);
		}
	}

	for (t = n; t > 0 && hs_ps_is_space((unsigned char)s[t - 1]); t--)
		;
	if (t >= 2 && s[t - 1] == ':') {
		size_t c = t - 1, b = c, a, d;
		const char *colon;

		while (b > 0 && !hs_ps_is_space((unsigned char)s[b - 1]))
			b--;
		colon = b > 0 && b < c ? memrchr(s, ':', b) : NULL;
		if (colon) {
			size_t p = (size_t)(colon - s);
			bool ok;

			for (a = p + 1; hs_ps_is_space((unsigned char)s[a]); a++)
				;
			for (d = a; d < b && is_digit((unsigned char)s[d]); d++)
				;
			if (d == a) {
				ok = a == b && b > p + 1;
			} else {
				size_t q = d;
				while (hs_ps_is_space((unsigned char)s[q]))
					q++;
				ok = q == b && b > d;
			}
			if (ok) {
				bool ovf;
				ret->event = str(s, b, c);
				ret->period_text = str(s, a, d);
				ret->period = parse_dec(s + a, d - a, &ovf);
			}
		}
	}
	if (!ret->event.p)
		ret->event = ret->period_text = str(s, n, n);
	if (!ret->time_text.p)
		ret->time_text = str(s, n, n);
	return true;
}

static bool module_is_jit(const char *m, size_t n)
{
	static const char pre[] = "/tmp/perf-";
	const size_t np = sizeof(pre) - 1;
	const char *p = m, *end = m + n;

	while ((p = memmem(p, (size_t)(end - p), pre, np))) {
		const char *d = p + np, *q = d;
		while (q < end && is_digit((unsigned char)*q))
			q++;
		if (q > d && end - q >= 4 && !memcmp(q, ".map", 4))
			return true;
		p++;
	}
	return false;
}

static unsigned module_flags(const char *m, size_t n)
{
	unsigned f = 0;

	if (n && (m[0] == '[' || (n >= 7 && !memcmp(m + n - 7, "vmlinux", 7))) && !memmem(m, n, "unknown", 7))
		f |= HS_PS_KERNEL;
	if (n >= 14 && module_is_jit(m, n))
		f |= HS_PS_JIT;
	if (n == 7 && !memcmp(m, "inlined", 7))
		f |= HS_PS_INLINED;
	return f;
}

/*
 * The frame pattern is /^\s*(\w+)\s*(.+) \((.*)\)/. With (.+) and (.*) greedy, the module
 * opens at the last " (" that has a ')' somewhere after it (call it g) and closes at the last
 * ')' of the line, whatever the symbol started with. The first try (the whole word as the
 * address, every blank after it skipped) matches when g leaves the symbol a byte. Otherwise
 * the pattern backtracks: the symbol starts one byte before g, inside the blanks after the
 * word, or at the word's last byte when g is right after the word.
 */
bool hs_perf_script_parse_frame(const char *s, size_t n, struct hs_ps_frame *ret)
{
	size_t i0 = 0, we, se, lp, g, ab, ae, rb, re, h;
	const char *rp;

	while (i0 < n && hs_ps_is_space((unsigned char)s[i0]))
		i0++;
	if (i0 == n || !is_word((unsigned char)s[i0]))
		return false;
	for (we = i0; we < n && is_word((unsigned char)s[we]); we++)
		;
	for (se = we; se < n && hs_ps_is_space((unsigned char)s[se]); se++)
		;
	rp = memrchr(s, ')', n);
	if (!rp || rp - s < 2)
		return false;
	lp = (size_t)(rp - s);
	for (g = lp - 2;; g--) {
		if (s[g] == ' ' && s[g + 1] == '(')
			break;
		if (!g)
			return false;
	}
	if (g >= se + 1) {
		ab = i0, ae = we, rb = se, re = g;
	} else if (g > we) {
		ab = i0, ae = we, rb = g - 1, re = g;
	} else if (g == we && we - i0 >= 2) {
		ab = i0, ae = we - 1, rb = we - 1, re = we;
	} else {
		return false;
	}

	*ret = (struct hs_ps_frame){.addr = str(s, ab, ae)};
	if (ae - ab <= 16) {
		uint64_t v = 0;
		size_t k;
		for (k = ab; k < ae; k++) {
			int x = hex_val((unsigned char)s[k]);
			if (x < 0)
				break;
			v = v << 4 | (unsigned)x;
		}
		ret->ip = k == ae ? v : 0;
	}
	ret->rawsym = str(s, rb, re);
	ret->sym = ret->rawsym;
	/* s/\+0x[\da-f]+$//: '+' and 'x' are not hex digits, so the offset is the whole run of
	 * lower-case hex digits at the end, right after "+0x". */
	for (h = re; h > rb && (is_digit((unsigned char)s[h - 1]) || (s[h - 1] >= 'a' && s[h - 1] <= 'f')); h--)
		;
	if (h < re && h >= rb + 3 && !memcmp(s + h - 3, "+0x", 3)) {
		ret->sym.n = h - 3 - rb;
		for (size_t k = h; k < re; k++)
			ret->offset = ret->offset << 4 | (unsigned)hex_val((unsigned char)s[k]);
	}
	ret->module = str(s, g + 2, lp);
	ret->flags = module_flags(ret->module.p, ret->module.n);
	return true;
}

void hs_ps_parts_init(struct hs_ps_parts *it, struct hs_ps_str sym)
{
	/* "->" cannot overlap itself, so the separators found from the right are the ones a
	 * left-to-right split finds: trailing empty names are the "->"s at the end. */
	size_t n = sym.n;

	while (n >= 2 && sym.p[n - 2] == '-' && sym.p[n - 1] == '>')
		n -= 2;
	it->p = sym.p;
	it->end = sym.p + n;
	it->done = n == 0;
}

bool hs_ps_parts_next(struct hs_ps_parts *it, struct hs_ps_str *ret)
{
	const char *q;

	if (it->done)
		return false;
	q = it->p;
	for (;;) {
		q = memchr(q, '-', (size_t)(it->end - q));
		if (!q || q + 1 >= it->end || q[1] == '>')
			break;
		q++;
	}
	if (!q || q + 1 >= it->end) {
		ret->p = it->p;
		ret->n = (size_t)(it->end - it->p);
		it->done = true;
	} else {
		ret->p = it->p;
		ret->n = (size_t)(q - it->p);
		it->p = q + 2;
	}
	return true;
}

uint32_t hs_perf_script_srclines(const struct hs_ps_frame *f)
{
	bool unknown_mod = f->module.n == 9 && !memcmp(f->module.p, "[unknown]", 9);
	struct hs_ps_parts it;
	struct hs_ps_str part;
	uint32_t want = 0;

	if (f->sym.n && f->sym.p[0] == '(')
		return 0;
	hs_ps_parts_init(&it, f->sym);
	while (hs_ps_parts_next(&it, &part)) {
		if (unknown_mod && part.n == 9 && !memcmp(part.p, "[unknown]", 9))
			break;
		want++;
	}
	return want;
}
