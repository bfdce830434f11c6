/* Profiles sent to a profile store: see push.h. */
#include "push/push.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "output/otlp.h"
#include "output/writers.h"
#include "profile/filter.h"
#include "profile/pprof-read.h"
#include "push/grpc.h"
#include "push/labels.h"
#include "push/service.h"
#include "push/spool.h"
#include "util/error.h"
#include "util/strbuf.h"

/* libcurl, opened when a push starts rather than linked: the libraries it brings (TLS, HTTP/2,
 * LDAP, Kerberos...) would cost every hotstack command their loading. */
static struct {
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_cleanup)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	char *(*easy_escape)(CURL *, const char *, int);
	void (*free)(void *);
	curl_mime *(*mime_init)(CURL *);
	curl_mimepart *(*mime_addpart)(curl_mime *);
	CURLcode (*mime_name)(curl_mimepart *, const char *);
	CURLcode (*mime_filename)(curl_mimepart *, const char *);
	CURLcode (*mime_type)(curl_mimepart *, const char *);
	CURLcode (*mime_data)(curl_mimepart *, const char *, size_t);
	CURLcode (*mime_data_cb)(curl_mimepart *, curl_off_t, curl_read_callback, curl_seek_callback,
				 curl_free_callback, void *);
	void (*mime_free)(curl_mime *);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
} curl;

static int curl_open(struct hs_error *err)
{
	static const char *const names[] = {"curl_global_init",   "curl_easy_init",    "curl_easy_setopt",
					    "curl_easy_perform",  "curl_easy_getinfo", "curl_easy_cleanup",
					    "curl_easy_strerror", "curl_easy_escape",  "curl_free",
					    "curl_mime_init",     "curl_mime_addpart", "curl_mime_name",
					    "curl_mime_filename", "curl_mime_type",    "curl_mime_data",
					    "curl_mime_data_cb",  "curl_mime_free",    "curl_slist_append",
					    "curl_slist_free_all"};
	int rc;

	_Static_assert(sizeof(curl) == sizeof(names) / sizeof(names[0]) * sizeof(void *), "one name per function");
	if (curl.global_init)
		return 0;
	if ((rc = hs_dl_open("libcurl.so.4", "libcurl", names, (void **)&curl, HS_ARRAY_SIZE(names), err)))
		return rc;
	if (curl.global_init(CURL_GLOBAL_DEFAULT))
		return hs_error_set(err, -ENOMEM, "cannot start libcurl");
	return 0;
}

/* The protocols a store speaks, by the URL's scheme */
enum proto {
	PROTO_INGEST, /* http(s)://: Pyroscope's POST /ingest, a pprof per series */
	PROTO_OTLP,   /* otlp+http(s)://: OTLP/HTTP, an ExportProfilesServiceRequest per period */
	PROTO_PUSH,   /* pyroscope+http(s)://: Pyroscope's push.v1 PusherService/Push (Connect), a
	               * PushRequest per series */
	PROTO_OTLP_GRPC, /* otlp://: OTLP/gRPC, the same requests as PROTO_OTLP's (and spooled alike) */
};
static const enum hs_spool_kind spool_kind[] = {HS_SPOOL_INGEST, HS_SPOOL_OTLP, HS_SPOOL_PUSH, HS_SPOOL_OTLP};
#define PUSH_PATH "/push.v1.PusherService/Push"
/* the series name an OTLP request is queued and spooled under: it holds every service */
#define OTLP_SERIES "otlp"

#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 60000
#define WHY_MAX 200 /* of the store's answer, in a message */

/* A profile waiting in memory: without a spool, or one the spool could not take */
struct item {
	struct item *next;
	char *name;              /* the series: SERVICE{labels} */
	int64_t from, until;     /* ns since the epoch */
	uint8_t *body;           /* pprof, gzipped */
	size_t len;
};

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

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

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

/* ---- sending ---- */

/* A profile on its way: its series, its period, and its body in memory or in a spool file */
struct out {
	const char *name;
	int64_t from, until;
	const uint8_t *body;
	int fd;
	uint64_t off, len, pos;
};

static size_t body_read(char *buf, size_t size, size_t n, void *arg)
{
	struct out *o = arg;
	size_t want = (size_t)HS_MIN((uint64_t)(size * n), o->len - o->pos);
	ssize_t k;

	if (!want)
		return 0;
	if (o->body) {
		memcpy(buf, o->body + o->pos, want);
		o->pos += want;
		return want;
	}
	do
		k = pread(o->fd, buf, want, (off_t)(o->off + o->pos));
	while (k < 0 && errno == EINTR);
	if (k <= 0) /* a file cut short under us: the request fails, the profile is tried again */
		return CURL_READFUNC_ABORT;
	o->pos += (uint64_t)k;
	return (size_t)k;
}

