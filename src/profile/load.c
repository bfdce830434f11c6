/* Input sniffing and loading. The first 64 KiB say what an input is (after gunzip, for gzip
 * data): what is no profile is refused there; folded text is then parsed as it is read; pprof,
 * speedscope JSON and perf.data, which their readers need whole, are mapped (a regular file)
 * or read whole. */
#include "load.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "format/perf-data.h"
#include "profile/folded-read.h"
#include "profile/merge.h"
#include "profile/pprof-read.h"
#include "profile/speedscope-read.h"
#include "util/strbuf.h"

#define HEAD_SIZE ((size_t)64 << 10)

static bool is_gzip(const uint8_t *b, size_t len)
{
	return len >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

enum hs_input_kind hs_input_sniff(const void *buf, size_t len, bool more)
{
	if (is_gzip(buf, len))
		return HS_INPUT_PPROF;
	if (hs_perf_data_sniff(buf, len))
		return HS_INPUT_PERF_DATA;
	if (hs_speedscope_sniff(buf, len))
		return HS_INPUT_SPEEDSCOPE;
	if (hs_folded_sniff_prefix(buf, len, more))
		return HS_INPUT_FOLDED;
	/* a whole input (not a head) is pprof from its first whole field on: one key byte that
	 * happens to fit, before a length past the end, is no profile (random bytes) */
	if (hs_pprof_probe(buf, len) && (more || hs_pprof_probe_whole(buf, len)))
		return HS_INPUT_PPROF;
	return HS_INPUT_UNKNOWN;
}

const char *hs_profile_default_input(bool perf_data)
{
	static const char *const names[] = {"hotstack.pb.gz", "perf.data"};
	struct stat st;

	/* perf report's rule: a pipe on standard input is the input ("perf record -o - | perf report") */
	if (!fstat(STDIN_FILENO, &st) && S_ISFIFO(st.st_mode))
		return "-";
	if (perf_data)
		return "perf.data";
	for (size_t i = 0; i < HS_ARRAY_SIZE(names); i++)
		if (!access(names[i], F_OK))
			return names[i];
	return NULL;
}

int hs_profile_diff_inputs(int n, char *const *given, const char *ret[2], struct hs_error *err)
{
	static const char *const pairs[][2] = {{"hotstack.pb.gz.old", "hotstack.pb.gz"},
					       {"perf.data.old", "perf.data"}};

	if (n == 2) {
		ret[0] = given[0];
		ret[1] = given[1];
		return 0;
	}
	/* perf diff's rule: with one file, that is the new one, against the old recording here */
	for (size_t i = 0; n < 2 && i < HS_ARRAY_SIZE(pairs); i++) {
		if (!access(pairs[i][0], F_OK) && (n == 1 || !access(pairs[i][1], F_OK))) {
			ret[0] = pairs[i][0];
			ret[1] = n == 1 ? given[0] : pairs[i][1];
			return 0;
		}
	}
	if (n > 2)
		return hs_error_set(err, -E2BIG, "unexpected argument '%s'", given[2]);
	if (n == 1)
		return hs_error_set(err, -ENOENT, "no hotstack.pb.gz.old or perf.data.old here to compare '%s' with",
				    given[0]);
	return hs_error_set(err, -ENOENT,
			    "no hotstack.pb.gz.old and hotstack.pb.gz, nor perf.data.old and perf.data here");
}

void hs_load_info_release(struct hs_load_info *info)
{
	if (!info)
		return;
	hs_perf_data_load_info_release(&info->perf);
	memset(info, 0, sizeof(*info));
}

/* ---- the input as a stream of bytes: raw, then gunzipped ---- */

struct input {
	int fd;
	uint64_t raw;            /* bytes read from fd */
	/* bytes already read, handed out again before the rest: the raw head, then (gzip) the
	 * decompressed head */
	uint8_t *pre;
	size_t npre, ppos;
	/* gzip */
	bool gz, zend, zstop;
	z_stream z;
	uint8_t *zbuf;
	size_t zcap;
	uint64_t plain;          /* decompressed bytes produced */
	struct hs_error *err;
};

static ssize_t fd_read(struct input *in, void *buf, size_t n)
{
	for (;;) {
		ssize_t r = read(in->fd, buf, n);
		if (r >= 0) {
			in->raw += (uint64_t)r;
			return r;
		}
		if (errno != EINTR)
			return -errno;
	}
}

/* The raw bytes: the head read first, then the file. */
static ssize_t raw_read(struct input *in, void *buf, size_t n)
{
	if (!in->gz && in->ppos < in->npre) {
		size_t k = HS_MIN(n, in->npre - in->ppos);
		memcpy(buf, in->pre + in->ppos, k);
		in->ppos += k;
		return (ssize_t)k;
	}
	return fd_read(in, buf, n);
}

/* Decompressed bytes, as many members as follow each other (`cat a.gz b.gz`); what follows the
 * last member that is not another one (padding) is ignored, as gzip -d does with a warning. */
static ssize_t gz_read(struct input *in, void *buf, size_t n)
{
	uInt want = (uInt)HS_MIN(n, (size_t)1 << 30);

	in->z.next_out = buf;
	in->z.avail_out = want;
	while (in->z.avail_out == want && !in->zstop) {
		int zr;

		if (!in->z.avail_in) {
			ssize_t r = fd_read(in, in->zbuf, in->zcap);
			if (r < 0)
				return r;
			if (!r) {
				if (!in->zend) {
					hs_error_at(in->err, in->raw, "gzip data ends early (the file is cut short?)");
					return -ENODATA;
				}
				break;
			}
			in->z.next_in = in->zbuf;
			in->z.avail_in = (uInt)r;
		}
		if (in->zend) {
			if (in->z.next_in[0] != 0x1f) {
				in->zstop = true;
				break;
			}
			if (inflateReset(&in->z) != Z_OK)
				return -ENOMEM;
			in->zend = false;
		}
		zr = inflate(&in->z, Z_NO_FLUSH);
		if (zr == Z_STREAM_END) {
			in->zend = true;
		} else if (zr == Z_MEM_ERROR) {
			return -ENOMEM;
		} else if (zr != Z_OK && !(zr == Z_BUF_ERROR && !in->z.avail_in)) {
			hs_error_at(in->err, in->raw - in->z.avail_in, "gzip: %s",
					   in->z.msg ? in->z.msg : "invalid data");
			return -EBADMSG;
		}
	}
	in->plain += want - in->z.avail_out;
	/* bounded by the input even where the output is not kept (folded): time */
	if (hs_decompress_over(in->plain, in->raw)) {
		hs_error_at(in->err, in->raw,
				   "gzip data expands to more than %llu MiB from %llu KiB, over %u times its size: not read "
				   "(a decompression bomb?)",
				   (unsigned long long)(in->plain >> 20), (unsigned long long)(in->raw >> 10),
				   HS_DECOMPRESS_RATIO);
		return -EFBIG;
	}
	return (ssize_t)(want - in->z.avail_out);
}

/* The input's bytes, decompressed when it is gzip data: the head first. */
static ssize_t input_read(void *ctx, void *buf, size_t n)
{
	struct input *in = ctx;

	if (!in->gz)
		return raw_read(in, buf, n);
	if (in->ppos < in->npre) {
		size_t k = HS_MIN(n, in->npre - in->ppos);
		memcpy(buf, in->pre + in->ppos, k);
		in->ppos += k;
		return (ssize_t)k;
	}
	return gz_read(in, buf, n);
}

/* Reads up to HEAD_SIZE bytes with read into in->pre; *more: the input goes on. */
static int read_head(struct input *in, ssize_t (*read)(struct input *, void *, size_t), bool *more)
{
	uint8_t *head = hs_xmalloc(HEAD_SIZE);
	size_t n = 0;

	*more = true;
	while (n < HEAD_SIZE) {
		ssize_t r = read(in, head + n, HEAD_SIZE - n);
		if (r < 0) {
			free(head);
			return (int)r;
		}
		if (!r) {
			*more = false;
			break;
		}
		n += (size_t)r;
	}
	/* handed out again from now on */
	in->pre = head;
	in->npre = n;
	in->ppos = 0;
	return 0;
}

/* The whole input, up to max bytes, into *ret (the head included). */
static int read_all(struct input *in, size_t max, uint8_t **ret, size_t *ret_len)
{
	size_t n = 0, cap = 0;
	uint8_t *b = NULL;

	for (;;) {
		ssize_t r;

		if (n == cap) {
			if (cap >= max) {
				free(b);
				hs_error_at(in->err, in->raw, "larger than %zu MiB: not read", max >> 20);
				return -EFBIG;
			}
			hs_xgrow((void **)&b, &cap, HS_MIN(HS_MAX(n * 2, HEAD_SIZE), max), 1);
		}
		r = input_read(in, b + n, cap - n);
		if (r < 0) {
			free(b);
			return (int)r;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	*ret = b ? b : hs_xmalloc(1);
	*ret_len = n;
	return 0;
}

static int load_folded(struct input *in, struct hs_profile **ret, struct hs_load_info *info,
		       struct hs_error *err)
{
	struct hs_folded_stats st;
	int rc = hs_folded_read_stream(input_read, in, ret, &st, err);

	if (!rc && info)
		info->folded_lines_cut = st.lines_cut;
	return rc;
}

int hs_profile_load(const char *path, struct hs_profile **ret, struct hs_error *err)
{
	return hs_profile_load_ex(path, NULL, ret, NULL, err);
}

int hs_profile_load_ex(const char *path, const struct hs_load_opts *opts, struct hs_profile **ret,
		       struct hs_load_info *info, struct hs_error *err)
{
	struct input in = {0};
	struct stat sb;
	uint8_t *buf = NULL;
	void *map = MAP_FAILED;
	size_t len = 0;
	enum hs_input_kind kind;
	bool regular, more;
	int rc;

	if (info)
		memset(info, 0, sizeof(*info));
	in.err = err;
	in.fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	if (in.fd < 0)
		return -errno;
	regular = fstat(in.fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0;
	if ((rc = read_head(&in, raw_read, &more)))
		goto out;
	if (!in.npre) {
		hs_error_at(err, 0, "the file is empty");
		rc = -EPROTONOSUPPORT;
		goto out;
	}
	if (is_gzip(in.pre, in.npre)) {
		/* what gzip holds is known once decompressed: the same sniffing on its head */
		in.gz = true;
		in.zcap = HEAD_SIZE;
		in.zbuf = in.pre;
		in.z.next_in = in.zbuf;
		in.z.avail_in = (uInt)in.npre;
		in.pre = NULL;
		if (inflateInit2(&in.z, 15 + 16) != Z_OK) {
			in.gz = false;
			rc = -ENOMEM;
			goto out;
		}
		if ((rc = read_head(&in, gz_read, &more)))
			goto out;
		kind = hs_input_sniff(in.pre, in.npre, more);
		if (kind == HS_INPUT_PPROF && is_gzip(in.pre, in.npre))
			kind = HS_INPUT_UNKNOWN; /* gzip in gzip: no format is written so */
		switch (kind) {
		case HS_INPUT_FOLDED:
			rc = load_folded(&in, ret, info, err);
			break;
		case HS_INPUT_PPROF:
			/* the reader needs it whole */
			if (!(rc = read_all(&in, HS_PPROF_MAX_SIZE, &buf, &len))) {
				bool fresh = err && !err->detail[0];
				if (info)
					info->pprof = true;
				rc = hs_pprof_read_sized(buf, len, in.raw, ret, err);
				if (rc && fresh && err->detail[0] && strlen(err->detail) + 40 < sizeof(err->detail))
					strcat(err->detail, " (offset in the decompressed data)");
			}
			break;
		case HS_INPUT_SPEEDSCOPE:
			if (!(rc = read_all(&in, HS_PPROF_MAX_SIZE, &buf, &len)))
				rc = hs_speedscope_read(buf, len, in.raw, ret, err);
			break;
		case HS_INPUT_PERF_DATA:
			hs_error_at(err, 0, "a gzipped perf.data: decompress it first (gunzip)");
			rc = -EPROTONOSUPPORT;
			break;
		default:
			hs_error_at(err, 0,
				    "gzip data holding no profile hotstack reads (perf.data, pprof, "
				    "folded stacks, speedscope)");
			rc = -EPROTONOSUPPORT;
			break;
		}
		goto out;
	}
	switch (hs_input_sniff(in.pre, in.npre, more)) {
	case HS_INPUT_FOLDED:
		/* read as it comes, not mapped: a file mapped whole would count in memory whole */
		rc = load_folded(&in, ret, info, err);
		break;
	case HS_INPUT_PPROF:
	case HS_INPUT_PERF_DATA:
	case HS_INPUT_SPEEDSCOPE: {
		bool perf = hs_perf_data_sniff(in.pre, in.npre);
		bool json = !perf && hs_speedscope_sniff(in.pre, in.npre);

		if (regular) {
			/* map regular files: perf.data can be gigabytes */
			len = (size_t)sb.st_size;
			map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, in.fd, 0);
		}
		if (map != MAP_FAILED) {
			buf = map;
		} else if ((rc = read_all(&in, perf ? HS_LOAD_MAX_BYTES : HS_PPROF_MAX_SIZE, &buf, &len))) {
			break;
		}
		if (perf) {
			struct hs_perf_data_load_opts po = {opts && opts->keep_time, opts && opts->no_kernel,
							    opts && opts->no_demangle, opts && opts->no_inline,
							    opts ? opts->symfs : NULL};
			rc = hs_perf_data_load(buf, len, &po, ret, info ? &info->perf : NULL, err);
			if (info)
				info->named_here = true;
		} else if (json) {
			rc = hs_speedscope_read(buf, len, len, ret, err);
		} else {
			if (info)
				info->pprof = true;
			rc = hs_pprof_read(buf, len, ret, err);
		}
		break;
	}
	default:
		hs_error_at(err, 0, HS_NOT_A_PROFILE);
		rc = -EPROTONOSUPPORT;
		break;
	}
out:
	if (map != MAP_FAILED)
		munmap(map, len);
	else
		free(buf);
	free(in.pre);
	if (in.gz)
		inflateEnd(&in.z);
	free(in.zbuf);
	if (in.fd != STDIN_FILENO)
		close(in.fd);
	return rc;
}

void hs_load_info_notes(const struct hs_load_info *li, const struct hs_profile *p, const char *name,
			bool debuginfod_set, struct hs_strbuf *warn, struct hs_strbuf *note)
{
	const struct hs_perf_data_load_info *info = &li->perf;

	if (info->truncated)
		hs_strbuf_addf(warn,
			       "%s: the file ends inside a record at offset 0x%llx (cut short?): read the %llu "
			       "samples before it\n",
			       name, (unsigned long long)info->truncated_at, (unsigned long long)info->samples);
	if (info->decompress_cut)
		hs_strbuf_addf(warn,
			       "%s: compressed records expand to more than %llu MiB, over %u times their size: the "
			       "records from offset 0x%llx on are not read (a decompression bomb?)\n",
			       name, (unsigned long long)(info->decompressed >> 20), HS_DECOMPRESS_RATIO,
			       (unsigned long long)info->decompress_cut_at);
	if (info->queue_flushes)
		hs_strbuf_addf(warn,
			       "%s: more than %u records (or %zu MiB) waited to be put in time order: the oldest "
			       "were taken %llu times before their round ended, and may be out of order\n",
			       name, HS_PERF_DATA_LOAD_MAX_QUEUED, HS_PERF_DATA_LOAD_MAX_QUEUED_BYTES >> 20,
			       (unsigned long long)info->queue_flushes);
	for (size_t i = 0; i < info->mismatched.n; i++)
		hs_strbuf_addf(warn,
			       "%s changed since the recording (its build-id differs) and perf's build-id cache "
			       "has no copy: its frames are shown as [module]\n",
			       info->mismatched.v[i]);
	for (size_t i = 0; i < info->jit_warnings.n; i++)
		hs_strbuf_addf(warn, "%s\n", info->jit_warnings.v[i]);
	if (info->kernel_note)
		hs_strbuf_addf(warn, "%s: no kernel symbols: %s\n", name, info->kernel_note);
	if (info->unknown_records)
		hs_strbuf_addf(note, "%s: skipped %llu records of unknown types\n", name,
			       (unsigned long long)info->unknown_records);
	if (info->bad_records)
		hs_strbuf_addf(warn, "%s: %llu records could not be parsed\n", name,
			       (unsigned long long)info->bad_records);
	if (li->folded_lines_cut)
		hs_strbuf_addf(warn, "%s: %llu %s more than %u frames: the frames past it are left out\n", name,
			       (unsigned long long)li->folded_lines_cut,
			       li->folded_lines_cut == 1 ? "line has" : "lines have", HS_FOLDED_MAX_FRAMES);
	if (!info->mismatched.n && li->named_here) /* else said above, or names no install adds */
		hs_profile_unnamed_note(p, debuginfod_set, warn);
}

/* ---- several inputs, directories ---- */

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of directory dir that hs_profile_load_many() reads, in name order: *ret_n paths in
 * *ret, each and the array the caller's to free. */
static int dir_files(const char *dir, char ***ret, size_t *ret_n, struct hs_error *err)
{
	HS_VEC(char *) v = {0};
	size_t len = strlen(dir);
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (!d)
		return -errno;
	while (len > 1 && dir[len - 1] == '/')
		len--;
	while ((errno = 0, e = readdir(d))) {
		struct hs_strbuf sb = {0};
		struct stat st;

		/* dot-files are writers' files still being written (and ".", "..") */
		if (e->d_name[0] == '.' || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (v.n == HS_LOAD_MAX_DIR_FILES) {
			rc = hs_error_set(err, -EOVERFLOW, "more than %u files", HS_LOAD_MAX_DIR_FILES);
			break;
		}
		hs_strbuf_add(&sb, dir, len);
		hs_strbuf_addf(&sb, "%s%s", dir[len - 1] == '/' ? "" : "/", e->d_name);
		hs_vec_push(&v, hs_strbuf_detach(&sb));
	}
	rc = rc ? rc : -errno;
	closedir(d);
	if (rc) {
		for (size_t i = 0; i < v.n; i++)
			free(v.v[i]);
		hs_vec_free(&v);
		return rc;
	}
	if (v.n)
		qsort(v.v, v.n, sizeof(*v.v), name_cmp);
	*ret = v.v;
	*ret_n = v.n;
	return 0;
}

/* Reads path into *acc, or merges it into *acc; a file of a directory (in_dir) that is no
 * profile is counted and skipped. */
static int load_one(const char *path, bool in_dir, struct hs_load_many *lm, struct hs_profile **acc,
		    struct hs_error *err)
{
	struct hs_error e = {0}; /* one input's: a file skipped leaves none behind */
	struct hs_load_info li;
	struct hs_profile *p = NULL;
	int rc = hs_profile_load_ex(path, lm->opts, &p, &li, &e);
	bool parse = rc == -EBADMSG || rc == -ENODATA || rc == -EOVERFLOW || rc == -EOPNOTSUPP;

	if (in_dir && (rc == -EPROTONOSUPPORT || (li.pprof && parse))) {
		lm->skipped++;
		hs_load_info_release(&li);
		return 0;
	}
	if (!rc && lm->loaded)
		lm->loaded(lm->ctx, path, &li, p);
	hs_load_info_release(&li);
	if (!rc && *acc) {
		rc = hs_profile_merge(*acc, p, &e);
		hs_profile_free(p);
	} else if (!rc) {
		*acc = p;
	}
	if (rc) {
		if (err)
			*err = e;
		lm->failed = hs_xstrdup(path);
		return rc;
	}
	lm->read++;
	return 0;
}

/* The files of directory dir into *acc. */
static int load_dir(const char *dir, struct hs_load_many *lm, struct hs_profile **acc, struct hs_error *err)
{
	size_t nf = 0, read = lm->read, skipped = lm->skipped;
	char **files = NULL;
	int rc = dir_files(dir, &files, &nf, err);

	for (size_t i = 0; !rc && i < nf; i++)
		rc = load_one(files[i], true, lm, acc, err);
	for (size_t i = 0; i < nf; i++)
		free(files[i]);
	free(files);
	if (!rc && lm->skipped > skipped && !lm->skipped_dirs++)
		lm->skipped_in = dir;
	if (!rc && lm->read == read)
		rc = hs_error_set(err, -ENOMSG, "no profiles");
	if (rc && !lm->failed)
		lm->failed = hs_xstrdup(dir);
	return rc;
}

int hs_profile_load_many(const char *const *paths, size_t n, struct hs_load_many *lm, struct hs_profile **ret,
			 struct hs_error *err)
{
	struct hs_profile *acc = NULL;
	int rc = n ? 0 : hs_error_set(err, -EINVAL, "no input");

	for (size_t i = 0; i < n && !rc; i++) {
		struct stat st;

		if (strcmp(paths[i], "-") && !stat(paths[i], &st) && S_ISDIR(st.st_mode))
			rc = load_dir(paths[i], lm, &acc, err);
		else
			rc = load_one(paths[i], false, lm, &acc, err);
	}
	if (rc) {
		hs_profile_free(acc);
		return rc;
	}
	*ret = acc;
	return 0;
}

void hs_load_many_release(struct hs_load_many *lm)
{
	if (!lm)
		return;
	free(lm->failed);
	lm->failed = NULL;
}

void hs_load_many_notes(const struct hs_load_many *lm, struct hs_strbuf *note)
{
	bool one = lm->skipped == 1;

	if (!lm->skipped)
		return;
	hs_strbuf_adds(note, lm->skipped_in);
	if (lm->skipped_dirs > 1)
		hs_strbuf_addf(note, " and %zu more director%s", lm->skipped_dirs - 1,
			       lm->skipped_dirs > 2 ? "ies" : "y");
	hs_strbuf_addf(note, ": skipped %zu %s not %s hotstack reads\n", lm->skipped,
		       one ? "file that is" : "files that are", one ? "a profile" : "profiles");
}
