/* Unit tests of src/python/: code objects captured from each real interpreter
 * (tests/fixtures/python/) decoded and their lines compared with the interpreter's own; hostile
 * objects and line tables; and live interpreters, each run with a known chain of calls in two
 * threads, found by hs_py_find() and walked with hs_py_walk() (test_live_*: one skips only where
 * its interpreter is not installed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

#include "runtime/python/names.h"
#include "runtime/python/python.h"

/* ---- fixtures ---- */

struct region {
	uint64_t addr;
	size_t len;
	uint8_t *p;
};

struct fx_code {
	uint64_t addr;
	char *name, *file;
	int firstlineno;
	char *lines; /* "OFFSET:UNITS:LINE ..." */
};

struct fixture {
	unsigned version;
	uint64_t code_type, str_type, bytes_type;
	struct region *mem;
	size_t nmem;
	struct fx_code *codes;
	size_t ncodes;
	uint8_t *debug_offsets; /* 3.13 */
	size_t debug_offsets_size;
	char *text;
};

static int fx_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	const struct fixture *f = ctx;

	for (size_t i = 0; i < f->nmem; i++) {
		const struct region *r = &f->mem[i];
		if (addr >= r->addr && addr - r->addr <= r->len && n <= r->len - (addr - r->addr)) {
			memcpy(buf, r->p + (addr - r->addr), n);
			return 0;
		}
	}
	return -1;
}

static uint8_t *unhex(const char *s, size_t *len)
{
	size_t n = strlen(s) / 2;
	uint8_t *p = malloc(n + 1);

	assert_non_null(p);
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		assert_int_equal(sscanf(s + 2 * i, "%2x", &v), 1);
		p[i] = (uint8_t)v;
	}
	p[n] = 0;
	*len = n;
	return p;
}

static void fx_load(const char *name, struct fixture *f)
{
	char path[512];
	char *save = NULL, *line;
	size_t len;
	unsigned major, minor;

	memset(f, 0, sizeof(*f));
	snprintf(path, sizeof(path), "%s/tests/fixtures/python/code-%s.txt", SRCDIR, name);
	f->text = hs_test_read_file(path, NULL);
	f->mem = calloc(256, sizeof(*f->mem));
	f->codes = calloc(64, sizeof(*f->codes));
	for (line = strtok_r(f->text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct fx_code *c = f->ncodes ? &f->codes[f->ncodes - 1] : NULL;
		char *arg = strchr(line, ' ');

		if (line[0] == '#' || !arg)
			continue;
		*arg++ = 0;
		if (!strcmp(line, "python")) {
			assert_int_equal(sscanf(arg, "%u.%u", &major, &minor), 2);
			f->version = HS_PY_VERSION(major, minor);
		} else if (!strcmp(line, "code_type")) {
			f->code_type = strtoull(arg, NULL, 0);
		} else if (!strcmp(line, "str_type")) {
			f->str_type = strtoull(arg, NULL, 0);
		} else if (!strcmp(line, "bytes_type")) {
			f->bytes_type = strtoull(arg, NULL, 0);
		} else if (!strcmp(line, "code")) {
			assert_true(f->ncodes < 64);
			f->codes[f->ncodes++].addr = strtoull(arg, NULL, 0);
		} else if (!strcmp(line, "name")) {
			c->name = (char *)unhex(arg, &len);
		} else if (!strcmp(line, "file")) {
			c->file = (char *)unhex(arg, &len);
		} else if (!strcmp(line, "firstlineno")) {
			c->firstlineno = atoi(arg);
		} else if (!strcmp(line, "debug_offsets")) {
			f->debug_offsets = unhex(arg, &f->debug_offsets_size);
		} else if (!strcmp(line, "lines")) {
			c->lines = arg;
		} else if (!strcmp(line, "mem")) {
			char *sp = strchr(arg, ' ');
			struct region *r = &f->mem[f->nmem++];
			assert_true(sp && f->nmem <= 256);
			*sp = 0;
			r->addr = strtoull(arg, NULL, 0);
			r->p = unhex(sp + 1, &r->len);
		}
	}
	assert_true(f->version && f->code_type && f->ncodes >= 8 && f->nmem > f->ncodes);
}

static void fx_free(struct fixture *f)
{
	for (size_t i = 0; i < f->nmem; i++)
		free(f->mem[i].p);
	for (size_t i = 0; i < f->ncodes; i++) {
		free(f->codes[i].name);
		free(f->codes[i].file);
	}
	free(f->mem);
	free(f->codes);
	free(f->debug_offsets);
	free(f->text);
}

static struct hs_py_interp fx_interp(const struct fixture *f)
{
	const struct hs_py_interp *l = hs_py_layout(f->version);
	struct hs_py_interp in;

	assert_non_null(l);
	in = *l;
	in.info.code_type = f->code_type;
	in.str_type = f->str_type;
	in.bytes_type = f->bytes_type;
	return in;
}

static struct fx_code *fx_code(struct fixture *f, const char *name)
{
	for (size_t i = 0; i < f->ncodes; i++)
		if (!strcmp(f->codes[i].name, name))
			return &f->codes[i];
	fail_msg("no code object %s", name);
	return NULL;
}

static struct region *fx_region(struct fixture *f, uint64_t addr)
{
	for (size_t i = 0; i < f->nmem; i++)
		if (f->mem[i].addr == addr)
			return &f->mem[i];
	fail_msg("no object at 0x%" PRIx64, addr);
	return NULL;
}

/* Every unit's line as the interpreter said; returns how many units had no line. */
static unsigned check_lines(const struct hs_py_code *c, const struct fx_code *want)
{
	char *copy = strdup(want->lines), *save = NULL, *tok;
	unsigned none = 0, units = 0;

	for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		unsigned off, n;
		int line;
		assert_int_equal(sscanf(tok, "%u:%u:%d", &off, &n, &line), 3);
		for (unsigned k = 0; k < n; k++) {
			int got = hs_py_code_line(c, off + 2 * k);
			if (got != line)
				fail_msg("%s: offset %u: line %d, the interpreter says %d", want->name, off + 2 * k,
					 got, line);
		}
		none += line ? 0 : n;
		units += n;
	}
	assert_true(units > 0);
	free(copy);
	return none;
}

