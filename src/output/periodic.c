/* A recording's files written while it runs: see periodic.h. */
#include "output/periodic.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "output/output.h"
#include "util/strbuf.h"

int hs_switch_output_parse(const char *arg, struct hs_periodic_opts *o)
{
	double secs;

	if (!strcmp(arg, "signal")) {
		o->by_signal = true;
		o->period_ns = 0;
		return 0;
	}
	/* a period under a second would write files faster than anyone reads them */
	if (hs_duration_parse(arg, 1, &secs) || secs < 1 || secs > 366 * 86400.0)
		return -EINVAL;
	o->period_ns = (uint64_t)(secs * 1e9 + 0.5);
	o->by_signal = false;
	return 0;
}

char *hs_period_path(const char *path, int64_t wall_ns, unsigned seq)
{
	const struct hs_format *f = hs_format_from_path(path);
	size_t n = strlen(path), cut = n;
	time_t secs = (time_t)(wall_ns / 1000000000);
	struct hs_strbuf sb = {0};
	struct tm tm;
	char stamp[32];

	for (size_t j = 0; f && j < HS_FORMAT_MAX_NAMES && f->exts[j]; j++) {
		size_t k = strlen(f->exts[j]);
		if (n > k && !strcmp(path + n - k, f->exts[j])) {
			cut = n - k;
			break;
		}
	}
	gmtime_r(&secs, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm);
	hs_strbuf_addf(&sb, "%.*s.%s", (int)cut, path, stamp);
	if (seq)
		hs_strbuf_addf(&sb, "_%u", seq);
	hs_strbuf_adds(&sb, path + cut);
	return hs_strbuf_detach(&sb);
}

bool hs_outputs_files(const char *const *paths, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (!strcmp(paths[i], "-"))
			return false;
		/* a link at the target is replaced (util/outfile.h), unless it leads to a device */
		if (stat(paths[i], &st) == 0 && !S_ISREG(st.st_mode))
			return false;
	}
	return true;
}

bool hs_periodic_switching(const struct hs_periodic *pe)
{
	return hs_periodic_opts_switching(&pe->o);
}

static void name_period(struct hs_periodic *pe, uint64_t now, int64_t now_wall)
{
	/* two periods begun in the same second (SIGUSR2 sent twice) must not share files */
	pe->seq = pe->start && now_wall / 1000000000 == pe->start_wall / 1000000000 ? pe->seq + 1 : 0;
	pe->start = now;
	pe->start_wall = now_wall;
	pe->last_write = now;
	pe->written = false;
	for (size_t i = 0; i < pe->n; i++) {
		free(pe->names[i]);
		pe->names[i] = hs_periodic_switching(pe) ? hs_period_path(pe->paths[i], now_wall, pe->seq)
							 : hs_xstrdup(pe->paths[i]);
	}
}

void hs_periodic_init(struct hs_periodic *pe, const struct hs_periodic_opts *o, const char *const *paths, size_t n,
		      uint64_t now, int64_t now_wall)
{
	memset(pe, 0, sizeof(*pe));
	pe->o = *o;
	pe->n = n;
	pe->paths = paths;
	pe->names = hs_xcalloc(n ? n : 1, sizeof(*pe->names));
	pe->kept = hs_xcalloc(n ? n : 1, sizeof(*pe->kept));
	pe->nkept = hs_xcalloc(n ? n : 1, sizeof(*pe->nkept));
	name_period(pe, now, now_wall);
}

void hs_periodic_release(struct hs_periodic *pe)
{
	for (size_t i = 0; i < pe->n; i++) {
		free(pe->names[i]);
		for (size_t k = 0; k < pe->nkept[i]; k++)
			free(pe->kept[i][k]);
		free(pe->kept[i]);
	}
	free(pe->names);
	free(pe->kept);
	free(pe->nkept);
	memset(pe, 0, sizeof(*pe));
}

/* the time between checkpoints: a tenth of it at most spent writing them */
static uint64_t checkpoint_gap(const struct hs_periodic *pe)
{
	return HS_MAX(HS_CHECKPOINT_NS, pe->write_ns * 10);
}

enum hs_periodic_due hs_periodic_due(const struct hs_periodic *pe, uint64_t now, bool switch_asked)
{
	uint64_t gap = checkpoint_gap(pe);

	if ((switch_asked && pe->o.by_signal) || (pe->o.period_ns && now - pe->start >= pe->o.period_ns))
		return HS_DUE_PERIOD;
	if (pe->o.checkpoints && now - pe->last_write >= gap)
		return HS_DUE_CHECKPOINT;
	return HS_DUE_NONE;
}

uint64_t hs_periodic_next(const struct hs_periodic *pe, uint64_t now)
{
	uint64_t at = UINT64_MAX;

	if (pe->o.period_ns)
		at = pe->start + pe->o.period_ns;
	if (pe->o.checkpoints)
		at = HS_MIN(at, pe->last_write + checkpoint_gap(pe));
	return at == UINT64_MAX ? at : at > now ? at - now : 0;
}

/* Keeps name as output i's newest period file, removing the oldest past max_files; returns
 * how many could not be removed. */
static size_t keep_file(struct hs_periodic *pe, size_t i, const char *name)
{
	size_t failed = 0, drop;

	pe->kept[i] = hs_xrealloc(pe->kept[i], (pe->nkept[i] + 1) * sizeof(**pe->kept));
	pe->kept[i][pe->nkept[i]++] = hs_xstrdup(name);
	if (!pe->o.max_files || pe->nkept[i] <= pe->o.max_files)
		return 0;
	drop = pe->nkept[i] - pe->o.max_files;
	for (size_t k = 0; k < drop; k++) {
		if (unlink(pe->kept[i][k]) < 0 && errno != ENOENT)
			failed++;
		free(pe->kept[i][k]);
	}
	memmove(pe->kept[i], pe->kept[i] + drop, pe->o.max_files * sizeof(**pe->kept));
	pe->nkept[i] = pe->o.max_files;
	return failed;
}

size_t hs_periodic_written(struct hs_periodic *pe, uint64_t began, int64_t began_wall, uint64_t now, bool ended)
{
	size_t failed = 0;

	if (!pe->written && hs_periodic_switching(pe))
		for (size_t i = 0; i < pe->n; i++)
			failed += keep_file(pe, i, pe->names[i]);
	pe->written = true;
	pe->last_write = now;
	if (!ended) {
		pe->write_ns = now - began;
	} else {
		pe->periods++;
		/* where the last one ended, not after its write: what came during the write is
		 * the next period's, and periods tile time */
		name_period(pe, began, began_wall);
		pe->last_write = now;
	}
	return failed;
}
