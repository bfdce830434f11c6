/* Unit tests for src/unwind/cfi-cache.c: a file's compiled table written and read back whole
 * under its key only; an entry whose header and hash agree but whose rows the unwinder could not
 * search (out of order) or index (rules that do not exist) refused. The cache directory is a
 * temporary one (HOTSTACK_CACHE_DIR, set before anything looks it up). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/elf.h"
#include "helpers.h"
#include "unwind/cfi-cache.h"
#include "util/cache.h"

static char cache[4096];

/* this test program, opened as hs_dso_elf_open() would leave it, and its table */
static void open_self(struct hs_dso_elf *e, struct hs_cfi_table **t)
{
	struct hs_error err = {0};

	memset(e, 0, sizeof(*e));
	e->fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(e->fd >= 0);
	elf_version(EV_CURRENT);
	e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(e->elf);
	e->build_id_size = (uint8_t)hs_elf_build_id(e->elf, e->build_id, sizeof(e->build_id));
	assert_int_equal(hs_cfi_table_build(e->elf, NULL, t, &err), 0);
	assert_true((*t)->n > 1);
}

static void test_round_trip(void **state)
{
	struct hs_cfi_cache_key key, other;
	struct hs_cfi_table *t, *back = NULL;
	struct hs_dso_elf e;
	char path[8192];

	(void)state;
	open_self(&e, &t);
	assert_int_equal(hs_cfi_cache_key(&e, NULL, &key), 0);
	assert_int_equal(strncmp(key.name, "cfi/", 4), 0);
	assert_int_equal(hs_cfi_cache_load(&key, &back), -ENOENT);
	assert_int_equal(hs_cfi_cache_store(&key, t), 0);
	snprintf(path, sizeof(path), "%s/%s", cache, key.name);
	assert_int_equal(access(path, R_OK), 0);
	assert_int_equal(hs_cfi_cache_load(&key, &back), 0);
	assert_int_equal(back->base, t->base);
	assert_int_equal(back->n, t->n);
	assert_int_equal(back->nregs, t->nregs);
	assert_memory_equal(back->rows, t->rows, t->n * sizeof(*t->rows));
	assert_memory_equal(back->regs, t->regs, t->nregs * sizeof(*t->regs));
	assert_int_equal(back->stats.rows, t->stats.rows);
	hs_cfi_table_free(back);
	/* another version of the file (mtime), or another file under the name: not read */
	other = key;
	other.mtime_ns++;
	assert_int_equal(hs_cfi_cache_load(&other, &back), -ESTALE);
	other = key;
	other.ino++;
	assert_int_equal(hs_cfi_cache_load(&other, &back), -ESTALE);
	hs_cfi_table_free(t);
	hs_dso_elf_close(&e);
}

/* An entry written from a table the compiler never makes: its hash agrees with it, the load
 * must still refuse it. */
static void refused(const struct hs_cfi_cache_key *key, const struct hs_cfi_table *t)
{
	struct hs_cfi_table *back = NULL;

	assert_int_equal(hs_cfi_cache_store(key, t), 0);
	assert_int_equal(hs_cfi_cache_load(key, &back), -EBADMSG);
	assert_null(back);
}

static void test_unusable_rows_refused(void **state)
{
	struct hs_cfi_cache_key key;
	struct hs_cfi_table *t, *back = NULL;
	struct hs_cfi_row row, *saved;
	struct hs_dso_elf e;

	(void)state;
	open_self(&e, &t);
	assert_int_equal(hs_cfi_cache_key(&e, NULL, &key), 0);
	/* two rows out of PC order: the binary search would miss rows */
	saved = hs_xmalloc(t->n * sizeof(*t->rows));
	memcpy(saved, t->rows, t->n * sizeof(*t->rows));
	row = t->rows[0];
	t->rows[0] = t->rows[1];
	t->rows[1] = row;
	if (t->rows[0].pc == t->rows[1].pc)
		t->rows[0].pc++;
	refused(&key, t);
	memcpy(t->rows, saved, t->n * sizeof(*t->rows));
	/* a row naming rules past the table's */
	t->rows[t->n - 1].regs = (uint16_t)t->nregs;
	refused(&key, t);
	memcpy(t->rows, saved, t->n * sizeof(*t->rows));
	free(saved);
	/* the table as it was: read again */
	assert_int_equal(hs_cfi_cache_store(&key, t), 0);
	assert_int_equal(hs_cfi_cache_load(&key, &back), 0);
	hs_cfi_table_free(back);
	hs_cfi_table_free(t);
	hs_dso_elf_close(&e);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_unusable_rows_refused),
	};
	int rc;

	if (hs_test_mkdtemp(cache, sizeof(cache), "hs-cfi-cache") < 0)
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
