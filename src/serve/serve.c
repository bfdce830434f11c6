/* The HTTP server of live views (serve.h): libmicrohttpd with a thread per connection, so that a
 * handler may wait in hs_view_next() for the seconds asked for, and a cache of what was rendered
 * per (snapshot, format), so that many clients of one page cost one render. */
#include "serve/serve.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "live/view.h"
#include "output/output.h"
#include "serve/listen.h"
#include "util/error.h"
#include "util/outfile.h"

/* libmicrohttpd, opened when a server starts rather than linked: GnuTLS and the eight libraries
 * below it cost every hotstack command (a recording's start among them) 1.2 ms of loading. */
static struct {
	__typeof__(&MHD_start_daemon) start_daemon;
	__typeof__(&MHD_quiesce_daemon) quiesce_daemon;
	__typeof__(&MHD_stop_daemon) stop_daemon;
	__typeof__(&MHD_create_response_from_buffer) create_response_from_buffer;
	__typeof__(&MHD_create_response_from_buffer_with_free_callback_cls) create_response_from_buffer_with_free;
	__typeof__(&MHD_add_response_header) add_response_header;
	__typeof__(&MHD_queue_response) queue_response;
	__typeof__(&MHD_destroy_response) destroy_response;
	__typeof__(&MHD_get_connection_info) get_connection_info;
	__typeof__(&MHD_get_connection_values_n) get_connection_values_n;
} mhd;

#define MHD_start_daemon (*mhd.start_daemon)
#define MHD_quiesce_daemon (*mhd.quiesce_daemon)
#define MHD_stop_daemon (*mhd.stop_daemon)
#define MHD_create_response_from_buffer (*mhd.create_response_from_buffer)
#define MHD_create_response_from_buffer_with_free_callback_cls (*mhd.create_response_from_buffer_with_free)
#define MHD_add_response_header (*mhd.add_response_header)
#define MHD_queue_response (*mhd.queue_response)
#define MHD_destroy_response (*mhd.destroy_response)
#define MHD_get_connection_info (*mhd.get_connection_info)
#define MHD_get_connection_values_n (*mhd.get_connection_values_n)

static int mhd_open(struct hs_error *err)
{
	static const char *const names[] = {"MHD_start_daemon",
					    "MHD_quiesce_daemon",
					    "MHD_stop_daemon",
					    "MHD_create_response_from_buffer",
					    "MHD_create_response_from_buffer_with_free_callback_cls",
					    "MHD_add_response_header",
					    "MHD_queue_response",
					    "MHD_destroy_response",
					    "MHD_get_connection_info",
					    "MHD_get_connection_values_n"};
	_Static_assert(sizeof(mhd) == sizeof(names) / sizeof(names[0]) * sizeof(void *), "one name per function");
	if (mhd.start_daemon)
		return 0;
	return hs_dl_open("libmicrohttpd.so.12", "libmicrohttpd", names, (void **)&mhd, HS_ARRAY_SIZE(names), err);
}

/* Clients served at once; more are refused (closed at once). Each holds a thread of its own. */
#define MAX_CLIENTS 64
/* Seconds a connection may stay silent (a client sending its request or reading the answer
 * this slowly is let go) */
#define IDLE_TIMEOUT 15
/* The nice value of the server's threads: rendering yields to the recording */
#define SERVE_NICE 10
/* Renders kept: a few formats of the latest snapshots */
#define CACHE_SLOTS 8
#define DEFAULT_SECONDS 30 /* /debug/pprof/profile without ?seconds, as Go's */
#define DEFAULT_REFRESH 5
/* How long the end of a recording waits for the profiles of the next seconds it answered to be
 * sent: a scraper's last scrape is what there was, not a closed connection */
#define DRAIN_NS (5 * 1000000000ULL)

enum render { R_HTML, R_PPROF, R_FOLDED };

static const struct {
	const char *format; /* hs_formats[]'s name */
	const char *type;   /* Content-Type */
} renders[] = {
	[R_HTML] = {"html", "text/html; charset=utf-8"},
	[R_PPROF] = {"pprof", "application/octet-stream"},
	[R_FOLDED] = {"folded", "text/plain; charset=utf-8"},
};

/* A snapshot rendered in one format, shared by the responses that send it and the cache: the
 * last blob_put() frees it. */
