/* Finding a process's JVM: the libjvm.so of its maps (opened through /proc/PID/root, so that a
 * container's is found), its load bias, and the dynamic symbols that lead to its VMStructs
 * tables. The same steps as the Python reader's finder (python/find.c), for one file name. */
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "hotspot/hotspot.h"
#include "util/infile.h"
#include "util/util.h"

#define MAX_SYMBOLS 4000000 /* symbols looked at per table: a hostile count ends the search */

static int pid_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	struct iovec local = {buf, n}, remote = {(void *)(uintptr_t)addr, n};

	if (!n)
		return 0;
	return process_vm_readv((pid_t)(intptr_t)ctx, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

struct hs_jvm_mem hs_jvm_mem_pid(int32_t pid)
{
	return (struct hs_jvm_mem){pid_read, (void *)(intptr_t)pid};
}

bool hs_jvm_maybe_runtime(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return path && !strcmp(b ? b + 1 : path, "libjvm.so");
}

struct mapping {
	uint64_t start, off, ino;
	char path[256];
};

/* The first (lowest) mapping of a file named libjvm.so: 0, or -ENOENT. */
static int find_mapping(int32_t pid, struct mapping *ret)
{
	char buf[600];
	int rc = -ENOENT;
	FILE *f;

	snprintf(buf, sizeof(buf), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(buf, "re")))
		return -errno;
	while (rc && fgets(buf, sizeof(buf), f)) {
		uint64_t start, end, off, ino;
		int pos = 0;
		size_t plen;

		if (!strchr(buf, '\n')) {
			/* a name too long for buf: skip the rest of its line, not read it as a line */
			int ch;
			while ((ch = getc(f)) != EOF && ch != '\n')
				;
			continue;
		}
		if (sscanf(buf, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %" SCNu64 " %n", &start, &end, &off, &ino,
			   &pos) < 4 ||
		    !pos || !ino)
			continue;
		plen = strcspn(buf + pos, "\n");
		buf[pos + plen] = 0;
		if (buf[pos] != '/' || plen >= sizeof(ret->path) || !hs_jvm_maybe_runtime(buf + pos))
			continue;
		*ret = (struct mapping){start, off, ino, ""};
		memcpy(ret->path, buf + pos, plen + 1);
		rc = 0;
	}
	fclose(f);
	return rc;
}

/* The file a mapping names, through the process's root or else directly; the inode must be the
 * mapping's. */
static int open_mapped(int32_t pid, const struct mapping *m)
{
	char buf[512];
	const char *paths[2] = {buf, m->path};
	struct stat st;

	snprintf(buf, sizeof(buf), "/proc/%d/root%s", (int)pid, m->path);
	for (int i = 0; i < 2; i++) {
		int fd = hs_infile_open(paths[i], 0, &st);
		if (fd < 0)
			continue;
		if (st.st_ino == m->ino)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

static void scan_symbols(Elf *elf, Elf_Scn *scn, uint64_t *syms)
{
	GElf_Shdr sh;
	Elf_Data *d;
	size_t n;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
		return;
	n = HS_MIN(sh.sh_size / sh.sh_entsize, (size_t)MAX_SYMBOLS);
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		if (!(name = elf_strptr(elf, sh.sh_link, sym.st_name)) || strncmp(name, "gHotSpotVM", 10))
			continue;
		for (int w = 0; w < HS_JVM_NSYMS; w++)
			if (!syms[w] && !strcmp(name, hs_jvm_sym_names[w]))
				syms[w] = sym.st_value;
	}
}

/* The load bias of the mapping: the file byte at offset m->off is at m->start, and the load
 * segment holding it says which address the file meant for that byte. */
static int load_bias(Elf *elf, const struct mapping *m, uint64_t *bias)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum))
		return -EBADMSG;
	for (size_t i = 0; i < phnum && i < 65536; i++) {
		GElf_Phdr ph;
		uint64_t pgoff;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		pgoff = ph.p_offset & ~(uint64_t)4095;
		if (m->off >= pgoff && m->off < ph.p_offset + ph.p_filesz) {
			*bias = m->start - m->off - (ph.p_vaddr - ph.p_offset);
			return 0;
		}
	}
	return -ENOENT;
}

/* The tables' symbols of the mapped file (dynamic symbols: libjvm exports them) and its load
 * bias: 0, or a negative errno with why set. */
static int read_file_syms(int32_t pid, const struct mapping *m, uint64_t *syms, uint64_t *bias, char *why,
			  size_t whylen)
{
	Elf *elf;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	int fd, rc = -EBADMSG;

	if ((fd = open_mapped(pid, m)) < 0) {
		snprintf(why, whylen, "hotspot: cannot open '%s'", m->path);
		return fd;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 || eh.e_type != ET_DYN) {
		snprintf(why, whylen, "hotspot: '%s' is not an x86_64 shared library", m->path);
		goto out;
	}
	memset(syms, 0, HS_JVM_NSYMS * sizeof(*syms));
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM)
			scan_symbols(elf, scn, syms);
	}
	for (int i = 0; i < HS_JVM_NSYMS; i++)
		if (!syms[i]) {
			snprintf(why, whylen, "hotspot: '%s' does not export %s", m->path, hs_jvm_sym_names[i]);
			goto out;
		}
	if ((rc = load_bias(elf, m, bias)))
		snprintf(why, whylen, "hotspot: '%s' is mapped where none of its segments is", m->path);
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}

enum hs_jvm_found hs_jvm_find(int32_t pid, struct hs_jvm *ret, char *why, size_t whylen)
{
	struct hs_jvm_mem mem = hs_jvm_mem_pid(pid);
	uint64_t syms[HS_JVM_NSYMS], bias = 0;
	struct mapping m;
	struct hs_jvm j;
	char buf[256] = "";

	if (find_mapping(pid, &m))
		return HS_JVM_NOT_JAVA;
	if (read_file_syms(pid, &m, syms, &bias, buf, sizeof(buf)))
		goto refuse;
	for (int i = 0; i < HS_JVM_NSYMS; i++)
		syms[i] += bias;
	if (hs_jvm_read_tables(&mem, syms, &j, buf, sizeof(buf)))
		goto refuse;
	snprintf(j.path, sizeof(j.path), "%s", m.path);
	j.bias = bias;
	*ret = j;
	return HS_JVM_SUPPORTED;
refuse:
	if (why && whylen)
		snprintf(why, whylen, "%s", buf);
	return HS_JVM_UNSUPPORTED;
}
