/* PHP's functions named from the process's memory (a frame's zend_function: its name, class and
 * file), and what the engine's native functions are to the merge of its frames. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/php/php.h"
#include "util/util.h"

#define MAX_NAME 1024 /* bytes of a name or a file read; longer ones are cut */

/* zend_string: refcount and type_info, the hash, the length, then the bytes */
#define STR_TYPE_INFO 4
#define STR_LEN 16
#define STR_VAL 24
#define IS_STRING 6
/* zend_class_entry's name */
#define CE_NAME 8

/* The zend_string at addr, as a C string cut at its first NUL (an anonymous class's name goes on
 * past one with where it was declared), or NULL when it cannot be read or is not a string. */
static char *read_string(const struct hs_rt_mem *mem, uint64_t addr)
{
	uint8_t head[STR_VAL];
	uint64_t len;
	uint32_t type;
	char *s;

	if (!addr || (addr & 7) || mem->read(mem->ctx, addr, head, sizeof(head)))
		return NULL;
	memcpy(&type, head + STR_TYPE_INFO, sizeof(type));
	memcpy(&len, head + STR_LEN, sizeof(len));
	if ((type & 0xf) != IS_STRING)
		return NULL;
	len = HS_MIN(len, (uint64_t)MAX_NAME);
	s = hs_xmalloc(len + 1);
	if (len && mem->read(mem->ctx, addr + STR_VAL, s, len)) {
		free(s);
		return NULL;
	}
	s[len] = 0;
	return s;
}

int hs_php_code_read(const void *proc, const struct hs_rt_mem *mem, const struct hs_ip_frame *f, struct hs_ip_code *c)
{
	const struct hs_php_offsets *off = &((const struct hs_php_proc *)proc)->info.off;
	uint8_t fn[256];
	uint64_t name_at, scope, file_at = 0, ce_name, what = f->fn;
	uint32_t line_start = 0;
	char *name = NULL, *cls = NULL, *file = NULL;
	uint8_t type;

	if (off->fn_read > sizeof(fn) || off->op_read > sizeof(fn) || !f->fn ||
	    mem->read(mem->ctx, f->fn, fn, off->fn_read))
		return -1;
	type = fn[off->fn_type];
	if (type != HS_PHP_TYPE_INTERNAL && type != HS_PHP_TYPE_USER && type != HS_PHP_TYPE_EVAL)
		return -1;
	if (type != HS_PHP_TYPE_INTERNAL) {
		if (mem->read(mem->ctx, f->fn, fn, off->op_read))
			return -1;
		memcpy(&file_at, fn + off->op_filename, 8);
		memcpy(&what, fn + off->op_opcodes, 8);
		memcpy(&line_start, fn + off->op_line_start, 4);
	}
	memcpy(&name_at, fn + off->fn_name, 8);
	memcpy(&scope, fn + off->fn_scope, 8);
	/* another function at this address since the frame was read: not named after it */
	if (hs_php_aux(name_at, file_at, what) != f->aux)
		return -1;
	if (name_at && !(name = read_string(mem, name_at)))
		return -1;
	if (file_at && !(file = read_string(mem, file_at))) {
		free(name);
		return -1;
	}
	if (!name) {
		/* a file's top level (the script's or an included file's), or eval'd code */
		name = hs_xstrdup(type == HS_PHP_TYPE_EVAL ? "eval" : type == HS_PHP_TYPE_USER ? "main" : "{internal}");
	} else if (scope && !mem->read(mem->ctx, scope + CE_NAME, &ce_name, sizeof(ce_name)) &&
		   (cls = read_string(mem, ce_name))) {
		char *full = hs_xmalloc(strlen(cls) + 2 + strlen(name) + 1);
		sprintf(full, "%s::%s", cls, name);
		free(name);
		free(cls);
		name = full;
	}
	memset(c, 0, sizeof(*c));
	c->name = name;
	c->file = file;
	c->firstline = line_start;
	return 0;
}

/* The engine's calls into a run of execute_ex and between its frames: the PHP frames either
 * side say what ran. A builtin's own work (zend_sort under usort) stays. */
static const char *const plumbing[] = {
	"zend_execute",
	"zend_execute_scripts",
	"execute_internal",
	"zend_call_function",
	"zend_call_known_function",
	"zend_call_known_instance_method_with_2_params",
	"zend_call_method",
	"zend_call_method_if_exists",
	"zend_fcall_info_call",
	"zend_generator_resume",
	"zend_vm_call_opcode_handler",
	"zend_observer_fcall_begin",
	"zend_observer_fcall_end",
	"dtrace_execute_ex",
	"dtrace_execute_internal",
	"zend_user_it_get_current_data",
	"zend_user_it_get_current_key",
	"zend_user_it_move_forward",
	"zend_user_it_rewind",
	"zend_user_it_valid",
};

enum hs_ip_native hs_php_native_class(const char *name)
{
	size_t n;

	if (!name)
		return HS_IP_NATIVE_OTHER;
	/* up to a compiler suffix (".cold", ".constprop.0") */
	n = strcspn(name, ".");
	if (n == strlen("execute_ex") && !strncmp(name, "execute_ex", n))
		return HS_IP_NATIVE_LOOP;
	for (size_t i = 0; i < HS_ARRAY_SIZE(plumbing); i++)
		if (strlen(plumbing[i]) == n && !strncmp(name, plumbing[i], n))
			return HS_IP_NATIVE_PLUMBING;
	return HS_IP_NATIVE_OTHER;
}
