/* /proc/PID/maps: the line format is fs/proc/task_mmu.c's show_map_vma() — "%08lx-%08lx
 * %c%c%c%c %08llx %02x:%02x %lu " then the name, padded with spaces to a column. Parsed by
 * hand: every number bounded, and no NUL-terminated copy of the text needed. */
#include "proc-maps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/util.h"

static int hex_val(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

static bool get_hex(const char **p, const char *end, uint64_t *ret)
{
	const char *s = *p;
	uint64_t v = 0;
	int d;

	while (s < end && (d = hex_val((unsigned char)*s)) >= 0) {
		if (v >> 60)
			return false;
		v = v << 4 | (uint64_t)d;
		s++;
	}
	if (s == *p)
		return false;
	*p = s;
	*ret = v;
	return true;
}

static bool get_dec(const char **p, const char *end, uint64_t *ret)
{
	const char *s = *p;
	uint64_t v = 0;

	while (s < end && *s >= '0' && *s <= '9') {
		uint64_t d = (uint64_t)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
		s++;
	}
	if (s == *p)
		return false;
	*p = s;
	*ret = v;
	return true;
}

/* One or more blanks; at the end of the line, none are needed (a name is optional). */
static bool blanks(const char **p, const char *end)
{
	const char *s = *p;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s == *p && s < end)
		return false;
	*p = s;
	return true;
}

static bool get_char(const char **p, const char *end, char c)
{
	if (*p == end || **p != c)
		return false;
	(*p)++;
	return true;
}

bool hs_proc_maps_parse_line(const char *line, size_t n, struct hs_proc_map *ret)
{
	const char *p = line, *end = line + n;
	struct hs_proc_map m = {0};
	uint64_t maj, min;

	if (!get_hex(&p, end, &m.start) || !get_char(&p, end, '-') || !get_hex(&p, end, &m.end) ||
	    m.end <= m.start || !blanks(&p, end))
		return false;
	if (end - p < 4)
		return false;
	m.prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) | (p[2] == 'x' ? PROT_EXEC : 0);
	m.shared = p[3] == 's';
	p += 4;
	if (!blanks(&p, end) || !get_hex(&p, end, &m.pgoff) || !blanks(&p, end) || !get_hex(&p, end, &maj) ||
	    maj > UINT32_MAX || !get_char(&p, end, ':') || !get_hex(&p, end, &min) || min > UINT32_MAX ||
	    !blanks(&p, end) || !get_dec(&p, end, &m.ino) || !blanks(&p, end))
		return false;
	m.maj = (uint32_t)maj;
	m.min = (uint32_t)min;
	m.name = p;
	m.name_len = (size_t)(end - p);
	/* " (deleted)" is the kernel's note, not part of the name */
	if (m.name_len > 10 && !memcmp(end - 10, " (deleted)", 10)) {
		m.name_len -= 10;
		m.deleted = true;
	}
	if (m.name_len > HS_PROC_MAPS_MAX_PATH)
		return false;
	*ret = m;
	return true;
}

int hs_proc_maps_read(int32_t pid, char **ret, size_t *ret_len)
{
	char path[64];
	char *buf = NULL;
	size_t n = 0, cap = 64 * 1024;
	int fd, e = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	buf = hs_xmalloc(cap);
	for (;;) {
		ssize_t got;

		if (cap - n < 2) {
			if (cap >= HS_PROC_MAPS_MAX_SIZE) {
				e = -EOVERFLOW;
				break;
			}
			cap *= 2;
			buf = hs_xrealloc(buf, cap);
		}
		/* procfs answers a few lines per read: read until it says the end */
		got = read(fd, buf + n, cap - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			/* a process that exited between open and read */
			e = errno == ESRCH ? -ESRCH : -errno;
			break;
		}
		if (!got)
			break;
		n += (size_t)got;
	}
	close(fd);
	if (e < 0) {
		free(buf);
		return e;
	}
	buf[n] = '\0';
	*ret = buf;
	*ret_len = n;
	return 0;
}
