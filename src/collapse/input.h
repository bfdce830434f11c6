/* The input of hotstack collapse: a file, or standard input ("-"), read as it comes, gzipped
 * (one or more gzip members, as `cat a.gz b.gz` makes) or not, told apart by its first two
 * bytes. Decompression stops at hs_decompress_over() (format/format.h). */
#ifndef HS_COLLAPSE_INPUT_H
#define HS_COLLAPSE_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <zlib.h>

struct hs_collapse_input {
	int fd;
	bool gz, zend;
	z_stream zs;
	unsigned char *zbuf;
	size_t zcap;
	unsigned char head[2];
	size_t nhead;
	uint64_t raw, plain; /* gzip: bytes read, bytes decompressed */
	bool bomb;           /* ... past hs_decompress_over() */
};

/* Opens path ("-": standard input, left open at the end). Returns 0 or a negative errno;
 * *in must be closed with hs_collapse_input_close() in both cases. */
int hs_collapse_input_open(struct hs_collapse_input *in, const char *path);
/* An hs_ps_read_fn (format/perf-script.h) on ctx, an open struct hs_collapse_input: up to n
 * bytes of text, 0 at the end, or a negative errno: -EPROTO for gzip data that is corrupt or
 * cut short, -EFBIG past the decompression bound (then bomb is set), or read(2)'s error. */
ssize_t hs_collapse_input_read(void *ctx, void *buf, size_t n);
void hs_collapse_input_close(struct hs_collapse_input *in);

#endif
