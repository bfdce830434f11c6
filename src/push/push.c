/* Profiles sent to a profile store: see push.h. Here the queue in memory and the spool, the
 * thread that sends their profiles oldest first with its retries, and the push's start and end;
 * the requests' bodies are bodies.c's, their sending transport.c's. */
#include "push/push-internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/otlp.h"
#include "profile/filter.h"
#include "push/grpc.h"
#include "push/spool.h"
#include "util/error.h"
#include "util/strbuf.h"

static const enum hs_spool_kind spool_kind[] = {HS_SPOOL_INGEST, HS_SPOOL_OTLP, HS_SPOOL_PUSH, HS_SPOOL_OTLP};
#define PUSH_PATH "/push.v1.PusherService/Push"
/* the series name an OTLP request is queued and spooled under: it holds every service */
#define OTLP_SERIES "otlp"

#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 60000

/* A profile waiting in memory: without a spool, or one the spool could not take */
struct item {
	struct item *next;
	char *name;              /* the series: SERVICE{labels} */
	int64_t from, until;     /* ns since the epoch */
	uint8_t *body;           /* pprof, gzipped */
	size_t len;
};

/* a note of this kind, the first time (under ps->lock) */
static void note(struct hs_push *ps, enum note_kind k, const char *fmt, ...) HS_PRINTF(3, 4);
static void note(struct hs_push *ps, enum note_kind k, const char *fmt, ...)
{
	char buf[768];
	va_list ap;

	if (ps->noted[k])
		return;
	ps->noted[k] = true;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	free(ps->notes[k]);
	ps->notes[k] = hs_xstrdup(buf);
}

bool hs_push_label_ok(const char *label)
{
	const char *eq = strchr(label, '=');

	if (!eq || eq == label || !eq[1] || !(isalpha((unsigned char)label[0]) || label[0] == '_'))
		return false;
	for (const char *c = label; c < eq; c++)
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != '.')
			return false;
	for (const char *c = eq + 1; *c; c++)
		if (strchr(",{}=\" \t\n", *c) || (unsigned char)*c < 0x20)
			return false;
	return true;
}

char *hs_push_url_shown(const char *url)
{
	const char *host = strstr(url, "://"), *end, *at = NULL;
	struct hs_strbuf sb = {0};

	host = host ? host + 3 : url;
	end = host + strcspn(host, "/?#");
	for (const char *c = host; c < end; c++)
		if (*c == '@')
			at = c;
	if (!at)
		return hs_xstrdup(url);
	hs_strbuf_addf(&sb, "%.*s***%s", (int)(host - url), url, at);
	return hs_strbuf_detach(&sb);
}

static void item_free(struct item *it)
{
	if (!it)
		return;
	free(it->name);
	free(it->body);
	free(it);
}

/* ---- the sender ---- */

/* Takes the oldest profile waiting, the spool's or the memory queue's, into o (under the
 * lock; the profile stays where it is until it is sent). Returns 1 for one from the spool, 0
 * from memory, -1 for none. */
static int next_out(struct hs_push *ps, struct out *o, struct hs_spool_entry *e)
{
	const struct hs_spool_entry *old = ps->spool ? hs_spool_oldest(ps->spool) : NULL;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (old && (!ps->head || old->from <= ps->head->from)) {
		*e = *old;
		ps->spool_busy = true;
		return 1;
	}
	if (!ps->head)
		return -1;
	o->name = ps->head->name;
	o->from = ps->head->from;
	o->until = ps->head->until;
	o->body = ps->head->body;
	o->len = ps->head->len;
	return 0;
}

/* Opens the spool's profile e into o (unlocked): false for a file that is no longer one
 * hotstack spooled, taken out of the index, left alone and said */
