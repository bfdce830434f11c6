/* Profiles sent to a profile store: see push.h. */
#include "push/push.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "output/writers.h"
#include "profile/filter.h"
#include "push/service.h"
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
	void (*mime_free)(curl_mime *);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
} curl;

static int curl_open(struct hs_error *err)
{
	static const char *const names[] = {
		"curl_global_init", "curl_easy_init", "curl_easy_setopt", "curl_easy_perform", "curl_easy_getinfo",
		"curl_easy_cleanup", "curl_easy_strerror", "curl_easy_escape", "curl_free", "curl_mime_init",
		"curl_mime_addpart", "curl_mime_name", "curl_mime_filename", "curl_mime_type", "curl_mime_data",
		"curl_mime_free", "curl_slist_append", "curl_slist_free_all"};
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

#define SPOOL_MAGIC "HSPUSH1"
#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 60000

/* A profile waiting to be sent: in memory (body), or in the spool (path) */
struct item {
	struct item *next;
	char *name;              /* the series: SERVICE{labels} */
	int64_t from, until;     /* ns since the epoch */
	uint8_t *body;           /* pprof, gzipped */
	size_t len;
};

enum note_kind { NOTE_DOWN, NOTE_UP, NOTE_REFUSED, NOTE_DROPPED, NOTE_SPOOL, NOTE_KINDS };

struct hs_push {
	struct hs_push_opts o;
	char *url;                /* the ingest endpoint */
	struct curl_slist *headers;
	char *userpwd;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct item *head, *tail; /* memory queue, oldest first */
	uint64_t queued_bytes;
	bool stopping;            /* finish asked: send until deadline, then stop */
	uint64_t deadline_ms;
	bool down;                /* the last attempt failed */
	bool spool_pending;       /* the spool may hold profiles */
	struct hs_push_stats st;
	uint64_t spool_seq;
	/* notes: what happened, said once each */
	char *notes[NOTE_KINDS];
	bool noted[NOTE_KINDS];
	/* pid -> service name, of the last period's processes */
	struct hs_service_cache services;
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
	struct hs_strbuf sb = {0};
	char buf[512];
	va_list ap;

	if (ps->noted[k])
		return;
	ps->noted[k] = true;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	hs_strbuf_adds(&sb, buf);
	free(ps->notes[k]);
	ps->notes[k] = hs_strbuf_detach(&sb);
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

/* ---- the spool ---- */

static void item_free(struct item *it)
{
	if (!it)
		return;
	free(it->name);
	free(it->body);
	free(it);
}

/* the spool's files, oldest first (their names sort by time) */
static size_t spool_list(const struct hs_push *ps, char ***ret, uint64_t *bytes)
{
	DIR *d = opendir(ps->o.spool_dir);
	struct dirent *e;
	char **v = NULL;
	size_t n = 0;

	*bytes = 0;
	while (d && (e = readdir(d))) {
		struct stat st;
		char path[4096];
		size_t k = strlen(e->d_name);
		if (k < 6 || strcmp(e->d_name + k - 5, ".push") || e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", ps->o.spool_dir, e->d_name);
		if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		*bytes += (uint64_t)st.st_size;
		v = hs_xrealloc(v, (n + 1) * sizeof(*v));
		v[n++] = hs_xstrdup(path);
	}
	if (d)
		closedir(d);
	if (n > 1)
		qsort(v, n, sizeof(*v), (int (*)(const void *, const void *))strcmp);
	*ret = v;
	return n;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Writes it to the spool (room made by dropping the oldest files); false where it cannot. */
static bool spool_put(struct hs_push *ps, const struct item *it)
{
	uint64_t bytes, need = it->len + strlen(it->name) + 64, max = ps->o.spool_bytes;
	char path[4096], tmp[4200];
	char **v;
	size_t n = spool_list(ps, &v, &bytes), k = 0;
	FILE *f;
	int fd;
	bool ok;

	if (need > max) {
		free_list(v, n);
		return false;
	}
	for (; k < n && bytes + need > max; k++) {
		struct stat st;
		if (stat(v[k], &st) == 0 && unlink(v[k]) == 0) {
			bytes -= HS_MIN(bytes, (uint64_t)st.st_size);
			ps->st.dropped++;
		}
	}
	free_list(v, n);
	if (k)
		note(ps, NOTE_DROPPED, "the push spool is full: the oldest profiles waiting there are dropped");
	snprintf(path, sizeof(path), "%s/%020lld-%06llu.push", ps->o.spool_dir, (long long)it->from,
		 (unsigned long long)(ps->spool_seq++ % 1000000));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	fprintf(f, "%s %lld %lld %zu\n%s\n", SPOOL_MAGIC, (long long)it->from, (long long)it->until, strlen(it->name),
		it->name);
	ok = fwrite(it->body, 1, it->len, f) == it->len;
	ok = fflush(f) == 0 && fsync(fileno(f)) == 0 && ok;
	ok = fclose(f) == 0 && ok;
	if (ok && rename(tmp, path) == 0)
		return true;
	unlink(tmp);
	return false;
}

/* Reads a spooled profile (NULL for a file that is not one: it is removed) */
static struct item *spool_get(const char *path)
{
	struct item *it = hs_xcalloc(1, sizeof(*it));
	char magic[16];
	long long from, until;
	size_t namelen;
	long end;
	FILE *f = fopen(path, "re");

	if (!f || fscanf(f, "%15s %lld %lld %zu", magic, &from, &until, &namelen) != 4 || strcmp(magic, SPOOL_MAGIC) ||
	    namelen > 4096 || fgetc(f) != '\n')
		goto bad;
	it->name = hs_xcalloc(namelen + 1, 1);
	if (fread(it->name, 1, namelen, f) != namelen || fgetc(f) != '\n')
		goto bad;
	it->from = from;
	it->until = until;
	end = ftell(f);
	if (end < 0 || fseek(f, 0, SEEK_END) < 0 || ftell(f) < end || ftell(f) - end > (long)(1 << 30))
		goto bad;
	it->len = (size_t)(ftell(f) - end);
	it->body = hs_xmalloc(it->len ? it->len : 1);
	if (fseek(f, end, SEEK_SET) < 0 || fread(it->body, 1, it->len, f) != it->len)
		goto bad;
	fclose(f);
	return it;
bad:
	if (f)
		fclose(f);
	item_free(it);
	unlink(path);
	return NULL;
}

/* ---- sending ---- */

static size_t discard(char *ptr, size_t size, size_t n, void *ctx)
{
	struct hs_strbuf *sb = ctx;
	if (sb->len < 200)
		hs_strbuf_add(sb, ptr, HS_MIN(size * n, 200 - sb->len));
	return size * n;
}

enum sent { SENT, RETRY, REFUSED };

static enum sent send_one(struct hs_push *ps, const struct item *it, char *why, size_t whycap)
{
	CURL *c = curl.easy_init();
	struct hs_strbuf url = {0}, answer = {0};
	curl_mime *mime;
	curl_mimepart *part;
	char *name;
	long status = 0;
	CURLcode rc;

	if (!c) {
		snprintf(why, whycap, "cannot start an HTTP request");
		return RETRY;
	}
	name = curl.easy_escape(c, it->name, 0);
	hs_strbuf_addf(&url, "%s%cname=%s&from=%lld&until=%lld&format=pprof&sampleRate=%u&spyName=hotstack", ps->url,
		       strchr(ps->url, '?') ? '&' : '?', name, (long long)(it->from / 1000000000),
		       (long long)((it->until + 999999999) / 1000000000), ps->o.sample_rate);
	curl.free(name);
	mime = curl.mime_init(c);
	part = curl.mime_addpart(mime);
	curl.mime_name(part, "profile");
	curl.mime_filename(part, "profile.pprof");
	curl.mime_type(part, "application/octet-stream");
	curl.mime_data(part, (const char *)it->body, it->len);
	curl.easy_setopt(c, CURLOPT_URL, hs_strbuf_str(&url));
	curl.easy_setopt(c, CURLOPT_MIMEPOST, mime);
	curl.easy_setopt(c, CURLOPT_HTTPHEADER, ps->headers);
	if (ps->userpwd) {
		curl.easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl.easy_setopt(c, CURLOPT_USERPWD, ps->userpwd);
	}
	curl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	curl.easy_setopt(c, CURLOPT_TIMEOUT_MS, 30000L);
	curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl.easy_setopt(c, CURLOPT_WRITEDATA, &answer);
	curl.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	rc = curl.easy_perform(c);
	if (rc == CURLE_OK)
		curl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl.mime_free(mime);
	curl.easy_cleanup(c);
	hs_strbuf_release(&url);
	if (rc != CURLE_OK) {
		snprintf(why, whycap, "%s", curl.easy_strerror(rc));
		hs_strbuf_release(&answer);
		return RETRY;
	}
	for (size_t i = 0; i < answer.len; i++) /* the store's answer, on one line */
		if ((unsigned char)answer.buf[i] < 0x20)
			answer.buf[i] = ' ';
	snprintf(why, whycap, "HTTP %ld%s%s", status, answer.len ? ": " : "", hs_strbuf_str(&answer));
	hs_strbuf_release(&answer);
	if (status >= 200 && status < 300)
		return SENT;
	return status == 429 || status >= 500 || status < 200 ? RETRY : REFUSED;
}

/* The oldest profile waiting: the spool's first, else the memory queue's (taken off it). */
static struct item *next_item(struct hs_push *ps, char **spooled)
{
	*spooled = NULL;
	if (ps->spool_pending) {
		char **v;
		uint64_t bytes;
		size_t n = spool_list(ps, &v, &bytes);
		ps->spool_pending = n > 0;
		for (size_t i = 0; i < n; i++) {
			struct item *it = spool_get(v[i]);
			if (it) {
				*spooled = hs_xstrdup(v[i]);
				free_list(v, n);
				return it;
			}
		}
		free_list(v, n);
	}
	return ps->head;
}

static void *sender(void *arg)
{
	struct hs_push *ps = arg;
	uint64_t backoff = BACKOFF_MIN_MS;
	char why[256];

	pthread_mutex_lock(&ps->lock);
	for (;;) {
		char *spooled;
		struct item *it;
		enum sent r;

		while (!ps->stopping && !ps->head && !ps->spool_pending)
			pthread_cond_wait(&ps->cond, &ps->lock);
		if (ps->stopping && now_ms() >= ps->deadline_ms)
			break;
		it = next_item(ps, &spooled);
		if (!it) {
			if (ps->stopping)
				break;
			continue;
		}
		pthread_mutex_unlock(&ps->lock);
		r = send_one(ps, it, why, sizeof(why));
		pthread_mutex_lock(&ps->lock);
		if (r == RETRY) {
			struct timespec ts;
			uint64_t wait = backoff, until;
			ps->st.retries++;
			if (!ps->down)
				ps->noted[NOTE_UP] = false;
			if (!ps->down)
				note(ps, NOTE_DOWN, "cannot push to %s: %s; trying again, profiles queue meanwhile", ps->url, why);
			ps->down = true;
			if (spooled)
				item_free(it);
			free(spooled);
			backoff = HS_MIN(backoff * 2, BACKOFF_MAX_MS);
			until = now_ms() + wait;
			if (ps->stopping)
				until = HS_MIN(until, ps->deadline_ms);
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += (time_t)((until - HS_MIN(until, now_ms())) / 1000);
			ts.tv_nsec += (long)((until - HS_MIN(until, now_ms())) % 1000) * 1000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			/* woken early only by the end (stopping) */
			while (now_ms() < until && pthread_cond_timedwait(&ps->cond, &ps->lock, &ts) != ETIMEDOUT)
				if (ps->stopping && now_ms() >= ps->deadline_ms)
					break;
			continue;
		}
		backoff = BACKOFF_MIN_MS;
		if (ps->down && r == SENT) {
			ps->noted[NOTE_DOWN] = false;
			note(ps, NOTE_UP, "pushing to %s again", ps->url);
		}
		ps->down = false;
		if (r == SENT)
			ps->st.sent++;
		else {
			ps->st.refused++;
			note(ps, NOTE_REFUSED, "%s refused a profile (%s): dropped", ps->url, why);
		}
		if (spooled) {
			unlink(spooled);
			free(spooled);
			item_free(it);
		} else {
			ps->head = it->next;
			if (!ps->head)
				ps->tail = NULL;
			ps->queued_bytes -= it->len;
			item_free(it);
		}
	}
	pthread_mutex_unlock(&ps->lock);
	return NULL;
}

/* ---- queueing ---- */

/* Makes room for len more bytes in memory: the oldest profiles to the spool, or dropped */
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
		if (ps->o.spool_dir && spool_put(ps, victim)) {
			ps->spool_pending = true;
		} else {
			ps->st.dropped++;
			note(ps, NOTE_DROPPED, "the push queue is full (%llu MiB%s): the oldest profiles are dropped",
			     (unsigned long long)(ps->o.queue_bytes >> 20), ps->o.spool_dir ? ", and the spool" : "");
		}
		item_free(victim);
	}
}

static void enqueue(struct hs_push *ps, char *name, int64_t from, int64_t until, const struct hs_profile *p)
{
	struct hs_outfile out;
	struct hs_output_opts oo = {0};
	struct item *it = hs_xcalloc(1, sizeof(*it));

	hs_outfile_open_mem(&out);
	hs_write_pprof(p, &oo, &out);
	it->body = hs_outfile_take_mem(&out, &it->len);
	it->name = name;
	it->from = from;
	it->until = until;
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
	struct hs_service_groups g;

	if (!p->samples.n)
		return;
	if (!ps->o.by_service) {
		enqueue(ps, series_name(ps, ps->o.service), from_ns, until_ns, p);
		return;
	}
	hs_service_group(&ps->services, p, &g);
	for (size_t i = 0; i < g.n; i++) {
		struct hs_filter f = {0};
		struct hs_profile *q;
		f.pids.v = g.v[i].pids;
		f.pids.n = g.v[i].npids;
		if (!hs_profile_filter(p, &f, &q)) {
			enqueue(ps, series_name(ps, g.v[i].name), from_ns, until_ns, q);
			hs_profile_free(q);
		}
	}
	hs_service_groups_release(&g);
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

static int check_url(const char *url, char **ret, struct hs_error *err)
{
	const char *rest;
	struct hs_strbuf sb = {0};

	if (!strncmp(url, "http://", 7))
		rest = url + 7;
	else if (!strncmp(url, "https://", 8))
		rest = url + 8;
	else
		return hs_error_set(err, -EINVAL, "'%s' is not an http:// or https:// URL", url);
	if (!*rest || *rest == '/' || strpbrk(url, " \t\n\"<>\\^`{|}"))
		return hs_error_set(err, -EINVAL, "'%s' is not a URL with a host", url);
	hs_strbuf_adds(&sb, url);
	/* the store's address alone: its ingest endpoint */
	if (!strchr(rest, '/'))
		hs_strbuf_adds(&sb, "/ingest");
	else if (rest[strlen(rest) - 1] == '/')
		hs_strbuf_adds(&sb, "ingest");
	*ret = hs_strbuf_detach(&sb);
	return 0;
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
	if ((rc = check_url(o->url, &ps->url, err)))
		goto fail;
	if (token && *token && user && *user) {
		rc = hs_error_set(err, -EINVAL, "HOTSTACK_PUSH_TOKEN and HOTSTACK_PUSH_USER are both set: one of them");
		goto fail;
	}
	if (user && *user && !pass) {
		rc = hs_error_set(err, -EINVAL, "HOTSTACK_PUSH_USER is set without HOTSTACK_PUSH_PASSWORD");
		goto fail;
	}
	if (o->spool_dir && mkdir(o->spool_dir, 0700) < 0 && errno != EEXIST) {
		rc = hs_error_set(err, -errno, "cannot make the push spool '%s': %s", o->spool_dir, strerror(errno));
		goto fail;
	}
	if (o->spool_dir && access(o->spool_dir, W_OK | X_OK) < 0) {
		rc = hs_error_set(err, -errno, "cannot write the push spool '%s': %s", o->spool_dir, strerror(errno));
		goto fail;
	}
	if ((rc = curl_open(err)))
		goto fail;
	if (token && *token) {
		hs_strbuf_addf(&sb, "Authorization: Bearer %s", token);
		ps->headers = curl.slist_append(ps->headers, hs_strbuf_str(&sb));
	}
	if (tenant && *tenant) {
		hs_strbuf_reset(&sb);
		hs_strbuf_addf(&sb, "X-Scope-OrgID: %s", tenant);
		ps->headers = curl.slist_append(ps->headers, hs_strbuf_str(&sb));
	}
	hs_strbuf_release(&sb);
	if (user && *user) {
		hs_strbuf_addf(&sb, "%s:%s", user, pass);
		ps->userpwd = hs_strbuf_detach(&sb);
	}
	if (o->spool_dir) {
		char **v;
		uint64_t bytes;
		ps->st.from_spool = spool_list(ps, &v, &bytes);
		free_list(v, ps->st.from_spool);
		ps->spool_pending = ps->st.from_spool > 0;
	}
	pthread_mutex_init(&ps->lock, NULL);
	pthread_cond_init(&ps->cond, NULL);
	if ((rc = pthread_create(&ps->thread, NULL, sender, ps))) {
		rc = hs_error_set(err, -rc, "cannot start the push thread: %s", strerror(rc));
		goto fail;
	}
	*ret = ps;
	return 0;
fail:
	free((char *)ps->o.service);
	free(ps->url);
	free(ps);
	return rc;
}

void hs_push_finish(struct hs_push *ps, struct hs_push_stats *st)
{
	struct item *it;

	pthread_mutex_lock(&ps->lock);
	ps->stopping = true;
	ps->deadline_ms = now_ms() + (uint64_t)(ps->o.flush_secs * 1000);
	pthread_cond_broadcast(&ps->cond);
	pthread_mutex_unlock(&ps->lock);
	pthread_join(ps->thread, NULL);
	while ((it = ps->head)) {
		ps->head = it->next;
		if (ps->o.spool_dir && spool_put(ps, it))
			ps->st.spooled++;
		else
			ps->st.dropped++;
		item_free(it);
	}
	if (ps->o.spool_dir) {
		char **v;
		uint64_t bytes;
		size_t n = spool_list(ps, &v, &bytes);
		free_list(v, n);
		ps->st.spooled = n;
	}
	*st = ps->st;
	for (int k = 0; k < NOTE_KINDS; k++)
		free(ps->notes[k]);
	hs_service_cache_release(&ps->services);
	curl.slist_free_all(ps->headers);
	free(ps->userpwd);
	free((char *)ps->o.service);
	free(ps->url);
	pthread_mutex_destroy(&ps->lock);
	pthread_cond_destroy(&ps->cond);
	free(ps);
}
