/* Input sniffing and loading. */
#include "load.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/perf-data.h"
#include "profile/folded-read.h"
#include "profile/pprof-read.h"

#define LOAD_MAX_BYTES ((size_t)4 << 30)

enum hs_input_kind hs_input_sniff(const void *buf, size_t len)
{
	const unsigned char *b = buf;

	if (len >= 2 && b[0] == 0x1f && b[1] == 0x8b)
		return HS_INPUT_PPROF;
	if (hs_perf_data_sniff(buf, len))
		return HS_INPUT_PERF_DATA;
	if (hs_folded_sniff(buf, len))
		return HS_INPUT_FOLDED;
	/* an uncompressed profile.proto starts with a field of the Profile message, most often
	 * sample_type (1), sample (2), mapping (3) ... as length-delimited fields */
	if (len >= 2 && (b[0] & 7) == 2 && (b[0] >> 3) >= 1 && (b[0] >> 3) <= 14)
		return HS_INPUT_PPROF;
	return HS_INPUT_UNKNOWN;
}

int hs_read_file(const char *path, size_t max, char **buf, size_t *len)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	char *b = NULL;
	size_t n = 0, cap = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t r;
		if (n == cap) {
			if (cap >= max) {
				free(b);
				if (fd != STDIN_FILENO)
					close(fd);
				return -EFBIG;
			}
			hs_xgrow((void **)&b, &cap, HS_MIN(n + 65536, max), 1);
		}
		r = read(fd, b + n, cap - n);
		if (r < 0) {
			int e = errno;
			if (e == EINTR)
				continue;
			free(b);
			if (fd != STDIN_FILENO)
				close(fd);
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (fd != STDIN_FILENO)
		close(fd);
	*buf = b ? b : hs_xmalloc(1);
	*len = n;
	return 0;
}

int hs_profile_load(const char *path, struct hs_profile **ret, struct hs_parse_error *err)
{
	return hs_profile_load_ex(path, NULL, ret, NULL, err);
}

int hs_profile_load_ex(const char *path, const struct hs_load_opts *opts, struct hs_profile **ret,
		       struct hs_perf_data_load_info *info, struct hs_parse_error *err)
{
	char *buf = NULL;
	void *map = MAP_FAILED;
	size_t len = 0;
	struct stat sb;
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	int rc = 0;

	if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0) {
		/* map regular files: perf.data can be gigabytes */
		len = (size_t)sb.st_size;
		map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map != MAP_FAILED)
			buf = map;
	}
	if (fd >= 0)
		close(fd);
	else if (strcmp(path, "-"))
		return -errno;
	if (!buf && (rc = hs_read_file(path, LOAD_MAX_BYTES, &buf, &len)))
		return rc;
	switch (hs_input_sniff(buf, len)) {
	case HS_INPUT_PPROF:
		rc = hs_pprof_read(buf, len, ret, err);
		break;
	case HS_INPUT_FOLDED:
		rc = hs_folded_read(buf, len, ret, err);
		break;
	case HS_INPUT_PERF_DATA: {
		struct hs_perf_data_load_opts po = {opts && opts->keep_time, opts && opts->no_kernel,
						    opts && opts->no_demangle, opts && opts->no_inline,
						    opts ? opts->symfs : NULL};
		rc = hs_perf_data_load(buf, len, &po, ret, info, err);
		break;
	}
	default:
		hs_parse_error_set(err, 0, len ? "not a profile this version reads (perf.data, pprof, folded stacks)"
					       : "the file is empty");
		rc = -EPROTONOSUPPORT;
		break;
	}
	if (map != MAP_FAILED)
		munmap(map, len);
	else
		free(buf);
	return rc;
}
