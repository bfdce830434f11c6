/* The advice given when most samples are in a distribution's file without symbols: what to
 * install, found by asking dpkg about the file under both of its usrmerge names. */
#include "debug-advice.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

extern char **environ;

/* The directories of / that usrmerge made links into /usr. */
static const char *const merged[] = {"/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/", "/libx32/"};

bool hs_usrmerge_twin(const char *path, char *ret, size_t cap)
{
	int n = -1;

	for (size_t i = 0; i < HS_ARRAY_SIZE(merged) && n < 0; i++) {
		size_t len = strlen(merged[i]);
		if (!strncmp(path, merged[i], len))
			n = snprintf(ret, cap, "/usr%s", path); /* /lib/x: /usr/lib/x */
		else if (!strncmp(path, "/usr", 4) && !strncmp(path + 4, merged[i], len))
			n = snprintf(ret, cap, "%s", path + 4); /* /usr/lib/x: /lib/x */
	}
	return n > 0 && (size_t)n < cap;
}

bool hs_build_id_debug_path(const char *build_id, char *ret, size_t cap)
{
	size_t n = build_id ? strlen(build_id) : 0;
	int w;

	if (n < 4 || n > 80 || n % 2 || build_id[strspn(build_id, "0123456789abcdef")])
		return false;
	w = snprintf(ret, cap, "/usr/lib/debug/.build-id/%.2s/%s.debug", build_id, build_id + 2);
	return w > 0 && (size_t)w < cap;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Runs argv with its output read into out (at most cap - 1 bytes, NUL-terminated), its errors
 * to /dev/null, for at most timeout_ms. Returns 0 (whatever its exit status), or -errno. */
static int run(char *const argv[], int timeout_ms, char *out, size_t cap)
{
	posix_spawn_file_actions_t fa;
	int p[2], rc, status = 0;
	size_t n = 0;
	pid_t pid;
	int64_t end = now_ms() + timeout_ms;

	out[0] = '\0';
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	rc = strchr(argv[0], '/') ? posix_spawn(&pid, argv[0], &fa, NULL, argv, environ)
				  : posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (rc) {
		close(p[0]);
		return rc == ENOENT ? -ENOEXEC : -rc;
	}
	rc = 0;
	for (;;) {
		struct pollfd pf = {p[0], POLLIN, 0};
		int64_t left = end - now_ms();
		ssize_t r;

		if (left <= 0) {
			rc = -ETIMEDOUT;
			break;
		}
		r = poll(&pf, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			rc = r ? -errno : -ETIMEDOUT;
			break;
		}
		r = read(p[0], out + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		out[n] = '\0';
		if (n == cap - 1)
			break; /* enough: the rest is not waited for */
	}
	close(p[0]);
	if (rc || n == cap - 1)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	/* a program that could not be run: posix_spawnp's child exits 127 */
	if (!rc && WIFEXITED(status) && WEXITSTATUS(status) == 127 && !n)
		rc = -ENOEXEC;
	return rc;
}

int hs_dpkg_owner(const struct hs_debug_advice_env *env, const char *path, char *pkg, size_t pkg_cap, char *known,
		  size_t known_cap)
{
	const char *dpkg = env && env->dpkg ? env->dpkg : "dpkg";
	char twin[4096], out[8192];
	char *argv[5] = {(char *)dpkg, (char *)"-S", (char *)path, NULL, NULL};
	int rc;

	if (!*dpkg)
		return -ENOEXEC;
	if (hs_usrmerge_twin(path, twin, sizeof(twin)))
		argv[3] = twin;
	rc = run(argv, env && env->timeout_ms > 0 ? env->timeout_ms : HS_DPKG_TIMEOUT_MS, out, sizeof(out));
	if (rc)
		return rc;
	/* "pkg[:arch][, pkg2...]: PATH" a line, a "diversion by ..." line aside */
	for (char *line = out, *nl; *line; line = nl) {
		char *sep, *end;
		size_t plen;

		nl = line + strcspn(line, "\n");
		if (*nl)
			*nl++ = '\0';
		sep = strstr(line, ": /");
		if (!sep || !strncmp(line, "diversion ", 10) || (strcmp(sep + 2, path) && (!argv[3] || strcmp(sep + 2, twin))))
			continue;
		plen = strcspn(line, ":, ");
		end = line + plen;
		if (!plen || plen >= pkg_cap || strlen(sep + 2) >= known_cap || end > sep)
			continue;
		memcpy(pkg, line, plen);
		pkg[plen] = '\0';
		strcpy(known, sep + 2);
		return 0;
	}
	return -ENOENT;
}

/* The distribution's ID from os-release ("debian", "ubuntu", "fedora"...), and its
 * VERSION_CODENAME ("bookworm"), empty when not said. */
static void os_release(const char *path, char *id, size_t id_cap, char *codename, size_t cn_cap)
{
	char line[256];
	FILE *f = fopen(path ? path : "/etc/os-release", "re");

	id[0] = codename[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, '='), *dst;
		size_t cap, n;

		if (!v)
			continue;
		*v++ = '\0';
		if (!strcmp(line, "ID"))
			dst = id, cap = id_cap;
		else if (!strcmp(line, "VERSION_CODENAME"))
			dst = codename, cap = cn_cap;
		else
			continue;
		v += *v == '"';
		n = strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-");
		if (n < cap) {
			memcpy(dst, v, n);
			dst[n] = '\0';
		}
	}
	fclose(f);
}

/* The public debuginfod server of a distribution, or NULL. */
static const char *debuginfod_url(const char *id)
{
	static const char *const servers[][2] = {
		{"debian", "https://debuginfod.debian.net"},   {"ubuntu", "https://debuginfod.ubuntu.com"},
		{"fedora", "https://debuginfod.fedoraproject.org"}, {"arch", "https://debuginfod.archlinux.org"},
		{"opensuse-tumbleweed", "https://debuginfod.opensuse.org"},
	};

	for (size_t i = 0; i < sizeof(servers) / sizeof(servers[0]); i++)
		if (!strcmp(id, servers[i][0]))
			return servers[i][1];
	return NULL;
}

void hs_debug_advice(const char *file, const char *build_id, const struct hs_debug_advice_env *env,
		     struct hs_strbuf *sb)
{
	char pkg[256], known[4096], twin[4096], bid[256], id[64], codename[64];
	bool has_bid = hs_build_id_debug_path(build_id, bid, sizeof(bid));
	bool has_twin = hs_usrmerge_twin(file, twin, sizeof(twin));
	int rc = hs_dpkg_owner(env, file, pkg, sizeof(pkg), known, sizeof(known));
	const char *url;

	os_release(env ? env->os_release : NULL, id, sizeof(id), codename, sizeof(codename));
	if (!rc) {
		hs_strbuf_addf(sb, ": install its debug symbols, 'apt install %s-dbgsym' (dpkg -S %s: %s) from the debug archive",
			       pkg, known, pkg);
		if (!strcmp(id, "debian") && *codename)
			hs_strbuf_addf(sb, " ('deb http://deb.debian.org/debian-debug/ %s-debug main' in apt's sources)",
				       codename);
		if (has_bid)
			hs_strbuf_addf(sb, ", which puts its debug file at %s", bid);
	} else if (rc == -ENOENT) {
		hs_strbuf_addf(sb, ", which no package owns (dpkg -S knows %s %s%s%s): give hotstack its debug file",
			       has_twin ? "neither" : "nothing of", file, has_twin ? " nor " : "", has_twin ? twin : "");
		if (has_bid)
			hs_strbuf_addf(sb, " at %s", bid);
	} else {
		/* no dpkg here, or no answer from it in time */
		hs_strbuf_addf(sb,
			       ": install its debug symbols (Debian: 'apt install PACKAGE-dbgsym' from the debug "
			       "archive, PACKAGE as 'dpkg -S %s%s%s' names it)",
			       file, has_twin ? " " : "", has_twin ? twin : "");
		if (has_bid)
			hs_strbuf_addf(sb, ", or a debug file at %s", bid);
	}
	if (!(env && env->debuginfod_set)) {
		hs_strbuf_adds(sb, "; or set DEBUGINFOD_URLS");
		if ((url = debuginfod_url(id)))
			hs_strbuf_addf(sb, " (%s)", url);
	}
}