static void check_fixture(const char *name, bool none_expected)
{
	struct fixture f;
	struct hs_py_interp in;
	struct hs_rt_mem mem = {fx_read, &f};
	bool long_fn = false, nonascii = false, qual = false;
	unsigned none = 0;

	fx_load(name, &f);
	in = fx_interp(&f);
	for (size_t i = 0; i < f.ncodes; i++) {
		struct hs_py_code c;
		const struct fx_code *w = &f.codes[i];

		if (hs_py_code_read(&in, &mem, w->addr, &c))
			fail_msg("%s: code object %zu (%s) not read", name, i, w->name);
		assert_string_equal(c.name, w->name);
		assert_string_equal(c.file, w->file);
		assert_int_equal(c.firstlineno, w->firstlineno);
		assert_int_equal(c.version, f.version);
		none += check_lines(&c, w);
		for (uint32_t off = 0; !strcmp(c.name, "long_function") && off < 20000; off += 2)
			long_fn |= hs_py_code_line(&c, off) > 440; /* past the 240 empty lines */
		nonascii |= !strcmp(c.name, "na\xc3\xafve_\xd1\x84\xd1\x83\xd0\xbd\xd0\xba\xd1\x86\xd0\xb8\xd1\x8f");
		qual |= !strcmp(c.name, f.version >= HS_PY_VERSION(3, 11) ? "Klass.method.<locals>.inner" : "inner");
		hs_py_code_release(&c);
	}
	/* what the fixture is meant to cover is in it */
	assert_true(long_fn && nonascii && qual);
	assert_non_null(strstr(f.codes[0].file, "\xf0\x9f\x90\x8d")); /* a 4-byte kind string */
	if (none_expected)
		assert_true(none > 0);
	/* without the type checks, the same */
	in.str_type = in.bytes_type = 0;
	for (size_t i = 0; i < f.ncodes; i++) {
		struct hs_py_code c;
		assert_int_equal(hs_py_code_read(&in, &mem, f.codes[i].addr, &c), 0);
		hs_py_code_release(&c);
	}
	fx_free(&f);
}

static void test_fixture_3_6(void **state)
{
	check_fixture("3.6", false);
}

static void test_fixture_3_7(void **state)
{
	check_fixture("3.7", false);
}

static void test_fixture_3_8(void **state)
{
	check_fixture("3.8", false);
}

static void test_fixture_3_9(void **state)
{
	check_fixture("3.9", false);
}

static void test_fixture_3_10(void **state)
{
	check_fixture("3.10", true);
}

static void test_fixture_3_11(void **state)
{
	check_fixture("3.11", true);
}

static void test_fixture_3_11_debian(void **state)
{
	check_fixture("3.11-debian", true);
}

static void test_fixture_3_12(void **state)
{
	check_fixture("3.12", true);
}

static void test_fixture_3_13(void **state)
{
	check_fixture("3.13", true);
}

