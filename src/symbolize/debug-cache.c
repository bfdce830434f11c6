/* Decompressed debug files in the user's cache (see debug-cache.h). */
#include "debug-cache.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format/elf.h"
#include "util/cache.h"
#include "util/outfile.h"
#include "util/util.h"

/* After the ELF image, in our own byte order: the cache is this machine's only. */
struct trailer {
	char magic[8];
	uint64_t elf_size; /* bytes before the trailer */
	uint64_t size, mtime_ns, dev, ino;
	uint8_t build_id[20];
	uint8_t build_id_size;
	uint8_t pad[3];
	uint32_t shnum;
};

static const char trailer_magic[8] = "HSDBGZ1";

/* A used entry's mtime is moved when older than this, not on every use. */
#define TOUCH_AGE 3600

static bool starts_with(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

int hs_debug_cache_key(const struct hs_dso_elf *e, struct hs_debug_cache_key *ret)
{
	struct hs_debug_cache_key k = {0};
	Elf_Scn *scn = NULL;
	size_t shstrndx, shnum;
	struct stat st;

	if (!hs_cache_dir() || e->fd < 0 || !e->elf || fstat(e->fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    elf_getshdrstrndx(e->elf, &shstrndx) < 0 || elf_getshdrnum(e->elf, &shnum) < 0 || shnum >= SHN_LORESERVE)
		return -ENOENT;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(e->elf, shstrndx, sh.sh_name)))
			continue;
		if (starts_with(name, ".zdebug"))
			return -ENOENT;
		if ((sh.sh_flags & SHF_COMPRESSED) && sh.sh_type != SHT_NOBITS && starts_with(name, ".debug_"))
			k.compressed += sh.sh_size;
	}
	if (k.compressed < HS_DEBUG_CACHE_MIN)
		return -ENOENT;
	k.size = (uint64_t)st.st_size;
	k.mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
	k.dev = (uint64_t)st.st_dev;
	k.ino = (uint64_t)st.st_ino;
	k.build_id_size = e->build_id_size;
	memcpy(k.build_id, e->build_id, e->build_id_size);
	hs_cache_entry_name(k.name, sizeof(k.name), "debug", k.build_id, k.build_id_size, k.dev, k.ino, "debug");
	*ret = k;
	return 0;
}

static void trailer_init(struct trailer *t, const struct hs_debug_cache_key *key, uint64_t elf_size, size_t shnum)
{
	memset(t, 0, sizeof(*t));
	memcpy(t->magic, trailer_magic, sizeof(t->magic));
	t->elf_size = elf_size;
	t->size = key->size;
	t->mtime_ns = key->mtime_ns;
	t->dev = key->dev;
	t->ino = key->ino;
	memcpy(t->build_id, key->build_id, key->build_id_size);
	t->build_id_size = key->build_id_size;
	t->shnum = (uint32_t)shnum;
}

/* Whether entry is orig with its compressed .debug_* sections decompressed: the same kind of
 * ELF, the same sections by name and type, every one inside the image. */
static bool same_sections(Elf *orig, Elf *entry, uint64_t elf_size)
{
	size_t ostr, estr, onum, enum_;
	GElf_Ehdr oh, eh;

	if (!gelf_getehdr(orig, &oh) || !gelf_getehdr(entry, &eh) || elf_getshdrstrndx(orig, &ostr) < 0 ||
	    elf_getshdrstrndx(entry, &estr) < 0 || elf_getshdrnum(orig, &onum) < 0 ||
	    elf_getshdrnum(entry, &enum_) < 0)
		return false;
	if (memcmp(oh.e_ident, eh.e_ident, EI_NIDENT) || oh.e_type != eh.e_type || oh.e_machine != eh.e_machine ||
	    onum != enum_ || ostr != estr)
		return false;
	for (size_t i = 1; i < onum; i++) {
		Elf_Scn *os = elf_getscn(orig, i), *es = elf_getscn(entry, i);
		GElf_Shdr o, e;
		const char *oname, *ename;

		if (!os || !es || !gelf_getshdr(os, &o) || !gelf_getshdr(es, &e))
			return false;
		oname = elf_strptr(orig, ostr, o.sh_name);
		ename = elf_strptr(entry, estr, e.sh_name);
		if (!oname || !ename || strcmp(oname, ename) || o.sh_type != e.sh_type || o.sh_addr != e.sh_addr)
			return false;
		if ((o.sh_flags & SHF_COMPRESSED) && starts_with(oname, ".debug_"))
			o.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
		else if (o.sh_size != e.sh_size)
			return false;
		if (o.sh_flags != e.sh_flags)
			return false;
		if (e.sh_type != SHT_NOBITS && (e.sh_offset > elf_size || e.sh_size > elf_size - e.sh_offset))
			return false;
	}
	return true;
}

