/* Opening files whose names come from input — a recorded process's mappings, a perf.data, a
 * binary's .gnu_debuglink, a container's root — so that nothing planted at such a path can make
 * us wait or act: only a regular file is ever opened. */
#ifndef HS_INFILE_H
#define HS_INFILE_H

#include <sys/stat.h>

/* A symbolic link as the last component is refused (-ELOOP) rather than followed. */
#define HS_INFILE_NOFOLLOW 1u

/* Opens path read-only (O_CLOEXEC, O_NOCTTY) when it is a regular file, else opens nothing: the
 * path is first opened with O_PATH, which neither blocks (a FIFO with no writer) nor calls a
 * driver's open (a device: /dev/watchdog, a tty that would become our controlling terminal),
 * and is reopened through /proc/self/fd only once fstat says it is a regular file, so what is
 * read is the file that was checked, even if the path is changed meanwhile. Links are followed
 * to their target (unless HS_INFILE_NOFOLLOW), which must then be a regular file itself.
 * Returns the descriptor (the caller owns it) and, when ret is not NULL, fills *ret with its
 * fstat; or a negative errno: what open(2) gives for the path (-ENOENT, -EACCES, -ELOOP ...),
 * -EISDIR for a directory, -EPERM for anything else that is not a regular file (a FIFO, a
 * socket, a device). Needs /proc mounted (-ENOENT without it). Thread-safe. */
int hs_infile_open(const char *path, unsigned int flags, struct stat *ret);

#endif
