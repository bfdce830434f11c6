/* The advice for a distribution's file without symbols (src/symbolize/debug-advice.c): the
 * usrmerge twins of a path, the build-id path of a debug file, and the text, with a fake dpkg
 * that knows only the /usr-less name (as Debian 12's does) and a fake os-release. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "symbolize/debug-advice.h"

static char dir[256], dpkg[300], slow_dpkg[300], os_release[300];

static const char lzma[] = "/usr/lib/x86_64-linux-gnu/liblzma.so.5.4.1";
static const char bid[] = "72a44fc3edc93188d045e65d92d28d50e373dbcb";

static void write_text(const char *path, const char *text)
{
	hs_test_write_file(path, text, strlen(text));
}

static void write_script(const char *path, const char *text)
{
	write_text(path, text);
	assert_int_equal(chmod(path, 0755), 0);
}

static int setup(void **state)
{
	(void)state;
	if (hs_test_mkdtemp(dir, sizeof(dir), "test-debug-advice"))
		return -1;
	snprintf(dpkg, sizeof(dpkg), "%s/dpkg", dir);
	snprintf(slow_dpkg, sizeof(slow_dpkg), "%s/slow-dpkg", dir);
	snprintf(os_release, sizeof(os_release), "%s/os-release", dir);
	/* dpkg -S as Debian 12's answers: the path as the package installed it, an error (and
	 * status 1) for the /usr name usrmerge gives it */
	write_script(dpkg, "#!/bin/sh\n"
			   "[ \"$1\" = -S ] || exit 2\n"
			   "shift\n"
			   "rc=0\n"
			   "for p; do\n"
			   "  case $p in\n"
			   "  /lib/x86_64-linux-gnu/liblzma.so.5.4.1) echo \"liblzma5:amd64: $p\" ;;\n"
			   "  /usr/bin/tool) echo \"diversion by other from: $p\"; echo \"tool-pkg: $p\" ;;\n"
			   "  *) echo \"dpkg-query: no path found matching pattern $p\" >&2; rc=1 ;;\n"
			   "  esac\n"
			   "done\n"
			   "exit $rc\n");
	write_script(slow_dpkg, "#!/bin/sh\nexec sleep 30\n");
	write_text(os_release, "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\nVERSION_CODENAME=bookworm\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return hs_test_rmtree(dir);
}

static void expect_twin(const char *path, const char *twin)
{
	char buf[256];

	if (!twin) {
		assert_false(hs_usrmerge_twin(path, buf, sizeof(buf)));
		return;
	}
	assert_true(hs_usrmerge_twin(path, buf, sizeof(buf)));
	assert_string_equal(buf, twin);
}

static void test_twins(void **state)
{
	char small[8];

	(void)state;
	expect_twin(lzma, "/lib/x86_64-linux-gnu/liblzma.so.5.4.1");
	expect_twin("/lib/x86_64-linux-gnu/liblzma.so.5.4.1", lzma);
	expect_twin("/usr/bin/xz", "/bin/xz");
	expect_twin("/sbin/ldconfig", "/usr/sbin/ldconfig");
	expect_twin("/usr/lib64/ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2");
	expect_twin("/libx32/libc.so.6", "/usr/libx32/libc.so.6");
	/* not a merged directory: no twin */
	expect_twin("/usr/share/x", NULL);
	expect_twin("/usr/local/lib/libx.so", NULL);
	expect_twin("/opt/lib/libx.so", NULL);
	expect_twin("/library/x", NULL);
	expect_twin("/usr/libexec/x", NULL);
	expect_twin("/usr", NULL);
	assert_false(hs_usrmerge_twin("/lib/x86_64-linux-gnu/libc.so.6", small, sizeof(small)));
}

static void test_build_id_path(void **state)
{
	char buf[256];

	(void)state;
	assert_true(hs_build_id_debug_path(bid, buf, sizeof(buf)));
	assert_string_equal(buf, "/usr/lib/debug/.build-id/72/a44fc3edc93188d045e65d92d28d50e373dbcb.debug");
	assert_false(hs_build_id_debug_path(NULL, buf, sizeof(buf)));
	assert_false(hs_build_id_debug_path("", buf, sizeof(buf)));
	assert_false(hs_build_id_debug_path("72a", buf, sizeof(buf)));       /* odd */
	assert_false(hs_build_id_debug_path("72A44FC3", buf, sizeof(buf)));  /* upper case */
	assert_false(hs_build_id_debug_path("../../etc", buf, sizeof(buf))); /* not hex */
	assert_false(hs_build_id_debug_path(bid, buf, 20));
}

