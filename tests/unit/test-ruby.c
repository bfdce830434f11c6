/* Unit tests of src/runtime/ruby/: which files may hold CRuby and what its native functions are
 * to the merge; hostile memory named without crash or overrun; libraries that only look like
 * libruby refused; and a live ruby (test_live_*: skipped where it is not installed) found by
 * hs_rb_find(), its main thread walked with hs_rb_walk() and named as the interpreter's own
 * caller_locations says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
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

#include "profile/profile.h"
#include "runtime/ruby/ruby.h"

static void test_maybe(void **state)
{
	assert_true(hs_rb_maybe("/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1.2"));
	assert_true(hs_rb_maybe("/usr/bin/ruby3.1"));
	assert_true(hs_rb_maybe("/opt/ruby/bin/ruby"));
	assert_true(hs_rb_maybe("libruby.so"));
	assert_false(hs_rb_maybe("/usr/bin/rubyfmt"));
	assert_false(hs_rb_maybe("/usr/lib/libruby-3.1.a"));
	assert_false(hs_rb_maybe("/usr/bin/python3"));
	assert_false(hs_rb_maybe(NULL));
}

static void test_native_class(void **state)
{
	enum hs_ip_native (*c)(const char *) = hs_rb_lang.native_class;

	assert_int_equal(c("rb_vm_exec"), HS_IP_NATIVE_LOOP);
	assert_int_equal(c("rb_vm_exec.cold"), HS_IP_NATIVE_LOOP);
	assert_int_equal(c("rb_vm_exec@plt"), HS_IP_NATIVE_PLUMBING);
	assert_int_equal(c("rb_yield"), HS_IP_NATIVE_PLUMBING);
	assert_int_equal(c("rb_yield_values2"), HS_IP_NATIVE_PLUMBING);
	assert_int_equal(c("rb_ensure"), HS_IP_NATIVE_PLUMBING);
	assert_int_equal(c("rb_funcallv_kw"), HS_IP_NATIVE_PLUMBING);
	assert_int_equal(c("rb_nogvl"), HS_IP_NATIVE_PLUMBING);
	/* the base the Ruby frames stand on, and C methods' own functions, stay */
	assert_int_equal(c("ruby_run_node"), HS_IP_NATIVE_OTHER);
	assert_int_equal(c("main"), HS_IP_NATIVE_OTHER);
	assert_int_equal(c("rb_ary_each"), HS_IP_NATIVE_OTHER);
	assert_int_equal(c("deflate"), HS_IP_NATIVE_OTHER);
	assert_int_equal(c(NULL), HS_IP_NATIVE_OTHER);
}

/* ---- hostile memory ---- */

#define FAKE_BASE 0x10000000ULL
#define FAKE_SIZE (1u << 20)

static uint8_t *fake;

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	if (addr < FAKE_BASE || addr - FAKE_BASE > FAKE_SIZE || n > FAKE_SIZE - (addr - FAKE_BASE))
		return -1;
	memcpy(buf, fake + (addr - FAKE_BASE), n);
	return 0;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A word that looks like what the reader expects somewhere: a pointer into the memory, an object
 * header of a type it reads (iseq, method entry, String, Array, class), a small or huge count. */
static uint64_t plausible(uint64_t *s)
{
	static const uint64_t headers[] = {0x701a, 0x601a,  0x201a, 0x05,   0x2005, 0x7c005, 0x07,
					   0x2007, 0x1a007, 0x02,   0x1002, 0x03,   0x1c,    0x1};
	uint64_t r = rnd(s);

	switch (r % 6) {
	case 0:
	case 1:
		return FAKE_BASE + (rnd(s) % FAKE_SIZE & ~7ULL);
	case 2:
		return headers[rnd(s) % HS_ARRAY_SIZE(headers)];
	case 3:
		return rnd(s) % 64;
	case 4:
		return ~0ULL - rnd(s) % 4;
	default:
		return rnd(s);
	}
}

