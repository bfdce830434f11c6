/* Runs a fuzz target's LLVMFuzzerTestOneInput over every file given (or every file in the
 * directories given): the stored corpus replayed in an ordinary build, as a test. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return 0;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return 0;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n > 0 ? (size_t)n : 0);
	free(buf);
	return 1;
}

int main(int argc, char **argv)
{
	int files = 0;

	for (int i = 1; i < argc; i++) {
		struct stat sb;
		DIR *d;
		struct dirent *de;

		if (stat(argv[i], &sb) < 0)
			continue;
		if (!S_ISDIR(sb.st_mode)) {
			files += run_file(argv[i]);
			continue;
		}
		d = opendir(argv[i]);
		while (d && (de = readdir(d))) {
			char path[4096];
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
			files += run_file(path);
		}
		if (d)
			closedir(d);
	}
	printf("replayed %d inputs\n", files);
	return files ? 0 : 1;
}