struct blob {
	struct hs_serve *s;
	uint64_t seq;
	enum render kind;
	uint8_t *buf;
	size_t len;
	int err;       /* the writer's, once done */
	bool done;     /* rendered (or failed): buf and err are final */
	unsigned refs; /* under s->lock */
	uint64_t used; /* s->clock when last asked for */
};

struct hs_serve {
	struct MHD_Daemon *mhd;
	struct hs_view *view;
	/* a copy: the main thread may settle its own (the value to show) while clients read */
	struct hs_output_opts oo;
	unsigned refresh;
	char address[HS_LISTEN_NAME_MAX];
	pthread_mutex_t lock;
	pthread_cond_t rendered;
	struct blob *cache[CACHE_SLOTS];
	uint64_t clock;
	int fd;          /* the listening socket, closed after the daemon */
	unsigned taking; /* /debug/pprof/profile requests not yet sent (under lock) */
	pthread_cond_t sent;
};

/* A request's mark (MHD's con_cls) while it takes a profile of the next seconds */
static char taking_mark;

static void blob_put_locked(struct blob *b)
{
	if (--b->refs)
		return;
	free(b->buf);
	free(b);
}

/* MHD's free callback: a response that sent b is gone. */
static void blob_put(void *arg)
{
	struct blob *b = arg;
	struct hs_serve *s = b->s;

	pthread_mutex_lock(&s->lock);
	blob_put_locked(b);
	pthread_mutex_unlock(&s->lock);
}

/* What a snapshot covers, for the page: "12:30:00 to 12:34:56 (296.0 s)", local time */
static void span_of(const struct hs_snapshot *snap, char *buf, size_t cap)
{
	time_t from = (time_t)(snap->start_wall / 1000000000), to = (time_t)(snap->end_wall / 1000000000);
	char a[16], b[16];
	struct tm tm;

	strftime(a, sizeof(a), "%H:%M:%S", localtime_r(&from, &tm));
	strftime(b, sizeof(b), "%H:%M:%S", localtime_r(&to, &tm));
	snprintf(buf, cap, "%s to %s (%.1f s)", a, b, (double)(snap->end_wall - snap->start_wall) / 1e9);
}

static void render(struct hs_serve *s, const struct hs_snapshot *snap, struct blob *b)
{
	const struct hs_format *f = hs_format_from_name(renders[b->kind].format);
	struct hs_output_opts oo = s->oo;
	struct hs_outfile out;
	char span[64];

	if (b->kind == R_HTML) {
		oo.refresh = s->refresh;
		span_of(snap, span, sizeof(span));
		oo.subtitle = oo.subtitle ? oo.subtitle : span;
	}
	hs_outfile_open_mem(&out);
	b->err = f ? f->write(snap->p, &oo, &out) : -ENOSYS;
	b->buf = hs_outfile_take_mem(&out, &b->len);
}

/* The snapshot rendered as kind (a reference): from the cache, or rendered now by this thread
 * while others asking for the same wait for it. */
static struct blob *rendered(struct hs_serve *s, const struct hs_snapshot *snap, enum render kind)
{
	struct blob *b;
	size_t slot = 0;

	pthread_mutex_lock(&s->lock);
	s->clock++;
	for (size_t i = 0; i < CACHE_SLOTS; i++) {
		b = s->cache[i];
		if (b && b->seq == snap->seq && b->kind == kind) {
			b->refs++;
			b->used = s->clock;
			while (!b->done)
				pthread_cond_wait(&s->rendered, &s->lock);
			pthread_mutex_unlock(&s->lock);
			return b;
		}
		if (!b || (s->cache[slot] && b->used < s->cache[slot]->used))
			slot = i;
	}
	b = hs_xcalloc(1, sizeof(*b));
	*b = (struct blob){.s = s, .seq = snap->seq, .kind = kind, .refs = 2, .used = s->clock};
	if (s->cache[slot])
		blob_put_locked(s->cache[slot]);
	s->cache[slot] = b;
	pthread_mutex_unlock(&s->lock);

	render(s, snap, b);

	pthread_mutex_lock(&s->lock);
	b->done = true;
	/* a failure is answered to those who waited for it, and tried again by the next */
	if (b->err && s->cache[slot] == b) {
		s->cache[slot] = NULL;
		blob_put_locked(b);
	}
	pthread_cond_broadcast(&s->rendered);
	pthread_mutex_unlock(&s->lock);
	return b;
}