/* a redirect or an authentication sends the body again */
static int body_seek(void *arg, curl_off_t offset, int origin)
{
	struct out *o = arg;

	if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > o->len)
		return CURL_SEEKFUNC_CANTSEEK;
	o->pos = (uint64_t)offset;
	return CURL_SEEKFUNC_OK;
}

struct answer {
	struct hs_strbuf text; /* its start, for a message */
	uint64_t bytes;
};

/* An answer past HS_PUSH_ANSWER_BYTES ends the request: its status has come */
static size_t on_answer(char *ptr, size_t size, size_t n, void *ctx)
{
	struct answer *a = ctx;

	if (a->text.len < WHY_MAX)
		hs_strbuf_add(&a->text, ptr, HS_MIN(size * n, WHY_MAX - a->text.len));
	a->bytes += size * n;
	return a->bytes > HS_PUSH_ANSWER_BYTES ? 0 : size * n;
}

/* Cuts a request under way once the end's time is up */
static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	uint64_t at = __atomic_load_n(&((struct hs_push *)ctx)->cut_at_ms, __ATOMIC_RELAXED);

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return at && now_ms() >= at;
}

/* The same for every sending of one profile (FNV-1a of its series, and its start): what a
 * store that honours Idempotency-Key needs to take a resend once */
static void idempotency_key(const struct out *o, char *buf, size_t cap)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (const char *c = o->name; *c; c++)
		h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
	snprintf(buf, cap, "Idempotency-Key: \"hotstack-%lld-%016llx\"", (long long)o->from, (unsigned long long)h);
}

enum sent { SENT, RETRY, REFUSED };

static enum sent judge(long status)
{
	if (status >= 200 && status < 300)
		return SENT;
	/* a redirect not followed (no Location, too many), a time-out, busy: the store is asked
	 * again later; only its refusal drops a profile */
	return status < 400 || status == 408 || status == 429 || status >= 500 ? RETRY : REFUSED;
}

/* An OTLP request over gRPC: its body (gzipped, in memory or in the spool) inflated, and the
 * credentials as metadata */
static enum sent send_grpc(struct hs_push *ps, struct out *o, char *why, size_t whycap)
{
	uint8_t *gz = (uint8_t *)o->body, *msg = NULL;
	const char *headers[3];
	size_t n = 0, len = 0;
	long timeout = HS_PUSH_REQUEST_SECS * 1000L;
	uint64_t cut = __atomic_load_n(&ps->cut_at_ms, __ATOMIC_RELAXED), now = now_ms();
	enum hs_grpc_result r;

	if (cut)
		timeout = HS_MAX(1L, HS_MIN(timeout, (long)(cut - HS_MIN(cut, now))));
	if (!gz) {
		gz = hs_xmalloc(o->len ? o->len : 1);
		o->pos = 0;
		if (body_read((char *)gz, 1, o->len, o) != o->len) {
			free(gz);
			snprintf(why, whycap, "cannot read the spooled profile");
			return RETRY;
		}
	}
	if (hs_gunzip(gz, o->len, &msg, &len, NULL)) {
		if (gz != o->body)
			free(gz);
		snprintf(why, whycap, "the profile is not gzip");
		return REFUSED;
	}
	if (gz != o->body)
		free(gz);
	if (ps->auth_header)
		headers[n++] = ps->auth_header;
	if (ps->tenant_header)
		headers[n++] = ps->tenant_header;
	r = hs_grpc_export(ps->url, ps->tls, msg, len, headers, n, timeout, why, whycap);
	free(msg);
	return r == HS_GRPC_OK ? SENT : r == HS_GRPC_RETRY ? RETRY : REFUSED;
}

static enum sent send_one(struct hs_push *ps, struct out *o, char *why, size_t whycap)
{
	CURL *c = curl.easy_init();
	struct hs_strbuf url = {0};
	struct answer answer = {0};
	struct curl_slist *headers = NULL;
	curl_mime *mime = NULL;
	curl_mimepart *part;
	char *name, key[96];
	long status = 0, timeout = HS_PUSH_REQUEST_SECS * 1000L;
	uint64_t cut = __atomic_load_n(&ps->cut_at_ms, __ATOMIC_RELAXED), now = now_ms();
	enum sent r;
	CURLcode rc;

