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
#include <unistd.h>

#include "format/elf.h"
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

int hs_dso_elf_open(const struct hs_dso *d, struct hs_dso_elf *ret)
{
	struct stat sb;
	bool captured = d->fd >= 0;
	int fd, rc;

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
	fd = captured ? dup(d->fd) : open(d->path, O_RDONLY | O_CLOEXEC);
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
