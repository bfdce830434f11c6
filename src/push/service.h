/* The service a process belongs to, as a fleet's profile store names series: its systemd unit,
 * else its container, else its command name (record --push with -a: a series per service). */
#ifndef HS_SERVICE_H
#define HS_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "util/hashmap.h"

/* The service of process pid, into buf: from /proc/PID/cgroup, a systemd service's unit name
 * without .service (system.slice/nginx.service: nginx), or a container's runtime and the
 * first 12 characters of its id (docker-0123456789ab; also cri-containerd, crio, libpod);
 * else the process's command name (/proc/PID/comm, or comm where the process is gone or
 * unknown). Characters a series name cannot hold become _. */
void hs_service_of(int32_t pid, const char *comm, char *buf, size_t cap);
/* The service a cgroup path names (a line of /proc/PID/cgroup after its second ':'), into buf
 * as above: false when it names none (a session, the root). */
bool hs_service_of_cgroup(const char *path, char *buf, size_t cap);

/* The services of the processes of the last profile grouped, by pid: kept from one profile to
 * the next (a process's service is read once), and only for the processes still in them. */
struct hs_service_cache {
	struct hs_u64map ix; /* pid -> index in names + 1 */
	char **names;
	size_t n;
};
void hs_service_cache_release(struct hs_service_cache *c);

struct hs_service_group {
	char *name;
	int32_t *pids;
	size_t npids;
};
struct hs_service_groups {
	struct hs_service_group *v;
	size_t n;
};
/* The processes of p's samples, grouped by service (c updated to hold just them). */
void hs_service_group(struct hs_service_cache *c, const struct hs_profile *p, struct hs_service_groups *ret);
void hs_service_groups_release(struct hs_service_groups *g);

#endif
