/* Unit tests of src/runtime/php/: the names PHP's files go by, what its native functions are to
 * the merge, its build checked from the binaries installed and from copies altered to be of
 * another version or build, look-alikes refused or left alone (a library with PHP's names and
 * strings, another program named php8.2), hostile memory named never wrongly, and a live PHP
 * found and its frames named as the reader sees them (test_live_cli). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

#include "runtime/php/php.h"

#define PHP_CLI "/usr/bin/php8.2"
#define PHP_FPM "/usr/sbin/php-fpm8.2"

static void test_maybe(void **state)
{
	static const char *const yes[] =
		{"/usr/bin/php", "/usr/bin/php8.2",     "/usr/sbin/php-fpm8.2",
		 "php-fpm",      "/usr/bin/php-cgi8.2", "/usr/lib/apache2/modules/libphp8.2.so",
		 "libphp.so",    "/opt/php82"};
	static const char *const no[] = {"/usr/bin/phpize",
					 "/usr/bin/php-config8.2",
					 "/usr/lib/php/20220829/zlib.so",
					 "/usr/bin/python3",
					 "libphp8.2.a",
					 "/usr/bin/phar8.2",
					 "",
					 "/usr/bin/php8.2x"};

	(void)state;
	for (size_t i = 0; i < HS_ARRAY_SIZE(yes); i++)
		assert_true(hs_php_maybe(yes[i]));
	for (size_t i = 0; i < HS_ARRAY_SIZE(no); i++)
		if (hs_php_maybe(no[i]))
			fail_msg("'%s' taken for PHP", no[i]);
	assert_false(hs_php_maybe(NULL));
}

static void test_native_class(void **state)
{
	(void)state;
	assert_int_equal(hs_php_native_class("execute_ex"), HS_IP_NATIVE_LOOP);
	assert_int_equal(hs_php_native_class("execute_ex.cold"), HS_IP_NATIVE_LOOP);
	assert_int_equal(hs_php_native_class("zend_call_function"), HS_IP_NATIVE_PLUMBING);
	assert_int_equal(hs_php_native_class("zend_execute"), HS_IP_NATIVE_PLUMBING);
	assert_int_equal(hs_php_native_class("zend_generator_resume"), HS_IP_NATIVE_PLUMBING);
	/* the base the script's frames stand on, and a builtin's own work, stay */
	assert_int_equal(hs_php_native_class("php_execute_script"), HS_IP_NATIVE_OTHER);
	assert_int_equal(hs_php_native_class("zend_insert_sort"), HS_IP_NATIVE_OTHER);
	assert_int_equal(hs_php_native_class("execute_exx"), HS_IP_NATIVE_OTHER);
	assert_int_equal(hs_php_native_class("main"), HS_IP_NATIVE_OTHER);
	assert_int_equal(hs_php_native_class(NULL), HS_IP_NATIVE_OTHER);
}

/* hs_php_check_elf() of the file at path: its result, why in why. */
static enum hs_php_found check_file(const char *path, struct hs_php_proc *p, char *why, size_t whylen)
{
	struct hs_php_file f;
	enum hs_php_found found;
	int fd = open(path, O_RDONLY);
	Elf *elf;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(elf);
	why[0] = 0;
	found = hs_php_check_elf(elf, path, p, &f, why, whylen);
	if (found == HS_PHP_SUPPORTED)
		assert_true(f.eg && f.vm_kind && f.execute_ex);
	elf_end(elf);
	close(fd);
	return found;
}

/* The file's execute_ex, from its exported symbols. */
static void execute_ex_of(const char *path, uint64_t *addr, uint64_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;

	*addr = *size = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;
			if (gelf_getsym(d, (int)i, &s) && (n = elf_strptr(elf, sh.sh_link, s.st_name)) &&
			    !strcmp(n, "execute_ex")) {
				*addr = s.st_value;
				*size = s.st_size;
			}
		}
	}
	elf_end(elf);
	close(fd);
}

