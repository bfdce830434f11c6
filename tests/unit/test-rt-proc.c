/* The runtimes' view of a process (runtime/proc.c): a shared library mapped as the dynamic
 * loader leaves it is read, and one caught while the loader maps it (the whole span from the
 * file's start, then each segment over it, then its zeroed pages) is not yet, as a recording on
 * a busy machine catches a JVM's libjvm.so between two of those steps. In this process, on the
 * C library and on copies of its mappings made step by step as the loader makes them. */
#include "helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/proc.h"

static int is_libc(void *arg, const struct hs_rt_mapping *m)
{
	const char *b = strrchr(m->path, '/');

	if (!b || strncmp(b + 1, "libc.so", 7))
		return 0;
	*(struct hs_rt_mapping *)arg = *m;
	return 1;
}

struct elf_file {
	int fd;
	Elf *elf;
	struct hs_rt_mapping m; /* one mapping of it in this process */
};

static void open_libc(struct elf_file *f)
{
	assert_int_equal(hs_rt_maps_each(getpid(), is_libc, &f->m), 1);
	f->fd = open(f->m.path, O_RDONLY | O_CLOEXEC);
	assert_true(f->fd >= 0);
	elf_version(EV_CURRENT);
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(f->elf);
}

static void close_file(struct elf_file *f)
{
	elf_end(f->elf);
	close(f->fd);
}

/* The C library as the loader mapped it at this process's start */
static void test_loaded(void **state)
{
	struct elf_file f;
	uint64_t bias;

	open_libc(&f);
	assert_int_equal(hs_rt_load_bias(f.elf, &f.m, &bias), 0);
	assert_int_equal(hs_rt_segments_mapped(getpid(), f.elf, &f.m, bias), 0);
	/* at another bias its segments are nowhere */
	assert_int_equal(hs_rt_segments_mapped(getpid(), f.elf, &f.m, bias + 0x10000000), -EAGAIN);
	close_file(&f);
}

/* The C library mapped again as the loader maps a library, each step looked at */
static void test_being_mapped(void **state)
{
	struct elf_file f;
	GElf_Phdr ph, rw = {0};
	size_t phnum;
	uint64_t span = 0, file_end;
	struct hs_rt_mapping m;
	struct stat st;
	uint8_t *base;
	bool has_bss = false;

	open_libc(&f);
	assert_int_equal(fstat(f.fd, &st), 0);
	assert_int_equal(elf_getphdrnum(f.elf, &phnum), 0);
	for (size_t i = 0; i < phnum; i++)
		if (gelf_getphdr(f.elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			span = HS_MAX(span, (ph.p_vaddr + ph.p_memsz + 4095) & ~(uint64_t)4095);
			if (ph.p_flags & PF_W) {
				rw = ph;
				has_bss = ((ph.p_vaddr + ph.p_filesz + 4095) & ~(uint64_t)4095) < ph.p_vaddr + ph.p_memsz;
			}
		}
	if (!rw.p_memsz || !has_bss)
		hs_test_skip("%s has no writable segment with zeroed pages of its own", f.m.path);

	/* 1. the whole span from the file's start */
	base = mmap(NULL, span, PROT_READ, MAP_PRIVATE, f.fd, 0);
	assert_true(base != MAP_FAILED);
	m = (struct hs_rt_mapping){.start = (uint64_t)(uintptr_t)base, .end = (uint64_t)(uintptr_t)base + span,
				   .off = 0, .ino = (uint64_t)st.st_ino};
	snprintf(m.perms, sizeof(m.perms), "r--p");
	snprintf(m.path, sizeof(m.path), "%s", f.m.path);
	assert_int_equal(hs_rt_segments_mapped(getpid(), f.elf, &m, m.start), -EAGAIN);

	/* 2. the writable segment over it, from its offset; its zeroed pages still the span's */
	assert_true(mmap(base + (rw.p_vaddr & ~(uint64_t)4095),
			 ((rw.p_vaddr + rw.p_filesz + 4095) & ~(uint64_t)4095) - (rw.p_vaddr & ~(uint64_t)4095),
			 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, f.fd,
			 (off_t)(rw.p_offset & ~(uint64_t)4095)) != MAP_FAILED);
	assert_int_equal(hs_rt_segments_mapped(getpid(), f.elf, &m, m.start), -EAGAIN);

	/* 3. its zeroed pages anonymous: as the loader leaves it */
	file_end = (rw.p_vaddr + rw.p_filesz + 4095) & ~(uint64_t)4095;
	assert_true(mmap(base + file_end, ((rw.p_vaddr + rw.p_memsz + 4095) & ~(uint64_t)4095) - file_end,
			 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0) != MAP_FAILED);
	assert_int_equal(hs_rt_segments_mapped(getpid(), f.elf, &m, m.start), 0);

	munmap(base, span);
	close_file(&f);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loaded),
		cmocka_unit_test(test_being_mapped),
	};

	if (hs_test_select(argc, argv, tests, HS_ARRAY_SIZE(tests)) < 0)
		return 2;
	return hs_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
