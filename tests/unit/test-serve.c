/* Unit tests of the live views' HTTP server (src/serve/): --serve's addresses, checked and bound
 * (the real port of port 0 named), and the answers of a server of a view whose recording has
 * ended, asked over a socket: the pages, the errors of Go's pprof protocol, 404 and 405. A
 * recording served while it runs is tested end to end (tests/e2e/serve.sh). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "live/view.h"
#include "output/output.h"
#include "serve/serve.h"
#include "util/error.h"

static void test_check(void **state)
{
	static const char *const good[] =
		{"0",          "8080",   "65535",          "127.0.0.1:8080", "0.0.0.0:0", "localhost:9000",
		 "[::1]:8080", "[::]:1", "[fe80::1]:65535"};
	static const char *const bad[] = {"",
					  "65536",
					  "-1",
					  "+80",
					  " 80",
					  "80 ",
					  "http",
					  "1.2.3.4",
					  "1.2.3.4:",
					  ":8080",
					  "1.2.3.256:80",
					  "example.com:80",
					  "::1:8080",
					  "[::1]",
					  "[::1]8080",
					  "[::1:8080",
					  "[1.2.3.4]:80",
					  "[::1]:99999",
					  "127.0.0.1:123456"};
	(void)state;

	for (size_t i = 0; i < HS_ARRAY_SIZE(good); i++)
		if (hs_serve_check(good[i]))
			fail_msg("'%s' refused: %s", good[i], hs_serve_check(good[i]));
	for (size_t i = 0; i < HS_ARRAY_SIZE(bad); i++)
		if (!hs_serve_check(bad[i]))
			fail_msg("'%s' taken", bad[i]);
	assert_non_null(strstr(hs_serve_check("::1:8080"), "brackets"));
	assert_non_null(strstr(hs_serve_check("70000"), "65535"));
}

/* The port of "ADDR:PORT" (or "[ADDR]:PORT"), after checking ADDR. */
static unsigned port_of(const char *address, const char *want_host)
{
	const char *colon = strrchr(address, ':');

	assert_non_null(colon);
	assert_int_equal((size_t)(colon - address), strlen(want_host));
	assert_memory_equal(address, want_host, strlen(want_host));
	return (unsigned)atoi(colon + 1);
}

/* Sends request to 127.0.0.1:port and reads the answer (into buf, NUL-terminated). Returns the
 * status. */
static int http(unsigned port, const char *request, char *buf, size_t size)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), status = 0;
	size_t len = 0;
	ssize_t n;

	assert_true(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(write(fd, request, strlen(request)), (ssize_t)strlen(request));
	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = 0;
	close(fd);
	assert_int_equal(sscanf(buf, "HTTP/1.1 %d", &status), 1);
	return status;
}

static int get(unsigned port, const char *path, char *buf, size_t size)
{
	char req[256];

	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path);
	return http(port, req, buf, size);
}

static void test_listen(void **state)
{
	struct hs_view *v = hs_view_new(&(struct hs_view_opts){0});
	struct hs_serve_opts o = {.listen = "0", .view = v};
	struct hs_serve *s, *s2 = NULL, *s6;
	struct hs_error err = {0};
	char taken[32];
	unsigned port;
	(void)state;

	/* port 0: one is chosen, and named; on 127.0.0.1 when no address is given */
	assert_int_equal(hs_serve_start(&s, &o, &err), 0);
	port = port_of(hs_serve_address(s), "127.0.0.1");
	assert_true(port > 0 && port < 65536);
	/* a port in use is an error that says so */
	snprintf(taken, sizeof(taken), "127.0.0.1:%u", port);
	o.listen = taken;
	assert_int_equal(hs_serve_start(&s2, &o, &err), -EADDRINUSE);
	assert_null(s2);
	assert_non_null(strstr(err.detail, taken));
	err = (struct hs_error){0};
	o.listen = "1.2.3.4:x";
	assert_int_equal(hs_serve_start(&s2, &o, &err), -EINVAL);
	/* IPv6, where the machine has it */
	o.listen = "[::1]:0";
	err = (struct hs_error){0};
	if (hs_serve_start(&s6, &o, &err) == 0) {
		assert_true(port_of(hs_serve_address(s6), "[::1]") > 0);
		hs_serve_stop(s6);
	}
	hs_view_end(v, NULL);
	hs_serve_stop(s);
	hs_serve_stop(NULL);
	hs_view_free(v);
}