/* ---- hostile input ---- */

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* Each change of a fixture's code object, its name or its line table makes the read fail. */
static void test_hostile_objects(void **state)
{
	static const char *names[] = {"3.8", "3.10", "3.11", "3.12", "3.13"};

	for (size_t v = 0; v < HS_ARRAY_SIZE(names); v++) {
		struct fixture f;
		struct hs_py_interp in;
		struct hs_rt_mem mem = {fx_read, &f};
		struct hs_py_code c;
		struct region *code, *name, *table;
		uint16_t name_at;
		uint8_t save[16];

		fx_load(names[v], &f);
		in = fx_interp(&f);
		name_at = in.code.code_qualname != HS_PY_NONE ? in.code.code_qualname : in.code.code_name;
		code = fx_region(&f, fx_code(&f, "handlers")->addr); /* an ASCII name */
		name = fx_region(&f, get64(code->p + name_at));
		table = fx_region(&f, get64(code->p + in.code.code_linetable));

#define BREAK(region, at, len, ...)                                               \
	do {                                                                      \
		memcpy(save, (region)->p + (at), len);                            \
		__VA_ARGS__;                                                      \
		assert_int_equal(hs_py_code_read(&in, &mem, code->addr, &c), -1); \
		memcpy((region)->p + (at), save, len);                            \
		assert_int_equal(hs_py_code_read(&in, &mem, code->addr, &c), 0);  \
		hs_py_code_release(&c);                                           \
	} while (0)
		/* the code object's type */
		BREAK(code, 8, 8, code->p[8] ^= 0x40);
		/* a name that points nowhere, or at the code object itself (not a str) */
		BREAK(code, name_at, 8, memset(code->p + name_at, 0x11, 8));
		BREAK(code, name_at, 8, memcpy(code->p + name_at, &code->addr, 8));
		/* a name whose length runs past its object, is negative or huge */
		BREAK(name, in.code.unicode_length, 8, name->p[in.code.unicode_length] += 100);
		BREAK(name, in.code.unicode_length, 8, name->p[in.code.unicode_length + 7] = 0x80);
		BREAK(name, in.code.unicode_length, 8, name->p[in.code.unicode_length + 3] = 0x10);
		/* not compact; kind 3 */
		BREAK(name, in.code.unicode_state, 1, name->p[in.code.unicode_state] &= ~0x20);
		BREAK(name, in.code.unicode_state, 1, name->p[in.code.unicode_state] |= 3 << 2);
		/* an "ASCII" string with a byte over 0x7f */
		BREAK(name, in.code.unicode_ascii_data, 1, name->p[in.code.unicode_ascii_data] = 0xe9);
		/* a line table whose size is negative, over 1 MiB, or past its object */
		BREAK(table, in.code.bytes_size, 8, table->p[in.code.bytes_size + 7] = 0xff);
		BREAK(table, in.code.bytes_size, 8, table->p[in.code.bytes_size + 2] = 0x20);
		BREAK(table, in.code.bytes_size, 8, table->p[in.code.bytes_size + 1] += 1);
		/* the code object not readable in full */
		assert_int_equal(hs_py_code_read(&in, &mem, code->addr + code->len - 8, &c), -1);
		assert_int_equal(hs_py_code_read(&in, &mem, 0, &c), -1);
		assert_int_equal(hs_py_code_read(&in, &mem, UINT64_MAX - 16, &c), -1);
#undef BREAK
		fx_free(&f);
	}
}

/* 3.13's own description of its layout, captured from the interpreter, agrees with ours; one
 * that differs in a field, is not 3.13's or is a free-threaded build's is refused, saying why. */
static void test_debug_offsets(void **state)
{
	struct fixture f;
	struct hs_py_interp in;
	char why[256];
	uint8_t *d;

	fx_load("3.13", &f);
	assert_int_equal(f.debug_offsets_size, HS_PY_DEBUG_OFFSETS_SIZE);
	d = f.debug_offsets;
	in = fx_interp(&f);
	assert_int_equal(hs_py_check_debug_offsets(d, &in, why, sizeof(why)), HS_PY_SUPPORTED);
	assert_memory_equal(&in, hs_py_layout(HS_PY_VERSION(3, 13)), offsetof(struct hs_py_interp, info));
	assert_memory_equal(&in.info.off, &hs_py_layout(HS_PY_VERSION(3, 13))->info.off, sizeof(in.info.off));
	assert_memory_equal(&in.code, &hs_py_layout(HS_PY_VERSION(3, 13))->code, sizeof(in.code));

	d[192] += 8; /* thread_state.thread_id */
	assert_int_equal(hs_py_check_debug_offsets(d, &in, why, sizeof(why)), HS_PY_UNSUPPORTED);
	assert_string_equal(why, "python 3.13: _Py_DebugOffsets.thread_state.thread_id is 160, expected 152");
	d[192] -= 8;
	d[16] = 1; /* free_threaded */
	assert_int_equal(hs_py_check_debug_offsets(d, &in, why, sizeof(why)), HS_PY_UNSUPPORTED);
	assert_string_equal(why, "python 3.13 free-threaded is not supported");
	d[16] = 0;
	d[10] = 14; /* the version: 3.14 */
	assert_int_equal(hs_py_check_debug_offsets(d, &in, why, sizeof(why)), HS_PY_UNSUPPORTED);
	assert_non_null(strstr(why, "not start with 3.13's"));
	d[10] = 13;
	d[0] = 'y'; /* the cookie */
	assert_int_equal(hs_py_check_debug_offsets(d, &in, why, sizeof(why)), HS_PY_UNSUPPORTED);
	d[0] = 'x';
	assert_int_equal(hs_py_check_debug_offsets(d, &in, why, sizeof(why)), HS_PY_SUPPORTED);
	fx_free(&f);
}

