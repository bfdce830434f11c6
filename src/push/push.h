/* Profiles sent to a profile store as they are made (record --push URL), in the protocol the
 * URL's scheme names: Grafana Pyroscope's ingest API (http(s)://: POST /ingest, a pprof body, the
 * series named name=SERVICE{labels}, from and until), its push API (pyroscope+http(s)://: a
 * push.v1 PushRequest per series, over Connect), or OpenTelemetry's profiles (otlp+http(s)://
 * OTLP/HTTP, otlp:// OTLP/gRPC: an ExportProfilesServiceRequest per period, a resource per
 * series; output/otlp.h). The push API's and OTLP's series carry the machine's labels (labels.h).
 *
 * Sampling never waits for the network: hs_push_profile() encodes the profile and, with a
 * spool directory, writes it there (synced) before it is queued, so that a kill loses none; a
 * thread of its own sends, one profile at a time, oldest first, and removes a spooled one only
 * once the store took it. A store that is down or says it is busy (HTTP 429, 5xx, a redirect
 * that leads nowhere, no answer in time) is tried again with a growing pause (1 s doubling to
 * a minute); a profile it refuses (another 4xx) is dropped and counted. Without a spool the
 * queue is in memory only. Both are bounded; what is dropped is counted. */
#ifndef HS_PUSH_H
#define HS_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

struct hs_error;
struct hs_service_cache;

#define HS_PUSH_QUEUE_BYTES ((uint64_t)64 << 20)
#define HS_PUSH_SPOOL_BYTES ((uint64_t)256 << 20)
#define HS_PUSH_FLUSH_SECS 10.0
/* One request's bounds: the connection made, then no byte either way for IDLE, or the whole
 * request: abandoned and tried again. At most REDIRECTS redirects followed. An answer is read
 * up to ANSWER_BYTES: a 2xx status is the store's acceptance, whatever follows it. */
#define HS_PUSH_CONNECT_SECS 5
#define HS_PUSH_IDLE_SECS 10
#define HS_PUSH_REQUEST_SECS 60
#define HS_PUSH_REDIRECTS 5
#define HS_PUSH_ANSWER_BYTES (64 << 10)

struct hs_push_opts {
	const char *url;            /* http(s)://HOST[:PORT][/PATH]: /ingest where no path is given */
	const char *const *labels;  /* "KEY=VALUE", each checked by hs_push_label_ok() */
	size_t nlabels;
	const char *const *renames; /* "OLD=NEW" (labels.h), each checked by hs_relabel_ok(): for the
	                             * push API's and OTLP's labels */
	size_t nrenames;
	const char *service;        /* the series' name (copied) unless by_service */
	bool by_service;            /* a series per service: each sample's process's systemd unit,
	                             * container or program (push/service.h) */
	struct hs_service_cache *services; /* with by_service: the processes' services, fed the
	                             * recording's events by the caller (borrowed) */
	uint32_t sample_rate;       /* Hz, for the store's sampleRate */
	const char *spool_dir;      /* NULL: memory only */
	uint64_t queue_bytes;       /* in memory, without a spool or where it fails; 0:
	                             * HS_PUSH_QUEUE_BYTES */
	uint64_t spool_bytes;       /* 0: HS_PUSH_SPOOL_BYTES */
	double flush_secs;          /* at the end, the longest spent sending what is queued (a
	                             * request under way is cut then); 0: HS_PUSH_FLUSH_SECS */
};

struct hs_push_stats {
	uint64_t sent;     /* profiles the store took */
	uint64_t retries;  /* attempts that failed and were tried again */
	uint64_t refused;  /* profiles the store refused (dropped) */
	uint64_t dropped;  /* profiles dropped for want of room (queue and spool full) or time */
	uint64_t spooled;  /* profiles left in the spool at the end, for the next recording */
	uint64_t from_spool; /* profiles an earlier recording left in the spool, found at the start */
};

struct hs_push;

/* Whether "KEY=VALUE" is a label the store takes: KEY a letter or _ then letters, digits, _
 * or .; VALUE not empty, without , { } = " or spaces. */
bool hs_push_label_ok(const char *label);
/* url as it may be shown: the user and password in it (http://USER:PASSWORD@HOST) replaced by
 * ***. Returns a string to free(). */
char *hs_push_url_shown(const char *url);
/* Checks the URL and the environment's credentials, opens the spool (spool.h: created 0700
 * where missing, refused where others could write it; an earlier recording's profiles in it
 * queued first) and starts the sending thread.
 * Credentials come from the environment only: HOTSTACK_PUSH_TOKEN (a bearer token), or
 * HOTSTACK_PUSH_USER and HOTSTACK_PUSH_PASSWORD (basic authentication); HOTSTACK_PUSH_TENANT
 * sets X-Scope-OrgID. Returns 0, or a negative errno with err said. */
int hs_push_start(struct hs_push **ret, const struct hs_push_opts *o, struct hs_error *err);
/* Queues p, the profile of [from_ns, until_ns) (wall clock): one series, or one per service;
 * with a spool, written there before this returns. Periods are made to tile time: one that
 * begins before the last one's until begins at that until. */
void hs_push_profile(struct hs_push *ps, const struct hs_profile *p, int64_t from_ns, int64_t until_ns);
/* A line to say about the sending (the store unreachable, back, refusing, profiles dropped),
 * each kind said once: 0 with *msg (to free) when there is one, else -ENOENT. */
int hs_push_note(struct hs_push *ps, char **msg);
/* Sends what is queued for at most o.flush_secs, spools (or drops) the rest, stops the thread,
 * and frees ps. */
void hs_push_finish(struct hs_push *ps, struct hs_push_stats *st);

#endif