static enum MHD_Result queue(struct MHD_Connection *c, unsigned status, struct MHD_Response *r)
{
	enum MHD_Result ret;

	if (!r)
		return MHD_NO; /* out of memory: the connection is closed */
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	/* every answer is of a moment of a recording that goes on */
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* A one-line text answer, as Go's net/http/pprof gives its errors (pprof: its header too). */
static enum MHD_Result answer_text(struct MHD_Connection *c, unsigned status, bool pprof, const char *fmt, ...)
	HS_PRINTF(4, 5);

static enum MHD_Result answer_text(struct MHD_Connection *c, unsigned status, bool pprof, const char *fmt, ...)
{
	struct MHD_Response *r;
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	n = HS_MIN(n < 0 ? 0 : n, (int)sizeof(line) - 2);
	line[n++] = '\n';
	r = MHD_create_response_from_buffer((size_t)n, line, MHD_RESPMEM_MUST_COPY);
	if (r) {
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
		if (pprof)
			MHD_add_response_header(r, "X-Go-Pprof", "1");
		if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
			MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	}
	return queue(c, status, r);
}

/* Answers with snap rendered as kind; takes over the reference to snap. */
static enum MHD_Result answer_profile(struct hs_serve *s, struct MHD_Connection *c, struct hs_snapshot *snap,
				      enum render kind, const char *attachment)
{
	struct blob *b = rendered(s, snap, kind);
	struct MHD_Response *r;
	char disposition[64];

	hs_snapshot_put(snap);
	if (b->err) {
		int err = b->err;
		blob_put(b);
		return answer_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, kind == R_PPROF, "cannot write the %s: %s",
				   renders[kind].format, strerror(-err));
	}
	r = MHD_create_response_from_buffer_with_free_callback_cls(b->len, b->buf, blob_put, b);
	if (!r) {
		blob_put(b);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, renders[kind].type);
	if (attachment) {
		snprintf(disposition, sizeof(disposition), "attachment; filename=\"%s\"", attachment);
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION, disposition);
	}
	return queue(c, MHD_HTTP_OK, r);
}

static enum MHD_Result answer_view(struct hs_serve *s, struct MHD_Connection *c, enum hs_view_kind which,
				   enum render kind, const char *attachment)
{
	struct hs_snapshot *snap = hs_view_get(s->view, which);

	if (!snap)
		return answer_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, false,
				   "no profile yet: the recording has not made one");
	return answer_profile(s, c, snap, kind, attachment);
}

/* Whether the client of c hung up while its profile is being taken: it holds a connection and
 * a place among the readers that wait, for up to an hour, else */
