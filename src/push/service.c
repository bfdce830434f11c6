/* The service a process belongs to: see service.h. */
#include "push/service.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* name, made fit for a series name (letters, digits, . _ -), into buf */
static void fit(const char *name, size_t len, char *buf, size_t cap)
{
	size_t k = 0;

	for (size_t i = 0; i < len && k + 1 < cap; i++) {
		char c = name[i];
		buf[k++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
					   c == '-' || c == '_'
				   ? c
				   : '_';
	}
	buf[k] = 0;
	if (!k)
		snprintf(buf, cap, "unknown");
}

bool hs_service_of_cgroup(const char *path, char *buf, size_t cap)
{
	static const char *const runtimes[] = {"docker-", "cri-containerd-", "crio-", "libpod-"};
	const char *last = strrchr(path, '/');
	size_t n;

	last = last ? last + 1 : path;
	n = strlen(last);
	for (size_t i = 0; i < HS_ARRAY_SIZE(runtimes); i++) {
		size_t k = strlen(runtimes[i]);
		if (!strncmp(last, runtimes[i], k) && n >= k + 12) {
			char id[64];
			snprintf(id, sizeof(id), "%.*s-%.12s", (int)(k - 1), last, last + k);
			fit(id, strlen(id), buf, cap);
			return true;
		}
	}
	/* docker's cgroupfs driver: /docker/ID */
	if (strstr(path, "/docker/") && n >= 12) {
		char id[32];
		snprintf(id, sizeof(id), "docker-%.12s", last);
		fit(id, strlen(id), buf, cap);
		return true;
	}
	if (n > 8 && !strcmp(last + n - 8, ".service")) {
		const char *at = memchr(last, '@', n - 8); /* a template's instance: its template */
		fit(last, at ? (size_t)(at - last) : n - 8, buf, cap);
		return true;
	}
	return false;
}

void hs_service_of(int32_t pid, const char *comm, char *buf, size_t cap)
{
	char path[64], line[4096];
	FILE *f;

	if (pid > 0) {
		snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
		if ((f = fopen(path, "re"))) {
			bool found = false;
			while (!found && fgets(line, sizeof(line), f)) {
				char *p = strchr(line, ':');
				p = p ? strchr(p + 1, ':') : NULL;
				if (!p)
					continue;
				p[strcspn(p, "\n")] = 0;
				found = hs_service_of_cgroup(p + 1, buf, cap);
			}
			fclose(f);
			if (found)
				return;
		}
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		if ((f = fopen(path, "re"))) {
			bool ok = fgets(line, sizeof(line), f) != NULL;
			fclose(f);
			if (ok) {
				fit(line, strcspn(line, "\n"), buf, cap);
				return;
			}
		}
	}
	fit(comm, strlen(comm), buf, cap);
}

void hs_service_cache_release(struct hs_service_cache *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->names[i]);
	free(c->names);
	hs_u64map_release(&c->ix);
	memset(c, 0, sizeof(*c));
}

void hs_service_group(struct hs_service_cache *c, const struct hs_profile *p, struct hs_service_groups *ret)
{
	struct hs_service_cache next = {0};
	struct hs_service_groups g = {0};

	for (size_t i = 0; i < p->samples.n; i++) {
		const struct hs_sample *s = &p->samples.v[i];
		uint64_t key = (uint64_t)(uint32_t)s->pid, at;
		char name[128];
		size_t k;

		if (hs_u64map_get(&next.ix, key, &at))
			continue; /* grouped already */
		if (s->pid > 0 && hs_u64map_get(&c->ix, key, &at))
			snprintf(name, sizeof(name), "%s", c->names[at - 1]);
		else
			hs_service_of(s->pid, hs_profile_str(p, s->comm), name, sizeof(name));
		next.names = hs_xrealloc(next.names, (next.n + 1) * sizeof(*next.names));
		next.names[next.n++] = hs_xstrdup(name);
		hs_u64map_put(&next.ix, key, next.n);
		for (k = 0; k < g.n && strcmp(g.v[k].name, name); k++)
			;
		if (k == g.n) {
			g.v = hs_xrealloc(g.v, (g.n + 1) * sizeof(*g.v));
			g.v[g.n++] = (struct hs_service_group){hs_xstrdup(name), NULL, 0};
		}
		g.v[k].pids = hs_xrealloc(g.v[k].pids, (g.v[k].npids + 1) * sizeof(*g.v[k].pids));
		g.v[k].pids[g.v[k].npids++] = s->pid;
	}
	hs_service_cache_release(c);
	*c = next;
	*ret = g;
}

void hs_service_groups_release(struct hs_service_groups *g)
{
	for (size_t i = 0; i < g->n; i++) {
		free(g->v[i].name);
		free(g->v[i].pids);
	}
	free(g->v);
	memset(g, 0, sizeof(*g));
}