/* Memory of plausible words, and frames into it: every read checked, every size capped, every
 * chain bounded; whatever comes back is a string the caller can use. */
static void test_hostile_memory(void **state)
{
	struct hs_rt_mem mem = {fake_read, NULL};
	struct hs_rb_proc p = {0};
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	size_t named = 0;

	fake = malloc(FAKE_SIZE + 64);
	assert_non_null(fake);
	for (int round = 0; round < 4; round++) {
		for (size_t i = 0; i < FAKE_SIZE / 8; i++) {
			uint64_t w = plausible(&s);
			memcpy(fake + i * 8, &w, 8);
		}
		p.symbols = FAKE_BASE + (rnd(&s) % FAKE_SIZE & ~7ULL);
		p.id_classpath = rnd(&s) % 4096;
		p.id_attached = plausible(&s);
		for (int k = 0; k < 5000; k++) {
			struct hs_ip_frame f = {0};
			struct hs_ip_code c = {0};
			f.fn = FAKE_BASE + (rnd(&s) % FAKE_SIZE & ~7ULL);
			f.aux = rnd(&s) % 3 ? FAKE_BASE + (rnd(&s) % FAKE_SIZE & ~7ULL) : 0;
			/* identity bits as the memory makes them, now and then */
			f.fn |= rnd(&s) << 48;
			f.aux |= rnd(&s) << 48;
			f.extra = plausible(&s);
			f.flags = rnd(&s) % 2 ? HS_IP_CFUNC : 0;
			if (hs_rb_lang.code_read(&p, &mem, &f, &c))
				continue;
			named++;
			assert_non_null(c.name);
			assert_true(strlen(c.name) < 4096);
			(void)hs_rb_lang.line(&c, &f);
			hs_ip_code_release(&c);
		}
		/* and walks of contexts anywhere in it */
		for (int k = 0; k < 2000; k++) {
			struct hs_ip_frame out[64];
			uint16_t flags;
			size_t n = hs_rb_walk(&mem, FAKE_BASE + (rnd(&s) % FAKE_SIZE & ~7ULL), out, 64, &flags);
			assert_true(n <= 64);
		}
	}
	/* names with all 32 identity bits matching by chance are not expected: none is made */
	assert_int_equal(named, 0);
	free(fake);
}

/* ---- processes that only look like ruby ---- */

static pid_t child;

static int child_teardown(void **state)
{
	int status;

	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
		child = 0;
	}
	return 0;
}

