/* Unit tests of src/runtime/perl/: file names and native functions classified; a live perl
 * (and an embedder of libperl.so) run with a known chain of calls in two threads, found by
 * hs_pl_find(), each thread's interpreter taken from its fs base (read with ptrace) as the BPF
 * program takes it, walked with hs_pl_walk() and named with hs_pl_code_read(); a program that
 * only exports perl's symbols (perl-fake), refused or walked to a stop without a name made up;
 * and names read from hostile memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

#include "runtime/perl/perl.h"
#include "runtime/runtime.h"

static void test_maybe(void **state)
{
	assert_true(hs_pl_maybe_runtime("/usr/bin/perl"));
	assert_true(hs_pl_maybe_runtime("/usr/bin/perl5.36.0"));
	assert_true(hs_pl_maybe_runtime("/usr/bin/perl5.36-x86_64-linux-gnu"));
	assert_true(hs_pl_maybe_runtime("/usr/lib/x86_64-linux-gnu/libperl.so.5.36.0"));
	assert_true(hs_pl_maybe_runtime("libperl.so"));
	assert_false(hs_pl_maybe_runtime("/usr/bin/perldoc"));
	assert_false(hs_pl_maybe_runtime("/usr/bin/perlbug"));
	assert_false(hs_pl_maybe_runtime("/usr/lib/libperlio.so"));
	assert_false(hs_pl_maybe_runtime("/usr/bin/python3"));
	assert_false(hs_pl_maybe_runtime(NULL));
}

static void test_native_class(void **state)
{
	assert_int_equal(hs_pl_native_class("Perl_runops_standard"), HS_IP_NATIVE_LOOP);
	assert_int_equal(hs_pl_native_class("Perl_runops_debug"), HS_IP_NATIVE_LOOP);
	assert_int_equal(hs_pl_native_class("Perl_runops_standard.cold"), HS_IP_NATIVE_LOOP);
	assert_int_equal(hs_pl_native_class("Perl_pp_entersub"), HS_IP_NATIVE_PLUMBING);
	assert_int_equal(hs_pl_native_class("Perl_pp_sort"), HS_IP_NATIVE_PLUMBING);
	assert_int_equal(hs_pl_native_class("Perl_sortsv_flags"), HS_IP_NATIVE_PLUMBING);
	assert_int_equal(hs_pl_native_class("Perl_call_sv"), HS_IP_NATIVE_PLUMBING);
	/* the base a program's Perl stands on, and work of the interpreter's own, stay */
	assert_int_equal(hs_pl_native_class("perl_run"), HS_IP_NATIVE_OTHER);
	assert_int_equal(hs_pl_native_class("main"), HS_IP_NATIVE_OTHER);
	assert_int_equal(hs_pl_native_class("Perl_regexec_flags"), HS_IP_NATIVE_OTHER);
	assert_int_equal(hs_pl_native_class("Perl_call_svx"), HS_IP_NATIVE_OTHER);
	assert_int_equal(hs_pl_native_class("XS_Digest__MD5_md5_hex"), HS_IP_NATIVE_OTHER);
	assert_ptr_equal(hs_runtime(HS_RT_PERL), &hs_perl_runtime);
	assert_ptr_equal(hs_ip_lang(HS_RT_PERL), &hs_perl_lang);
}

static void test_find_not_perl(void **state)
{
	struct hs_pl_interp in;
	char why[128] = "";

	assert_int_equal(hs_pl_find(getpid(), &in, why, sizeof(why)), HS_RT_ABSENT);
	assert_int_equal(hs_pl_find(0x7ffffff0, &in, why, sizeof(why)), HS_RT_ABSENT);
}

/* ---- names from hostile memory: this process's, read in place ---- */

/* as another process's memory is read: a read past an object (a string read a page at a time)
 * is not an access of this program's */
