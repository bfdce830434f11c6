/* What the machine says of a service, for the stores that take labels with a profile (Pyroscope's
 * push API, OTLP's resource attributes): its host, its container, the Kubernetes pod its
 * environment names, its program; named as OpenTelemetry's semantic conventions name them
 * (service.name, host.name, container.id, k8s.pod.name, k8s.namespace.name,
 * process.executable.name and .path, process.pid), and for Pyroscope with each '.' a '_'.
 * The user's --push-label adds labels and --push-relabel renames or drops them.
 * docs/continuous.md, Labels. */
#ifndef HS_PUSH_LABELS_H
#define HS_PUSH_LABELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HS_LABELS_MAX 32

struct hs_label {
	char *key;   /* OpenTelemetry's name, or the user's */
	char *value; /* a string; "" with num for an integer */
	int64_t num;
	bool is_num;
};

struct hs_labels {
	struct hs_label v[HS_LABELS_MAX];
	size_t n;
};

/* The labels of a service named service whose processes are pids[0 .. npids), host the
 * machine's name: read from /proc now (the first of its processes still running says its
 * container and pod; its program is said where all those running run one, its pid where it
 * is one process). Then the user's labels ("KEY=VALUE") and renames ("OLD=NEW", NEW empty:
 * dropped; OLD either form of a name). */
void hs_labels_of(struct hs_labels *ret, const char *service, const char *host, const int32_t *pids, size_t npids,
		  const char *const *user, size_t nuser, const char *const *renames, size_t nrenames);
/* Whether "OLD=NEW" is a rename --push-relabel takes */
bool hs_relabel_ok(const char *s);
/* A label's name as Pyroscope takes it: each '.' a '_' (into buf) */
const char *hs_label_prom_name(const char *key, char *buf, size_t cap);
void hs_labels_release(struct hs_labels *l);

/* A container's full id in the text of /proc/PID/cgroup (64 hex digits after a runtime's prefix or
 * docker's directory), into id[65]: false where it names none. */
bool hs_container_id(const char *cgroup_text, char id[65]);

#endif
