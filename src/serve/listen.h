/* The server's address: --serve's "PORT", "ADDR:PORT" or "[IPv6]:PORT" parsed, the listening
 * socket opened on it, and the address it is bound to named for a person. */
#ifndef HS_SERVE_LISTEN_H
#define HS_SERVE_LISTEN_H

#include <stddef.h>
#include <sys/socket.h>

/* "[" + an IPv6 address with a scope + "]:" + a port */
#define HS_LISTEN_NAME_MAX 80

/* Parses s into *ret and *len (127.0.0.1 where only a port is given). Returns NULL, or what is
 * wrong (a line; ret untouched). */
const char *hs_listen_parse(const char *s, struct sockaddr_storage *ret, socklen_t *len);
/* A socket listening on sa (close-on-exec: not handed to the recorded command) in *fd: 0, or a
 * negative errno (-EADDRINUSE, -EACCES, -EADDRNOTAVAIL, ...). */
int hs_listen_open(const struct sockaddr_storage *sa, socklen_t len, int *fd);
/* Where fd is bound, "127.0.0.1:8080" or "[::1]:8080", in buf (HS_LISTEN_NAME_MAX bytes). */
void hs_listen_name(int fd, char *buf, size_t size);

#endif
