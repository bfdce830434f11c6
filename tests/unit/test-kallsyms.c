/* The kernel-symbol cache (src/symbolize/kallsyms-cache.c): a fake kernel's files in a
 * temporary directory, the cache in another ($HOTSTACK_CACHE_DIR); and the real
 * /proc/kallsyms, where it shows addresses. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "symbolize/kallsyms.h"
#include "symbolize/symbolizer.h"

/* Text of the kernel and of two modules, data among it, and dynamic text (BPF programs,
 * ftrace and kprobe trampolines) below, between and above the modules. */
static const char fake_kallsyms[] = "ffffffff81000000 T _text\n"
				    "ffffffff81000000 T startup_64\n"
				    "ffffffff81000070 T secondary_startup_64\n"
				    "ffffffff810000e0 t verify_cpu\n"
				    "ffffffff81001000 T do_one_initcall\n"
				    "ffffffff81001200 D initcall_debug\n"
				    "ffffffff81001400 T x86_64_start_kernel\n"
				    "ffffffff81002000 W arch_cpu_idle\n"
				    "ffffffff81003000 T _etext\n"
				    "ffffffff82000000 D init_task\n"
				    "ffffffffc0200000 t bpf_prog_6deef7357e7b4530_sd_fw_egress\t[bpf]\n"
				    "ffffffffc0201000 t ftrace_trampoline\t[__builtin__ftrace]\n"
				    "ffffffffc0400000 t nft_hook_slow\t[nf_tables]\n"
				    "ffffffffc0400080 T nft_do_chain\t[nf_tables]\n"
				    "ffffffffc0400100 d nft_chain_data\t[nf_tables]\n"
				    "ffffffffc0400900 t nft_exit\t[nf_tables]\n"
				    "ffffffffc0401000 t ext4_fill_super\t[ext4]\n"
				    "ffffffffc0401000 t ext4_fill_super_alias\t[ext4]\n"
				    "ffffffffc0401800 t ext4_sync_fs\t[ext4]\n"
				    "ffffffffc0403000 t bpf_prog_0123456789abcdef_second\t[bpf]\n"
				    "ffffffffc0404000 t kprobe_insn_page\t[__builtin__kprobes]\n";
static const char fake_modules[] = "ext4 1007616 1 - Live 0xffffffffc0401000\n"
				   "nf_tables 364544 0 - Live 0xffffffffc0400000\n";
static const char fake_boot_id[] = "0f98372d-cb74-49fd-8c75-dbf7e2ef0972\n";

static char cache_dir[256], kdir[256], entry[300];
static char kallsyms_path[300], modules_path[300], boot_id_path[300];
static const struct hs_kernel_files fake = {kallsyms_path, modules_path, boot_id_path};

static void put(const char *path, const char *text)
{
	hs_test_write_file(path, text, strlen(text));
}

static int setup(void **state)
{
	(void)state;
	if (hs_test_mkdtemp(kdir, sizeof(kdir), "test-kallsyms-kernel"))
		return -1;
	snprintf(kallsyms_path, sizeof(kallsyms_path), "%s/kallsyms", kdir);
	snprintf(modules_path, sizeof(modules_path), "%s/modules", kdir);
	snprintf(boot_id_path, sizeof(boot_id_path), "%s/boot_id", kdir);
	put(kallsyms_path, fake_kallsyms);
	put(modules_path, fake_modules);
	put(boot_id_path, fake_boot_id);
	unlink(entry);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(entry);
	return hs_test_rmtree(kdir);
}

static struct hs_kallsyms *load(bool fresh)
{
	struct hs_kallsyms *k = NULL;

	assert_int_equal(hs_kallsyms_load_kernel(&fake, fresh, &k), 0);
	return k;
}

static bool is_dynamic(const struct hs_kallsyms *k, const struct hs_ksym *s)
{
	const char *m = k->names + s->module;

	return !strcmp(m, "bpf") || !strncmp(m, "__builtin__", 11);
}

