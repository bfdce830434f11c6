/* Finding a process's JVM: the libjvm.so of its maps (opened through /proc/PID/root, so that a
 * container's is found), its load bias, and the dynamic symbols that lead to its VMStructs
 * tables (runtime/proc.h reads them). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/hotspot/hotspot.h"
#include "util/util.h"

bool hs_jvm_maybe_runtime(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return path && !strcmp(b ? b + 1 : path, "libjvm.so");
}

/* The first (lowest) mapping of a file named libjvm.so, into arg. */
static int is_libjvm(void *arg, const struct hs_rt_mapping *m)
{
	if (!hs_jvm_maybe_runtime(m->path))
		return 0;
	*(struct hs_rt_mapping *)arg = *m;
	return 1;
}

/* The tables' symbols of the mapped file (dynamic symbols: libjvm exports them) and its load
 * bias: 0, or a negative errno with why set. */
static int read_file_syms(int32_t pid, const struct hs_rt_mapping *m, uint64_t *syms, uint64_t *bias, char *why,
			  size_t whylen)
{
	Elf *elf;
	GElf_Ehdr eh;
	int fd, rc = -EBADMSG;

	if ((fd = hs_rt_open_mapped(pid, m)) < 0) {
		snprintf(why, whylen, "hotspot: cannot open '%.200s'", m->path);
		return fd;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 || eh.e_type != ET_DYN) {
		snprintf(why, whylen, "hotspot: '%.200s' is not an x86_64 shared library", m->path);
		goto out;
	}
	memset(syms, 0, HS_JVM_NSYMS * sizeof(*syms));
	hs_rt_elf_symbols(elf, SHT_DYNSYM, false, hs_jvm_sym_names, HS_JVM_NSYMS, syms);
	for (int i = 0; i < HS_JVM_NSYMS; i++)
		if (!syms[i]) {
			snprintf(why, whylen, "hotspot: '%.200s' does not export %s", m->path, hs_jvm_sym_names[i]);
			goto out;
		}
	if ((rc = hs_rt_load_bias(elf, m, bias)))
		snprintf(why, whylen, "hotspot: '%.200s' is mapped where none of its segments is", m->path);
	else if ((rc = hs_rt_segments_mapped(pid, elf, m, *bias)))
		snprintf(why, whylen, "its segments are not all mapped");
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}

enum hs_jvm_found hs_jvm_find(int32_t pid, struct hs_jvm *ret, char *why, size_t whylen)
{
	struct hs_rt_mem mem = hs_rt_mem_pid(pid);
	uint64_t syms[HS_JVM_NSYMS], bias = 0;
	struct hs_rt_mapping m;
	struct hs_jvm j;
	char buf[256] = "";
	int rc;

	if (hs_rt_maps_each(pid, is_libjvm, &m) != 1)
		return HS_JVM_NOT_JAVA;
	if (!(rc = read_file_syms(pid, &m, syms, &bias, buf, sizeof(buf)))) {
		for (int i = 0; i < HS_JVM_NSYMS; i++)
			syms[i] += bias;
		rc = hs_jvm_read_tables(&mem, syms, &j, buf, sizeof(buf));
	}
	if (rc == -EAGAIN || rc == -EFAULT) {
		/* libjvm is being loaded: the dynamic loader maps its segments one after the other,
		 * and its constructors set the tables up after that */
		if (why && whylen)
			snprintf(why, whylen, "hotspot: cannot read its tables yet (%s)", buf);
		return HS_JVM_UNSUPPORTED;
	}
	if (rc)
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