/* The file's GNU build id in lower-case hex. */
static void build_id_of(const char *path, char *out, size_t cap)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;

	out[0] = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *d;
		size_t off = 0, name, desc;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name, &desc)) > 0)
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((const char *)d->d_buf + name, "GNU", 4) && nh.n_descsz * 2 < cap)
				for (size_t i = 0; i < nh.n_descsz; i++)
					snprintf(out + 2 * i, 3, "%02x", ((const uint8_t *)d->d_buf)[desc + i]);
	}
	elf_end(elf);
	close(fd);
}

static void test_installed(void **state)
{
	const char *const paths[] = {PHP_CLI, PHP_FPM};
	size_t tested = 0;
	uint64_t lo, hi;

	(void)state;
	for (size_t i = 0; i < HS_ARRAY_SIZE(paths); i++) {
		struct hs_php_proc p;
		char why[256];
		uint64_t fn, size;

		if (access(paths[i], R_OK))
			continue;
		tested++;
		if (check_file(paths[i], &p, why, sizeof(why)) != HS_PHP_SUPPORTED)
			fail_msg("%s refused: %s", paths[i], why);
		assert_int_equal(p.major, 8);
		assert_int_equal(p.minor, 2);
		assert_int_equal(p.info.off.ex_prev, 48);
		/* execute_ex's cold part: one run of addresses, outside execute_ex, near it in size */
		execute_ex_of(paths[i], &fn, &size);
		assert_true(fn && size);
		if (!hs_php_loop_part(paths[i], NULL, &lo, &hi))
			fail_msg("%s: no cold part of execute_ex found", paths[i]);
		assert_int_equal(hs_php_unnamed_class(paths[i], NULL, lo), HS_IP_NATIVE_LOOP);
		assert_int_equal(hs_php_unnamed_class(paths[i], NULL, hi - 1), HS_IP_NATIVE_LOOP);
		assert_int_equal(hs_php_unnamed_class(paths[i], NULL, lo - 1), HS_IP_NATIVE_PLUMBING);
		assert_int_equal(hs_php_unnamed_class(paths[i], NULL, hi), HS_IP_NATIVE_PLUMBING);
		assert_true(hi <= fn || lo >= fn + size);
		assert_true(hi - lo < size);
		/* a process's file known by its build id where its path holds no file here, or another
		 * file (a container's) */
		{
			char id[129], other[] = "/nonexistent/usr/sbin/php-fpm8.2";
			uint64_t lo2 = 0, hi2 = 0;
			int fd = open(paths[i], O_RDONLY);

			build_id_of(paths[i], id, sizeof(id));
			assert_true(strlen(id) == 40);
			hs_php_loop_note(fd, other);
			close(fd);
			assert_true(hs_php_loop_part(other, id, &lo2, &hi2));
			assert_true(lo2 == lo && hi2 == hi);
			assert_false(hs_php_loop_part(other, "0123", &lo2, &hi2));
			assert_false(hs_php_loop_part(paths[i], "0123", &lo2, &hi2));
			assert_true(hs_php_loop_part(paths[i], id, &lo2, &hi2));
		}
	}
	if (!tested)
		hs_test_skip("PHP 8.2 is not installed");
	assert_int_equal(hs_php_unnamed_class("/nonexistent/php8.2", NULL, 0x1000), HS_IP_NATIVE_PLUMBING);
	assert_int_equal(hs_php_unnamed_class("/bin/true", NULL, 0x1000), HS_IP_NATIVE_PLUMBING);
	assert_false(hs_php_loop_part("/bin/true", NULL, &lo, &hi));
}

/* A copy of PHP's CLI in dir with the strings from replaced by to (as long, NUL-ended), and the
 * check of that copy. */
static enum hs_php_found check_altered(const char *dir, const char *from, const char *to, char *why, size_t whylen)
{
	size_t len, n = strlen(from), hits = 0; /* to may end early, with a NUL */
	char *bin = hs_test_read_file(PHP_CLI, &len), path[300];
	struct hs_php_proc p;
	enum hs_php_found found;