static bool open_spooled(struct hs_push *ps, const struct hs_spool_entry *e, struct out *o, struct hs_spool_reader *r)
{
	char name[64];
	long i;

	if (!hs_spool_read_open(ps->spool, e, r)) {
		o->name = r->series;
		o->from = r->from;
		o->until = r->until;
		o->fd = r->fd;
		o->off = r->body_off;
		o->len = r->body_len;
		return true;
	}
	hs_spool_name(e, name, sizeof(name));
	pthread_mutex_lock(&ps->lock);
	if ((i = hs_spool_find(ps->spool, e)) >= 0)
		hs_spool_remove(ps->spool, (size_t)i, false);
	ps->spool_busy = false;
	note(ps, NOTE_FOREIGN, "'%s/%s' is not a profile hotstack spooled: left alone", ps->spool->path, name);
	pthread_mutex_unlock(&ps->lock);
	return false;
}

/* Waits for ms, or until the end's time is up (under the lock); the end's beginning ends the
 * wait at once, so that the time left for sending is spent sending */
static void pause_for(struct hs_push *ps, uint64_t ms)
{
	uint64_t until = hs_push_now_ms() + ms;
	bool was_stopping = ps->stopping;
	struct timespec ts;

	if (ps->stopping)
		until = HS_MIN(until, ps->deadline_ms);
	while (hs_push_now_ms() < until && ps->stopping == was_stopping && !(ps->stopping && hs_push_now_ms() >= ps->deadline_ms)) {
		uint64_t left = until - HS_MIN(until, hs_push_now_ms());
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t)(left / 1000);
		ts.tv_nsec += (long)(left % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&ps->cond, &ps->lock, &ts); /* woken early by the end */
	}
}

static void *sender(void *arg)
{
	struct hs_push *ps = arg;
	uint64_t backoff = BACKOFF_MIN_MS;
	char why[WHY_MAX + 64];

	pthread_mutex_lock(&ps->lock);
	for (;;) {
		struct hs_spool_reader r;
		struct hs_spool_entry e;
		struct out o;
		bool sync = false;
		enum sent res;
		int from_spool;

		while (!ps->stopping && !ps->head && !(ps->spool && hs_spool_count(ps->spool)))
			pthread_cond_wait(&ps->cond, &ps->lock);
		if (ps->stopping && hs_push_now_ms() >= ps->deadline_ms)
			break;
		if ((from_spool = next_out(ps, &o, &e)) < 0) {
			if (ps->stopping)
				break;
			continue;
		}
		pthread_mutex_unlock(&ps->lock);
		if (from_spool && !open_spooled(ps, &e, &o, &r)) {
			pthread_mutex_lock(&ps->lock);
			continue;
		}
		res = ps->proto == PROTO_OTLP_GRPC ? hs_push_send_grpc(ps, &o, why, sizeof(why)) : hs_push_send_http(ps, &o, why, sizeof(why));
		if (from_spool)
			close(o.fd);
		pthread_mutex_lock(&ps->lock);
		ps->spool_busy = false;
		if (res == RETRY) {
			ps->st.retries++;
			if (!ps->down) {
				ps->noted[NOTE_UP] = false;
				note(ps, NOTE_DOWN, "cannot push to %s: %s; trying again, profiles queue meanwhile",
				     ps->shown, why);
			}
			ps->down = true;
			pause_for(ps, backoff);
			backoff = HS_MIN(backoff * 2, BACKOFF_MAX_MS);
			continue;
		}
		backoff = BACKOFF_MIN_MS;
		if (ps->down && res == SENT) {
			ps->noted[NOTE_DOWN] = false;
			note(ps, NOTE_UP, "pushing to %s again", ps->shown);
		}
		ps->down = false;
		if (res == SENT) {
			ps->st.sent++;
		} else {
			ps->st.refused++;
			note(ps, NOTE_REFUSED, "%s refused a profile (%s): dropped", ps->shown, why);
		}
		if (from_spool) {
			long i = hs_spool_find(ps->spool, &e);
			if (i >= 0) {
				hs_spool_remove(ps->spool, (size_t)i, true);
				sync = true;
			}
		} else {
			struct item *it = ps->head;
			ps->head = it->next;
			if (!ps->head)
				ps->tail = NULL;
			ps->queued_bytes -= it->len;
			item_free(it);
		}
		if (sync) { /* a removal that survives a crash: the profile is not sent again */
			pthread_mutex_unlock(&ps->lock);
			hs_spool_sync(ps->spool);
			pthread_mutex_lock(&ps->lock);
		}
	}
	pthread_mutex_unlock(&ps->lock);
	return NULL;
}

