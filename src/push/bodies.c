/* The bodies of the requests to a store: a gzipped pprof (Pyroscope's ingest API), a push.v1
 * PushRequest of one series with its labels (its push API), an OTLP
 * ExportProfilesServiceRequest of a period with a resource per service. */
#include "push/push-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/otlp.h"
#include "output/writers.h"
#include "push/labels.h"
#include "util/strbuf.h"

/* p as a gzipped pprof */
uint8_t *hs_push_pprof_body(const struct hs_profile *p, size_t *len)
{
	struct hs_outfile out;
	struct hs_output_opts oo = {0};

	hs_outfile_open_mem(&out);
	hs_write_pprof(p, &oo, &out);
	return hs_outfile_take_mem(&out, len);
}

/* A label of a PushRequest's series */
static void push_label(struct hs_pb_buf *b, const char *name, const char *value)
{
	size_t m = hs_pb_begin(b, 1);

	hs_pb_bytes(b, 1, name, strlen(name));
	hs_pb_bytes(b, 2, value, strlen(value));
	hs_pb_end(b, m);
}

static int label_cmp(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* A PushRequest (push.v1) of one series: p's service's labels, sorted by name as the store keeps
 * them, and the gzipped pprof with an id that is the same whenever this period's profile of this
 * series is sent */
uint8_t *hs_push_push_body(struct hs_push *ps, const char *service, const int32_t *pids, size_t npids,
			  const struct hs_profile *p, int64_t from, size_t *len)
{
	struct hs_labels l;
	struct hs_pb_buf b = {0};
	const char *kv[HS_LABELS_MAX + 2][2];
	char prom[HS_LABELS_MAX][128], id[40];
	size_t n = 0, pl, series, sample;
	uint8_t *pprof = hs_push_pprof_body(p, &pl);
	uint64_t h = 0xcbf29ce484222325ULL;

	hs_labels_of(&l, service, ps->host, pids, npids, ps->o.labels, ps->o.nlabels, ps->o.renames, ps->o.nrenames);
	series = hs_pb_begin(&b, 1);
	/* the profile's name (its sample types are in the pprof), and that it is one period's
	 * samples alone, not a running total the store should take the difference of */
	kv[n][0] = "__name__", kv[n++][1] = "process_cpu";
	kv[n][0] = "__delta__", kv[n++][1] = "false";
	for (size_t i = 0; i < l.n; i++) {
		/* a pid or a path is no series of its own: Pyroscope keeps a series per label set */
		if (l.v[i].is_num || !strcmp(l.v[i].key, "process.executable.path"))
			continue;
		kv[n][0] = hs_label_prom_name(l.v[i].key, prom[i], sizeof(prom[i]));
		kv[n++][1] = l.v[i].value;
	}
	qsort(kv, n, sizeof(kv[0]), label_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i && !strcmp(kv[i][0], kv[i - 1][0])) /* two names alike once '.' is '_' */
			continue;
		push_label(&b, kv[i][0], kv[i][1]);
		for (int k = 0; k < 2; k++) {
			h = (h ^ (uint64_t)strlen(kv[i][k])) * 0x100000001b3ULL;
			for (const char *c = kv[i][k]; *c; c++)
				h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
		}
	}
	sample = hs_pb_begin(&b, 2);
	hs_pb_bytes(&b, 1, pprof, pl);
	/* a UUID (version 4's form) made of the series and the period */
	snprintf(id, sizeof(id), "%08x-%04x-4%03x-8%03x-%012llx", (unsigned)(h >> 32), (unsigned)(h >> 16) & 0xffff,
		 (unsigned)h & 0xfff, (unsigned)((uint64_t)from >> 52) & 0xfff,
		 (unsigned long long)((uint64_t)from & 0xffffffffffffULL));
	hs_pb_bytes(&b, 2, id, strlen(id));
	hs_pb_end(&b, sample);
	hs_pb_end(&b, series);
	free(pprof);
	hs_labels_release(&l);
	*len = b.n;
	return b.v;
}

/* The resource of one service, as OTLP's attributes */
static struct hs_otlp_attr *otlp_attrs(const struct hs_labels *l)
{
	struct hs_otlp_attr *a = hs_xcalloc(l->n + 1, sizeof(*a));

	for (size_t i = 0; i < l->n; i++)
		a[i] = (struct hs_otlp_attr){l->v[i].key, l->v[i].is_num ? NULL : l->v[i].value, l->v[i].num};
	return a;
}

/* The processes of p's samples (to free), *n of them */
int32_t *hs_push_profile_pids(const struct hs_profile *p, size_t *n)
{
	struct hs_u64map seen = {0};
	int32_t *v = hs_xcalloc(p->samples.n + 1, sizeof(*v));

	*n = 0;
	for (size_t i = 0; i < p->samples.n; i++) {
		int32_t pid = p->samples.v[i].pid;
		uint64_t x;
		if (pid > 0 && !hs_u64map_get(&seen, (uint64_t)pid, &x)) {
			hs_u64map_put(&seen, (uint64_t)pid, 1);
			v[(*n)++] = pid;
		}
	}
	hs_u64map_release(&seen);
	return v;
}

/* An ExportProfilesServiceRequest of the period, a resource per service, gzipped */
uint8_t *hs_push_otlp_body(struct hs_push *ps, const struct hs_profile *p, const struct hs_service_groups *g,
			  size_t *len)
{
	size_t n = g ? g->n : 1;
	struct hs_labels *l = hs_xcalloc(n, sizeof(*l));
	struct hs_otlp_resource *res = hs_xcalloc(n, sizeof(*res));
	struct hs_pb_buf b = {0};
	struct hs_outfile out;

	size_t nall = 0;
	int32_t *all = g ? NULL : hs_push_profile_pids(p, &nall);

	for (size_t i = 0; i < n; i++) {
		const char *name = g ? g->v[i].name : ps->o.service;
		const int32_t *pids = g ? g->v[i].pids : all;
		size_t npids = g ? g->v[i].npids : nall;
		hs_labels_of(&l[i], name, ps->host, pids, npids, ps->o.labels, ps->o.nlabels, ps->o.renames,
			     ps->o.nrenames);
		/* one series: every sample is its, whatever its process */
		res[i] = (struct hs_otlp_resource){otlp_attrs(&l[i]), l[i].n, g ? pids : NULL, g ? npids : 0};
	}
	free(all);
	hs_otlp_encode(p, res, n, &b);
	hs_outfile_open_mem(&out);
	hs_gzip_out(b.v, b.n, &out);
	hs_pb_buf_release(&b);
	for (size_t i = 0; i < n; i++) {
		free((void *)res[i].attrs);
		hs_labels_release(&l[i]);
	}
	free(res);
	free(l);
	return hs_outfile_take_mem(&out, len);
}

char *hs_push_series_name(const struct hs_push *ps, const char *service)
{
	struct hs_strbuf sb = {0};

	hs_strbuf_adds(&sb, service);
	hs_strbuf_addc(&sb, '{');
	for (size_t i = 0; i < ps->o.nlabels; i++)
		hs_strbuf_addf(&sb, "%s%s", i ? "," : "", ps->o.labels[i]);
	hs_strbuf_addc(&sb, '}');
	return hs_strbuf_detach(&sb);
}