static int self_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	struct hs_rt_mem mem = hs_rt_mem_pid(getpid());

	(void)ctx;
	if (!addr)
		return -1;
	return mem.read(mem.ctx, addr, buf, n);
}

struct fake_sv {
	void *any;
	uint32_t refcnt, flags;
	void *u;
};

static uint64_t addr_of(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static void test_names_hostile(void **state)
{
	const struct hs_pl_interp *in;
	struct hs_rt_mem mem = {self_read, NULL};
	uint8_t hek[64] = {0}, hv_body[0x40] = {0}, pkg_hek[16] = {0}, names[16];
	struct fake_sv hv = {hv_body, 1, 12 | 0x2000000, NULL}, not_hv = {hv_body, 1, 13, NULL};
	uint64_t words[HS_PL_FILE_HASH_BYTES / 8] = {0};
	const char *evalfile = "(eval 12)";
	struct hs_ip_code c;
	struct hs_ip_frame f;
	uint32_t hash = 0xabcd1234, len = 4;
	int32_t count;
	void *p;
	static struct hs_pl_interp layout;
	char buf[64];

	/* the layout of a perl found is the one the reader knows: take it from a live one's
	 * description, as hs_pl_find() makes it, without a process */
	memset(&layout, 0, sizeof(layout));
	layout.info.off = (struct hs_pl_offsets){.hek_len = 4,
						 .hek_key = 8,
						 .sv_flags = 0xc,
						 .hv_aux = 0x20,
						 .aux_name = 0,
						 .aux_name_count = 0x1c};
	in = &layout;
	memcpy(hek, &hash, 4);
	memcpy(hek + 4, &len, 4);
	memcpy(hek + 8, "leaf", 4);
	len = 3;
	memcpy(pkg_hek + 4, &len, 4);
	memcpy(pkg_hek + 8, "Foo", 3);
	p = pkg_hek;
	memcpy(hv_body + 0x20, &p, 8);

	/* a sub: Package::name */
	f = (struct hs_ip_frame){HS_PL_FN(HS_PL_FN_SUB, addr_of(hek)), HS_PL_SUB_AUX(addr_of(&hv), hash), 0, 3, 0};
	assert_int_equal(hs_pl_code_read(in, &mem, &f, &c), 0);
	assert_string_equal(c.name, "Foo::leaf");
	assert_null(c.file);
	hs_ip_code_release(&c);
	/* its package gone (not a stash): __ANON__ */
	f.aux = HS_PL_SUB_AUX(addr_of(&not_hv), hash);
	assert_int_equal(hs_pl_code_read(in, &mem, &f, &c), 0);
	assert_string_equal(c.name, "__ANON__::leaf");
	hs_ip_code_release(&c);
	/* a stash renamed: the name in its array of names (the first, or the second when the count
	 * is below 0) */
	p = &p;
	{
		void *arr[2] = {hek, pkg_hek};
		p = arr;
		memcpy(hv_body + 0x20, &p, 8);
		count = 2;
		memcpy(hv_body + 0x20 + 0x1c, &count, 4);
		assert_int_equal(hs_pl_stash_name(in, &mem, addr_of(&hv), buf, sizeof(buf)), 0);
		assert_string_equal(buf, "leaf");
		count = -2;
		memcpy(hv_body + 0x20 + 0x1c, &count, 4);
		assert_int_equal(hs_pl_stash_name(in, &mem, addr_of(&hv), buf, sizeof(buf)), 0);
		assert_string_equal(buf, "Foo");
	}
	/* a HEK made again for another name (its hash differs): not named after it */
	f.aux = HS_PL_SUB_AUX(addr_of(&hv), hash + 1);
	memset(&c, 0x55, sizeof(c));
	assert_int_equal(hs_pl_code_read(in, &mem, &f, &c), -1);
	/* lengths past the cap or below 0, a NUL inside, no HEK at all */
	f.aux = HS_PL_SUB_AUX(addr_of(&hv), hash);
	len = 0x7fffffff;
	memcpy(hek + 4, &len, 4);
	assert_int_equal(hs_pl_code_read(in, &mem, &f, &c), -1);
	len = 0xffffffff;
	memcpy(hek + 4, &len, 4);
	assert_int_equal(hs_pl_code_read(in, &mem, &f, &c), -1);
	len = 6;
	memcpy(hek + 4, &len, 4);
	memcpy(hek + 8, "le\0af!", 6);
	assert_int_equal(hs_pl_code_read(in, &mem, &f, &c), -1);
	f.fn = HS_PL_FN(HS_PL_FN_SUB, 0);
	assert_int_equal(hs_pl_code_read(in, &mem, &f, &c), -1);
	/* a kind no reader writes */
	f.fn = HS_PL_FN(9, addr_of(hek));
	assert_int_equal(hs_pl_code_read(in, &mem, &f, &c), -1);

	/* a string eval: its file, checked against the hash the reader took */
	memcpy(words, evalfile, strlen(evalfile));
	f = (struct hs_ip_frame){HS_PL_FN(HS_PL_FN_EVAL, 0x1000), hs_pl_file_hash(words), addr_of(evalfile), 1, 0};
	assert_int_equal(hs_pl_code_read(in, &mem, &f, &c), 0);
	assert_string_equal(c.name, "(eval)");
	assert_string_equal(c.file, "(eval 12)");
	hs_ip_code_release(&c);
	/* another string at its address: the eval is named, without a file */
	f.extra = addr_of("(eval 13)");
	assert_int_equal(hs_pl_code_read(in, &mem, &f, &c), 0);
	assert_string_equal(c.name, "(eval)");
	assert_null(c.file);
	hs_ip_code_release(&c);
	/* a file longer than the bytes hashed */
	{
		char longname[200];
		memset(longname, 'a', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = 0;
		memset(words, 0, sizeof(words));
		memcpy(words, longname, sizeof(words) - 1);
		f = (struct hs_ip_frame){HS_PL_FN(HS_PL_FN_REQUIRE, 0x1000), hs_pl_file_hash(words), addr_of(longname),
					 1, 0};
		assert_int_equal(hs_pl_code_read(in, &mem, &f, &c), 0);
		assert_string_equal(c.name, "(require)");
		assert_string_equal(c.file, longname);
		hs_ip_code_release(&c);
	}
	/* the top level */
	f = (struct hs_ip_frame){HS_PL_FN(HS_PL_FN_MAIN, 0), 0, addr_of("/x/app.pl"), 9, 0};
	assert_int_equal(hs_pl_code_read(in, &mem, &f, &c), 0);
	assert_string_equal(c.name, "main");
	assert_string_equal(c.file, "/x/app.pl");
	hs_ip_code_release(&c);
	(void)names;
}

/* ---- live interpreters ---- */

enum {
	L_RUN = 6,
	L_SPIN = 10,
	L_LEAF = 11,
	L_REC_SORT = 15,
	L_REC_REC = 18,
	L_THREAD = 20,
	L_CODE = 23,
	L_MAP = 24,
	L_EVAL = 2,
	DEPTH = 5
};
static const char live_program[] = "use strict; use warnings; use threads;\n"              /* 1 */
				   "package Worker;\n"                                     /* 2 */
				   "sub new { my ($c, %a) = @_; return bless {%a}, $c }\n" /* 3 */
				   "sub run {\n"                                           /* 4 */
				   "    my ($self) = @_;\n"                                /* 5 */
				   "    return main::rec($self->{depth});\n"               /* 6 */
				   "}\n"                                                   /* 7 */
				   "package main;\n"                                       /* 8 */
				   "$| = 1;\n"                                             /* 9 */
				   "sub spin { my $x = 0; while (1) { $x++ } }\n"          /* 10 */
				   "sub leaf { my $x = 0; while (1) { $x++ } }\n"          /* 11 */
				   "sub rec {\n"                                           /* 12 */
				   "    my ($n) = @_;\n"                                   /* 13 */
				   "    if ($n <= 0) {\n"                                  /* 14 */
				   "        my @s = sort { leaf() <=> $b } (1, 2);\n"      /* 15 */
				   "        return $s[0];\n"                               /* 16 */
				   "    }\n"                                               /* 17 */
				   "    return rec($n - 1);\n"                             /* 18 */
				   "}\n"                                                   /* 19 */
				   "my $t = threads->create(sub { spin() });\n"            /* 20 */
				   "print \"ready\\n\";\n"                                 /* 21 */
				   "my $w = Worker->new(depth => 4);\n"                    /* 22 */
				   "my $code = sub { eval \"\\n\\$w->run\" };\n"           /* 23 */
				   "my @r = map { $code->() } (1);\n";                     /* 24 */

static pid_t live_pid;
static char live_dir[256];

/* Runs argv with its standard output a pipe, and reads its first line into buf. */
static pid_t spawn(char *const argv[], char *buf, size_t size)
{
	int fds[2];
	size_t got = 0;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(fds[1], 1);
		close(fds[1]);
		close(fds[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	live_pid = pid;
	close(fds[1]);
	buf[0] = 0;
	while (!strchr(buf, '\n') && got < size - 1) {
		struct pollfd p = {fds[0], POLLIN, 0};
		ssize_t r;
		if (poll(&p, 1, 30000) <= 0 || (r = read(fds[0], buf + got, size - 1 - got)) <= 0)
			break;
		got += (size_t)r;
		buf[got] = 0;
	}
	close(fds[0]);
	return pid;
}

/* The threads of pid, stopped (attached with ptrace), and their fs bases: how many. */
static size_t stop_threads(pid_t pid, pid_t *tids, uint64_t *fsbase, size_t max)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	size_t n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	assert_non_null(d = opendir(path));
	while ((e = readdir(d)) && n < max) {
		struct user_regs_struct regs;
		int status;
		pid_t tid = atoi(e->d_name);
		if (tid <= 0)
			continue;
		if (ptrace(PTRACE_ATTACH, tid, NULL, NULL))
			fail_msg("ptrace(ATTACH, %d): %s", (int)tid, strerror(errno));
		assert_int_equal(waitpid(tid, &status, __WALL), tid);
		assert_int_equal(ptrace(PTRACE_GETREGS, tid, NULL, &regs), 0);
		tids[n] = tid;
		fsbase[n++] = regs.fs_base;
	}
	closedir(d);
	return n;
}

static void cont_threads(const pid_t *tids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ptrace(PTRACE_DETACH, tids[i], NULL, NULL);
}

struct live_frame {
	char *name, *file;
	uint32_t line, flags;
};

static size_t live_walk(const struct hs_pl_interp *in, pid_t pid, uint64_t my_perl, struct live_frame *out,
			uint16_t *flags)
{
	struct hs_rt_mem mem = hs_rt_mem_pid(pid);
	static struct hs_ip_frame fr[HS_IP_MAX_FRAMES];
	size_t n = hs_pl_walk(in, &mem, my_perl, fr, HS_IP_MAX_FRAMES, flags);

	for (size_t i = 0; i < n; i++) {
		struct hs_ip_code c;
		if (hs_pl_code_read(in, &mem, &fr[i], &c))
			fail_msg("frame %zu (fn 0x%" PRIx64 ") not named", i, fr[i].fn);
		out[i] = (struct live_frame){c.name, c.file, fr[i].line, fr[i].flags};
		c.name = c.file = NULL;
		hs_ip_code_release(&c);
	}
	return n;
}

static void live_print(const char *what, const struct live_frame *f, size_t n)
{
	print_message("%s:\n", what);
	for (size_t i = 0; i < n; i++)
		print_message("  %s (%s:%u)%s\n", f[i].name, f[i].file ? f[i].file : "?", f[i].line,
			      f[i].flags & HS_IP_ENTRY ? " (entry)" : "");
}

static void live_free(struct live_frame *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(f[i].name);
		free(f[i].file);
	}
}

static uint64_t read_ptr(pid_t pid, uint64_t addr)
{
	struct hs_rt_mem mem = hs_rt_mem_pid(pid);
	uint64_t v = 0;

	assert_int_equal(mem.read(mem.ctx, addr, &v, sizeof(v)), 0);
	return v;
}

static void frame_is(const struct live_frame *f, const char *name, const char *file, uint32_t line, bool entry)
{
	assert_string_equal(f->name, name);
	if (file)
		assert_string_equal(f->file, file);
	assert_int_equal(f->line, line);
	assert_int_equal(!!(f->flags & HS_IP_ENTRY), entry);
}

/* The program above under perl (an executable or an embedder), stopped in its loops: each
 * thread's frames, innermost first, with their files, lines and runs of the loop. */
static void check_live(const char *perl, bool tls)
{
	static struct live_frame fr[HS_IP_MAX_FRAMES];
	char prog[300], why[256] = "", buf[256];
	struct hs_pl_interp in;
	pid_t tids[8];
	uint64_t fsbase[8], main_perl = 0, thread_perl = 0;
	size_t n, nt = 0;
	uint16_t flags;

	if (access(perl, X_OK))
		hs_test_skip("%s is not installed", perl);
	assert_int_equal(hs_test_mkdtemp(live_dir, sizeof(live_dir), "hs-perl"), 0);
	snprintf(prog, sizeof(prog), "%s/prog.pl", live_dir);
	hs_test_write_file(prog, live_program, strlen(live_program));
	spawn((char *[]){(char *)perl, prog, NULL}, buf, sizeof(buf));
	if (strcmp(buf, "ready\n"))
		fail_msg("%s: the program did not start: '%s'", perl, buf);
	assert_int_equal(hs_pl_find(live_pid, &in, why, sizeof(why)), HS_RT_SUPPORTED);
	assert_int_equal(in.version, HS_PL_VERSION(5, 36, 0));
	if (tls)
		assert_int_equal(in.info.ctx_off, (uint64_t)-8);
	else
		assert_true(in.info.ctx_off >= 0x318 && in.info.ctx_off < 0x518);

	/* stopped, the frames hold still while they are read; until both threads are in their
	 * loops (the second sets its interpreter when it first runs, which may be after "ready") */
	for (int tries = 0;; tries++) {
		uint32_t l0 = 0, l1 = 0;
		nt = stop_threads(live_pid, tids, fsbase, 8);
		assert_int_equal(nt, 2);
		for (size_t i = 0; i < nt; i++) {
			uint64_t my_perl = read_ptr(live_pid, fsbase[i] + in.info.ctx_off);
			if (tids[i] == live_pid)
				main_perl = my_perl;
			else
				thread_perl = my_perl;
		}
		/* the first interpreter is the main thread's, the thread's its own */
		assert_int_equal(main_perl, read_ptr(live_pid, in.curinterp));
		assert_true(thread_perl != main_perl);
		if (thread_perl) {
			n = live_walk(&in, live_pid, main_perl, fr, &flags);
			l0 = n ? fr[0].line : 0;
			live_free(fr, n);
			n = live_walk(&in, live_pid, thread_perl, fr, &flags);
			l1 = n ? fr[0].line : 0;
			live_free(fr, n);
		}
		if (l0 == L_LEAF && l1 == L_SPIN)
			break;
		if (tries == 500)
			fail_msg("%s: the threads are not in their loops after 10 s", perl);
		cont_threads(tids, nt);
		usleep(20000);
	}

	/* the main thread: leaf in the sort block's run; rec x DEPTH, Worker::run, the string
	 * eval, the closure and the top level in the first */
	n = live_walk(&in, live_pid, main_perl, fr, &flags);
	live_print("main thread", fr, n);
	assert_int_equal(flags, 0);
	assert_int_equal(n, DEPTH + 5);
	frame_is(&fr[0], "main::leaf", prog, L_LEAF, true);
	for (size_t i = 1; i <= DEPTH; i++)
		frame_is(&fr[i], "main::rec", prog, i == 1 ? L_REC_SORT : L_REC_REC, false);
	frame_is(&fr[DEPTH + 1], "Worker::run", prog, L_RUN, false);
	frame_is(&fr[DEPTH + 2], "(eval)", NULL, L_EVAL, false);
	assert_true(!strncmp(fr[DEPTH + 2].file, "(eval ", 6));
	frame_is(&fr[DEPTH + 3], "main::__ANON__", prog, L_CODE, false);
	frame_is(&fr[DEPTH + 4], "main", prog, L_MAP, true);
	live_free(fr, n);

	/* the second thread: spin under the thread's sub, entered from C; no top level */
	n = live_walk(&in, live_pid, thread_perl, fr, &flags);
	live_print("second thread", fr, n);
	assert_int_equal(flags, 0);
	assert_int_equal(n, 2);
	frame_is(&fr[0], "main::spin", prog, L_SPIN, false);
	frame_is(&fr[1], "main::__ANON__", prog, L_THREAD, true);
	live_free(fr, n);

	/* a walk cut short says so; no interpreter, no frames */
	{
		struct hs_rt_mem mem = hs_rt_mem_pid(live_pid);
		struct hs_ip_frame two[2];
		assert_int_equal(hs_pl_walk(&in, &mem, main_perl, two, 2, &flags), 2);
		assert_int_equal(flags, HS_IP_TRUNCATED);
		assert_int_equal(hs_pl_walk(&in, &mem, 0, two, 2, &flags), 0);
	}
	/* the names store names the frames until the process is forgotten (it exited) */
	{
		struct hs_ip_names *names = hs_ip_names_new(&hs_perl_lang);
		struct hs_rt_mem mem = hs_rt_mem_pid(live_pid);
		struct hs_u64map gone = {0};
		struct hs_ip_frame leaf[1];
		const struct hs_ip_code *c;

		assert_int_equal(hs_pl_walk(&in, &mem, main_perl, leaf, 1, &flags), 1);
		hs_ip_names_add_proc(names, live_pid, &in);
		assert_true(hs_ip_names_has(names, live_pid));
		c = hs_ip_names_get(names, live_pid, &leaf[0]);
		assert_non_null(c);
		assert_string_equal(c->name, "main::leaf");
		assert_string_equal(c->file, prog);
		hs_u64map_put(&gone, (uint32_t)live_pid + 1, 1);
		hs_ip_names_forget(names, &gone);
		assert_non_null(hs_ip_names_get(names, live_pid, &leaf[0]));
		hs_u64map_put(&gone, (uint32_t)live_pid, 1);
		hs_ip_names_forget(names, &gone);
		assert_null(hs_ip_names_get(names, live_pid, &leaf[0]));
		hs_u64map_release(&gone);
		hs_ip_names_free(names);
	}
	cont_threads(tids, nt);
}

/* The live program is killed, and its directory removed, also when a test fails. */
static int live_teardown(void **state)
{
	int status;

	if (live_pid > 0) {
		kill(live_pid, SIGKILL);
		/* its threads may still be attached (a test failed while they were stopped): a
		 * traced thread is reaped by its tracer before its process can be */
		while (waitpid(-1, &status, __WALL) > 0 || errno == EINTR)
			;
		live_pid = 0;
	}
	if (live_dir[0])
		hs_test_rmtree(live_dir);
	live_dir[0] = 0;
	return 0;
}

/* /usr/bin/perl: the interpreter in the executable, a thread's in its thread-local variable */
static void test_live_perl(void **state)
{
	check_live("/usr/bin/perl", true);
}

/* An embedder of libperl.so: a thread's interpreter in the C library's thread-specific data */
static void test_live_embedded(void **state)
{
	check_live("/usr/bin/perl5.36-x86_64-linux-gnu", false);
}

/* A program that exports perl's symbols but is none: refused, each in one line, or, where its
 * state passes the checks, walked to a stop with no name made up. */
static void fake_found(const char *mode, int want, const char *why_want, char *line, size_t size)
{
	struct hs_pl_interp in;
	char why[256] = "";

	spawn((char *[]){PERL_FAKE, (char *)mode, NULL}, line, size);
	if (strncmp(line, "ready ", 6))
		fail_msg("perl-fake %s did not start: '%s'", mode, line);
	assert_int_equal(hs_pl_find(live_pid, &in, why, sizeof(why)), want);
	if (why_want)
		assert_string_equal(why, why_want);
}

static void test_fake(void **state)
{
	char line[128];
	struct hs_pl_interp in;
	char why[256] = "";

	fake_found("empty", HS_RT_UNSUPPORTED, "perl 5.36.0: cannot read its interpreter yet", line, sizeof(line));
	live_teardown(state);
	fake_found("runops", HS_RT_UNSUPPORTED, "perl 5.36.0 runs its own loop of ops (a profiler's or debugger's)",
		   line, sizeof(line));
	live_teardown(state);
	/* what may pass as the program starts says "cannot read": it is looked at again */
	fake_found("stash", HS_RT_UNSUPPORTED, "perl 5.36.0: cannot read its main package as perl 5.36's", line,
		   sizeof(line));
	live_teardown(state);
	fake_found("unrelocated", HS_RT_UNSUPPORTED, "perl 5.36.0: cannot read PL_runops_std (not relocated yet)", line,
		   sizeof(line));
	live_teardown(state);
	fake_found("relative", HS_RT_UNSUPPORTED, "perl 5.36.0: cannot read PL_runops_std (not relocated yet)", line,
		   sizeof(line));
	live_teardown(state);
	fake_found("hostile", HS_RT_SUPPORTED, NULL, line, sizeof(line));
	assert_int_equal(hs_pl_find(live_pid, &in, why, sizeof(why)), HS_RT_SUPPORTED);
	{
		struct hs_rt_mem mem = hs_rt_mem_pid(live_pid);
		static struct hs_ip_frame fr[HS_IP_MAX_FRAMES];
		uint64_t second = strtoull(line + 6, NULL, 16);
		uint16_t flags;
		size_t n;

		/* 2,000 subs: cut at the frames a sample holds, and none of them named */
		n = hs_pl_walk(&in, &mem, read_ptr(live_pid, in.curinterp), fr, HS_IP_MAX_FRAMES, &flags);
		assert_int_equal(n, HS_IP_MAX_FRAMES);
		assert_int_equal(flags, HS_IP_TRUNCATED);
		for (size_t i = 0; i < n; i += 100) {
			struct hs_ip_code c;
			assert_int_equal(hs_pl_code_read(&in, &mem, &fr[i], &c), -1);
		}
		/* stackinfos in a cycle: the walk ends, and says it was cut */
		assert_true(second != 0);
		n = hs_pl_walk(&in, &mem, second, fr, HS_IP_MAX_FRAMES, &flags);
		assert_int_equal(n, 0);
		assert_int_equal(flags, HS_IP_TRUNCATED);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maybe),
		cmocka_unit_test(test_native_class),
		cmocka_unit_test(test_find_not_perl),
		cmocka_unit_test(test_names_hostile),
		cmocka_unit_test_teardown(test_fake, live_teardown),
		cmocka_unit_test_teardown(test_live_perl, live_teardown),
		cmocka_unit_test_teardown(test_live_embedded, live_teardown),
	};

	if (hs_test_select(argc, argv, tests, HS_ARRAY_SIZE(tests)) < 0)
		return 2;
	return hs_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
