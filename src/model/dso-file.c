/* Opening mapped files and memory images with the identity checks that keep names and unwind
 * tables from coming out of the wrong file. */
#include "dso-file.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "format/elf.h"
#include "util/strbuf.h"
#include "util/util.h"

#define VDSO_MAX_SIZE (1u << 20)

/* An ELF image's size from its header: where its section headers end. */
static size_t image_size(const unsigned char *hdr)
{
	GElf_Ehdr eh;

	if (memcmp(hdr, ELFMAG, SELFMAG) || hdr[EI_CLASS] != ELFCLASS64)
		return 0;
	memcpy(&eh, hdr, sizeof(eh));
	return (size_t)(eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize);
}

static int open_vdso(const struct hs_dso *d, struct hs_dso_elf *ret)
{
	unsigned char hdr[64];
	size_t size = 0;

	if (d->pid_hint > 0) {
		char path[64];
		int fd;
		snprintf(path, sizeof(path), "/proc/%d/mem", (int)d->pid_hint);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (pread(fd, hdr, sizeof(hdr), (off_t)d->start_hint) == (ssize_t)sizeof(hdr) &&
			    (size = image_size(hdr)) && size <= VDSO_MAX_SIZE) {
				ret->image = hs_xmalloc(size);
				if (pread(fd, ret->image, size, (off_t)d->start_hint) != (ssize_t)size) {
					free(ret->image);
					ret->image = NULL;
				}
			}
			close(fd);
		}
	}
	if (!ret->image) {
		const unsigned char *own = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
		if (!own || !(size = image_size(own)) || size > VDSO_MAX_SIZE)
			return -ENOENT;
		ret->image = hs_xmalloc(size);
		memcpy(ret->image, own, size);
	}
	ret->elf = elf_memory(ret->image, size);
	if (!ret->elf || elf_kind(ret->elf) != ELF_K_ELF) {
		if (ret->elf)
			elf_end(ret->elf);
		free(ret->image);
		return -EBADMSG;
	}
	return 0;
}

static int open_mapped(const struct hs_dso *d, struct hs_dso_elf *ret);
static int open_from_cache(const struct hs_dso *d, struct hs_dso_elf *ret);

int hs_dso_elf_open(const struct hs_dso *d, struct hs_dso_elf *ret)
{
	bool captured = d->fd >= 0;
	int rc;

	memset(ret, 0, sizeof(*ret));
	ret->fd = -1;
	elf_version(EV_CURRENT);
	if (d->kind == HS_DSO_VDSO) {
		rc = open_vdso(d, ret);
		if (!rc)
			ret->build_id_size = (uint8_t)hs_elf_build_id(ret->elf, ret->build_id, sizeof(ret->build_id));
		return rc;
	}
	if (d->kind != HS_DSO_FILE)
		return -ENOENT;
	rc = open_mapped(d, ret);
	/* not the file the recording saw, or gone: perf's build-id cache may hold a copy */
	if ((rc == -ESTALE || rc == -ENOENT) && d->build_id_size && !captured && !open_from_cache(d, ret))
		return 0;
	return rc;
}

static int open_mapped(const struct hs_dso *d, struct hs_dso_elf *ret)
{
	struct stat sb;
	bool captured = d->fd >= 0;
	int fd = captured ? dup(d->fd) : open(d->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -ENOENT;
	}
	/* a file found by its path must be the one the process mapped */
	if (!captured && !d->build_id_size && d->ino &&
	    (sb.st_ino != d->ino || major(sb.st_dev) != d->maj || minor(sb.st_dev) != d->min)) {
		close(fd);
		return -ESTALE;
	}
	ret->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!ret->elf || elf_kind(ret->elf) != ELF_K_ELF) {
		if (ret->elf)
			elf_end(ret->elf);
		close(fd);
		return -EBADMSG;
	}
	ret->fd = fd;
	ret->dev = sb.st_dev;
	ret->ino = sb.st_ino;
	ret->build_id_size = (uint8_t)hs_elf_build_id(ret->elf, ret->build_id, sizeof(ret->build_id));
	if (d->build_id_size &&
	    (ret->build_id_size != d->build_id_size || memcmp(ret->build_id, d->build_id, d->build_id_size))) {
		hs_dso_elf_close(ret);
		return -ESTALE;
	}
	return 0;
}

static int open_debug_candidate(const char *path, const uint8_t *want_id, size_t want_id_size, uint32_t want_crc,
				struct hs_dso_elf *ret);

size_t hs_buildid_cache_path(const uint8_t *id, size_t n, char *buf, size_t cap)
{
	const char *dir = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");
	int k;

	if (!n)
		return 0;
	if (dir && *dir)
		k = snprintf(buf, cap, "%s/.build-id/%02x/", dir, id[0]);
	else if (home && *home)
		k = snprintf(buf, cap, "%s/.debug/.build-id/%02x/", home, id[0]);
	else
		return 0;
	for (size_t i = 1; i < n && k > 0 && (size_t)k < cap; i++)
		k += snprintf(buf + k, cap - (size_t)k, "%02x", id[i]);
	return k > 0 && (size_t)k < cap ? (size_t)k : 0;
}

/* perf's build-id cache: ~/.debug/.build-id/xx/yyyy/elf (a directory since perf 4.x), or the
 * file itself at ~/.debug/.build-id/xx/yyyy in older layouts. */