int hs_debug_cache_open(const struct hs_debug_cache_key *key, const struct hs_dso_elf *e, struct hs_dso_elf *ret)
{
	struct trailer want, got;
	struct stat st;
	size_t shnum;
	Elf *elf;
	int fd = hs_cache_open(key->name);

	if (fd < 0)
		return -ENOENT;
	if (elf_getshdrnum(e->elf, &shnum) < 0 || fstat(fd, &st) < 0 || (uint64_t)st.st_size < sizeof(got) ||
	    pread(fd, &got, sizeof(got), st.st_size - (off_t)sizeof(got)) != (ssize_t)sizeof(got) ||
	    memcmp(got.magic, trailer_magic, sizeof(got.magic)) || got.elf_size != (uint64_t)st.st_size - sizeof(got)) {
		close(fd);
		return -EBADMSG;
	}
	trailer_init(&want, key, got.elf_size, shnum);
	if (memcmp(&want, &got, sizeof(want))) {
		close(fd);
		return -ESTALE;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !same_sections(e->elf, elf, got.elf_size)) {
		if (elf)
			elf_end(elf);
		close(fd);
		return -EBADMSG;
	}
	/* its mtime says when it was last used (trimming goes by it), to the hour */
	if (st.st_mtim.tv_sec < time(NULL) - TOUCH_AGE)
		futimens(fd, NULL);
	memset(ret, 0, sizeof(*ret));
	ret->elf = elf;
	ret->fd = fd;
	ret->dev = st.st_dev;
	ret->ino = st.st_ino;
	memcpy(ret->build_id, e->build_id, sizeof(ret->build_id));
	ret->build_id_size = e->build_id_size;
	ret->symfs = e->symfs;
	ret->root_pid = e->root_pid;
	return 0;
}

/* Copies in (its sections' data as it is now) to a new ELF file on fd, laid out by libelf.
 * Returns the image's size, or -1. */
static int64_t copy_elf(Elf *in, int fd)
{
	Elf *out = elf_begin(fd, ELF_C_WRITE, NULL);
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t phnum;
	int64_t size = -1;

	if (!out || !gelf_getehdr(in, &eh) || elf_getphdrnum(in, &phnum) < 0 || !gelf_newehdr(out, gelf_getclass(in)))
		goto out;
	if (phnum) {
		if (!gelf_newphdr(out, phnum))
			goto out;
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(in, (int)i, &ph) || !gelf_update_phdr(out, (int)i, &ph))
				goto out;
		}
	}
	while ((scn = elf_nextscn(in, scn))) {
		Elf_Scn *nscn = elf_newscn(out);
		Elf_Data *data = NULL, *nd;
		GElf_Shdr sh;

		if (!nscn || !gelf_getshdr(scn, &sh))
			goto out;
		/* the data as libelf holds it now: decompressed where libdw had it decompressed */
		while ((data = elf_getdata(scn, data))) {
			if (!(nd = elf_newdata(nscn)))
				goto out;
			nd->d_buf = data->d_buf;
			nd->d_type = data->d_type;
			nd->d_size = data->d_size;
			nd->d_off = data->d_off;
			nd->d_align = data->d_align;
			nd->d_version = data->d_version;
		}
		if (!gelf_update_shdr(nscn, &sh))
			goto out;
	}
	if (!gelf_update_ehdr(out, &eh))
		goto out;
	size = elf_update(out, ELF_C_WRITE);
out:
	if (out)
		elf_end(out);
	return size;
}

int hs_debug_cache_write(const struct hs_debug_cache_key *key, struct hs_dso_elf *e)
{
	struct hs_outfile o;
	struct trailer t;
	Elf_Scn *scn = NULL;
	size_t shstrndx, shnum;
	int64_t size;
	int rc;

	if (elf_getshdrstrndx(e->elf, &shstrndx) < 0 || elf_getshdrnum(e->elf, &shnum) < 0)
		return -EBADMSG;
	/* what libdw left compressed (a section it does not read) */
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_COMPRESSED) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (starts_with(name, ".debug_") && elf_compress(scn, 0, 0) < 0)
			return -EBADMSG;
	}
	rc = hs_cache_create(&o, key->name);
	if (rc)
		return rc;
	size = copy_elf(e->elf, o.fd);
	if (size <= 0) {
		hs_outfile_abort(&o);
		return -EIO;
	}
	trailer_init(&t, key, (uint64_t)size, shnum);
	/* libelf wrote with pwrite(): the offset is still 0 */
	if (pwrite(o.fd, &t, sizeof(t), (off_t)size) != (ssize_t)sizeof(t)) {
		rc = errno ? -errno : -EIO;
		hs_outfile_abort(&o);
		return rc;
	}
	rc = hs_outfile_commit(&o);
	if (!rc)
		hs_debug_cache_trim(HS_DEBUG_CACHE_MAX);
	return rc;
}

int hs_debug_cache_trim(uint64_t max)
{
	return hs_cache_trim("debug", max);
}