/* Whether c covers addr; if so, that it answers as the fresh table f does. */
static bool same_answer(const struct hs_kallsyms *f, const struct hs_kallsyms *c, uint64_t addr)
{
	const struct hs_ksym *a, *b;

	if (!hs_kallsyms_covers(c, addr))
		return false;
	a = hs_kallsyms_lookup(f, addr);
	b = hs_kallsyms_lookup(c, addr);
	if (!a || !b) {
		if (a || b)
			fail_msg("%#" PRIx64 ": %s in a fresh read, %s in the cache", addr,
				 a ? f->names + a->name : "nothing", b ? c->names + b->name : "nothing");
		return true;
	}
	if (a->addr != b->addr || strcmp(f->names + a->name, c->names + b->name) ||
	    strcmp(f->names + a->module, c->names + b->module))
		fail_msg("%#" PRIx64 ": %s+%#" PRIx64 " [%s] in a fresh read, %s+%#" PRIx64 " [%s] in the cache", addr,
			 f->names + a->name, addr - a->addr, f->names + a->module, c->names + b->name, addr - b->addr,
			 c->names + b->module);
	return true;
}

/* Every symbol of the fresh table f, its neighbours and the addresses between symbols: c answers
 * the same wherever it covers, and covers every symbol that is not dynamic text. Returns how
 * many addresses it covered. */
static size_t compare_tables(const struct hs_kallsyms *f, const struct hs_kallsyms *c)
{
	size_t covered = 0;

	for (size_t i = 0; i < f->n; i++) {
		const struct hs_ksym *s = &f->syms[i];
		uint64_t next = i + 1 < f->n ? f->syms[i + 1].addr : f->text_end;
		uint64_t probe[] = {s->addr - 1, s->addr, s->addr + 1, s->addr + (next - s->addr) / 2, next - 1};

		if (c->ranges && !is_dynamic(f, s) && !hs_kallsyms_covers(c, s->addr))
			fail_msg("%s at %#" PRIx64 " not covered by the cache", f->names + s->name, s->addr);
		if (c->ranges && is_dynamic(f, s) && hs_kallsyms_covers(c, s->addr))
			fail_msg("dynamic %s at %#" PRIx64 " covered by the cache", f->names + s->name, s->addr);
		for (size_t j = 0; j < HS_ARRAY_SIZE(probe); j++)
			covered += same_answer(f, c, probe[j]);
	}
	return covered;
}