/* ---- queueing ---- */

/* Writes a profile to the spool, room made by dropping the oldest there (not the one being
 * sent): false where there is no spool or it cannot take the profile. Not under the lock:
 * only the thread that queues writes to the spool. */
static bool spool_put(struct hs_push *ps, const char *name, int64_t from, int64_t until, const uint8_t *body,
		      size_t len)
{
	uint64_t need = len + strlen(name) + 128;
	struct hs_spool_entry e;
	size_t dropped;
	int rc;

	if (!ps->spool || need > HS_SPOOL_FILE_MAX || need > ps->o.spool_bytes)
		return false;
	pthread_mutex_lock(&ps->lock);
	dropped = hs_spool_make_room(ps->spool, need, ps->spool_busy ? 1 : 0);
	ps->st.dropped += dropped;
	if (dropped)
		note(ps, NOTE_DROPPED,
		     "the push spool is full (%llu MiB or %u profiles): the oldest profiles there are dropped",
		     (unsigned long long)(ps->o.spool_bytes >> 20), (unsigned)HS_SPOOL_MAX_FILES);
	pthread_mutex_unlock(&ps->lock);
	rc = hs_spool_write(ps->spool, name, from, until, body, len, &e);
	pthread_mutex_lock(&ps->lock);
	if (rc)
		note(ps, NOTE_SPOOL, "cannot write to the push spool '%s': %s; profiles wait in memory",
		     ps->spool->path, strerror(-rc));
	else
		hs_spool_add(ps->spool, &e);
	pthread_cond_signal(&ps->cond);
	pthread_mutex_unlock(&ps->lock);
	ps->spool_unsynced |= !rc;
	return !rc;
}

/* Makes room for len more bytes in memory: the oldest profiles to the spool, or dropped
 * (under the lock) */
static void make_room(struct hs_push *ps, size_t len)
{
	while (ps->head && ps->head->next && ps->queued_bytes + len > ps->o.queue_bytes) {
		struct item *it = ps->head;
		/* the sender may be sending the head: only the ones after it move */
		struct item *victim = it->next;
		it->next = victim->next;
		if (ps->tail == victim)
			ps->tail = it;
		ps->queued_bytes -= victim->len;
		ps->st.dropped++;
		note(ps, NOTE_DROPPED, "the push queue is full (%llu MiB in memory): the oldest profiles are dropped",
		     (unsigned long long)(ps->o.queue_bytes >> 20));
		item_free(victim);
	}
}

/* Queues body[len] (taken) of series name (taken) over [from, until): to the spool, else memory */
static void enqueue(struct hs_push *ps, char *name, int64_t from, int64_t until, uint8_t *body, size_t len)
{
	struct item *it = hs_xcalloc(1, sizeof(*it));

	it->body = body;
	it->len = len;
	it->name = name;
	it->from = from;
	it->until = until;
	if (spool_put(ps, name, from, until, it->body, it->len)) {
		item_free(it);
		return;
	}
	pthread_mutex_lock(&ps->lock);
	make_room(ps, it->len);
	if (ps->tail)
		ps->tail->next = it;
	else
		ps->head = it;
	ps->tail = it;
	ps->queued_bytes += it->len;
	pthread_cond_signal(&ps->cond);
	pthread_mutex_unlock(&ps->lock);
}

