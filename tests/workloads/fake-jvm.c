/* fake-jvm LIB: loads LIB (a fake libjvm.so, fake-libjvm.c), says "ready", and sleeps until
 * killed (at most a minute): a process that maps a file named libjvm.so. */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2 || !dlopen(argv[1], RTLD_NOW)) {
		fprintf(stderr, "fake-jvm: %s\n", argc == 2 ? dlerror() : "usage: fake-jvm LIB");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	sleep(60);
	return 0;
}
