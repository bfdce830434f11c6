/* fork + exec without frame pointers: "fork-exec PROGRAM [ARG...]" forks, the child execs
 * PROGRAM, and the parent runs main -> parent_spin until the child has exited; it exits with the
 * child's status. Built -O2 -fomit-frame-pointer. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noipa)) unsigned long parent_spin(unsigned long seed);

unsigned long parent_spin(unsigned long seed)
{
	volatile unsigned long keep[4];
	unsigned long acc = seed;

	keep[0] = seed;
	for (unsigned long i = 0; i < 1000000; i++) {
		acc = acc * 6364136223846793005ul + i;
		__asm__ volatile("" : "+r"(acc));
	}
	keep[3] = acc;
	return acc ^ keep[0] ^ keep[3];
}

int main(int argc, char **argv)
{
	unsigned long acc = 0;
	int status;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: fork-exec PROGRAM [ARG...]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		execv(argv[1], argv + 1);
		perror(argv[1]);
		_exit(127);
	}
	while (waitpid(pid, &status, WNOHANG) == 0)
		acc += parent_spin(acc);
	sink += acc;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
