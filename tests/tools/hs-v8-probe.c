/* hs-v8-probe PID | --file PATH: what src/runtime/v8/ finds of V8 in a running process or a
 * binary, one fact a line, for the end-to-end tests (tests/e2e/v8-tables.sh): its version, its
 * layout, and where the process runs the builtins from. Exit 0 when accepted, 2 when refused (the
 * reason on stderr, one line), 3 when no V8 is there. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/v8/v8.h"

static void print_layout(const struct hs_v8_layout *l)
{
	printf("version %u.%u.%u.%u\n", l->major, l->minor, l->build, l->patch);
	printf("frame context %d function %d argc %d bytecode_array %d bytecode_offset %d\n", l->fp_context,
	       l->fp_function, l->fp_argc, l->fp_bytecode_array, l->fp_bytecode_offset);
	printf("frametypes entry %u exit %u builtin_exit %u interpreted %u baseline %u maglev %u turbofan %u stub %u "
	       "internal %u\n",
	       l->ft_entry, l->ft_exit, l->ft_builtin_exit, l->ft_interpreted, l->ft_baseline, l->ft_maglev,
	       l->ft_turbofan, l->ft_stub, l->ft_internal);
	printf("types js_function %u-%u sfi %u code %u bytecode_array %u script %u scope_info %u\n",
	       l->t_js_function_first, l->t_js_function_last, l->t_sfi, l->t_code, l->t_bytecode_array, l->t_script,
	       l->t_scope_info);
	printf("fields fn_shared %u fn_code %u sfi_name %u sfi_script %u sfi_data %u script_name %u line_ends %u\n",
	       l->fn_shared, l->fn_code, l->sfi_name_or_scope_info, l->sfi_script, l->sfi_function_data,
	       l->script_name, l->script_line_ends);
	printf("code start %u size %u flags %u spt %u deopt %u kinds builtin %u interpreted %u baseline %u maglev %u "
	       "turbofan %u\n",
	       l->code_start, l->code_size, l->code_flags, l->code_spt, l->code_deopt, l->kind_builtin,
	       l->kind_interpreted, l->kind_baseline, l->kind_maglev, l->kind_turbofan);
	printf("bytecode spt %u data %u bias %u\n", l->bytecode_spt, l->bytecode_data, l->bytecode_bias);
}

static int probe_file(const char *path)
{
	struct hs_v8_syms syms;
	struct hs_v8_layout l;
	char why[256];
	int fd = open(path, O_RDONLY), rc;
	Elf *elf;

	if (fd < 0) {
		fprintf(stderr, "hs-v8-probe: cannot open '%s'\n", path);
		return 1;
	}
	elf_version(EV_CURRENT);
	if (!(elf = elf_begin(fd, ELF_C_READ_MMAP, NULL))) {
		fprintf(stderr, "hs-v8-probe: '%s' is not an ELF file\n", path);
		return 2;
	}
	rc = hs_v8_syms_read(elf, &syms);
	elf_end(elf);
	close(fd);
	if (rc == -ENOENT)
		return 3;
	if (rc) {
		fprintf(stderr, "v8: '%s': its v8dbg_ symbols cannot be read\n", path);
		return 2;
	}
	printf("symbols %zu\n", syms.n);
	rc = hs_v8_layout_read(&syms, &l, why, sizeof(why));
	hs_v8_syms_release(&syms);
	if (rc) {
		fprintf(stderr, "%s\n", why);
		return 2;
	}
	print_layout(&l);
	return 0;
}

int main(int argc, char **argv)
{
	struct hs_v8 v;
	char why[256] = "";

	if (argc == 3 && !strcmp(argv[1], "--file"))
		return probe_file(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: hs-v8-probe PID | --file PATH\n");
		return 1;
	}
	switch (hs_v8_find(atoi(argv[1]), &v, why, sizeof(why))) {
	case HS_V8_SUPPORTED:
		printf("binary %s bias 0x%" PRIx64 "\n", v.path, v.bias);
		print_layout(&v.lay);
		printf("builtins 0x%" PRIx64 " size 0x%" PRIx64 " copy 0x%" PRIx64 "\n", v.blob, v.blob_size,
		       v.blob_copy);
		printf("code range 0x%" PRIx64 "-0x%" PRIx64 "\n", v.jit_lo, v.jit_hi);
		return 0;
	case HS_V8_UNSUPPORTED:
		fprintf(stderr, "%s\n", why);
		return 2;
	default:
		return 3;
	}
}
