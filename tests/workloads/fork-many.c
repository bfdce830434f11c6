/* "fork-many N": forks N short-lived children, at most 8 alive at once; each writes to 16 pages
 * it shares copy-on-write with its parent (16 page faults at least, in child_work), spins for
 * about a millisecond, and exits 0. The parent waits for every child, fails if one did not exit
 * 0, and prints "forked N". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGES 16

static char pages[PAGES][4096] __attribute__((aligned(4096)));
static volatile unsigned long sink;

static unsigned long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

void child_work(int i);

void child_work(int i)
{
	unsigned long long end = now_ns() + 1000000;
	unsigned long acc = (unsigned long)i;

	for (int p = 0; p < PAGES; p++)
		pages[p][(i * 64) % 4096] = (char)i;
	while (now_ns() < end)
		acc = acc * 6364136223846793005ul + 1;
	sink = acc;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 300, alive = 0, started = 0, bad = 0, status;

	memset(pages, 1, sizeof(pages)); /* the parent's own, so that the children copy them */
	while (started < n || alive > 0) {
		if (started < n && alive < 8) {
			pid_t pid = fork();
			if (pid < 0) {
				perror("fork");
				return 1;
			}
			if (pid == 0) {
				child_work(started);
				_exit(0);
			}
			started++;
			alive++;
			continue;
		}
		if (wait(&status) < 0) {
			perror("wait");
			return 1;
		}
		alive--;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	printf("forked %d\n", n);
	return bad ? 1 : 0;
}