/* Runs exe (sleep by default) with lib preloaded, until the library is mapped. */
static pid_t run_exe_with(const char *exe, const char *lib)
{
	char maps[64], *text = NULL;

	child = fork();
	assert_true(child >= 0);
	if (!child) {
		if (lib)
			setenv("LD_PRELOAD", lib, 1);
		execlp(exe ? exe : "sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)child);
	for (int i = 0; i < 200; i++) {
		size_t len;
		free(text);
		text = hs_test_read_file(maps, &len);
		if (text && (!lib || strstr(text, strrchr(lib, '/') + 1)) && strstr(text, "libc"))
			break;
		usleep(10000);
	}
	free(text);
	return child;
}

static pid_t run_with(const char *lib)
{
	return run_exe_with(NULL, lib);
}

static void test_find_not_ruby(void **state)
{
	struct hs_rb_proc p;
	char why[160] = "";

	assert_int_equal(hs_rb_find(getpid(), &p, why, sizeof(why)), HS_RB_NOT_RUBY);
	assert_int_equal(hs_rb_find(0x7ffffff0, &p, why, sizeof(why)), HS_RB_NOT_RUBY);
	assert_int_equal(hs_rb_find(run_with(NULL), &p, why, sizeof(why)), HS_RB_NOT_RUBY);
}

/* Another program under ruby's name: looked into, and not taken for one. */
static void test_find_named_ruby(void **state)
{
	struct hs_rb_proc p;
	char dir[256], exe[300], why[160] = "";
	size_t len;
	char *bytes = hs_test_read_file("/bin/sleep", &len);

	assert_non_null(bytes);
	assert_int_equal(hs_test_mkdtemp(dir, sizeof(dir), "hs-ruby"), 0);
	snprintf(exe, sizeof(exe), "%s/ruby3.1", dir);
	hs_test_write_file(exe, bytes, len);
	free(bytes);
	assert_int_equal(chmod(exe, 0755), 0);
	assert_int_equal(hs_rb_find(run_exe_with(exe, NULL), &p, why, sizeof(why)), HS_RB_NOT_RUBY);
	child_teardown(state);
	hs_test_rmtree(dir);
}

/* A library with libruby's symbols and TLS form but not its code: refused, saying which. */
static void test_find_fake_3_1(void **state)
{
	struct hs_rb_proc p;
	char why[160] = "";

	assert_int_equal(hs_rb_find(run_with(BUILDDIR "/tests/unit/libruby-3.1.so"), &p, why, sizeof(why)),
			 HS_RB_UNSUPPORTED);
	if (!strstr(why, "ruby 3.1.2 in ") || !strstr(why, "is not the code this reader knows"))
		fail_msg("why: %s", why);
}

static void test_find_fake_version(void **state)
{
	struct hs_rb_proc p;
	char why[160] = "";

	assert_int_equal(hs_rb_find(run_with(BUILDDIR "/tests/unit/libruby-fake.so"), &p, why, sizeof(why)),
			 HS_RB_UNSUPPORTED);
	assert_string_equal(why, "ruby 3.4.1 is not supported");
}

/* ---- a live ruby ---- */

#define LONG_LINES 700 /* statements before the call: the line table's blocks of 512 are read */

static void live_program(const char *path, unsigned *sleep_line)
{
	FILE *f = fopen(path, "w");
	unsigned line = 1;

	assert_non_null(f);
	fputs("module Outer\n"
	      "  class Inner_with_a_rather_long_class_name\n"
	      "    def self.start = new.a_method_name_longer_than_twenty_three\n"
	      "    def a_method_name_longer_than_twenty_three\n"
	      "      [1].each { |x| long_method }\n"
	      "    end\n"
	      "    def long_method\n"
	      "      a = 0\n",
	      f);
	line = 9;
	for (unsigned i = 0; i < LONG_LINES; i++, line++)
		fputs("      a = a + 1\n", f);
	fputs("      $stdout.puts caller_locations(0).map(&:lineno).join(' ')\n"
	      "      $stdout.flush\n"
	      "      sleep\n"
	      "    end\n"
	      "  end\n"
	      "end\n"
	      "Outer::Inner_with_a_rather_long_class_name.start\n",
	      f);
	*sleep_line = line + 2;
	fclose(f);
}

static char live_dir[256];

static int live_teardown(void **state)
{
	child_teardown(state);
	if (live_dir[0])
		hs_test_rmtree(live_dir);
	live_dir[0] = 0;
	return 0;
}

static void test_live_debian_3_1(void **state)
{
	static const char *const names[] = {
		"Kernel#sleep",
		"Outer::Inner_with_a_rather_long_class_name#long_method",
		"block in Outer::Inner_with_a_rather_long_class_name#a_method_name_longer_than_twenty_three",
		"Array#each",
		"Outer::Inner_with_a_rather_long_class_name#a_method_name_longer_than_twenty_three",
		"Outer::Inner_with_a_rather_long_class_name.start",
		"<main>",
	};
	const char *ruby = "/usr/bin/ruby";
	char prog[300], why[256] = "", buf[256] = "";
	unsigned sleep_line, lines[8] = {0};
	struct hs_ip_frame fr[64];
	struct hs_rb_proc p;
	struct hs_rt_mem mem;
	uint16_t flags;
	size_t n, got = 0;
	int fds[2], status;

	if (access(ruby, X_OK))
		hs_test_skip("%s is not installed", ruby);
	assert_int_equal(hs_test_mkdtemp(live_dir, sizeof(live_dir), "hs-ruby"), 0);
	snprintf(prog, sizeof(prog), "%s/prog.rb", live_dir);
	live_program(prog, &sleep_line);
	assert_int_equal(pipe(fds), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		dup2(fds[1], 1);
		close(fds[1]);
		close(fds[0]);
		execl(ruby, ruby, "--disable-gems", prog, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (!strchr(buf, '\n') && got < sizeof(buf) - 1) {
		struct pollfd pf = {fds[0], POLLIN, 0};
		ssize_t r;
		if (poll(&pf, 1, 30000) <= 0 || (r = read(fds[0], buf + got, sizeof(buf) - 1 - got)) <= 0)
			break;
		got += (size_t)r;
		buf[got] = 0;
	}
	close(fds[0]);
	/* caller_locations(0): long_method, block, each, a_method..., start, <main> */
	if (sscanf(buf, "%u %u %u %u %u %u", &lines[1], &lines[2], &lines[3], &lines[4], &lines[5], &lines[6]) != 6)
		fail_msg("the program did not start: '%s'", buf);
	lines[1] = sleep_line;
	usleep(100000); /* into sleep */
	kill(child, SIGSTOP);
	assert_int_equal(waitpid(child, &status, WUNTRACED), child);

	if (hs_rb_find(child, &p, why, sizeof(why)) != HS_RB_SUPPORTED)
		fail_msg("not found: %s", why);
	assert_true(!strncmp(p.version, "3.1.", 4));
	assert_true(p.info.tls_modid && p.info.tls_off && p.symbols && p.id_classpath && p.id_attached);
	mem = hs_rt_mem_pid(child);
	n = hs_rb_walk(&mem, hs_rb_main_ec(&p, &mem), fr, HS_ARRAY_SIZE(fr), &flags);
	assert_int_equal(flags, 0);
	assert_int_equal(n, HS_ARRAY_SIZE(names));
	for (size_t i = 0; i < n; i++) {
		struct hs_ip_code c;
		if (hs_rb_lang.code_read(&p, &mem, &fr[i], &c))
			fail_msg("frame %zu (%s) not named", i, names[i]);
		assert_string_equal(c.name, names[i]);
		assert_int_equal(!!(fr[i].flags & HS_IP_CFUNC),
				 names[i][0] != '<' && strchr(names[i], '#') && (i == 0 || i == 3));
		if (!(fr[i].flags & HS_IP_CFUNC)) {
			assert_non_null(c.file);
			assert_string_equal(c.file, prog);
			assert_int_equal(hs_rb_lang.line(&c, &fr[i]), lines[i]);
		}
		hs_ip_code_release(&c);
	}
	/* each run of rb_vm_exec starts at the block each yields to, and at <main> */
	for (size_t i = 0; i < n; i++)
		assert_int_equal(!!(fr[i].flags & HS_IP_ENTRY), i == 2 || i == 6);
	kill(child, SIGCONT);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maybe),
		cmocka_unit_test(test_native_class),
		cmocka_unit_test(test_hostile_memory),
		cmocka_unit_test_teardown(test_find_not_ruby, child_teardown),
		cmocka_unit_test_teardown(test_find_named_ruby, child_teardown),
		cmocka_unit_test_teardown(test_find_fake_3_1, child_teardown),
		cmocka_unit_test_teardown(test_find_fake_version, child_teardown),
		cmocka_unit_test_teardown(test_live_debian_3_1, live_teardown),
	};

	if (hs_test_select(argc, argv, tests, HS_ARRAY_SIZE(tests)) < 0)
		return 2;
	return hs_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