static void test_dpkg_owner(void **state)
{
	struct hs_debug_advice_env env = {.dpkg = dpkg};
	char pkg[64], known[256];

	(void)state;
	/* the /usr name: known by its twin */
	assert_int_equal(hs_dpkg_owner(&env, lzma, pkg, sizeof(pkg), known, sizeof(known)), 0);
	assert_string_equal(pkg, "liblzma5");
	assert_string_equal(known, "/lib/x86_64-linux-gnu/liblzma.so.5.4.1");
	/* a diversion line is not the owner */
	assert_int_equal(hs_dpkg_owner(&env, "/usr/bin/tool", pkg, sizeof(pkg), known, sizeof(known)), 0);
	assert_string_equal(pkg, "tool-pkg");
	assert_int_equal(hs_dpkg_owner(&env, "/usr/lib/x86_64-linux-gnu/libown.so", pkg, sizeof(pkg), known,
				       sizeof(known)),
			 -ENOENT);
	env.dpkg = "/nonexistent/dpkg";
	assert_int_equal(hs_dpkg_owner(&env, lzma, pkg, sizeof(pkg), known, sizeof(known)), -ENOEXEC);
	env.dpkg = "";
	assert_int_equal(hs_dpkg_owner(&env, lzma, pkg, sizeof(pkg), known, sizeof(known)), -ENOEXEC);
	env.dpkg = slow_dpkg;
	env.timeout_ms = 200;
	assert_int_equal(hs_dpkg_owner(&env, lzma, pkg, sizeof(pkg), known, sizeof(known)), -ETIMEDOUT);
}

static char *advice(const struct hs_debug_advice_env *env, const char *file, const char *build_id)
{
	struct hs_strbuf sb = {0};
	char *s;

	hs_debug_advice(file, build_id, env, &sb);
	s = strdup(hs_strbuf_str(&sb));
	hs_strbuf_release(&sb);
	return s;
}

static void test_text(void **state)
{
	struct hs_debug_advice_env env = {.dpkg = dpkg, .os_release = os_release};
	char *t;

	(void)state;
	t = advice(&env, lzma, bid);
	assert_string_equal(t, ": install its debug symbols, 'apt install liblzma5-dbgsym' (dpkg -S "
			       "/lib/x86_64-linux-gnu/liblzma.so.5.4.1: liblzma5) from the debug archive ('deb "
			       "http://deb.debian.org/debian-debug/ bookworm-debug main' in apt's sources), which puts "
			       "its debug file at /usr/lib/debug/.build-id/72/a44fc3edc93188d045e65d92d28d50e373dbcb.debug; "
			       "or set DEBUGINFOD_URLS (https://debuginfod.debian.net)");
	free(t);
	/* DEBUGINFOD_URLS set, no build-id */
	env.debuginfod_set = true;
	t = advice(&env, lzma, NULL);
	assert_string_equal(t, ": install its debug symbols, 'apt install liblzma5-dbgsym' (dpkg -S "
			       "/lib/x86_64-linux-gnu/liblzma.so.5.4.1: liblzma5) from the debug archive ('deb "
			       "http://deb.debian.org/debian-debug/ bookworm-debug main' in apt's sources)");
	free(t);
	env.debuginfod_set = false;
	/* a file no package owns */
	t = advice(&env, "/usr/lib/x86_64-linux-gnu/libown.so", bid);
	assert_string_equal(t, ", which no package owns (dpkg -S knows neither /usr/lib/x86_64-linux-gnu/libown.so nor "
			       "/lib/x86_64-linux-gnu/libown.so): give hotstack its debug file at "
			       "/usr/lib/debug/.build-id/72/a44fc3edc93188d045e65d92d28d50e373dbcb.debug; or set "
			       "DEBUGINFOD_URLS (https://debuginfod.debian.net)");
	free(t);
	/* no dpkg (another distribution): both names to ask about, no placeholder build-id path */
	env.dpkg = "";
	write_text(os_release, "ID=fedora\n");
	t = advice(&env, lzma, NULL);
	assert_string_equal(t, ": install its debug symbols (Debian: 'apt install PACKAGE-dbgsym' from the debug archive, "
			       "PACKAGE as 'dpkg -S /usr/lib/x86_64-linux-gnu/liblzma.so.5.4.1 "
			       "/lib/x86_64-linux-gnu/liblzma.so.5.4.1' names it); or set DEBUGINFOD_URLS "
			       "(https://debuginfod.fedoraproject.org)");
	free(t);
	/* no os-release: no server to suggest */
	env.os_release = "/nonexistent/os-release";
	t = advice(&env, "/usr/share/x", bid);
	assert_non_null(strstr(t, "'dpkg -S /usr/share/x' names it), or a debug file at /usr/lib/debug/.build-id/72/"));
	assert_non_null(strstr(t, "; or set DEBUGINFOD_URLS"));
	assert_null(strstr(t, "https://"));
	free(t);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_twins),
		cmocka_unit_test(test_build_id_path),
		cmocka_unit_test_setup_teardown(test_dpkg_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text, setup, teardown),
	};

	if (hs_test_select(argc, argv, tests, HS_ARRAY_SIZE(tests)))
		return 2;
	return hs_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
