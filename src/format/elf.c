/* ELF metadata readers. */
#include "elf.h"

#include <gelf.h>
#include <string.h>

#include "util/util.h"

/* The GNU build-id in a block of ELF notes, or 0. */
static size_t notes_build_id(Elf_Data *d, uint8_t *buf, size_t cap)
{
	size_t off = 0, noff, doff;
	GElf_Nhdr nh;

	while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp((char *)d->d_buf + noff, "GNU", 4) &&
		    nh.n_descsz > 0) {
			size_t n = HS_MIN((size_t)nh.n_descsz, cap);
			memcpy(buf, (char *)d->d_buf + doff, n);
			return n;
		}
	}
	return 0;
}

size_t hs_elf_build_id(Elf *elf, uint8_t *buf, size_t cap)
{
	Elf_Scn *scn = NULL;
	size_t phnum, n;

	/* Section headers first (present in any file we read), then program headers (a memory
	 * image such as the vdso may only have those). */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE && (n = notes_build_id(elf_getdata(scn, NULL), buf, cap)))
			return n;
	}
	if (elf_getphdrnum(elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_NOTE &&
			    (n = notes_build_id(elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR),
						buf, cap)))
				return n;
		}
	}
	return 0;
}


Elf_Scn *hs_elf_section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *nm;
		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS && (nm = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(nm, name))
			return scn;
	}
	return NULL;
}

bool hs_elf_has_section(Elf *elf, const char *name)
{
	return hs_elf_section(elf, name) != NULL;
}
