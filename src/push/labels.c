/* A service's labels: see labels.h. */
#include "push/labels.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/strbuf.h"
#include "util/util.h"

/* processes whose program is looked at, of a service's */
#define EXE_LOOKS 64
/* the longest value taken from a process's environment (a DNS label's limit, 253) */
#define ENV_VALUE_MAX 253

static void add(struct hs_labels *l, const char *key, const char *value, int64_t num, bool is_num)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].key, key)) { /* the later one wins: the user's over the machine's */
			free(l->v[i].value);
			l->v[i] = (struct hs_label){l->v[i].key, hs_xstrdup(value), num, is_num};
			return;
		}
	if (l->n < HS_LABELS_MAX)
		l->v[l->n++] = (struct hs_label){hs_xstrdup(key), hs_xstrdup(value), num, is_num};
}

bool hs_container_id(const char *text, char id[65])
{
	for (const char *c = text; *c; c++) {
		size_t n = 0;
		if (c != text && c[-1] != '-' && c[-1] != '/')
			continue;
		while (n < 65 && isxdigit((unsigned char)c[n]) && !isupper((unsigned char)c[n]))
			n++;
		if (n == 64 && (c[64] == 0 || c[64] == '.' || c[64] == '/' || c[64] == '\n')) {
			memcpy(id, c, 64);
			id[64] = 0;
			return true;
		}
	}
	return false;
}

/* A value from a process's environment, as a label may hold it: printable, not too long */
static bool env_value_ok(const char *v, size_t n)
{
	if (!n || n > ENV_VALUE_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isgraph((unsigned char)v[i]) || strchr(",{}=\"", v[i]))
			return false;
	return true;
}

/* NAME's value in a process's environment (NUL-separated), or NULL */
static const char *env_get(const char *env, size_t len, const char *name)
{
	size_t k = strlen(name);

	for (const char *e = env; e < env + len; e += strlen(e) + 1)
		if (!strncmp(e, name, k) && e[k] == '=')
			return e + k + 1;
	return NULL;
}

/* The Kubernetes pod a container's process names in its environment: the variables every
 * container of a pod gets (KUBERNETES_SERVICE_HOST; HOSTNAME, the pod's name), the downward
 * API's usual POD_NAME and POD_NAMESPACE, and OTEL_RESOURCE_ATTRIBUTES' k8s.* ones */
static void pod_labels(struct hs_labels *l, int32_t pid)
{
	char path[64], *env;
	const char *v;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	if (hs_read_file(path, 0, 1 << 18, &env, &len))
		return;
	if (!env_get(env, len, "KUBERNETES_SERVICE_HOST"))
		goto out;
	if (((v = env_get(env, len, "POD_NAME")) || (v = env_get(env, len, "HOSTNAME"))) && env_value_ok(v, strlen(v)))
		add(l, "k8s.pod.name", v, 0, false);
	if ((v = env_get(env, len, "POD_NAMESPACE")) && env_value_ok(v, strlen(v)))
		add(l, "k8s.namespace.name", v, 0, false);
	if ((v = env_get(env, len, "OTEL_RESOURCE_ATTRIBUTES"))) {
		for (const char *a = v; *a; a += strcspn(a, ",") + !!a[strcspn(a, ",")]) {
			size_t n = strcspn(a, ","), k = strcspn(a, "=");
			char key[64], val[ENV_VALUE_MAX + 1];
			if (k >= n || k >= sizeof(key) || strncmp(a, "k8s.", 4) || !env_value_ok(a + k + 1, n - k - 1))
				continue;
			snprintf(key, sizeof(key), "%.*s", (int)k, a);
			snprintf(val, sizeof(val), "%.*s", (int)(n - k - 1), a + k + 1);
			for (const char *c = key; *c; c++)
				if (!isalnum((unsigned char)*c) && *c != '.' && *c != '_')
					goto next;
			add(l, key, val, 0, false);
next:;
		}
	}
out:
	free(env);
}

/* The container of process pid, and its pod: false where the process is gone */
static bool container_labels(struct hs_labels *l, int32_t pid)
{
	char path[64], *text, id[65];
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (hs_read_file(path, 0, 1 << 16, &text, &len))
		return false;
	if (hs_container_id(text, id)) {
		add(l, "container.id", id, 0, false);
		pod_labels(l, pid);
	}
	free(text);
	return true;
}

bool hs_relabel_ok(const char *s)
{
	const char *eq = strchr(s, '=');

	if (!eq || eq == s)
		return false;
	for (const char *c = s; *c; c++)
		if (c != eq && !isalnum((unsigned char)*c) && *c != '_' && *c != '.')
			return false;
	return !isdigit((unsigned char)s[0]) && (!eq[1] || !isdigit((unsigned char)eq[1]));
}

const char *hs_label_prom_name(const char *key, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s", key);
	for (char *c = buf; *c; c++)
		if (*c == '.')
			*c = '_';
	return buf;
}

static void relabel(struct hs_labels *l, const char *r)
{
	const char *eq = strchr(r, '=');
	char old[128], prom[128];

	snprintf(old, sizeof(old), "%.*s", (int)(eq - r), r);
	for (size_t i = 0; i < l->n; i++) {
		if (strcmp(l->v[i].key, old) && strcmp(hs_label_prom_name(l->v[i].key, prom, sizeof(prom)), old))
			continue;
		free(l->v[i].key);
		if (!eq[1]) { /* dropped */
			free(l->v[i].value);
			memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(*l->v));
			l->n--;
		} else {
			l->v[i].key = hs_xstrdup(eq + 1);
		}
		return;
	}
}

void hs_labels_of(struct hs_labels *ret, const char *service, const char *host, const int32_t *pids, size_t npids,
		  const char *const *user, size_t nuser, const char *const *renames, size_t nrenames)
{
	char exe[PATH_MAX + 1] = "", one[PATH_MAX + 1];
	bool read_first = false, same = true;
	size_t looked = 0;

	ret->n = 0;
	add(ret, "service.name", service, 0, false);
	if (host && *host)
		add(ret, "host.name", host, 0, false);
	for (size_t i = 0; i < npids && looked < EXE_LOOKS; i++) {
		char path[64];
		ssize_t k;
		if (pids[i] <= 0)
			continue;
		if (!read_first && !container_labels(ret, pids[i]))
			continue; /* gone */
		read_first = true;
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)pids[i]);
		if ((k = readlink(path, one, sizeof(one) - 1)) <= 0)
			continue;
		one[k] = 0;
		looked++;
		if (!exe[0])
			memcpy(exe, one, (size_t)k + 1);
		else if (strcmp(exe, one))
			same = false;
	}
	if (exe[0] && same && !strstr(exe, " (deleted)")) {
		const char *base = strrchr(exe, '/');
		add(ret, "process.executable.name", base ? base + 1 : exe, 0, false);
		add(ret, "process.executable.path", exe, 0, false);
	}
	if (npids == 1 && pids[0] > 0)
		add(ret, "process.pid", "", pids[0], true);
	for (size_t i = 0; i < nuser; i++) {
		const char *eq = strchr(user[i], '=');
		char key[128];
		if (!eq)
			continue;
		snprintf(key, sizeof(key), "%.*s", (int)(eq - user[i]), user[i]);
		add(ret, key, eq + 1, 0, false);
	}
	for (size_t i = 0; i < nrenames; i++)
		relabel(ret, renames[i]);
}

void hs_labels_release(struct hs_labels *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].key);
		free(l->v[i].value);
	}
	l->n = 0;
}