/* Truncated and random line tables give some line or 0, never a read past the table (the
 * table is a heap block of its exact size: ASan and valgrind see any overrun). */
static void test_hostile_line_tables(void **state)
{
	static const char *names[] = {"3.8", "3.10", "3.11", "3.13"};
	uint64_t seed = 0x9e3779b97f4a7c15u;

	for (size_t v = 0; v < HS_ARRAY_SIZE(names); v++) {
		struct fixture f;
		struct hs_py_interp in;
		struct hs_rt_mem mem = {fx_read, &f};

		fx_load(names[v], &f);
		in = fx_interp(&f);
		for (size_t i = 0; i < f.ncodes; i++) {
			struct hs_py_code c;
			uint8_t *full;
			size_t n;

			assert_int_equal(hs_py_code_read(&in, &mem, f.codes[i].addr, &c), 0);
			full = c.linetable;
			n = c.linetable_size;
			for (size_t cut = 0; cut <= n; cut += 1 + cut / 4) {
				c.linetable = malloc(cut ? cut : 1);
				memcpy(c.linetable, full, cut);
				c.linetable_size = cut;
				for (uint32_t off = 0; off < 4096; off += 6)
					assert_true(hs_py_code_line(&c, off) >= 0);
				assert_true(hs_py_code_line(&c, UINT32_MAX) >= 0);
				free(c.linetable);
			}
			for (int round = 0; round < 20; round++) {
				size_t len = 1 + (seed >> 40) % 64;
				c.linetable = malloc(len);
				for (size_t k = 0; k < len; k++) {
					seed = seed * 6364136223846793005u + 1442695040888963407u;
					/* continuation bits everywhere in half the rounds: long varints */
					c.linetable[k] = (uint8_t)(seed >> 56) | (round & 1 ? 0x40 : 0);
				}
				c.linetable_size = len;
				for (uint32_t off = 0; off < 1024; off += 2)
					assert_true(hs_py_code_line(&c, off) >= 0);
				free(c.linetable);
			}
			c.linetable = full;
			c.linetable_size = n;
			hs_py_code_release(&c);
		}
		fx_free(&f);
	}
}

static void test_names(void **state)
{
	static const char *yes[] = {"/usr/bin/python3.11",
				    "/opt/py/bin/python3.13t",
				    "python3",
				    "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0",
				    "/x/lib/libpython3.8.so",
				    "/x/libpython3.7m.so.1.0",
				    "/usr/bin/python3.14",
				    "/usr/bin/python2.7"}; /* to be named as unsupported */
	static const char *no[] = {"/usr/lib/libpython3.so",  "/usr/bin/python3-config", "/bin/sh",
				   "/usr/bin/python1.5",      "/x/libpython3.11.a",      "/usr/bin/python3.11.py",
				   "/x/python3.11/libc.so.6", "libpython3.11",           ""};

	for (size_t i = 0; i < HS_ARRAY_SIZE(yes); i++)
		if (!hs_py_maybe_runtime(yes[i]))
			fail_msg("%s: not taken for a runtime", yes[i]);
	for (size_t i = 0; i < HS_ARRAY_SIZE(no); i++)
		if (hs_py_maybe_runtime(no[i]))
			fail_msg("%s: taken for a runtime", no[i]);
	for (unsigned m = 6; m <= 13; m++) {
		const struct hs_py_interp *l = hs_py_layout(HS_PY_VERSION(3, m));
		assert_non_null(l);
		assert_int_equal(l->version, HS_PY_VERSION(3, m));
		assert_int_equal(l->info.off.code_firstlineno, l->code.code_firstlineno);
	}
	assert_null(hs_py_layout(HS_PY_VERSION(3, 5)));
	assert_non_null(hs_py_layout(HS_PY_VERSION(2, 7)));
	assert_null(hs_py_layout(HS_PY_VERSION(2, 6)));
	assert_null(hs_py_layout(HS_PY_VERSION(3, 14)));
}

/* Not a Python process: nothing found, whatever its name. */
static void test_find_not_python(void **state)
{
	struct hs_py_interp in;
	char why[128] = "";

	assert_int_equal(hs_py_find(getpid(), &in, why, sizeof(why)), HS_PY_NOT_PYTHON);
	assert_int_equal(hs_py_find(0x7ffffff0, &in, why, sizeof(why)), HS_PY_NOT_PYTHON);
}

/* ---- live interpreters ---- */