	for (char *at = bin; (at = memmem(at, len - (size_t)(at - bin), from, n)); at += n, hits++)
		memcpy(at, to, n);
	assert_true(hits > 0);
	snprintf(path, sizeof(path), "%s/php8.2", dir);
	hs_test_write_file(path, bin, len);
	free(bin);
	found = check_file(path, &p, why, whylen);
	unlink(path);
	return found;
}

static void test_altered(void **state)
{
	char dir[256], why[256];

	(void)state;
	if (access(PHP_CLI, R_OK))
		hs_test_skip("%s is not installed", PHP_CLI);
	assert_int_equal(hs_test_mkdtemp(dir, sizeof(dir), "hs-php"), 0);
	assert_int_equal(check_altered(dir, "X-Powered-By: PHP/8.2.", "X-Powered-By: PHP/8.3.", why, sizeof(why)),
			 HS_PHP_UNSUPPORTED);
	assert_string_equal(why, "php 8.3 is not supported");
	assert_int_equal(check_altered(dir, "X-Powered-By: PHP/8.2.", "X-Powered-By: PHP/7.4.", why, sizeof(why)),
			 HS_PHP_UNSUPPORTED);
	assert_string_equal(why, "php 7.4 is not supported");
	assert_int_equal(check_altered(dir, "X-Powered-By: PHP/", "X-Powered-By: XYZ/", why, sizeof(why)),
			 HS_PHP_UNSUPPORTED);
	assert_non_null(strstr(why, "php of unknown version in "));
	/* a thread-safe build says so in its build id */
	assert_int_equal(check_altered(dir, "API420220829,NTS", "API420220829,TS\0", why, sizeof(why)),
			 HS_PHP_UNSUPPORTED);
	assert_non_null(strstr(why, "built thread-safe (ZTS) is not supported"));
	/* another build id (a debug build says ",NTS,debug") */
	assert_int_equal(check_altered(dir, "API420220829,NTS", "API420220829,NTX", why, sizeof(why)),
			 HS_PHP_UNSUPPORTED);
	assert_non_null(strstr(why, "no API420220829,NTS build id"));
	/* a global of another size: another layout */
	assert_int_equal(check_altered(dir, "executor_globals", "executor_globalz", why, sizeof(why)), HS_PHP_ABSENT);
	assert_int_equal(check_altered(dir, "compiler_globals", "compiler_globalz", why, sizeof(why)),
			 HS_PHP_UNSUPPORTED);
	assert_non_null(strstr(why, "compiler_globals is 0 bytes, expected 568"));
	assert_int_equal(hs_test_rmtree(dir), 0);
}

/* ---- processes that look like PHP ---- */

static pid_t child;

static int child_teardown(void **state)
{
	(void)state;
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	child = 0;
	return 0;
}

/* Runs lib (a fake PHP engine) in a child with executor_globals filled by fill (NULL: left
 * zero), and looks for PHP there. */
static enum hs_php_found find_fake(const char *lib, void (*fill)(char *eg), char *why, size_t whylen,
				   struct hs_php_proc *p)
{
	int fds[2];
	char c;