/* A view whose (empty) recording ended: every page is answered at once. */
static void test_answers(void **state)
{
	struct hs_view *v = hs_view_new(&(struct hs_view_opts){.window = 5});
	struct hs_output_opts oo = {.title = "served"};
	struct hs_serve_opts o = {.listen = "127.0.0.1:0", .view = v, .oo = &oo, .refresh = 3};
	struct hs_builder_opts bo = {.user = true};
	struct hs_builder b;
	struct hs_serve *s;
	struct hs_error err = {0};
	static char buf[1 << 20];
	unsigned port;
	(void)state;

	hs_builder_init(&b, &bo);
	hs_builder_add_event(&b, "cpu-clock", true);
	hs_view_end(v, &b);
	assert_int_equal(hs_serve_start(&s, &o, &err), 0);
	port = port_of(hs_serve_address(s), "127.0.0.1");

	/* the live flame graph, twice (the second from the cache) */
	for (int i = 0; i < 2; i++) {
		assert_int_equal(get(port, "/", buf, sizeof(buf)), 200);
		assert_non_null(strstr(buf, "Content-Type: text/html; charset=utf-8"));
		assert_non_null(strstr(buf, "<title>served</title>"));
		assert_non_null(strstr(buf, "Live: reloads every 3 s"));
		assert_non_null(strstr(buf, "location.reload()"));
	}
	assert_int_equal(get(port, "/folded", buf, sizeof(buf)), 200);
	assert_non_null(strstr(buf, "Content-Type: text/plain; charset=utf-8"));
	assert_int_equal(get(port, "/profile.pb.gz", buf, sizeof(buf)), 200);
	assert_non_null(strstr(buf, "Content-Type: application/octet-stream"));
	assert_non_null(strstr(buf, "\r\n\r\n\x1f\x8b")); /* gzip */
	assert_int_equal(get(port, "/debug/pprof/", buf, sizeof(buf)), 200);
	assert_non_null(strstr(buf, "profile?seconds="));

	/* Go's pprof protocol: a bad duration is a 400 in plain text, marked as Go marks it */
	assert_int_equal(get(port, "/debug/pprof/profile?seconds=abc", buf, sizeof(buf)), 400);
	assert_non_null(strstr(buf, "X-Go-Pprof: 1"));
	assert_non_null(strstr(buf, "invalid seconds 'abc'"));
	assert_int_equal(get(port, "/debug/pprof/profile?seconds=0", buf, sizeof(buf)), 400);
	assert_int_equal(get(port, "/debug/pprof/profile?seconds=-5", buf, sizeof(buf)), 400);
	assert_int_equal(get(port, "/debug/pprof/profile?seconds=3601", buf, sizeof(buf)), 400);
	assert_int_equal(get(port, "/debug/pprof/profile?seconds=99999999999999999999", buf, sizeof(buf)), 400);
	/* values that decode to nothing or to more than a number, are no number, or come twice
	 * with one bad: 400 too, each a body of one line, never the default 30 s */
	{
		static const char *const bad[] = {
			"seconds=%00", "seconds=", "seconds", "seconds=5%00", "seconds=5%00abc", "seconds=%35%00",
			"seconds=1e9", "seconds=+5", "seconds=%205", "seconds=5%0a", "seconds=%0d%0aX-Evil:%201",
			"seconds=5&seconds=abc", "seconds=abc&seconds=5", "x=1&seconds=",
		};
		char path[128];

		for (size_t i = 0; i < HS_ARRAY_SIZE(bad); i++) {
			const char *body;
			snprintf(path, sizeof(path), "/debug/pprof/profile?%s", bad[i]);
			if (get(port, path, buf, sizeof(buf)) != 400)
				fail_msg("%s: %.60s", path, buf);
			body = strstr(buf, "\r\n\r\n");
			assert_non_null(body);
			body += 4;
			assert_non_null(strstr(body, "invalid seconds '"));
			if (strchr(body, '\n') != body + strlen(body) - 1 || strchr(body, '\r'))
				fail_msg("%s: not one line: '%s'", path, body);
			assert_true(!strstr(buf, "X-Evil") || strstr(buf, "X-Evil") > body);
		}
	}
	/* the recording ended: no next seconds to wait for; a good value among other keys */
	assert_int_equal(get(port, "/debug/pprof/profile?seconds=1", buf, sizeof(buf)), 503);
	assert_int_equal(get(port, "/debug/pprof/profile?debug=1&seconds=%31%30", buf, sizeof(buf)), 503);
	assert_int_equal(get(port, "/debug/pprof/profile?other=%00", buf, sizeof(buf)), 503);

	assert_int_equal(get(port, "/nothing", buf, sizeof(buf)), 404);
	assert_int_equal(get(port, "/folded/", buf, sizeof(buf)), 404);
	assert_int_equal(http(port, "POST /folded HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", buf,
			      sizeof(buf)),
			 405);
	assert_non_null(strstr(buf, "Allow: GET, HEAD"));
	assert_int_equal(http(port, "DELETE / HTTP/1.1\r\nHost: x\r\n\r\n", buf, sizeof(buf)), 405);
	/* HEAD: the headers of GET, no body */
	assert_int_equal(http(port, "HEAD /folded HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", buf, sizeof(buf)),
			 200);
	assert_non_null(strstr(buf, "\r\n\r\n"));
	assert_string_equal(strstr(buf, "\r\n\r\n"), "\r\n\r\n");

	hs_serve_stop(s);
	hs_view_free(v);
	hs_builder_release(&b);
}

/* Before the first step of a view no reader waits once it has ended: 503, at once. */
static void test_no_profile(void **state)
{
	struct hs_view *v = hs_view_new(&(struct hs_view_opts){.window = 5});
	struct hs_serve_opts o = {.listen = "0", .view = v};
	struct hs_serve *s;
	struct hs_error err = {0};
	char buf[4096];
	(void)state;

	hs_view_end(v, NULL);
	assert_int_equal(hs_serve_start(&s, &o, &err), 0);
	assert_int_equal(get(port_of(hs_serve_address(s), "127.0.0.1"), "/", buf, sizeof(buf)), 503);
	assert_non_null(strstr(buf, "no profile yet"));
	hs_serve_stop(s);
	hs_view_free(v);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_listen),
		cmocka_unit_test(test_answers),
		cmocka_unit_test(test_no_profile),
	};

	if (hs_test_select(argc, argv, tests, HS_ARRAY_SIZE(tests)) < 0)
		return 1;
	return hs_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
