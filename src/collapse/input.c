/* The input of hotstack collapse: a file or standard input, gzipped or not (input.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collapse/input.h"
#include "format/format.h"
#include "util/util.h"

static ssize_t raw_read(int fd, void *buf, size_t n)
{
	for (;;) {
		ssize_t r = read(fd, buf, n);
		if (r >= 0)
			return r;
		if (errno != EINTR)
			return -errno;
	}
}

ssize_t hs_collapse_input_read(void *ctx, void *buf, size_t n)
{
	struct hs_collapse_input *in = ctx;

	if (!in->gz) {
		if (in->nhead) {
			size_t k = HS_MIN(n, in->nhead);
			memcpy(buf, in->head, k);
			memmove(in->head, in->head + k, in->nhead - k);
			in->nhead -= k;
			return (ssize_t)k;
		}
		return raw_read(in->fd, buf, n);
	}
	in->zs.next_out = buf;
	in->zs.avail_out = (uInt)HS_MIN(n, (size_t)1 << 30);
	while (in->zs.avail_out == (uInt)HS_MIN(n, (size_t)1 << 30)) {
		int zr;

		if (!in->zs.avail_in) {
			ssize_t r = raw_read(in->fd, in->zbuf, in->zcap);
			if (r < 0)
				return r;
			in->raw += (uint64_t)r;
			if (!r) {
				if (!in->zend)
					return -EPROTO; /* ends inside a gzip member */
				break;
			}
			in->zs.next_in = in->zbuf;
			in->zs.avail_in = (uInt)r;
		}
		if (in->zend) {
			/* another gzip member follows (as `cat a.gz b.gz` makes) */
			if (inflateReset(&in->zs) != Z_OK)
				return -EPROTO;
			in->zend = false;
		}
		zr = inflate(&in->zs, Z_NO_FLUSH);
		if (zr == Z_STREAM_END)
			in->zend = true;
		else if (zr != Z_OK && zr != Z_BUF_ERROR)
			return -EPROTO;
	}
	in->plain += HS_MIN(n, (size_t)1 << 30) - in->zs.avail_out;
	/* streamed, but not without end: time is bounded by the input too */
	if (hs_decompress_over(in->plain, in->raw + 2)) {
		in->bomb = true;
		return -EFBIG;
	}
	return (ssize_t)(HS_MIN(n, (size_t)1 << 30) - in->zs.avail_out);
}

int hs_collapse_input_open(struct hs_collapse_input *in, const char *path)
{
	ssize_t r;

	memset(in, 0, sizeof(*in));
	if (!strcmp(path, "-")) {
		in->fd = STDIN_FILENO;
	} else {
		in->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (in->fd < 0)
			return -errno;
	}
	while (in->nhead < 2) {
		r = raw_read(in->fd, in->head + in->nhead, 2 - in->nhead);
		if (r < 0)
			return (int)r;
		if (!r)
			break;
		in->nhead += (size_t)r;
	}
	if (in->nhead == 2 && in->head[0] == 0x1f && in->head[1] == 0x8b) {
		in->gz = true;
		in->zcap = 1 << 18;
		in->zbuf = hs_xmalloc(in->zcap);
		memcpy(in->zbuf, in->head, 2);
		in->zs.next_in = in->zbuf;
		in->zs.avail_in = 2;
		in->nhead = 0;
		if (inflateInit2(&in->zs, 16 + MAX_WBITS) != Z_OK)
			return -ENOMEM;
	}
	return 0;
}

void hs_collapse_input_close(struct hs_collapse_input *in)
{
	if (in->gz)
		inflateEnd(&in->zs);
	free(in->zbuf);
	if (in->fd > STDIN_FILENO)
		close(in->fd);
}