static bool client_gone(void *ctx)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(ctx, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct pollfd p;

	if (!ci)
		return false;
	p = (struct pollfd){.fd = ci->connect_fd, .events = POLLRDHUP};
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* The value of ?seconds=: the first one given, each one checked. Values come decoded, with
 * their sizes: "%00" is a byte of the value, not its end. */
struct seconds_arg {
	unsigned long seconds; /* DEFAULT_SECONDS when none is given */
	bool seen, bad;
	char shown[48]; /* the first bad one, for the answer: printable, cut */
};

static bool whole_seconds(const char *v, size_t len, unsigned long *ret)
{
	char buf[16];

	if (!v || !len || len > 10 || strspn(v, "0123456789") < len)
		return false;
	memcpy(buf, v, len);
	buf[len] = '\0';
	*ret = strtoul(buf, NULL, 10);
	return *ret >= 1 && *ret <= HS_VIEW_MAX_SECONDS;
}

static enum MHD_Result seconds_of(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
				  const char *value, size_t value_size)
{
	struct seconds_arg *a = cls;
	unsigned long n = 0;

	if (key_size != 7 || memcmp(key, "seconds", 7))
		return MHD_YES;
	if (!whole_seconds(value, value_size, &n) && !a->bad) {
		size_t k = 0;
		a->bad = true;
		/* one line, whatever the value decodes to */
		for (size_t i = 0; value && i < value_size && k + 4 < sizeof(a->shown); i++)
			a->shown[k++] = value[i] >= 0x20 && value[i] < 0x7f ? value[i] : '?';
		if (value && value_size > sizeof(a->shown) - 4)
			memcpy(a->shown + k, "...", 3), k += 3;
		a->shown[k] = '\0';
	}
	if (!a->seen)
		a->seconds = n;
	a->seen = true;
	return MHD_YES;
}

/* /debug/pprof/profile?seconds=N: Go's net/http/pprof CPU profile, what go tool pprof and
 * Pyroscope's pull mode ask for. Go takes a bad value for 30; a value that is no whole number
 * of seconds we can serve (empty, a NUL in it, out of range, any of several given) is said
 * instead, as Go says a duration over its server's write timeout. */
static enum MHD_Result answer_next(struct hs_serve *s, struct MHD_Connection *c, void **mark)
{
	struct seconds_arg arg = {DEFAULT_SECONDS, false, false, ""};
	struct hs_snapshot *snap;
	const char *why = NULL;

	MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, seconds_of, &arg);
	if (arg.bad)
		return answer_text(c, MHD_HTTP_BAD_REQUEST, true,
				   "invalid seconds '%s': a whole number from 1 to %u expected", arg.shown,
				   HS_VIEW_MAX_SECONDS);
	pthread_mutex_lock(&s->lock);
	s->taking++;
	pthread_mutex_unlock(&s->lock);
	*mark = &taking_mark; /* until on_completed() */
	snap = hs_view_next(s->view, (unsigned)arg.seconds, &why, client_gone, c);
	if (!snap && why && !strcmp(why, "busy"))
		return answer_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, true,
				   "too many profiles being taken at once: try again later");
	if (!snap && why && !strcmp(why, "range"))
		return answer_text(c, MHD_HTTP_BAD_REQUEST, true, "profile duration out of range");
	if (!snap && why && !strcmp(why, "gone"))
		return MHD_NO; /* nobody to answer */
	if (!snap)
		return answer_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, true, "the recording has ended");
	return answer_profile(s, c, snap, R_PPROF, "profile");
}

static const char pprof_index[] =
	"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>/debug/pprof/</title></head>"
	"<body>\n<p>hotstack: profiles of the recording, in Go's net/http/pprof protocol.</p>\n<ul>\n"
	"<li><a href=\"profile?seconds=30\">profile</a>: the CPU profile of the next seconds (?seconds=N, default "
	"30)</li>\n</ul>\n<p><a href=\"/\">The flame graph</a>, <a href=\"/profile.pb.gz\">everything so far</a> "
	"(pprof), <a href=\"/folded\">as folded stacks</a>.</p>\n</body></html>\n";

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	struct hs_serve *s = cls;

	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return answer_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, false, "method not allowed: GET and HEAD only");
	if (!strcmp(url, "/"))
		return answer_view(s, c, HS_VIEW_WINDOW, R_HTML, NULL);
	if (!strcmp(url, "/debug/pprof/profile"))
		return answer_next(s, c, con_cls);
	if (!strcmp(url, "/profile.pb.gz"))
		return answer_view(s, c, HS_VIEW_ALL, R_PPROF, "profile.pb.gz");
	if (!strcmp(url, "/folded"))
		return answer_view(s, c, HS_VIEW_ALL, R_FOLDED, NULL);
	if (!strcmp(url, "/debug/pprof")) { /* as Go's mux sends it on */
		struct MHD_Response *r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
		if (r)
			MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, "/debug/pprof/");
		return queue(c, MHD_HTTP_MOVED_PERMANENTLY, r);
	}
	if (!strcmp(url, "/debug/pprof/")) {
		struct MHD_Response *r = MHD_create_response_from_buffer(sizeof(pprof_index) - 1, (void *)pprof_index,
									 MHD_RESPMEM_PERSISTENT);
		if (r)
			MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/html; charset=utf-8");
		return queue(c, MHD_HTTP_OK, r);
	}
	/* Go's words, as a Go server of the same protocol says them */
	return answer_text(c, MHD_HTTP_NOT_FOUND, false, "404 page not found");
}

/* MHD's notice that a request is over: its answer sent, or its connection gone */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode why)
{
	struct hs_serve *s = cls;

	if (*con_cls != &taking_mark)
		return;
	*con_cls = NULL;
	pthread_mutex_lock(&s->lock);
	s->taking--;
	pthread_cond_broadcast(&s->sent);
	pthread_mutex_unlock(&s->lock);
}