static int open_from_cache(const struct hs_dso *d, struct hs_dso_elf *ret)
{
	char path[4096];
	size_t n = hs_buildid_cache_path(d->build_id, d->build_id_size, path, sizeof(path) - 8);

	if (!n)
		return -ENOENT;
	memcpy(path + n, "/elf", 5);
	if (!open_debug_candidate(path, d->build_id, d->build_id_size, 0, ret))
		return 0;
	path[n] = '\0';
	return open_debug_candidate(path, d->build_id, d->build_id_size, 0, ret) ? -ENOENT : 0;
}

void hs_dso_elf_close(struct hs_dso_elf *e)
{
	if (e->elf)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	free(e->image);
	memset(e, 0, sizeof(*e));
	e->fd = -1;
}

uint64_t hs_dso_elf_key(const struct hs_dso_elf *e)
{
	if (e->build_id_size)
		return hs_hash_bytes(e->build_id, e->build_id_size, 0xb1d) & ~1ULL;
	return hs_hash_combine(hs_hash_u64((uint64_t)e->dev), (uint64_t)e->ino) & ~1ULL;
}

#define DEBUG_ROOT "/usr/lib/debug"

/* Opens path as an ELF with the given build-id (when want_id_size) or CRC (else). */
static int open_debug_candidate(const char *path, const uint8_t *want_id, size_t want_id_size, uint32_t want_crc,
				struct hs_dso_elf *ret)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;

	memset(ret, 0, sizeof(*ret));
	ret->fd = -1;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -ENOENT;
	}
	if (!want_id_size) {
		/* .gnu_debuglink's CRC-32 (the zlib polynomial) of the whole file */
		void *m = sb.st_size ? mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
		uLong crc = 0;
		if (m == MAP_FAILED) {
			close(fd);
			return -ENOENT;
		}
		for (off_t off = 0; off < sb.st_size; off += 1 << 30)
			crc = crc32(crc, (const Bytef *)m + off, (uInt)HS_MIN((off_t)1 << 30, sb.st_size - off));
		munmap(m, (size_t)sb.st_size);
		if ((uint32_t)crc != want_crc) {
			close(fd);
			return -ESTALE;
		}
	}
	ret->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!ret->elf || elf_kind(ret->elf) != ELF_K_ELF) {
		if (ret->elf)
			elf_end(ret->elf);
		close(fd);
		return -EBADMSG;
	}
	ret->fd = fd;
	ret->dev = sb.st_dev;
	ret->ino = sb.st_ino;
	ret->build_id_size = (uint8_t)hs_elf_build_id(ret->elf, ret->build_id, sizeof(ret->build_id));
	if (want_id_size && (ret->build_id_size != want_id_size || memcmp(ret->build_id, want_id, want_id_size))) {
		hs_dso_elf_close(ret);
		return -ESTALE;
	}
	return 0;
}

/* The file name and CRC in .gnu_debuglink. */
static bool debuglink(Elf *elf, char *name, size_t cap, uint32_t *crc)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *nm;
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || !(nm = elf_strptr(elf, shstrndx, sh.sh_name)) || strcmp(nm, ".gnu_debuglink"))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < 8)
			return false;
		n = strnlen(d->d_buf, d->d_size);
		if (!n || n >= cap || n >= d->d_size || strchr(d->d_buf, '/'))
			return false;
		memcpy(name, d->d_buf, n + 1);
		/* the CRC follows the name, aligned to 4 bytes */
		n = (n + 4) & ~(size_t)3;
		if (n + 4 > d->d_size)
			return false;
		memcpy(crc, (const char *)d->d_buf + n, 4);
		return true;
	}
	return false;
}

int hs_dso_debug_open(const struct hs_dso_elf *main, const char *path, struct hs_dso_elf *ret)
{
	struct hs_strbuf sb = {0};
	char name[256];
	uint32_t crc;
	int rc = -ENOENT;

	if (main->build_id_size >= 2) {
		hs_strbuf_addf(&sb, "%s/.build-id/%02x/", DEBUG_ROOT, main->build_id[0]);
		for (size_t i = 1; i < main->build_id_size; i++)
			hs_strbuf_addf(&sb, "%02x", main->build_id[i]);
		hs_strbuf_adds(&sb, ".debug");
		rc = open_debug_candidate(hs_strbuf_str(&sb), main->build_id, main->build_id_size, 0, ret);
	}
	if (rc && main->elf && path && path[0] == '/' && debuglink(main->elf, name, sizeof(name), &crc)) {
		const char *slash = strrchr(path, '/');
		size_t dirlen = (size_t)(slash - path);
		/* beside the file, in its .debug/ directory, under the debug root */
		static const char *const pre[] = {"", "", DEBUG_ROOT}, *const mid[] = {"/", "/.debug/", "/"};

		for (size_t i = 0; i < HS_ARRAY_SIZE(pre) && rc; i++) {
			hs_strbuf_reset(&sb);
			hs_strbuf_addf(&sb, "%s%.*s%s%s", pre[i], (int)dirlen, path, mid[i], name);
			/* the debug file is never the file itself */
			if (!strcmp(hs_strbuf_str(&sb), path))
				continue;
			rc = open_debug_candidate(hs_strbuf_str(&sb), NULL, 0, crc, ret);
		}
	}
	hs_strbuf_release(&sb);
	return rc ? -ENOENT : 0;
}
