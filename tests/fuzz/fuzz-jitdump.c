/* libFuzzer target: jitdump bytes through the record reader (every record's size checked against
 * what it claims), then as a runtime's file into the model's JIT store (read whole, as from a
 * perf.data), with lookups of the code it loaded and its unwinding information compiled as the
 * unwinder does. Corpus: tests/fuzz/corpus/jitdump/. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/jitdump.h"
#include "model/jit.h"
#include "unwind/cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_jitdump_header h;
	struct hs_error err = {0};
	struct hs_jit j;
	struct hs_jit_opts o = {0};
	uint64_t addrs[64], times[64];
	size_t naddrs = 0, off;
	int fd;

	if (hs_jitdump_header_parse(data, size, &h, &err) == 0) {
		for (off = h.size; off < size;) {
			struct hs_jitdump_record r;
			int rc = hs_jitdump_record_parse(data + off, size - off, &h, off, &r, &err);
			if (rc == -ENODATA || (rc == -EBADMSG && r.size < HS_JITDUMP_RECORD_HEADER))
				break;
			if (r.size < HS_JITDUMP_RECORD_HEADER)
				abort();
			if (rc == 0 && r.id == HS_JIT_CODE_DEBUG_INFO) {
				struct hs_jitdump_debug_iter it = {0};
				struct hs_jitdump_debug_entry e;
				while (hs_jitdump_debug_next(&r, &it, &e))
					if (e.file < (const char *)data || e.file + e.file_len > (const char *)data + size)
						abort();
			}
			if (rc == 0 && r.id == HS_JIT_CODE_LOAD) {
				if (r.load.name + r.load.name_len > (const char *)data + off + r.size)
					abort();
				if (naddrs < 64) {
					addrs[naddrs] = r.load.code_addr + r.load.code_size / 2;
					times[naddrs++] = r.timestamp;
				}
			}
			off += r.size;
		}
	}

	/* the store reads it from a file, as it would a runtime's */
	fd = memfd_create("jitdump", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	o.timed = size & 1;
	hs_jit_init(&j, &o);
	hs_jit_add_jitdump(&j, 1, fd, "fuzz.dump");
	for (size_t i = 0; i < naddrs; i++) {
		const struct hs_jit_code *c = hs_jit_find(&j, 1, addrs[i], times[i]);
		const char *file;
		uint32_t line;
		if (!c)
			continue;
		if (c->start > addrs[i] || c->end <= addrs[i])
			abort();
		hs_jit_code_line(&j, c, addrs[i], &file, &line);
		hs_jit_find(&j, 1, addrs[i], 0);
		hs_jit_find(&j, 1, addrs[i], UINT64_MAX);
	}
	for (size_t i = 0; i < j.unwinds.n; i++) {
		const struct hs_jit_unwind *w = &j.unwinds.v[i];
		uint64_t eh = 0x10000 + ((w->code_size + 7) & ~7ULL);
		struct hs_cfi_table *t = NULL;
		struct hs_error e2 = {0};
		if (hs_cfi_table_build_eh_frame(w->data, w->eh_frame_size, eh, w->data + w->eh_frame_size, w->hdr_size,
						eh + w->eh_frame_size, &t, &e2) == 0) {
			for (uint64_t pc = 0x10000; pc < 0x10000 + HS_MIN(w->code_size, 256); pc++)
				hs_cfi_table_find(t, pc);
			hs_cfi_table_free(t);
		}
	}
	hs_jit_release(&j);
	return 0;
}