void hs_push_profile(struct hs_push *ps, const struct hs_profile *p, int64_t from_ns, int64_t until_ns)
{
	struct hs_service_groups g = {0};
	size_t len;

	/* no overlap with the last period, even where the clock was set back */
	from_ns = HS_MAX(from_ns, ps->last_until);
	until_ns = HS_MAX(until_ns, from_ns);
	ps->last_until = until_ns;
	if (!p->samples.n)
		return;
	if (ps->o.by_service)
		hs_service_group(ps->o.services, p, &g);
	if (ps->proto == PROTO_OTLP || ps->proto == PROTO_OTLP_GRPC) { /* one request: a resource per service */
		uint8_t *body = hs_push_otlp_body(ps, p, ps->o.by_service ? &g : NULL, &len);
		enqueue(ps, hs_xstrdup(OTLP_SERIES), from_ns, until_ns, body, len);
	} else if (!ps->o.by_service) {
		size_t npids = 0;
		int32_t *pids = ps->proto == PROTO_PUSH ? hs_push_profile_pids(p, &npids) : NULL;
		uint8_t *body = ps->proto == PROTO_PUSH ? hs_push_push_body(ps, ps->o.service, pids, npids, p, from_ns, &len)
							: hs_push_pprof_body(p, &len);
		free(pids);
		enqueue(ps, hs_push_series_name(ps, ps->o.service), from_ns, until_ns, body, len);
	} else {
		for (size_t i = 0; i < g.n; i++) {
			struct hs_filter f = {0};
			struct hs_profile *q;
			f.pids.v = g.v[i].pids;
			f.pids.n = g.v[i].npids;
			if (hs_profile_filter(p, &f, &q))
				continue;
			uint8_t *body = ps->proto == PROTO_PUSH
						? hs_push_push_body(ps, g.v[i].name, g.v[i].pids, g.v[i].npids, q, from_ns, &len)
						: hs_push_pprof_body(q, &len);
			enqueue(ps, hs_push_series_name(ps, g.v[i].name), from_ns, until_ns, body, len);
			hs_profile_free(q);
		}
	}
	if (ps->o.by_service)
		hs_service_groups_release(&g);
	/* the period's names made durable at once, rather than one sync per series */
	if (ps->spool_unsynced) {
		hs_spool_sync(ps->spool);
		ps->spool_unsynced = false;
	}
}

int hs_push_note(struct hs_push *ps, char **msg)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&ps->lock);
	for (int k = 0; k < NOTE_KINDS && rc; k++)
		if (ps->notes[k]) {
			*msg = ps->notes[k];
			ps->notes[k] = NULL;
			rc = 0;
		}
	pthread_mutex_unlock(&ps->lock);
	return rc;
}

/* ---- start and end ---- */

/* The URL's scheme: the protocol, the HTTP scheme it goes over, and the endpoint's path where
 * the URL gives the store's address alone */
static const struct scheme {
	const char *prefix;
	enum proto proto;
	const char *http;
	const char *path;
} schemes[] = {
	{"http://", PROTO_INGEST, "http://", "/ingest"},
	{"https://", PROTO_INGEST, "https://", "/ingest"},
	{"otlp+http://", PROTO_OTLP, "http://", HS_OTLP_PATH},
	{"otlp+https://", PROTO_OTLP, "https://", HS_OTLP_PATH},
	{"pyroscope+http://", PROTO_PUSH, "http://", PUSH_PATH},
	{"pyroscope+https://", PROTO_PUSH, "https://", PUSH_PATH},
	{"pyroscope+push://", PROTO_PUSH, "http://", PUSH_PATH},
	{"otlp://", PROTO_OTLP_GRPC, NULL, NULL},
	{"otlp+grpc://", PROTO_OTLP_GRPC, NULL, NULL},
	{"otlp+grpcs://", PROTO_OTLP_GRPC, NULL, NULL},
};