struct starter {
	struct hs_serve *s;
	int fd;
	struct MHD_Daemon *mhd;
};

/* Starts the daemon on a thread of lower priority: Linux keeps the nice value per thread and a
 * new thread takes its creator's, so the daemon's polling thread made here, and the thread it
 * makes for each connection, all render at SERVE_NICE and yield to the recording. */
static void *start_main(void *arg)
{
	struct starter *st = arg;

	setpriority(PRIO_PROCESS, (id_t)gettid(), SERVE_NICE);
	/* poll, not select: the recording has an fd per CPU and ring, and may pass FD_SETSIZE */
	/* ITC: the end stops the listening first (MHD_quiesce_daemon()), then lets answers go */
	st->mhd = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC, 0, NULL,
				   NULL, on_request, st->s, MHD_OPTION_LISTEN_SOCKET, st->fd, MHD_OPTION_CONNECTION_LIMIT,
				   (unsigned)MAX_CLIENTS, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT,
				   MHD_OPTION_NOTIFY_COMPLETED, on_completed, st->s, MHD_OPTION_END);
	return NULL;
}

int hs_serve_start(struct hs_serve **ret, const struct hs_serve_opts *o, struct hs_error *err)
{
	struct sockaddr_storage sa;
	struct starter st = {0};
	pthread_t t;
	socklen_t len;
	const char *why = hs_listen_parse(o->listen, &sa, &len);
	struct hs_serve *s;
	pthread_condattr_t ca;
	int rc, mine;

	if (why)
		return hs_error_set(err, -EINVAL, "invalid address '%s': %s", o->listen, why);
	if ((rc = mhd_open(err)))
		return rc;
	rc = hs_listen_open(&sa, len, &st.fd);
	if (rc)
		return hs_error_set(err, rc, "cannot listen on %s: %s", o->listen, strerror(-rc));
	s = hs_xcalloc(1, sizeof(*s));
	s->view = o->view;
	if (o->oo)
		s->oo = *o->oo;
	s->refresh = o->refresh ? o->refresh : DEFAULT_REFRESH;
	hs_listen_name(st.fd, s->address, sizeof(s->address));
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->rendered, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->sent, &ca);
	pthread_condattr_destroy(&ca);
	s->fd = -1;
	st.s = s;
	/* the daemon gets a copy of its own: it may close it where it fails to start, and ours is
	 * closed here in every case, never twice */
	mine = st.fd;
	st.fd = fcntl(mine, F_DUPFD_CLOEXEC, 0);
	rc = st.fd < 0 ? errno : pthread_create(&t, NULL, start_main, &st);
	if (rc == 0)
		pthread_join(t, NULL);
	close(mine);
	if (!st.mhd) {
		hs_serve_stop(s);
		return hs_error_set(err, rc ? -rc : -ENOMEM, "cannot start the server on %s", o->listen);
	}
	s->mhd = st.mhd;
	*ret = s;
	return 0;
}

const char *hs_serve_address(const struct hs_serve *s)
{
	return s->address;
}

/* No more clients, and the profiles of the next seconds already answered (hs_view_end()) sent,
 * for up to DRAIN_NS */
static void drain(struct hs_serve *s)
{
	struct timespec until;
	uint64_t at = hs_now_ns() + DRAIN_NS;
	int rc = 0;

	/* quiesced, the listening socket is ours to close after the daemon stops; else its own */
	s->fd = MHD_quiesce_daemon(s->mhd);
	until.tv_sec = (time_t)(at / 1000000000ULL);
	until.tv_nsec = (long)(at % 1000000000ULL);
	pthread_mutex_lock(&s->lock);
	while (s->taking && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&s->sent, &s->lock, &until);
	pthread_mutex_unlock(&s->lock);
}

void hs_serve_stop(struct hs_serve *s)
{
	if (!s)
		return;
	/* joins every connection's thread: their responses (and the blobs they hold) are gone
	 * after it; it closes the listening socket too */
	if (s->mhd) {
		drain(s);
		MHD_stop_daemon(s->mhd);
		if (s->fd >= 0)
			close(s->fd);
	}
	for (size_t i = 0; i < CACHE_SLOTS; i++)
		if (s->cache[i])
			blob_put_locked(s->cache[i]);
	pthread_cond_destroy(&s->rendered);
	pthread_cond_destroy(&s->sent);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
