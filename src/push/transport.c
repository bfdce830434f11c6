/* Sending one profile to the store: an HTTP request through libcurl (opened at run time) with
 * its body read from memory or the spool, or an OTLP/gRPC request; and what the answer means:
 * sent, to try again, or refused. */
#include "push/push-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "output/otlp.h"
#include "profile/pprof-read.h"
#include "push/grpc.h"
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

int hs_push_curl_open(struct hs_error *err)
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
	return at && hs_push_now_ms() >= at;
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
enum sent hs_push_send_grpc(struct hs_push *ps, struct out *o, char *why, size_t whycap)
{
	uint8_t *gz = (uint8_t *)o->body, *msg = NULL;
	const char *headers[3];
	size_t n = 0, len = 0;
	long timeout = HS_PUSH_REQUEST_SECS * 1000L;
	uint64_t cut = __atomic_load_n(&ps->cut_at_ms, __ATOMIC_RELAXED), now = hs_push_now_ms();
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

enum sent hs_push_send_http(struct hs_push *ps, struct out *o, char *why, size_t whycap)
{
	CURL *c = curl.easy_init();
	struct hs_strbuf url = {0};
	struct answer answer = {0};
	struct curl_slist *headers = NULL;
	curl_mime *mime = NULL;
	curl_mimepart *part;
	char *name, key[96];
	long status = 0, timeout = HS_PUSH_REQUEST_SECS * 1000L;
	uint64_t cut = __atomic_load_n(&ps->cut_at_ms, __ATOMIC_RELAXED), now = hs_push_now_ms();
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