static int check_url(const char *url, enum proto *proto, char **ret, struct hs_error *err)
{
	const struct scheme *sc = NULL;
	const char *rest;
	struct hs_strbuf sb = {0};
	char *shown = hs_push_url_shown(url);
	int rc = 0;

	for (size_t i = 0; i < HS_ARRAY_SIZE(schemes) && !sc; i++)
		if (!strncmp(url, schemes[i].prefix, strlen(schemes[i].prefix)))
			sc = &schemes[i];
	if (!sc) {
		rc = hs_error_set(err, -EINVAL,
				  "'%s' is not a URL hotstack pushes to: http(s):// (Pyroscope's /ingest), "
				  "pyroscope+http(s):// (its push API), otlp+http(s):// or otlp:// (OpenTelemetry)",
				  shown);
		goto out;
	}
	if (sc->proto == PROTO_OTLP_GRPC) { /* gRPC's target: HOST:PORT, the port 4317 by default */
		size_t hostlen;
		rest = url + strlen(sc->prefix);
		hostlen = strcspn(rest, "/");
		if (!hostlen || strchr(rest, '@') || strpbrk(url, " \t\n\"<>\\^`{|}") ||
		    (rest[hostlen] == '/' && rest[hostlen + 1])) {
			rc = hs_error_set(err, -EINVAL, "'%s' is not an OTLP/gRPC address, otlp://HOST:PORT", shown);
			goto out;
		}
		*proto = sc->proto;
		hs_strbuf_addf(&sb, "%.*s", (int)hostlen, rest);
		if (!memchr(rest, ':', hostlen) || (rest[0] == '[' && rest[hostlen - 1] == ']'))
			hs_strbuf_adds(&sb, ":4317");
		*ret = hs_strbuf_detach(&sb);
		goto out;
	}
	rest = url + strlen(sc->prefix);
	if (!*rest || *rest == '/' || strpbrk(url, " \t\n\"<>\\^`{|}")) {
		rc = hs_error_set(err, -EINVAL, "'%s' is not a URL with a host", shown);
		goto out;
	}
	*proto = sc->proto;
	hs_strbuf_addf(&sb, "%s%s", sc->http, rest);
	/* the store's address alone: its endpoint */
	if (!strchr(rest, '/'))
		hs_strbuf_adds(&sb, sc->path);
	else if (rest[strlen(rest) - 1] == '/')
		hs_strbuf_adds(&sb, sc->path + 1);
	*ret = hs_strbuf_detach(&sb);
out:
	free(shown);
	return rc;
}

static void push_free(struct hs_push *ps)
{
	for (int k = 0; k < NOTE_KINDS; k++)
		free(ps->notes[k]);
	hs_spool_close(ps->spool);
	free(ps->auth_header);
	free(ps->tenant_header);
	free(ps->userpwd);
	free((char *)ps->o.service);
	free(ps->url);
	free(ps->shown);
	free(ps);
}