/* Lines of the program below that the walk must name. */
enum {
	L_SPIN_LOOP = 8,
	L_SPIN_BODY = 9,
	L_LEAF_LOOP = 16,
	L_LEAF_BODY = 17,
	L_REC_LEAF = 22,
	L_REC_REC = 24,
	L_MAIN = 28,
	L_MODULE = 33,
	DEPTH = 6
};
static const char live_program[] =
	"import sys\n"                                                                     /* 1 */
	"import threading\n"                                                               /* 2 */
	"ready = False\n"                                                                  /* 3 */
	"def spin():\n"                                                                    /* 4 */
	"    global ready\n"                                                               /* 5 */
	"    ready = True\n"                                                               /* 6 */
	"    x = 0\n"                                                                      /* 7 */
	"    while True:\n"                                                                /* 8 */
	"        x += 1\n"                                                                 /* 9 */
	"def leaf():\n"                                                                    /* 10 */
	"    while not ready:\n"                                                           /* 11 */
	"        pass\n"                                                                   /* 12 */
	"    sys.stdout.write('%d %d\\n' % (threading.current_thread().ident, t.ident))\n" /* 13 */
	"    sys.stdout.flush()\n"                                                         /* 14 */
	"    x = 0\n"                                                                      /* 15 */
	"    while True:\n"                                                                /* 16 */
	"        x += 1\n"                                                                 /* 17 */
	"def rec(n):\n"                                                                    /* 18 */
	"    if n == 0:\n"                                                                 /* 19 */
	"        pass\n"                                                                   /* 20 */
	"    if n == 0:\n"                                                                 /* 21 */
	"        leaf()\n"                                                                 /* 22 */
	"    else:\n"                                                                      /* 23 */
	"        rec(n - 1)\n"                                                             /* 24 */
	"def main():\n"                                                                    /* 25 */
	"    pass\n"                                                                       /* 26 */
	"    pass\n"                                                                       /* 27 */
	"    rec(5)\n"                                                                     /* 28 */
	"t = threading.Thread(target=spin); t.daemon = True\n"                             /* 29 */
	"t.start()\n"                                                                      /* 30 */
	"if True:\n"                                                                       /* 31 */
	"    pass\n"                                                                       /* 32 */
	"main()\n";                                                                        /* 33 */

struct live_frame {
	char *name, *file;
	int line;
	bool entry;
};

static size_t live_walk(const struct hs_py_interp *in, int pid, uint64_t ident, struct live_frame *out, uint16_t *flags)
{
	struct hs_rt_mem mem = hs_rt_mem_pid(pid);
	struct hs_py_frame fr[HS_PY_MAX_FRAMES];
	size_t n = hs_py_walk(in, &mem, ident, fr, HS_PY_MAX_FRAMES, flags);

	for (size_t i = 0; i < n; i++) {
		struct hs_py_code c;
		if (hs_py_code_read(in, &mem, fr[i].code, &c))
			fail_msg("frame %zu: code object 0x%" PRIx64 " not read", i, fr[i].code);
		assert_int_equal((uint32_t)c.firstlineno, fr[i].line_entry & ~HS_PY_ENTRY_BIT);
		out[i] = (struct live_frame){c.name, c.file, hs_py_code_line(&c, fr[i].instr),
					     !!(fr[i].line_entry & HS_PY_ENTRY_BIT)};
		c.name = c.file = NULL;
		hs_py_code_release(&c);
	}
	return n;
}

static void live_print(const char *what, const struct live_frame *f, size_t n)
{
	print_message("%s:\n", what);
	for (size_t i = 0; i < n; i++)
		print_message("  %s:%d%s\n", f[i].name, f[i].line, f[i].entry ? " (entry)" : "");
}

static void live_free(struct live_frame *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(f[i].name);
		free(f[i].file);
	}
}

static pid_t live_pid;
static char live_dir[256];