	if (!c) {
		snprintf(why, whycap, "cannot start an HTTP request");
		return RETRY;
	}
	if (cut)
		timeout = HS_MAX(1L, HS_MIN(timeout, (long)(cut - HS_MIN(cut, now))));
	idempotency_key(o, key, sizeof(key));
	headers = curl.slist_append(headers, key);
	if (ps->auth_header)
		headers = curl.slist_append(headers, ps->auth_header);
	if (ps->tenant_header)
		headers = curl.slist_append(headers, ps->tenant_header);
	if (ps->proto == PROTO_INGEST) {
		/* from and until in seconds, both rounded down: periods that share an end share it */
		name = curl.easy_escape(c, o->name, 0);
		hs_strbuf_addf(&url, "%s%cname=%s&from=%lld&until=%lld&format=pprof&sampleRate=%u&spyName=hotstack",
			       ps->url, strchr(ps->url, '?') ? '&' : '?', name, (long long)(o->from / 1000000000),
			       (long long)(o->until / 1000000000), ps->o.sample_rate);
		curl.free(name);
		mime = curl.mime_init(c);
		part = curl.mime_addpart(mime);
		curl.mime_name(part, "profile");
		curl.mime_filename(part, "profile.pprof");
		curl.mime_type(part, "application/octet-stream");
		if (o->body)
			curl.mime_data(part, (const char *)o->body, o->len);
		else
			curl.mime_data_cb(part, (curl_off_t)o->len, body_read, body_seek, NULL, o);
		curl.easy_setopt(c, CURLOPT_MIMEPOST, mime);
	} else {
		hs_strbuf_adds(&url, ps->url);
		if (ps->proto == PROTO_OTLP) {
			headers = curl.slist_append(headers, "Content-Type: application/x-protobuf");
			headers = curl.slist_append(headers, "Content-Encoding: gzip");
			headers = curl.slist_append(headers, "OTLP-Profiles-Development-Version: " HS_OTLP_DEV_VERSION);
		} else { /* Connect's unary call: the message as the body */
			headers = curl.slist_append(headers, "Content-Type: application/proto");
			headers = curl.slist_append(headers, "Connect-Protocol-Version: 1");
		}
		headers = curl.slist_append(headers, "Expect:"); /* no 100-continue round trip */
		curl.easy_setopt(c, CURLOPT_POST, 1L);
		curl.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)o->len);
		curl.easy_setopt(c, CURLOPT_READFUNCTION, body_read);
		curl.easy_setopt(c, CURLOPT_READDATA, o);
		curl.easy_setopt(c, CURLOPT_SEEKFUNCTION, body_seek);
		curl.easy_setopt(c, CURLOPT_SEEKDATA, o);
	}
	curl.easy_setopt(c, CURLOPT_URL, hs_strbuf_str(&url));
	curl.easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	if (ps->userpwd) {
		curl.easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl.easy_setopt(c, CURLOPT_USERPWD, ps->userpwd);
	}
	curl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, HS_PUSH_CONNECT_SECS * 1000L);
	curl.easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl.easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)HS_PUSH_IDLE_SECS);
	curl.easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout);
	curl.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl.easy_setopt(c, CURLOPT_XFERINFODATA, ps);
	curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_answer);
	curl.easy_setopt(c, CURLOPT_WRITEDATA, &answer);
	curl.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	/* a store moved: followed, the POST kept (libcurl's rule sends no credentials to
	 * another host) */
	curl.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl.easy_setopt(c, CURLOPT_MAXREDIRS, (long)HS_PUSH_REDIRECTS);
	curl.easy_setopt(c, CURLOPT_POSTREDIR, (long)CURL_REDIR_POST_ALL);
	curl.easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	rc = curl.easy_perform(c);
	curl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl.mime_free(mime);
	curl.easy_cleanup(c);
	curl.slist_free_all(headers);
	hs_strbuf_release(&url);
	for (size_t i = 0; i < answer.text.len; i++) /* the store's answer, on one line */
		if ((unsigned char)answer.text.buf[i] < 0x20)
			answer.text.buf[i] = ' ';
	/* a status came: the store's word, whatever became of the rest of its answer */
	r = status ? judge(status) : RETRY;
	if (rc != CURLE_OK && r != SENT && !(rc == CURLE_WRITE_ERROR && status))
		snprintf(why, whycap, "%s%s", rc == CURLE_ABORTED_BY_CALLBACK ? "no time left: " : "",
			 curl.easy_strerror(rc));
	else
		snprintf(why, whycap, "HTTP %ld%s%s", status, answer.text.len ? ": " : "", hs_strbuf_str(&answer.text));
	hs_strbuf_release(&answer.text);
	return r;
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
	uint64_t until = now_ms() + ms;
	bool was_stopping = ps->stopping;
	struct timespec ts;

	if (ps->stopping)
		until = HS_MIN(until, ps->deadline_ms);
	while (now_ms() < until && ps->stopping == was_stopping && !(ps->stopping && now_ms() >= ps->deadline_ms)) {
		uint64_t left = until - HS_MIN(until, now_ms());
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
		if (ps->stopping && now_ms() >= ps->deadline_ms)
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
		res = ps->proto == PROTO_OTLP_GRPC ? send_grpc(ps, &o, why, sizeof(why)) : send_one(ps, &o, why, sizeof(why));
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

/* p as a gzipped pprof */
static uint8_t *pprof_body(const struct hs_profile *p, size_t *len)
{
	struct hs_outfile out;
	struct hs_output_opts oo = {0};

	hs_outfile_open_mem(&out);
	hs_write_pprof(p, &oo, &out);
	return hs_outfile_take_mem(&out, len);
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
static uint8_t *push_body(struct hs_push *ps, const char *service, const int32_t *pids, size_t npids,
			  const struct hs_profile *p, int64_t from, size_t *len)
{
	struct hs_labels l;
	struct hs_pb_buf b = {0};
	const char *kv[HS_LABELS_MAX + 2][2];
	char prom[HS_LABELS_MAX][128], id[40];
	size_t n = 0, pl, series, sample;
	uint8_t *pprof = pprof_body(p, &pl);
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
static int32_t *profile_pids(const struct hs_profile *p, size_t *n)
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
static uint8_t *otlp_body(struct hs_push *ps, const struct hs_profile *p, const struct hs_service_groups *g,
			  size_t *len)
{
	size_t n = g ? g->n : 1;
	struct hs_labels *l = hs_xcalloc(n, sizeof(*l));
	struct hs_otlp_resource *res = hs_xcalloc(n, sizeof(*res));
	struct hs_pb_buf b = {0};
	struct hs_outfile out;

	size_t nall = 0;
	int32_t *all = g ? NULL : profile_pids(p, &nall);

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

static char *series_name(const struct hs_push *ps, const char *service)
{
	struct hs_strbuf sb = {0};

	hs_strbuf_adds(&sb, service);
	hs_strbuf_addc(&sb, '{');
	for (size_t i = 0; i < ps->o.nlabels; i++)
		hs_strbuf_addf(&sb, "%s%s", i ? "," : "", ps->o.labels[i]);
	hs_strbuf_addc(&sb, '}');
	return hs_strbuf_detach(&sb);
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
		uint8_t *body = otlp_body(ps, p, ps->o.by_service ? &g : NULL, &len);
		enqueue(ps, hs_xstrdup(OTLP_SERIES), from_ns, until_ns, body, len);
	} else if (!ps->o.by_service) {
		size_t npids = 0;
		int32_t *pids = ps->proto == PROTO_PUSH ? profile_pids(p, &npids) : NULL;
		uint8_t *body = ps->proto == PROTO_PUSH ? push_body(ps, ps->o.service, pids, npids, p, from_ns, &len)
							: pprof_body(p, &len);
		free(pids);
		enqueue(ps, series_name(ps, ps->o.service), from_ns, until_ns, body, len);
	} else {
		for (size_t i = 0; i < g.n; i++) {
			struct hs_filter f = {0};
			struct hs_profile *q;
			f.pids.v = g.v[i].pids;
			f.pids.n = g.v[i].npids;
			if (hs_profile_filter(p, &f, &q))
				continue;
			uint8_t *body = ps->proto == PROTO_PUSH
						? push_body(ps, g.v[i].name, g.v[i].pids, g.v[i].npids, q, from_ns, &len)
						: pprof_body(q, &len);
			enqueue(ps, series_name(ps, g.v[i].name), from_ns, until_ns, body, len);
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
	if ((rc = ps->proto == PROTO_OTLP_GRPC ? hs_grpc_open(err) : curl_open(err)))
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
	ps->deadline_ms = now_ms() + (uint64_t)(ps->o.flush_secs * 1000);
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