int hs_push_start(struct hs_push **ret, const struct hs_push_opts *o, struct hs_error *err)
{
	struct hs_push *ps = hs_xcalloc(1, sizeof(*ps));
	const char *token = getenv("HOTSTACK_PUSH_TOKEN"), *user = getenv("HOTSTACK_PUSH_USER");
	const char *pass = getenv("HOTSTACK_PUSH_PASSWORD"), *tenant = getenv("HOTSTACK_PUSH_TENANT");
	struct hs_strbuf sb = {0};
	int rc;

	ps->o = *o;
	ps->o.service = o->service ? hs_xstrdup(o->service) : NULL;
	ps->o.queue_bytes = o->queue_bytes ? o->queue_bytes : HS_PUSH_QUEUE_BYTES;
	ps->o.spool_bytes = o->spool_bytes ? o->spool_bytes : HS_PUSH_SPOOL_BYTES;
	ps->o.flush_secs = o->flush_secs > 0 ? o->flush_secs : HS_PUSH_FLUSH_SECS;
	if ((rc = check_url(o->url, &ps->proto, &ps->url, err)))
		goto fail;
	ps->tls = !strncmp(o->url, "otlp+grpcs://", 13);
	if (gethostname(ps->host, sizeof(ps->host) - 1))
		ps->host[0] = 0;
	/* gRPC's target is no URL: messages show the one given */
	ps->shown = hs_push_url_shown(ps->proto == PROTO_OTLP_GRPC ? o->url : ps->url);
	if (token && *token && user && *user) {
		rc = hs_error_set(err, -EINVAL, "HOTSTACK_PUSH_TOKEN and HOTSTACK_PUSH_USER are both set: one of them");
		goto fail;
	}
	if (user && *user && !pass) {
		rc = hs_error_set(err, -EINVAL, "HOTSTACK_PUSH_USER is set without HOTSTACK_PUSH_PASSWORD");
		goto fail;
	}
	if (o->spool_dir && (rc = hs_spool_open(&ps->spool, o->spool_dir, ps->o.spool_bytes, spool_kind[ps->proto], err)))
		goto fail;
	if ((rc = ps->proto == PROTO_OTLP_GRPC ? hs_grpc_open(err) : hs_push_curl_open(err)))
		goto fail;
	if (token && *token) {
		hs_strbuf_addf(&sb, "Authorization: Bearer %s", token);
		ps->auth_header = hs_strbuf_detach(&sb);
	}
	if (tenant && *tenant) {
		hs_strbuf_addf(&sb, "X-Scope-OrgID: %s", tenant);
		ps->tenant_header = hs_strbuf_detach(&sb);
	}
	if (user && *user) {
		hs_strbuf_addf(&sb, "%s:%s", user, pass);
		ps->userpwd = hs_strbuf_detach(&sb);
	}
	if (ps->spool) {
		ps->st.from_spool = hs_spool_count(ps->spool);
		if (ps->spool->other_kind)
			note(ps, NOTE_KIND, "'%s/%s'%s spooled for another protocol: left for a push with it",
			     ps->spool->path, ps->spool->other_kind_name,
			     ps->spool->other_kind > 1 ? " and other profiles in the spool were" : " was");
		if (ps->spool->foreign)
			note(ps, NOTE_FOREIGN, "'%s/%s'%s not a profile hotstack spooled: left alone", ps->spool->path,
			     ps->spool->foreign_name,
			     ps->spool->foreign > 1 ? " and other files in the spool are" : " is");
	}
	pthread_mutex_init(&ps->lock, NULL);
	pthread_cond_init(&ps->cond, NULL);
	if ((rc = pthread_create(&ps->thread, NULL, sender, ps))) {
		rc = hs_error_set(err, -rc, "cannot start the push thread: %s", strerror(rc));
		pthread_mutex_destroy(&ps->lock);
		pthread_cond_destroy(&ps->cond);
		goto fail;
	}
	*ret = ps;
	return 0;
fail:
	push_free(ps);
	return rc;
}

void hs_push_finish(struct hs_push *ps, struct hs_push_stats *st)
{
	struct item *it;

	pthread_mutex_lock(&ps->lock);
	ps->stopping = true;
	ps->deadline_ms = hs_push_now_ms() + (uint64_t)(ps->o.flush_secs * 1000);
	__atomic_store_n(&ps->cut_at_ms, ps->deadline_ms, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&ps->cond);
	pthread_mutex_unlock(&ps->lock);
	pthread_join(ps->thread, NULL);
	while ((it = ps->head)) {
		ps->head = it->next;
		if (!spool_put(ps, it->name, it->from, it->until, it->body, it->len))
			ps->st.dropped++;
		item_free(it);
	}
	if (ps->spool) {
		hs_spool_sync(ps->spool);
		ps->st.spooled = hs_spool_count(ps->spool);
	}
	*st = ps->st;
	pthread_mutex_destroy(&ps->lock);
	pthread_cond_destroy(&ps->cond);
	push_free(ps);
}