static void check_live(const char *python, unsigned version)
{
	char *dir = live_dir, prog[300], why[256] = "", buf[256] = "";
	struct live_frame fr[HS_PY_MAX_FRAMES];
	struct hs_py_interp in;
	unsigned long long main_id = 0, spin_id = 0;
	size_t n, got = 0;
	uint16_t flags;
	int fds[2], status;
	pid_t pid;
	bool every = version < HS_PY_VERSION(3, 11);
	const char *spin_chain[] = {"spin", "run", "_bootstrap_inner", "_bootstrap"};
	const char *spin_chain2[] = {"spin", "run", "__bootstrap_inner", "__bootstrap"}; /* 2.7's names */

	if (access(python, X_OK))
		hs_test_skip("%s is not installed", python);
	assert_int_equal(hs_test_mkdtemp(live_dir, sizeof(live_dir), "hs-python"), 0);
	snprintf(prog, sizeof(prog), "%s/prog.py", dir);
	hs_test_write_file(prog, live_program, strlen(live_program));
	assert_int_equal(pipe(fds), 0);
	pid = live_pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(fds[1], 1);
		close(fds[1]);
		close(fds[0]);
		execl(python, python, "-S", prog, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (!strchr(buf, '\n') && got < sizeof(buf) - 1) {
		struct pollfd p = {fds[0], POLLIN, 0};
		ssize_t r;
		if (poll(&p, 1, 30000) <= 0 || (r = read(fds[0], buf + got, sizeof(buf) - 1 - got)) <= 0)
			break;
		got += (size_t)r;
		buf[got] = 0;
	}
	close(fds[0]);
	if (sscanf(buf, "%llu %llu", &main_id, &spin_id) != 2)
		fail_msg("%s: the program did not start: '%s'", python, buf);

	/* stopped, the frames hold still while they are read; until both threads are in their
	 * loops (the main one may still be returning from print) */
	for (int tries = 0;; tries++) {
		int l0, l1;

		kill(pid, SIGSTOP);
		assert_int_equal(waitpid(pid, &status, WUNTRACED), pid);
		assert_true(WIFSTOPPED(status));
		if (!tries) {
			assert_int_equal(hs_py_find(pid, &in, why, sizeof(why)), HS_PY_SUPPORTED);
			assert_int_equal(in.version, version);
			assert_true(in.info.runtime && in.info.code_type && in.str_type && in.bytes_type);
		}
		n = live_walk(&in, pid, main_id, fr, &flags);
		l0 = n ? fr[0].line : 0;
		live_free(fr, n);
		n = live_walk(&in, pid, spin_id, fr, &flags);
		l1 = n ? fr[0].line : 0;
		live_free(fr, n);
		if ((l0 == L_LEAF_LOOP || l0 == L_LEAF_BODY) && (l1 == L_SPIN_LOOP || l1 == L_SPIN_BODY))
			break;
		if (tries == 500)
			fail_msg("%s: the threads are not in their loops after 10 s", python);
		kill(pid, SIGCONT);
		usleep(20000);
	}

	/* the main thread: leaf, rec x DEPTH, main, <module> */
	n = live_walk(&in, pid, main_id, fr, &flags);
	live_print("main thread", fr, n);
	assert_int_equal(flags, 0);
	assert_int_equal(n, DEPTH + 3);
	assert_string_equal(fr[0].name, "leaf");
	assert_true(fr[0].line == L_LEAF_LOOP || fr[0].line == L_LEAF_BODY);
	for (size_t i = 1; i <= DEPTH; i++) {
		assert_string_equal(fr[i].name, "rec");
		assert_int_equal(fr[i].line, i == 1 ? L_REC_LEAF : L_REC_REC);
	}
	assert_string_equal(fr[DEPTH + 1].name, "main");
	assert_int_equal(fr[DEPTH + 1].line, L_MAIN);
	assert_string_equal(fr[DEPTH + 2].name, "<module>");
	assert_int_equal(fr[DEPTH + 2].line, L_MODULE);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(fr[i].file, prog);
		/* one run of the eval loop from 3.11: only <module> starts one */
		assert_int_equal(fr[i].entry, every || i == n - 1);
	}
	live_free(fr, n);

	/* the second thread: spin under threading's bootstrap, the outermost an entry */
	n = live_walk(&in, pid, spin_id, fr, &flags);
	live_print("second thread", fr, n);
	assert_int_equal(flags, 0);
	assert_int_equal(n, HS_ARRAY_SIZE(spin_chain));
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(fr[i].name + (strchr(fr[i].name, '.') ? strlen("Thread.") : 0),
				    (version < HS_PY_VERSION(3, 0) ? spin_chain2 : spin_chain)[i]);
	}
	/* run() and _bootstrap_inner() are called from Python, inlined from 3.11 */
	assert_true(every ? fr[0].entry && fr[1].entry && fr[2].entry : !fr[1].entry && !fr[2].entry);
	assert_true(fr[0].line == L_SPIN_LOOP || fr[0].line == L_SPIN_BODY);
	assert_true(fr[n - 1].entry);
	assert_non_null(strstr(fr[n - 1].file, "threading.py"));
	live_free(fr, n);

	/* a thread that is not the interpreter's; a cut walk */
	assert_int_equal(live_walk(&in, pid, 12345, fr, &flags), 0);
	assert_int_equal(flags, HS_PY_NO_THREAD);
	{
		struct hs_rt_mem mem = hs_rt_mem_pid(pid);
		struct hs_py_frame two[2];
		assert_int_equal(hs_py_walk(&in, &mem, main_id, two, 2, &flags), 2);
		assert_int_equal(flags, HS_PY_TRUNCATED);
	}
	/* the names store names its code until the process is forgotten (it exited) */
	{
		struct hs_py_names *names = hs_py_names_new();
		struct hs_u64map gone = {0};
		struct hs_rt_mem mem = hs_rt_mem_pid(pid);
		struct hs_py_frame leaf[1];
		const struct hs_py_code *c;

		assert_int_equal(hs_py_walk(&in, &mem, main_id, leaf, 1, &flags), 1);
		hs_py_names_add_proc(names, pid, &in);
		c = hs_py_names_get(names, pid, &leaf[0]);
		assert_non_null(c);
		assert_string_equal(c->name, "leaf");
		hs_u64map_put(&gone, (uint32_t)pid + 1, 1);
		hs_py_names_forget(names, &gone);
		assert_non_null(hs_py_names_get(names, pid, &leaf[0]));
		hs_u64map_put(&gone, (uint32_t)pid, 1);
		hs_py_names_forget(names, &gone);
		assert_null(hs_py_names_get(names, pid, &leaf[0]));
		hs_u64map_release(&gone);
		hs_py_names_free(names);
	}
}

