/* Unit tests for src/symbolize/debug-cache.c: which files get an entry, an entry written and
 * read back under its key only, and the directory trimmed least recently used first. The cache
 * directory is a temporary one (HOTSTACK_CACHE_DIR, set before anything looks it up). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/elf.h"
#include "helpers.h"
#include "symbolize/debug-cache.h"
#include "util/cache.h"

static char cache[4096];

/* path opened as hs_dso_elf_open() would leave it (fd, Elf, build-id) */
static int open_elf(const char *path, struct hs_dso_elf *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ret->fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	ret->elf = elf_begin(ret->fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(ret->elf);
	ret->build_id_size = (uint8_t)hs_elf_build_id(ret->elf, ret->build_id, sizeof(ret->build_id));
	return 0;
}

static void test_small_file_gets_no_entry(void **state)
{
	struct hs_debug_cache_key key;
	struct hs_dso_elf e;

	(void)state;
	assert_int_equal(open_elf("/proc/self/exe", &e), 0);
	assert_int_equal(hs_debug_cache_key(&e, &key), -ENOENT);
	hs_dso_elf_close(&e);
}

static void test_entry_round_trip(void **state)
{
	const char *prog = BUILDDIR "/tests/workloads/dwcache";
	struct hs_debug_cache_key key, other;
	struct hs_dso_elf e, entry;
	char path[8192];

	(void)state;
	if (access(prog, R_OK))
		hs_test_skip("%s was not built (no C++ compiler)", prog);
	assert_int_equal(open_elf(prog, &e), 0);
	assert_int_equal(hs_debug_cache_key(&e, &key), 0);
	assert_true(key.compressed >= HS_DEBUG_CACHE_MIN);
	assert_int_equal(key.build_id_size, 20);
	assert_int_equal(strncmp(key.name, "debug/", 6), 0);
	assert_int_equal(hs_debug_cache_open(&key, &e, &entry), -ENOENT);
	assert_int_equal(hs_debug_cache_write(&key, &e), 0);
	assert_int_equal(hs_debug_cache_open(&key, &e, &entry), 0);
	assert_true(hs_elf_has_section(entry.elf, ".debug_info"));
	hs_dso_elf_close(&entry);
	/* another version of the file: not believed */
	other = key;
	other.mtime_ns++;
	assert_int_equal(hs_debug_cache_open(&other, &e, &entry), -ESTALE);
	other = key;
	other.ino++;
	assert_int_equal(hs_debug_cache_open(&other, &e, &entry), -ESTALE);
	/* cut short: damaged */
	snprintf(path, sizeof(path), "%s/%s", cache, key.name);
	assert_int_equal(truncate(path, 4096), 0);
	assert_int_equal(hs_debug_cache_open(&key, &e, &entry), -EBADMSG);
	assert_int_equal(unlink(path), 0);
	hs_dso_elf_close(&e);
}

static void put_file(const char *name, size_t size, time_t mtime)
{
	char path[8192];
	char *buf = calloc(1, size);
	struct timespec ts[2] = {{mtime, 0}, {mtime, 0}};

	snprintf(path, sizeof(path), "%s/debug/%s", cache, name);
	hs_test_write_file(path, buf, size);
	free(buf);
	if (mtime)
		assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static bool present(const char *name)
{
	char path[8192];

	snprintf(path, sizeof(path), "%s/debug/%s", cache, name);
	return access(path, F_OK) == 0;
}

static void test_trim_least_recently_used_first(void **state)
{
	char path[8192];
	time_t now = time(NULL);

	(void)state;
	snprintf(path, sizeof(path), "%s/debug", cache);
	mkdir(path, 0700);
	put_file("a.debug", 1000, now - 3000);
	put_file("b.debug", 1000, now - 2000);
	put_file("c.debug", 1000, now - 1000);
	put_file(".c.debug.tmp1.0", 1000, 0);         /* being written by another run */
	put_file(".d.debug.tmp2.0", 1000, now - 5000); /* left by a run that died */
	assert_int_equal(hs_debug_cache_trim(4000), 1);
	assert_false(present(".d.debug.tmp2.0"));
	assert_true(present("a.debug"));
	assert_int_equal(hs_debug_cache_trim(2500), 2);
	assert_false(present("a.debug"));
	assert_false(present("b.debug"));
	assert_true(present("c.debug"));
	assert_true(present(".c.debug.tmp1.0"));
	assert_int_equal(hs_debug_cache_trim(HS_DEBUG_CACHE_MAX), 0);
	assert_true(present("c.debug"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_file_gets_no_entry),
		cmocka_unit_test(test_entry_round_trip),
		cmocka_unit_test(test_trim_least_recently_used_first),
	};
	int rc;

	if (hs_test_mkdtemp(cache, sizeof(cache), "hs-debug-cache") < 0)
		return 1;
	setenv("HOTSTACK_CACHE_DIR", cache, 1);
	if (!hs_cache_dir()) {
		fprintf(stderr, "no cache directory at %s\n", cache);
		return 1;
	}
	if (hs_test_select(argc, argv, tests, HS_ARRAY_SIZE(tests)) < 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	hs_test_rmtree(cache);
	return hs_test_status(rc);
}