/* A miss writes the entry; a hit answers as the file does without reading it. */
static void test_hit(void **state)
{
	struct hs_kallsyms *f = NULL, *miss, *hit;
	struct stat st;

	(void)state;
	assert_int_equal(hs_kallsyms_load(kallsyms_path, &f), 0);
	miss = load(false);
	assert_null(miss->ranges); /* read from the file */
	assert_int_equal(stat(entry, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	/* no read of the file past its first lines (whether addresses are shown): it holds one
	 * line now */
	put(kallsyms_path, "ffffffff81000000 T _text\n");
	hit = load(false);
	assert_non_null(hit->ranges);
	/* the kernel, nf_tables and ext4, each to the end of its last page */
	assert_int_equal(hit->nranges, 3);
	assert_true(hs_kallsyms_covers(hit, 0xffffffff81003fff));
	assert_false(hs_kallsyms_covers(hit, 0xffffffff81004000));
	assert_false(hs_kallsyms_covers(hit, 0xffffffff80ffffff));
	assert_true(hs_kallsyms_covers(hit, 0xffffffffc0401fff));
	/* the BPF programs, the trampolines, and past the last module's page */
	assert_false(hs_kallsyms_covers(hit, 0xffffffffc0200010));
	assert_false(hs_kallsyms_covers(hit, 0xffffffffc0201000));
	assert_false(hs_kallsyms_covers(hit, 0xffffffffc0402800));
	assert_false(hs_kallsyms_covers(hit, 0xffffffffc0403010));
	assert_false(hs_kallsyms_covers(hit, 0xffffffffc0404000));
	assert_true(compare_tables(f, hit) > 20);
	assert_true(compare_tables(f, miss) > 20);
	/* only the names kept: no data symbols, no dynamic text */
	assert_true(hit->names_len < 400);
	for (size_t i = 0; i < hit->n; i++)
		assert_string_not_equal(hit->names + hit->syms[i].name, "nft_chain_data");
	hs_kallsyms_free(miss);
	hs_kallsyms_free(hit);
	hs_kallsyms_free(f);
}

/* One load: from the cache (true) or from the file (false). */
static void expect_load(bool fresh, bool cached)
{
	struct hs_kallsyms *k = load(fresh);

	if (cached)
		assert_non_null(k->ranges);
	else
		assert_null(k->ranges);
	hs_kallsyms_free(k);
}

/* A new boot or a module change makes a miss; the entry is rewritten for the new key. */
static void test_key(void **state)
{
	(void)state;
	hs_kallsyms_free(load(false));
	expect_load(false, true);

	/* a module unloaded (the kallsyms file need not change for this test) */
	put(modules_path, "nf_tables 364544 0 - Live 0xffffffffc0400000\n");
	expect_load(false, false);
	expect_load(false, true);
	/* the same module at another address */
	put(modules_path, "nf_tables 364544 0 - Live 0xffffffffc0500000\n");
	expect_load(false, false);

	put(boot_id_path, "5c2b0d1e-33f1-4d0a-9d7e-1a2b3c4d5e6f\n");
	expect_load(false, false);
	expect_load(false, true);

	/* a kernel without modules has no /proc/modules: a key all the same */
	unlink(modules_path);
	expect_load(false, false);
	expect_load(false, true);
	put(modules_path, "");
	expect_load(false, false);

	/* fresh: the file is read whatever the cache holds */
	expect_load(true, false);

	/* no boot id: no cache, the file read all the same */
	unlink(boot_id_path);
	expect_load(false, false);
}

/* Every lookup in c at the addresses compare_tables() asks about (those of f's symbols and
 * between) stays inside c: a symbol of its array, whose name and module end inside its names. */
static void lookups_in_bounds(const struct hs_kallsyms *f, const struct hs_kallsyms *c)
{
	for (size_t i = 0; i < f->n; i++) {
		uint64_t a = f->syms[i].addr, probe[] = {a - 1, a, a + 1, a + 0x800};

		for (size_t j = 0; j < HS_ARRAY_SIZE(probe); j++) {
			const struct hs_ksym *s = hs_kallsyms_lookup(c, probe[j]);

			hs_kallsyms_covers(c, probe[j]);
			if (!s)
				continue;
			assert_true(s >= c->syms && s < c->syms + c->n);
			assert_true(s->name < c->names_len && s->module < c->names_len);
			assert_true(strnlen(c->names + s->name, c->names_len - s->name) < c->names_len - s->name);
			assert_true(strnlen(c->names + s->module, c->names_len - s->module) < c->names_len - s->module);
		}
	}
}

/* A truncated or damaged entry is never a crash, and never used where a check can tell: one
 * truncated, or damaged in its header, its names' ends or its ranges, is refused (the file is
 * read, and the entry written again). Its symbols are not checked when it is loaded (a real
 * kernel has a hundred thousand): a name out of the pool makes that symbol's lookups answer
 * nothing, an address out of order can only misname addresses. */
static void test_damaged(void **state)
{
	struct hs_kallsyms *f = NULL, *k;
	size_t len, hits = 0, header_len;
	uint64_t first_range = 0xffffffff81000000;
	char *good, *ranges;

	(void)state;
	assert_int_equal(hs_kallsyms_load(kallsyms_path, &f), 0);
	hs_kallsyms_free(load(false));
	good = hs_test_read_file(entry, &len);
	assert_true(len > 64);

	for (size_t cut = 0; cut < len; cut += cut < 256 ? 1 : 61) {
		hs_test_write_file(entry, good, cut);
		k = load(false);
		assert_null(k->ranges);
		compare_tables(f, k);
		hs_kallsyms_free(k);
	}
	/* rewritten whole after the last miss */
	k = load(false);
	assert_non_null(k->ranges);
	hs_kallsyms_free(k);

	/* the header is all that comes before the first range, the kernel's */
	ranges = memmem(good, len, &first_range, sizeof(first_range));
	assert_non_null(ranges);
	header_len = (size_t)(ranges - good);

	/* all ones over each word in turn: offsets and counts past the end, a key or a header
	 * field changed, ranges out of order are refused; what a load does not check (the
	 * symbols) is used, but only in bounds */
	for (size_t at = 0; at + 4 <= len; at += 4) {
		char *bad = hs_xmalloc(len);

		memcpy(bad, good, len);
		memset(bad + at, 0xff, 4);
		hs_test_write_file(entry, bad, len);
		free(bad);
		k = load(false);
		if (k->ranges) {
			hits++;
			if (at < header_len)
				fail_msg("an entry damaged in its header at %zu was used", at);
			lookups_in_bounds(f, k);
		} else {
			compare_tables(f, k);
		}
		hs_kallsyms_free(k);
	}
	assert_true(hits > 0);
	free(good);
	hs_kallsyms_free(f);
}

/* Hidden addresses (kptr_restrict) are never cached. */
static void test_restricted(void **state)
{
	struct hs_kallsyms *k = NULL;
	struct stat st;

	(void)state;
	put(kallsyms_path, "0000000000000000 T _text\n0000000000000000 t verify_cpu\n");
	assert_int_equal(hs_kallsyms_load_kernel(&fake, false, &k), -ENODATA);
	assert_int_equal(stat(entry, &st), -1);
	assert_int_equal(errno, ENOENT);
}

/* kernel.kptr_restrict raised after the entry was written: the entry is not used, the
 * addresses stay hidden. */
static void test_restricted_later(void **state)
{
	struct hs_kallsyms *k = NULL;

	(void)state;
	hs_kallsyms_free(load(false)); /* the entry, written while addresses were shown */
	put(kallsyms_path, "0000000000000000 T _text\n0000000000000000 t verify_cpu\n");
	assert_int_equal(hs_kallsyms_load_kernel(&fake, false, &k), -ENODATA);
	assert_null(k);
}

/* The symbolizer: an address the cache does not cover (a BPF program loaded since, with no
 * module change) has kallsyms read again, and that table answers from then on. */
static void test_symbolizer_rereads(void **state)
{
	struct hs_symbolizer_opts opts = {.kernel = &fake};
	struct hs_symbolizer s;
	struct hs_sym sym;
	char *more;

	(void)state;
	hs_kallsyms_free(load(false)); /* the entry */
	hs_symbolizer_init(&s, &opts);
	assert_true(hs_symbolize_kernel(&s, 0xffffffff81001410, &sym));
	assert_string_equal(sym.name, "x86_64_start_kernel");
	assert_int_equal(sym.offset, 0x10);
	assert_null(sym.module);
	assert_non_null(s.kallsyms->ranges);
	assert_true(hs_symbolize_kernel(&s, 0xffffffffc0401804, &sym));
	assert_string_equal(sym.name, "ext4_sync_fs");
	assert_string_equal(sym.module, "ext4");
	assert_non_null(s.kallsyms->ranges);

	/* a BPF program loaded after the entry was written */
	more = hs_test_read_file(kallsyms_path, NULL);
	{
		size_t n = strlen(more) + 128;
		char *text = hs_xmalloc(n);
		snprintf(text, n, "%sffffffffc0405000 t bpf_prog_fedcba9876543210_new\t[bpf]\n", more);
		put(kallsyms_path, text);
		free(text);
	}
	free(more);
	assert_true(hs_symbolize_kernel(&s, 0xffffffffc0405020, &sym));
	assert_string_equal(sym.name, "bpf_prog_fedcba9876543210_new");
	assert_int_equal(sym.offset, 0x20);
	assert_string_equal(sym.module, "bpf");
	assert_null(s.kallsyms->ranges);
	/* read once: the file gone, the table read answers for the rest */
	unlink(kallsyms_path);
	assert_true(hs_symbolize_kernel(&s, 0xffffffffc0200008, &sym));
	assert_string_equal(sym.name, "bpf_prog_6deef7357e7b4530_sd_fw_egress");
	assert_true(hs_symbolize_kernel(&s, 0xffffffff81000074, &sym));
	assert_string_equal(sym.name, "secondary_startup_64");
	hs_symbolizer_release(&s, NULL);

	/* a user's file is read as it is, never through the cache */
	put(kallsyms_path, fake_kallsyms);
	opts.kallsyms_path = kallsyms_path;
	hs_symbolizer_init(&s, &opts);
	assert_true(hs_symbolize_kernel(&s, 0xffffffffc0403008, &sym));
	assert_string_equal(sym.name, "bpf_prog_0123456789abcdef_second");
	assert_null(s.kallsyms->ranges);
	hs_symbolizer_release(&s, NULL);
}

/* kallsyms gives no sizes: each symbol is bounded by the next of its module, by the end of its
 * page when it is the last of one, and by the kernel's end markers, so that an address in no
 * function (past _einittext below the modules, a BPF program the kernel does not list) is in
 * none, never the nearest symbol below it. BPF programs are named as kallsyms lists them. */
static const char bounded_kallsyms[] = "ffffffff81000000 T _stext\n"
				       "ffffffff81000000 T _text\n"
				       "ffffffff81000010 T entry_SYSCALL_64\n"
				       "ffffffff81000200 T __entry_text_end\n"
				       "ffffffff81000200 t after_entry\n"
				       "ffffffff81000400 T __irqentry_text_end\n"
				       "ffffffff81001000 T do_work\n"
				       "ffffffff81002000 T _etext\n"
				       "ffffffff82000000 D init_task\n"
				       "ffffffff83000000 T _sinittext\n"
				       "ffffffff83000010 t set_reset_devices\n"
				       "ffffffff83000100 T _einittext\n"
				       "ffffffffc0200000 t bpf_prog_6deef7357e7b4530_sd_fw_egress\t[bpf]\n"
				       "ffffffffc0200080 t bpf_prog_0123456789abcdef_second\t[bpf]\n"
				       "ffffffffc0201000 t ftrace_trampoline\t[__builtin__ftrace]\n"
				       "ffffffffc0400000 t nft_hook_slow\t[nf_tables]\n"
				       "ffffffffc0400f80 T nft_do_chain\t[nf_tables]\n"
				       "ffffffffc0401000 t ext4_fill_super\t[ext4]\n";

static void expect_at(const struct hs_kallsyms *k, uint64_t addr, const char *name)
{
	const struct hs_ksym *s = hs_kallsyms_lookup(k, addr);

	if (!name && s)
		fail_msg("%#" PRIx64 ": %s, expected no symbol", addr, k->names + s->name);
	if (name && !s)
		fail_msg("%#" PRIx64 ": no symbol, expected %s", addr, name);
	if (name)
		assert_string_equal(k->names + s->name, name);
}

static void test_bounds(void **state)
{
	struct hs_symbolizer_opts opts = {.kallsyms_path = kallsyms_path};
	struct hs_symbolizer s;
	struct hs_kallsyms *k = NULL;
	struct hs_sym sym;

	(void)state;
	put(kallsyms_path, bounded_kallsyms);
	assert_int_equal(hs_kallsyms_load(kallsyms_path, &k), 0);
	expect_at(k, 0xffffffff81000010, "entry_SYSCALL_64");
	expect_at(k, 0xffffffff810001ff, "entry_SYSCALL_64");
	/* a function at an end marker's address is the one named */
	expect_at(k, 0xffffffff81000200, "after_entry");
	expect_at(k, 0xffffffff810003ff, "after_entry");
	expect_at(k, 0xffffffff81000400, NULL);
	expect_at(k, 0xffffffff81000fff, NULL);
	expect_at(k, 0xffffffff81001fff, "do_work");
	/* past the kernel's text, its data, its init text */
	expect_at(k, 0xffffffff81002000, NULL);
	expect_at(k, 0xffffffff82000000, NULL);
	expect_at(k, 0xffffffff830000ff, "set_reset_devices");
	expect_at(k, 0xffffffff83000100, NULL);
	expect_at(k, 0xffffffff83010000, NULL);
	expect_at(k, 0xffffffffc0100000, NULL);
	/* BPF programs, each to the next; the last one's page; a trampoline's page */
	expect_at(k, 0xffffffffc0200040, "bpf_prog_6deef7357e7b4530_sd_fw_egress");
	expect_at(k, 0xffffffffc0200080, "bpf_prog_0123456789abcdef_second");
	expect_at(k, 0xffffffffc0200fff, "bpf_prog_0123456789abcdef_second");
	expect_at(k, 0xffffffffc0201fff, "ftrace_trampoline");
	expect_at(k, 0xffffffffc0202000, NULL);
	expect_at(k, 0xffffffffc03fffff, NULL);
	/* modules: the last symbol of one to its page's end, where the next module starts */
	expect_at(k, 0xffffffffc0400fff, "nft_do_chain");
	expect_at(k, 0xffffffffc0401000, "ext4_fill_super");
	expect_at(k, 0xffffffffc0401fff, "ext4_fill_super");
	expect_at(k, 0xffffffffc0402000, NULL);
	hs_kallsyms_free(k);

	/* the symbolizer names what is in no symbol as such, and BPF programs by their names */
	hs_symbolizer_init(&s, &opts);
	assert_true(hs_symbolize_kernel(&s, 0xffffffff83010000, &sym));
	assert_string_equal(sym.name, "[kernel: unknown]");
	assert_string_equal(sym.name, HS_KERNEL_UNKNOWN);
	assert_null(sym.module);
	assert_true(hs_symbolize_kernel(&s, 0xffffffff81002010, &sym));
	assert_string_equal(sym.name, HS_KERNEL_UNKNOWN);
	assert_true(hs_symbolize_kernel(&s, 0xffffffffc0200090, &sym));
	assert_string_equal(sym.name, "bpf_prog_0123456789abcdef_second");
	assert_int_equal(sym.offset, 0x10);
	assert_string_equal(sym.module, "bpf");
	hs_symbolizer_release(&s, NULL);
}

/* The running kernel's table read from the file itself (no entry yet): a BPF program loaded
 * since, in no symbol of that table, has kallsyms read again, once; one loaded after that read
 * is "[kernel: unknown]". */
static void test_symbolizer_rereads_fresh(void **state)
{
	struct hs_symbolizer_opts opts = {.kernel = &fake};
	struct hs_symbolizer s;
	struct hs_sym sym;
	char text[sizeof(fake_kallsyms) + 256];

	(void)state;
	unlink(entry);
	hs_symbolizer_init(&s, &opts);
	assert_true(hs_symbolize_kernel(&s, 0xffffffff81001410, &sym));
	assert_string_equal(sym.name, "x86_64_start_kernel");
	snprintf(text, sizeof(text), "%sffffffffc0405000 t bpf_prog_fedcba9876543210_new\t[bpf]\n", fake_kallsyms);
	put(kallsyms_path, text);
	assert_true(hs_symbolize_kernel(&s, 0xffffffffc0405020, &sym));
	assert_string_equal(sym.name, "bpf_prog_fedcba9876543210_new");
	assert_string_equal(sym.module, "bpf");
	snprintf(text, sizeof(text), "%sffffffffc0407000 t bpf_prog_1111111111111111_later\t[bpf]\n", fake_kallsyms);
	put(kallsyms_path, text);
	assert_true(hs_symbolize_kernel(&s, 0xffffffffc0407020, &sym));
	assert_string_equal(sym.name, HS_KERNEL_UNKNOWN);
	hs_symbolizer_release(&s, NULL);
}

/* The running kernel: the cached table answers as a fresh read for every symbol and between. */
static void test_running_kernel(void **state)
{
	struct hs_kallsyms *f = NULL, *c = NULL;
	int rc;

	(void)state;
	rc = hs_kallsyms_load("/proc/kallsyms", &f);
	if (rc == -ENODATA)
		hs_test_skip("/proc/kallsyms shows no addresses to this user (kptr_restrict)");
	assert_int_equal(rc, 0);
	/* written, then read back; a module that came or went meanwhile gets one more try */
	for (int i = 0; i < 3 && !(c && c->ranges); i++) {
		hs_kallsyms_free(c);
		c = NULL;
		assert_int_equal(hs_kallsyms_load_kernel(&hs_running_kernel, i == 0, &c), 0);
	}
	assert_non_null(c->ranges);
	assert_true(compare_tables(f, c) > f->n);
	hs_kallsyms_free(c);
	hs_kallsyms_free(f);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restricted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restricted_later, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symbolizer_rereads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symbolizer_rereads_fresh, setup, teardown),
		cmocka_unit_test_setup_teardown(test_running_kernel, setup, teardown),
	};
	int rc;

	/* before anything looks the directory up (once per process) */
	if (hs_test_mkdtemp(cache_dir, sizeof(cache_dir), "test-kallsyms-cache"))
		return 1;
	setenv("HOTSTACK_CACHE_DIR", cache_dir, 1);
	snprintf(entry, sizeof(entry), "%s/kallsyms", cache_dir);
	if (hs_test_select(argc, argv, tests, HS_ARRAY_SIZE(tests)))
		return 2;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	hs_test_rmtree(cache_dir);
	return hs_test_status(rc);
}