	assert_int_equal(pipe(fds), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		void *h = dlopen(lib, RTLD_NOW);
		char *eg = h ? dlsym(h, "executor_globals") : NULL;
		if (eg && fill)
			fill(eg);
		c = eg ? 'y' : 'n';
		if (write(fds[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1);
	close(fds[0]);
	if (c != 'y')
		fail_msg("cannot load %s", lib);
	why[0] = 0;
	return hs_php_find(child, p, why, whylen);
}

static void garbage(char *eg)
{
	memset(eg, 0x41, 1800);
}

static void test_fake_library(void **state)
{
	char why[256];
	struct hs_php_proc p;

	(void)state;
	/* PHP's names, strings and sizes: taken for 8.2.99 while its globals are zero (no request
	 * yet: nothing is read from it), refused once they are not as PHP makes them */
	assert_int_equal(find_fake(BUILDDIR "/tests/unit/libphp8.2.so", NULL, why, sizeof(why), &p), HS_PHP_SUPPORTED);
	assert_int_equal(p.patch, 99);
	child_teardown(NULL);
	assert_int_equal(find_fake(BUILDDIR "/tests/unit/libphp8.2.so", garbage, why, sizeof(why), &p),
			 HS_PHP_UNSUPPORTED);
	assert_string_equal(why, "php 8.2.99: its executor_globals' VM stack is not as 8.2 makes it");
	child_teardown(NULL);
	/* executor_globals of another size */
	assert_int_equal(find_fake(BUILDDIR "/tests/unit/libphp-small.so", NULL, why, sizeof(why), &p),
			 HS_PHP_UNSUPPORTED);
	assert_string_equal(why, "php 8.2.99: executor_globals is 1792 bytes, expected 1800");
}

/* Another program under PHP's name: not PHP. */
static void test_other_program(void **state)
{
	char dir[256], path[300], why[256] = "";
	size_t len;
	char *bin = hs_test_read_file("/bin/sleep", &len);
	struct hs_php_proc p;

	(void)state;
	assert_int_equal(hs_test_mkdtemp(dir, sizeof(dir), "hs-php"), 0);
	snprintf(path, sizeof(path), "%s/php8.2", dir);
	hs_test_write_file(path, bin, len);
	free(bin);
	assert_int_equal(chmod(path, 0755), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		execl(path, path, "30", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200 && hs_php_find(child, &p, why, sizeof(why)) == HS_PHP_ABSENT; i++) {
		char exe[64], target[300] = "";
		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)child);
		if (readlink(exe, target, sizeof(target) - 1) > 0 && strstr(target, "/php8.2"))
			break; /* it runs: looked at once more below */
		usleep(10000);
	}
	assert_int_equal(hs_php_find(child, &p, why, sizeof(why)), HS_PHP_ABSENT);
	assert_int_equal(hs_php_find(getpid(), &p, why, sizeof(why)), HS_PHP_ABSENT);
	assert_int_equal(hs_php_find(0x7ffffff0, &p, why, sizeof(why)), HS_PHP_ABSENT);
	child_teardown(NULL);
	assert_int_equal(hs_test_rmtree(dir), 0);
}

/* ---- names from memory ---- */

struct region {
	uint64_t addr;
	uint8_t b[512];
};

struct fake_mem {
	struct region r[8];
	size_t n;
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	const struct fake_mem *m = ctx;

	for (size_t i = 0; i < m->n; i++)
		if (addr >= m->r[i].addr && addr + n <= m->r[i].addr + sizeof(m->r[i].b)) {
			memcpy(buf, m->r[i].b + (addr - m->r[i].addr), n);
			return 0;
		}
	return -1;
}

static uint8_t *at(struct fake_mem *m, uint64_t addr)
{
	for (size_t i = 0; i < m->n; i++)
		if (addr >= m->r[i].addr && addr < m->r[i].addr + sizeof(m->r[i].b))
			return m->r[i].b + (addr - m->r[i].addr);
	assert_true(m->n < HS_ARRAY_SIZE(m->r));
	m->r[m->n].addr = addr;
	return m->r[m->n++].b;
}

static void put64(struct fake_mem *m, uint64_t addr, uint64_t v)
{
	memcpy(at(m, addr), &v, 8);
}

static void put32(struct fake_mem *m, uint64_t addr, uint32_t v)
{
	memcpy(at(m, addr), &v, 4);
}

/* A zend_string at addr: type_info (6 is a string), length and bytes. */
static void put_string(struct fake_mem *m, uint64_t addr, uint32_t type, uint64_t len, const char *s, size_t n)
{
	at(m, addr);
	put32(m, addr + 4, type);
	put64(m, addr + 16, len);
	memcpy(at(m, addr + 24), s, n);
}

#define FN 0x10000
#define NAME 0x20000
#define FILE_ 0x30000
#define CE 0x40000
#define CE_NAME 0x50000

static int name_of(struct fake_mem *m, struct hs_ip_code *c)
{
	struct hs_php_proc p = {0};
	struct hs_rt_mem mem = {fake_read, m};
	struct hs_ip_frame f = {FN, 0, 0, 0, 0};
	uint64_t name, file = 0, what = FN;
	struct hs_ip_code none = {0};

	p.info.off = (struct hs_php_offsets){0, 24, 40, 48, 56, 0, 8, 16, 24, 80, 88, 152, 160, 168, 32, 24};
	memcpy(&name, at(m, FN + 8), 8);
	if (at(m, FN)[0] != HS_PHP_TYPE_INTERNAL) {
		memcpy(&file, at(m, FN + 152), 8);
		memcpy(&what, at(m, FN + 88), 8);
	}
	f.aux = hs_php_aux(name, file, what);
	*c = none;
	return hs_php_code_read(&p, &mem, &f, c);
}

static void test_names(void **state)
{
	struct fake_mem m = {0};
	struct hs_ip_code c;
	struct hs_php_proc p = {0};
	struct hs_rt_mem mem = {fake_read, &m};
	struct hs_ip_frame f = {FN, 0, 0, 0, 0};
	char big[400];

	(void)state;
	/* a method */
	at(&m, FN)[0] = HS_PHP_TYPE_USER;
	put64(&m, FN + 8, NAME);
	put64(&m, FN + 16, CE);
	put64(&m, FN + 152, FILE_);
	put32(&m, FN + 160, 28);
	put_string(&m, NAME, 0x16, 3, "run", 3);
	put_string(&m, FILE_, 0x16, 9, "/t/x.php!", 9);
	put64(&m, CE + 8, CE_NAME);
	put_string(&m, CE_NAME, 0x16, 6, "Runner", 6);
	assert_int_equal(name_of(&m, &c), 0);
	assert_string_equal(c.name, "Runner::run");
	assert_string_equal(c.file, "/t/x.php!");
	assert_int_equal(c.firstline, 28);
	hs_ip_code_release(&c);
	/* an anonymous class: its name goes on past a NUL with where it was declared */
	put_string(&m, CE_NAME, 0x16, 30, "class@anonymous\0/t/x.php:3$0", 29);
	assert_int_equal(name_of(&m, &c), 0);
	assert_string_equal(c.name, "class@anonymous::run");
	hs_ip_code_release(&c);
	/* a class whose name cannot be read: the function's alone */
	put64(&m, CE + 8, 0x990000);
	assert_int_equal(name_of(&m, &c), 0);
	assert_string_equal(c.name, "run");
	hs_ip_code_release(&c);
	put64(&m, FN + 16, 0);
	/* a file's top level, eval'd code */
	put64(&m, FN + 8, 0);
	assert_int_equal(name_of(&m, &c), 0);
	assert_string_equal(c.name, "main");
	assert_string_equal(c.file, "/t/x.php!");
	hs_ip_code_release(&c);
	at(&m, FN)[0] = HS_PHP_TYPE_EVAL;
	assert_int_equal(name_of(&m, &c), 0);
	assert_string_equal(c.name, "eval");
	hs_ip_code_release(&c);
	/* a C function: no file, and its op_array fields are not read */
	at(&m, FN)[0] = HS_PHP_TYPE_INTERNAL;
	put64(&m, FN + 8, NAME);
	put_string(&m, NAME, 0x1d6, 5, "usort", 5);
	put64(&m, FN + 152, 0xdead);
	assert_int_equal(name_of(&m, &c), 0);
	assert_string_equal(c.name, "usort");
	assert_null(c.file);
	assert_int_equal(c.firstline, 0);
	hs_ip_code_release(&c);
	/* a name over 1 KiB is cut (where it can be read) */
	put_string(&m, NAME, 0x16, 1 << 30, "x", 1);
	assert_int_equal(name_of(&m, &c), -1); /* its 1 KiB lies past what is readable here */
	memset(big, 'y', sizeof(big));
	put_string(&m, NAME, 0x16, sizeof(big), big, sizeof(big));
	assert_int_equal(name_of(&m, &c), 0);
	assert_int_equal(strlen(c.name), sizeof(big));
	hs_ip_code_release(&c);

	/* refused: what is not a string, a function of no known type, another function since */
	put_string(&m, NAME, 0x15, 5, "usort", 5);
	assert_int_equal(name_of(&m, &c), -1);
	put_string(&m, NAME, 0x1d6, 5, "usort", 5);
	at(&m, FN)[0] = 3;
	assert_int_equal(name_of(&m, &c), -1);
	at(&m, FN)[0] = HS_PHP_TYPE_INTERNAL;
	p.info.off = (struct hs_php_offsets){0, 24, 40, 48, 56, 0, 8, 16, 24, 80, 88, 152, 160, 168, 32, 24};
	f.aux = hs_php_aux(NAME + 8, 0, f.fn);
	assert_int_equal(hs_php_code_read(&p, &mem, &f, &c), -1);
	f.aux = hs_php_aux(NAME, 0, f.fn);
	assert_int_equal(hs_php_code_read(&p, &mem, &f, &c), 0);
	hs_ip_code_release(&c);
	f.fn = 0x123456; /* unreadable */
	assert_int_equal(hs_php_code_read(&p, &mem, &f, &c), -1);
}

/* ---- a live PHP ---- */

static char live_dir[256];

static int live_teardown(void **state)
{
	child_teardown(state);
	if (live_dir[0])
		hs_test_rmtree(live_dir);
	live_dir[0] = 0;
	return 0;
}

struct live_frame {
	char name[64];
	char file[256];
	uint32_t line, firstline, flags;
};

static uint64_t rd64(const struct hs_rt_mem *mem, uint64_t addr)
{
	uint64_t v = 0;

	return mem->read(mem->ctx, addr, &v, 8) ? 0 : v;
}

static uint32_t rd32(const struct hs_rt_mem *mem, uint64_t addr)
{
	uint32_t v = 0;

	return mem->read(mem->ctx, addr, &v, 4) ? 0 : v;
}

/* The frames of the stopped process as the reader walks them, named: how many. */
static size_t live_walk(const struct hs_php_proc *p, pid_t pid, struct live_frame *out, size_t max)
{
	const struct hs_php_offsets *o = &p->info.off;
	struct hs_rt_mem mem = hs_rt_mem_pid(pid);
	uint64_t ex = rd64(&mem, p->info.current_ex);
	size_t n = 0;

	for (; ex && n < max; ex = rd64(&mem, ex + o->ex_prev)) {
		uint64_t fn = rd64(&mem, ex + o->ex_func), name, file = 0, op, opcodes;
		struct hs_ip_frame f = {fn, 0, 0, 0, 0};
		struct hs_ip_code c;
		uint8_t type = 0;

		if (!fn)
			continue;
		assert_int_equal(mem.read(mem.ctx, fn + o->fn_type, &type, 1), 0);
		name = rd64(&mem, fn + o->fn_name);
		out[n] = (struct live_frame){"", "", 0, 0, 0};
		if (type != HS_PHP_TYPE_INTERNAL) {
			file = rd64(&mem, fn + o->op_filename);
			op = rd64(&mem, ex + o->ex_opline);
			opcodes = rd64(&mem, fn + o->op_opcodes);
			if (op >= opcodes && op < opcodes + (uint64_t)rd32(&mem, fn + o->op_last) * o->op_size)
				out[n].line = rd32(&mem, op + o->op_lineno);
			if (rd32(&mem, ex + o->ex_type_info) & HS_PHP_CALL_TOP)
				out[n].flags = HS_IP_ENTRY;
		} else {
			out[n].flags = HS_IP_CFUNC;
		}
		f.aux = hs_php_aux(name, file, type == HS_PHP_TYPE_INTERNAL ? fn : rd64(&mem, fn + o->op_opcodes));
		if (hs_php_code_read(p, &mem, &f, &c))
			fail_msg("frame %zu (function %#lx) cannot be named", n, (unsigned long)fn);
		snprintf(out[n].name, sizeof(out[n].name), "%s", c.name);
		snprintf(out[n].file, sizeof(out[n].file), "%s", c.file ? c.file : "");
		out[n].firstline = c.firstline;
		hs_ip_code_release(&c);
		n++;
	}
	return n;
}

static void test_live_cli(void **state)
{
	static const struct {
		const char *name;
		uint32_t line, firstline, flags; /* line 0: not checked */
	} want[] = {
		{"leaf", 0, 11, 0},
		{"{closure}", 22, 22, HS_IP_ENTRY},
		{"usort", 0, 0, HS_IP_CFUNC},
		{"rec", 22, 19, 0},
		{"rec", 25, 19, 0},
		{"rec", 25, 19, 0},
		{"rec", 25, 19, 0},
		{"rec", 25, 19, 0},
		{"Runner::run", 28, 28, 0},
		{"{closure}", 46, 46, HS_IP_ENTRY},
		{"array_map", 0, 0, HS_IP_CFUNC},
		{"main", 46, 1, HS_IP_ENTRY},
	};
	char ready[300], why[256] = "", *prog = SRCDIR "/tests/workloads/calltree.php";
	struct live_frame fr[64];
	struct hs_php_proc p;
	size_t n = 0;
	int status;

	(void)state;
	if (access(PHP_CLI, X_OK))
		hs_test_skip("%s is not installed", PHP_CLI);
	assert_int_equal(hs_test_mkdtemp(live_dir, sizeof(live_dir), "hs-php"), 0);
	snprintf(ready, sizeof(ready), "%s/ready", live_dir);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		execl(PHP_CLI, PHP_CLI, "-n", prog, "tree", "60", ready, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 3000 && access(ready, F_OK); i++)
		usleep(10000);
	assert_int_equal(access(ready, F_OK), 0);
	/* stopped, the frames hold still while they are read; until the leaf runs */
	for (int tries = 0; tries < 500; tries++) {
		kill(child, SIGSTOP);
		assert_int_equal(waitpid(child, &status, WUNTRACED), child);
		assert_true(WIFSTOPPED(status));
		if (!tries) {
			if (hs_php_find(child, &p, why, sizeof(why)) != HS_PHP_SUPPORTED)
				fail_msg("php not found: %s", why);
			assert_string_equal(p.path, PHP_CLI);
			assert_int_equal(p.major * 100 + p.minor, 802);
		}
		n = live_walk(&p, child, fr, HS_ARRAY_SIZE(fr));
		if (n && !strcmp(fr[0].name, "leaf"))
			break;
		kill(child, SIGCONT);
		usleep(10000);
	}
	if (n != HS_ARRAY_SIZE(want))
		fail_msg("%zu frames read, %zu expected (innermost: %s)", n, HS_ARRAY_SIZE(want), n ? fr[0].name : "");
	for (size_t i = 0; i < n; i++) {
		if (strcmp(fr[i].name, want[i].name) || (want[i].line && fr[i].line != want[i].line) ||
		    fr[i].firstline != want[i].firstline || fr[i].flags != want[i].flags)
			fail_msg("frame %zu: %s line %u (first %u) flags %u; expected %s line %u (first %u) flags %u",
				 i, fr[i].name, fr[i].line, fr[i].firstline, fr[i].flags, want[i].name, want[i].line,
				 want[i].firstline, want[i].flags);
		if (want[i].flags != HS_IP_CFUNC)
			assert_string_equal(fr[i].file, prog);
		else
			assert_string_equal(fr[i].file, "");
	}
	/* the innermost frame's line, where the loop runs */
	assert_true(fr[0].line == 0 || (fr[0].line >= 11 && fr[0].line <= 17));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maybe),
		cmocka_unit_test(test_native_class),
		cmocka_unit_test(test_installed),
		cmocka_unit_test(test_altered),
		cmocka_unit_test_teardown(test_fake_library, child_teardown),
		cmocka_unit_test_teardown(test_other_program, child_teardown),
		cmocka_unit_test(test_names),
		cmocka_unit_test_teardown(test_live_cli, live_teardown),
	};

	if (hs_test_select(argc, argv, tests, HS_ARRAY_SIZE(tests)) < 0)
		return 2;
	return hs_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
