/* Opening regular files only, for paths that input names (see infile.h). */
#include "infile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int hs_infile_open(const char *path, unsigned int flags, struct stat *ret)
{
	char proc[40];
	struct stat st;
	int pfd, fd, e;

	/* O_PATH: no open of the file itself, so no FIFO rendezvous and no device side effect */
	pfd = open(path, O_PATH | O_CLOEXEC | (flags & HS_INFILE_NOFOLLOW ? O_NOFOLLOW : 0));
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, &st) < 0) {
		e = -errno;
		close(pfd);
		return e;
	}
	if (!S_ISREG(st.st_mode)) {
		close(pfd);
		/* O_PATH | O_NOFOLLOW opens a link itself rather than failing */
		return S_ISLNK(st.st_mode) ? -ELOOP : S_ISDIR(st.st_mode) ? -EISDIR : -EPERM;
	}
	/* the same inode, opened for reading: the magic link is bound to pfd's file, not to path */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	e = fd < 0 ? -errno : 0;
	close(pfd);
	if (fd < 0)
		return e;
	if (ret)
		*ret = st;
	return fd;
}