/* The live program is killed, and its directory removed, also when a test fails. */
static int live_teardown(void **state)
{
	int status;

	if (live_pid > 0) {
		kill(live_pid, SIGKILL);
		waitpid(live_pid, &status, 0);
		live_pid = 0;
	}
	if (live_dir[0])
		hs_test_rmtree(live_dir);
	live_dir[0] = 0;
	return 0;
}

/* An interpreter of a version not known is found and refused, with its version named: 2.7's
 * library copied as libpython2.6.so.1.0 and loaded through a link of 2.7's name (the mapping
 * names the file, so the version read from it is 2.6). */
static void test_live_unsupported(void **state)
{
	const char *python = "/root/.pyenv/versions/2.7.18/bin/python2.7";
	const char *lib = "/root/.pyenv/versions/2.7.18/lib/libpython2.7.so.1.0";
	struct hs_py_interp in;
	char why[256] = "", c, copy[300], link[300];
	int fds[2];
	size_t size;
	char *bytes;

	if (access(python, X_OK) || access(lib, R_OK))
		hs_test_skip("%s is not installed", python);
	assert_int_equal(hs_test_mkdtemp(live_dir, sizeof(live_dir), "hs-python"), 0);
	snprintf(copy, sizeof(copy), "%s/libpython2.6.so.1.0", live_dir);
	snprintf(link, sizeof(link), "%s/libpython2.7.so.1.0", live_dir);
	bytes = hs_test_read_file(lib, &size);
	hs_test_write_file(copy, bytes, size);
	free(bytes);
	assert_int_equal(symlink("libpython2.6.so.1.0", link), 0);
	assert_int_equal(pipe(fds), 0);
	live_pid = fork();
	assert_true(live_pid >= 0);
	if (!live_pid) {
		dup2(fds[1], 1);
		close(fds[1]);
		setenv("LD_LIBRARY_PATH", live_dir, 1);
		execl(python, python, "-S", "-c", "import sys, time\nprint(1)\nsys.stdout.flush()\ntime.sleep(60)",
		      (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1);
	close(fds[0]);
	assert_int_equal(hs_py_find(live_pid, &in, why, sizeof(why)), HS_PY_UNSUPPORTED);
	assert_string_equal(why, "python 2.6 is not supported");
}

/* A runtime linked into an executable of another name is found through /proc/PID/exe, with
 * the version from Py_Version; once that file is deleted, it is no longer read. */
static void test_live_embedded(void **state)
{
	const char *python = "/usr/bin/python3.11";
	struct hs_py_interp in;
	char why[256] = "", path[300], c;
	int fds[2];
	size_t len;
	char *bin;

	if (access(python, X_OK))
		hs_test_skip("%s is not installed", python);
	assert_int_equal(hs_test_mkdtemp(live_dir, sizeof(live_dir), "hs-python"), 0);
	snprintf(path, sizeof(path), "%s/embedder", live_dir);
	bin = hs_test_read_file(python, &len);
	hs_test_write_file(path, bin, len);
	free(bin);
	assert_int_equal(chmod(path, 0755), 0);
	assert_int_equal(pipe(fds), 0);
	live_pid = fork();
	assert_true(live_pid >= 0);
	if (!live_pid) {
		dup2(fds[1], 1);
		close(fds[1]);
		execl(path, path, "-S", "-c", "import sys, time\nprint(1)\nsys.stdout.flush()\ntime.sleep(60)",
		      (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1);
	close(fds[0]);
	assert_false(hs_py_maybe_runtime(path));
	assert_int_equal(hs_py_find(live_pid, &in, why, sizeof(why)), HS_PY_SUPPORTED);
	assert_int_equal(in.version, HS_PY_VERSION(3, 11));
	assert_string_equal(in.path, path);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(hs_py_find(live_pid, &in, why, sizeof(why)), HS_PY_NOT_PYTHON);
}

/* An interpreter in a mount namespace of its own (as in a container), its file not at that path
 * outside: found through /proc/PID/root. */
static void test_live_container(void **state)
{
	const char *python = "/usr/bin/python3.11", *unshare = "/usr/bin/unshare";
	struct hs_py_interp in;
	char why[256] = "", cmd[1024], path[300], c;
	int fds[2];

	if (access(python, X_OK) || access(unshare, X_OK))
		hs_test_skip("%s or %s is not installed", python, unshare);
	assert_int_equal(hs_test_mkdtemp(live_dir, sizeof(live_dir), "hs-python"), 0);
	snprintf(path, sizeof(path), "%s/python3.11", live_dir);
	snprintf(cmd, sizeof(cmd),
		 "mount -t tmpfs none %s && cp %s %s && exec %s -S -c 'import sys, time\nprint(1)\n"
		 "sys.stdout.flush()\ntime.sleep(60)'",
		 live_dir, python, path, path);
	assert_int_equal(pipe(fds), 0);
	live_pid = fork();
	assert_true(live_pid >= 0);
	if (!live_pid) {
		dup2(fds[1], 1);
		close(fds[1]);
		execl(unshare, unshare, "-m", "--propagation", "private", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	if (read(fds[0], &c, 1) != 1)
		hs_test_skip("no mount namespace could be made here");
	close(fds[0]);
	assert_int_equal(access(path, F_OK), -1); /* not there outside */
	assert_int_equal(hs_py_find(live_pid, &in, why, sizeof(why)), HS_PY_SUPPORTED);
	assert_int_equal(in.version, HS_PY_VERSION(3, 11));
	assert_string_equal(in.path, path);
}

#define PYENV(v) "/root/.pyenv/versions/" v
static void test_live_2_7(void **state)
{
	check_live(PYENV("2.7.18/bin/python2.7"), HS_PY_VERSION(2, 7));
}

static void test_live_3_6(void **state)
{
	check_live(PYENV("3.6.15/bin/python3.6"), HS_PY_VERSION(3, 6));
}

static void test_live_3_7(void **state)
{
	check_live(PYENV("3.7.16/bin/python3.7"), HS_PY_VERSION(3, 7));
}

static void test_live_3_8(void **state)
{
	check_live(PYENV("3.8.18/bin/python3.8"), HS_PY_VERSION(3, 8));
}

static void test_live_3_9(void **state)
{
	check_live(PYENV("3.9.18/bin/python3.9"), HS_PY_VERSION(3, 9));
}

static void test_live_3_10(void **state)
{
	check_live(PYENV("3.10.13/bin/python3.10"), HS_PY_VERSION(3, 10));
}

static void test_live_3_11(void **state)
{
	check_live(PYENV("3.11.7/bin/python3.11"), HS_PY_VERSION(3, 11));
}

static void test_live_debian_3_11(void **state)
{
	check_live("/usr/bin/python3.11", HS_PY_VERSION(3, 11));
}

static void test_live_3_12(void **state)
{
	check_live(PYENV("3.12.1/bin/python3.12"), HS_PY_VERSION(3, 12));
}

static void test_live_3_13(void **state)
{
	check_live(PYENV("3.13.0/bin/python3.13"), HS_PY_VERSION(3, 13));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_3_6),
		cmocka_unit_test(test_fixture_3_7),
		cmocka_unit_test(test_fixture_3_8),
		cmocka_unit_test(test_fixture_3_9),
		cmocka_unit_test(test_fixture_3_10),
		cmocka_unit_test(test_fixture_3_11),
		cmocka_unit_test(test_fixture_3_11_debian),
		cmocka_unit_test(test_fixture_3_12),
		cmocka_unit_test(test_fixture_3_13),
		cmocka_unit_test(test_hostile_objects),
		cmocka_unit_test(test_hostile_line_tables),
		cmocka_unit_test(test_debug_offsets),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_find_not_python),
		cmocka_unit_test_teardown(test_live_unsupported, live_teardown),
		cmocka_unit_test_teardown(test_live_embedded, live_teardown),
		cmocka_unit_test_teardown(test_live_container, live_teardown),
		cmocka_unit_test_teardown(test_live_2_7, live_teardown),
		cmocka_unit_test_teardown(test_live_3_6, live_teardown),
		cmocka_unit_test_teardown(test_live_3_7, live_teardown),
		cmocka_unit_test_teardown(test_live_3_8, live_teardown),
		cmocka_unit_test_teardown(test_live_3_9, live_teardown),
		cmocka_unit_test_teardown(test_live_3_10, live_teardown),
		cmocka_unit_test_teardown(test_live_3_11, live_teardown),
		cmocka_unit_test_teardown(test_live_debian_3_11, live_teardown),
		cmocka_unit_test_teardown(test_live_3_12, live_teardown),
		cmocka_unit_test_teardown(test_live_3_13, live_teardown),
	};

	if (hs_test_select(argc, argv, tests, HS_ARRAY_SIZE(tests)) < 0)
		return 2;
	return hs_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
