/* The JIT store's processes: each one's state by pid, what finding its files needs (its user,
 * its pid in its own namespace, its root), the checks a file it wrote must pass, and the
 * store's warnings. Below both readers (jit.c, jit-perfmap.c), calling neither. */
#include "jit-proc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/dso-file.h"
#include "util/strbuf.h"

static void vwarn(struct hs_jit *j, bool always, const char *fmt, va_list ap)
{
	struct hs_strbuf sb = {0};

	if (j->warnings.n >= HS_JIT_MAX_WARNINGS && !always)
		return;
	hs_strbuf_vaddf(&sb, fmt, ap);
	hs_vec_push(&j->warnings, hs_strbuf_detach(&sb));
}

void hs_jit_warn(struct hs_jit *j, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(j, false, fmt, ap);
	va_end(ap);
}

void hs_jit_warn_always(struct hs_jit *j, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(j, true, fmt, ap);
	va_end(ap);
}

struct hs_jit_proc *hs_jit_proc_find(const struct hs_jit *j, int32_t pid)
{
	uint64_t ix;
	return hs_u64map_get(&j->proc_ix, (uint32_t)pid, &ix) ? j->procs.v[ix] : NULL;
}

struct hs_jit_proc *hs_jit_proc_get(struct hs_jit *j, int32_t pid)
{
	struct hs_jit_proc *p = hs_jit_proc_find(j, pid);

	if (p)
		return p;
	p = hs_xcalloc(1, sizeof(*p));
	p->pid = pid;
	p->nspid = pid;
	hs_u64map_put(&j->proc_ix, (uint32_t)pid, j->procs.n);
	hs_vec_push(&j->procs, p);
	return p;
}

void hs_jit_note_process(struct hs_jit *j, int32_t pid)
{
	struct hs_jit_proc *p;
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (!j->opts.live || pid <= 0)
		return;
	p = hs_jit_proc_get(j, pid);
	if (p->noted)
		return;
	p->noted = true;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		unsigned int r, e;
		if (sscanf(line, "Uid: %u %u", &r, &e) == 2) {
			p->uid = r;
			p->euid = e;
			p->known = true;
		} else if (!strncmp(line, "NSpid:", 6)) {
			/* the pids it has from the outermost namespace in, its own last */
			char *last = strrchr(line, '\t');
			long v = last ? strtol(last + 1, NULL, 10) : 0;
			if (v > 0 && v <= INT32_MAX)
				p->nspid = (int32_t)v;
		}
	}
	free(line);
	fclose(f);
	p->own_root = hs_pid_has_own_root(pid);
}

size_t hs_jit_read_at(struct hs_jit *j, int fd, uint64_t off, size_t want)
{
	size_t got = 0;

	hs_vec_reserve(&j->buf, want);
	while (got < want) {
		ssize_t n = pread(fd, j->buf.v + got, want - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

/* Whether a file the process wrote for profilers may be believed: owned by root, by the
 * process's user (real or effective), or, when the process is not known (gone, or a recording
 * read later), by us — as perf has it. */
static bool owned_by(const struct hs_jit_proc *p, uid_t uid)
{
	return uid == 0 || (p->known ? uid == p->euid || uid == p->uid : uid == geteuid());
}

bool hs_jit_open_refused(struct hs_jit *j, int rc, const char *path)
{
	if (rc == -ELOOP)
		hs_jit_warn(j, "%s is a symbolic link: not read", path);
	else if (rc == -EPERM || rc == -EISDIR)
		hs_jit_warn(j, "%s is not a regular file: not read", path);
	else
		return false;
	return true;
}

bool hs_jit_owner_ok(struct hs_jit *j, const struct hs_jit_proc *p, const char *path, uid_t uid)
{
	if (owned_by(p, uid))
		return true;
	if (p->known)
		hs_jit_warn(j, "%s is owned by uid %u, not by the process's user (%u) or root: not read", path,
			    (unsigned)uid, (unsigned)p->euid);
	else
		hs_jit_warn(j, "%s is owned by uid %u, not by us or root: not read", path, (unsigned)uid);
	return false;
}
