/* What the files of the push share: src/push/push.c (the queue, the spool and the thread that
 * sends) encodes profiles with src/push/bodies.c and sends them with src/push/transport.c. Not
 * for use outside them. */
#ifndef HS_PUSH_INTERNAL_H
#define HS_PUSH_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "push/push.h"
#include "push/service.h"

/* The protocols a store speaks, by the URL's scheme */
enum proto {
	PROTO_INGEST, /* http(s)://: Pyroscope's POST /ingest, a pprof per series */
	PROTO_OTLP,   /* otlp+http(s)://: OTLP/HTTP, an ExportProfilesServiceRequest per period */
	PROTO_PUSH,   /* pyroscope+http(s)://: Pyroscope's push.v1 PusherService/Push (Connect), a
	               * PushRequest per series */
	PROTO_OTLP_GRPC, /* otlp://: OTLP/gRPC, the same requests as PROTO_OTLP's (and spooled alike) */
};

#define WHY_MAX 200 /* of the store's answer, in a message */

enum note_kind { NOTE_DOWN, NOTE_UP, NOTE_REFUSED, NOTE_DROPPED, NOTE_SPOOL, NOTE_FOREIGN, NOTE_KIND, NOTE_KINDS };

struct hs_push {
	struct hs_push_opts o;
	enum proto proto;
	char host[256];           /* the machine's name, for labels */
	char *url;                /* the endpoint (http or https; gRPC's HOST:PORT) */
	bool tls;                 /* gRPC over TLS */
	char *shown;              /* ... as messages show it: no password */
	char *auth_header, *tenant_header;
	char *userpwd;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct item *head, *tail; /* memory queue, oldest first */
	uint64_t queued_bytes;
	struct hs_spool *spool;   /* NULL: memory only */
	bool spool_busy;          /* the sender is sending one of the spool's */
	bool spool_unsynced;      /* names written since the directory was last synced */
	bool stopping;            /* finish asked: send until deadline, then stop */
	uint64_t deadline_ms;
	uint64_t cut_at_ms;       /* a request under way is cut then (0: never); atomic */
	bool down;                /* the last attempt failed */
	int64_t last_until;       /* the last period's end: the next one begins there */
	struct hs_push_stats st;
	/* notes: what happened, said once each */
	char *notes[NOTE_KINDS];
	bool noted[NOTE_KINDS];
};

static inline uint64_t hs_push_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A profile on its way: its series, its period, and its body in memory or in a spool file */
struct out {
	const char *name;
	int64_t from, until;
	const uint8_t *body;
	int fd;
	uint64_t off, len, pos;
};

enum sent { SENT, RETRY, REFUSED };

/* src/push/transport.c: libcurl opened (once); a profile sent by HTTP (the Pyroscope and
 * OTLP/HTTP protocols) or as an OTLP/gRPC request, with the reason it was not sent in why.
 * Not under ps->lock. */
int hs_push_curl_open(struct hs_error *err);
enum sent hs_push_send_http(struct hs_push *ps, struct out *o, char *why, size_t whycap);
enum sent hs_push_send_grpc(struct hs_push *ps, struct out *o, char *why, size_t whycap);

/* src/push/bodies.c: the bodies of requests, *len bytes (to free): p as a gzipped pprof (the
 * ingest API's); a PushRequest of one series, service's of processes pids, begun at from (the
 * push API's); an ExportProfilesServiceRequest of the period, gzipped, a resource per service
 * of g, or one of every process (OTLP's). The processes of p's samples (to free), *n of them;
 * the name a series is queued under. */
uint8_t *hs_push_pprof_body(const struct hs_profile *p, size_t *len);
uint8_t *hs_push_push_body(struct hs_push *ps, const char *service, const int32_t *pids, size_t npids,
			   const struct hs_profile *p, int64_t from, size_t *len);
uint8_t *hs_push_otlp_body(struct hs_push *ps, const struct hs_profile *p, const struct hs_service_groups *g,
			   size_t *len);
int32_t *hs_push_profile_pids(const struct hs_profile *p, size_t *n);
char *hs_push_series_name(const struct hs_push *ps, const char *service);

#endif
