/* The server's address: parsed from --serve, bound, and named (listen.h). */
#include "serve/listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "serve/serve.h"

/* How many connections may wait for accept(): the server takes at most 64 at once anyway. */
#define LISTEN_BACKLOG 64

static bool parse_port(const char *s, in_port_t *ret)
{
	unsigned long v = 0;
	size_t n = strlen(s);

	/* digits only: strtoul would take " 80", "+80" and "-1" */
	if (!n || n > 5 || strspn(s, "0123456789") != n)
		return false;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (unsigned long)(s[i] - '0');
	if (v > 65535)
		return false;
	*ret = htons((in_port_t)v);
	return true;
}

const char *hs_listen_parse(const char *s, struct sockaddr_storage *ret, socklen_t *len)
{
	struct sockaddr_in in4 = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
	char host[INET6_ADDRSTRLEN + 1];
	const char *colon, *port = s;
	size_t n;

	if (*s == '[') {
		const char *end = strchr(s, ']');

		if (!end)
			return "no ']' after the IPv6 address";
		if (end[1] != ':')
			return "no ':PORT' after the IPv6 address";
		n = (size_t)(end - s - 1);
		if (n >= sizeof(host))
			return "not an IPv6 address in brackets";
		memcpy(host, s + 1, n);
		host[n] = 0;
		if (inet_pton(AF_INET6, host, &in6.sin6_addr) != 1)
			return "not an IPv6 address in brackets";
		if (!parse_port(end + 2, &in6.sin6_port))
			return "the port is not a number from 0 to 65535";
		memset(ret, 0, sizeof(*ret));
		memcpy(ret, &in6, sizeof(in6));
		*len = sizeof(in6);
		return NULL;
	}
	colon = strrchr(s, ':');
	if (colon) {
		n = (size_t)(colon - s);
		if (memchr(s, ':', n))
			return "an IPv6 address goes in brackets: [::1]:PORT";
		if (!n)
			return "no address before ':'";
		if (n >= sizeof(host))
			return "not an IPv4 address";
		memcpy(host, s, n);
		host[n] = 0;
		/* the one name taken, as people type it; other names would need a resolver's
		 * answer, which can be several addresses or change */
		if (strcmp(host, "localhost") && inet_pton(AF_INET, host, &in4.sin_addr) != 1)
			return "not an IPv4 address (names other than localhost are not looked up)";
		port = colon + 1;
	}
	if (!parse_port(port, &in4.sin_port))
		return "the port is not a number from 0 to 65535";
	memset(ret, 0, sizeof(*ret));
	memcpy(ret, &in4, sizeof(in4));
	*len = sizeof(in4);
	return NULL;
}

const char *hs_serve_check(const char *listen)
{
	struct sockaddr_storage sa;
	socklen_t len;

	return hs_listen_parse(listen, &sa, &len);
}

int hs_listen_open(const struct sockaddr_storage *sa, socklen_t len, int *fd)
{
	int one = 1, rc;
	int s = socket(sa->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return -errno;
	/* a port of a server that just ended (its connections in TIME_WAIT) can be taken again */
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* [::]:PORT means IPv6 only, as [::1] does; 0.0.0.0:PORT is the other family's */
	if (sa->ss_family == AF_INET6)
		setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(s, (const struct sockaddr *)sa, len) || listen(s, LISTEN_BACKLOG)) {
		rc = -errno;
		close(s);
		return rc;
	}
	*fd = s;
	return 0;
}

void hs_listen_name(int fd, char *buf, size_t size)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);
	char host[INET6_ADDRSTRLEN];

	if (getsockname(fd, (struct sockaddr *)&sa, &len)) {
		snprintf(buf, size, "?");
		return;
	}
	if (sa.ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, size, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else {
		const struct sockaddr_in *in4 = (const struct sockaddr_in *)&sa;
		inet_ntop(AF_INET, &in4->sin_addr, host, sizeof(host));
		snprintf(buf, size, "%s:%u", host, ntohs(in4->sin_port));
	}
}
