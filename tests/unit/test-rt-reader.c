/* The runtimes' frame readers (record/reader.c) with real BPF: a reader loaded while another
 * thread is draining the rings of those loaded before, as a recording does when a process of a
 * new runtime is found. Needs root (or CAP_BPF and CAP_PERFMON) and a CPython. */
#include "helpers.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record/reader.h"
#include "runtime/runtime.h"

/* Freed memory filled under ASan, so that what libbpf (not instrumented) reads of a freed block
 * is a wild pointer, not the stale copy that ASan's quarantine would keep intact. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "max_free_fill_size=4096";
}

static pid_t live_pid;
/* SIGSEGV's handling before cmocka's: a crash on the draining thread is reported by it (the
 * sanitizer's report, or the signal), not by cmocka, which would jump into the test's stack from
 * another thread's */
static struct sigaction first_segv;

static int live_teardown(void **state)
{
	(void)state;
	if (live_pid > 0) {
		kill(live_pid, SIGKILL);
		waitpid(live_pid, NULL, 0);
		live_pid = 0;
	}
	return 0;
}

struct drainer {
	struct hs_rt_reader *rd;
	sem_t at_record; /* the drainer is in its first record's callback */
	sem_t loaded;    /* the main thread has loaded another reader meanwhile */
	int records, others;
	bool timed_out;
};

static void on_record(void *ctx, unsigned id, const void *data, size_t size)
{
	struct drainer *d = ctx;

	(void)data;
	(void)size;
	if (id != HS_RT_PYTHON)
		d->others++;
	if (d->records++ == 0) {
		sem_post(&d->at_record);
		sem_wait(&d->loaded);
	}
}

static void *drain_main(void *arg)
{
	struct drainer *d = arg;

	/* until the sampled interpreter has written something, 5 s at most */
	for (int i = 0; i < 500 && !d->records; i++) {
		hs_rt_reader_drain(d->rd, on_record, d);
		if (!d->records)
			usleep(10000);
	}
	if (!d->records) {
		d->timed_out = true;
		sem_post(&d->at_record);
	}
	return NULL;
}

static int sample(pid_t pid)
{
	struct perf_event_attr a = {.type = PERF_TYPE_SOFTWARE,
				    .size = sizeof(a),
				    .config = PERF_COUNT_SW_CPU_CLOCK,
				    .sample_period = 200000, /* 0.2 ms */
				    .sample_type = PERF_SAMPLE_TID,
				    .disabled = 1};

	return (int)syscall(SYS_perf_event_open, &a, pid, -1, -1, 0);
}

/* libbpf 1.1's ring_buffer__add() reallocates the rings that ring_buffer__consume() walks and
 * stores each ring's consumer position through: a reader loaded while the drainer is in a
 * record's callback must not pull that ring from under it. */
static void test_load_while_draining(void **state)
{
	const char *python = "/usr/bin/python3.11";
	const struct hs_runtime *py = hs_runtime(HS_RT_PYTHON);
	const unsigned others[] = {HS_RT_RUBY, HS_RT_PERL, HS_RT_PHP, HS_RT_HOTSPOT, HS_RT_V8};
	struct drainer d = {0};
	char why[256] = "";
	void *proc = NULL, *fill[64];
	pthread_t t;
	unsigned loaded = 0;
	int fd, e;

	(void)state;
	if (access(python, X_OK))
		hs_test_skip("%s is not installed", python);
	if ((e = hs_rt_reader_open(&d.rd)) == -EPERM)
		hs_test_skip("loading BPF programs needs root, or CAP_BPF and CAP_PERFMON");
	assert_int_equal(e, 0);
	if (hs_rt_reader_load(d.rd, py, why, sizeof(why))) {
		hs_rt_reader_close(d.rd);
		hs_test_skip("%s", why);
	}

	live_pid = fork();
	assert_true(live_pid >= 0);
	if (!live_pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* and with this test, if it crashes */
		execl(python, python, "-S", "-c", "while True: pass", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 300 && py->find(live_pid, &proc, why, sizeof(why)) != HS_RT_SUPPORTED; i++)
		usleep(10000);
	if (!proc)
		fail_msg("%s: not found as Python: %s", python, why);
	assert_int_equal(hs_rt_reader_add(d.rd, py, (uint32_t)live_pid, proc), 0);
	py->proc_free(proc);
	fd = sample(live_pid);
	assert_true(fd >= 0);
	assert_int_equal(hs_rt_reader_attach(d.rd, fd), 0);
	assert_int_equal(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);

	sigaction(SIGSEGV, &first_segv, NULL);
	sem_init(&d.at_record, 0, 0);
	sem_init(&d.loaded, 0, 0);
	assert_int_equal(pthread_create(&t, NULL, drain_main, &d), 0);
	sem_wait(&d.at_record);
	if (d.timed_out) {
		pthread_join(t, NULL);
		fail_msg("no Python frames read in 5 s");
	}
	/* the drainer is in libbpf, between a record and storing the ring's consumer position */
	for (size_t i = 0; i < HS_ARRAY_SIZE(others) && !loaded; i++)
		if (!hs_rt_reader_load(d.rd, hs_runtime(others[i]), why, sizeof(why)))
			loaded = others[i];
	/* what was freed meanwhile handed out again and overwritten at once, as the recording's
	 * other allocations would later */
	for (size_t i = 0; i < HS_ARRAY_SIZE(fill); i++)
		memset(fill[i] = malloc(16 + i % 8 * 16), 0xa5, 16 + i % 8 * 16);
	sem_post(&d.loaded);
	pthread_join(t, NULL);
	if (!loaded)
		fail_msg("no other runtime's reader could be loaded: %s", why);
	assert_true(d.records >= 1);
	assert_int_equal(d.others, 0);

	/* both rings are still drained, from this thread too */
	usleep(20000);
	d.records = 1;
	assert_true(hs_rt_reader_drain(d.rd, on_record, &d) >= 1);
	assert_int_equal(d.others, 0);
	for (size_t i = 0; i < HS_ARRAY_SIZE(fill); i++)
		free(fill[i]);
	close(fd);
	hs_rt_reader_close(d.rd);
	sem_destroy(&d.at_record);
	sem_destroy(&d.loaded);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_load_while_draining, live_teardown),
	};

	sigaction(SIGSEGV, NULL, &first_segv);
	if (hs_test_select(argc, argv, tests, HS_ARRAY_SIZE(tests)) < 0)
		return 2;
	return hs_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
