/* A V8 binary's layout, from its v8dbg_* symbols: each one the reader needs must be there and
 * in its range, and what V8 does not publish (a few field offsets, code kinds, the interpreter's
 * offset bias) comes from what is known of the version, and is checked against the symbols that
 * bound it. A version not known is refused: nothing is read with guessed offsets. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runtime/v8/v8.h"

/* What V8 does not publish, per version (from its source, and checked on a running binary of
 * it). */
struct known {
	unsigned major, minor;
	const char *node; /* the Node.js line that ships it */
	int8_t fp_argc;
	uint16_t fn_code_after_shared; /* JSFunction: code is this many bytes after shared */
	uint16_t code_start, code_flags, code_size; /* Code: after its source position table */
	uint16_t bytecode_spt; /* BytecodeArray's source position table: after its length */
	uint8_t js_function_types; /* instance types of JSFunction and its subclasses, from the first */
	uint8_t kind_builtin, kind_maglev, kind_turbofan; /* after the baseline kind */
};

static const struct known known[] = {
	/* V8 11.3: Node.js 20 */
	{11, 3, "20", -24, 24, 16, 24, 32, 24, 15, 2, 1, 2},
};

struct ctx {
	const struct hs_v8_syms *s;
	char *why;
	size_t len;
	int rc;
};

/* v8dbg_NAME's value into *v when in [lo, hi]; else the first failure is set and kept. */
static int64_t want(struct ctx *c, const char *name, int64_t lo, int64_t hi)
{
	int64_t v = 0;

	if (c->rc)
		return lo;
	if (!hs_v8_sym(c->s, name, &v)) {
		snprintf(c->why, c->len, "v8: no v8dbg_%s in the binary", name);
		c->rc = -EOPNOTSUPP;
		return lo;
	}
	if (v < lo || v > hi) {
		snprintf(c->why, c->len, "v8: v8dbg_%s is %lld, not in [%lld, %lld]", name, (long long)v, (long long)lo,
			 (long long)hi);
		c->rc = -EOPNOTSUPP;
		return lo;
	}
	return v;
}

/* The same value for a constant the reader was written for. */
static void expect(struct ctx *c, const char *name, int64_t value)
{
	(void)want(c, name, value, value);
}

static uint16_t field(struct ctx *c, const char *name)
{
	return (uint16_t)want(c, name, 0, 4096);
}

static uint16_t type(struct ctx *c, const char *name)
{
	return (uint16_t)want(c, name, 1, 0xffff);
}

static uint8_t frame_type(struct ctx *c, const char *name)
{
	return (uint8_t)want(c, name, 1, 100);
}

static int8_t fp_slot(struct ctx *c, const char *name)
{
	return (int8_t)want(c, name, -120, -8);
}

static void tagging(struct ctx *c, struct hs_v8_layout *l)
{
	/* full pointers and Smis in the upper half: a build with pointer compression (tagged
	 * values of 4 bytes) is refused here */
	expect(c, "TaggedSize", 8);
	expect(c, "SystemPointerSize", 8);
	expect(c, "SmiTagMask", 1);
	expect(c, "SmiShiftSize", 31);
	expect(c, "SmiValueShift", 1);
	l->heap_tag = (uint8_t)want(c, "HeapObjectTag", 1, 1);
	l->heap_tag_mask = (uint8_t)want(c, "HeapObjectTagMask", 3, 3);
	l->t_first_nonstring = type(c, "FirstNonstringType");
	l->str_repr_mask = (uint8_t)want(c, "StringRepresentationMask", 1, 15);
	l->str_enc_mask = (uint8_t)want(c, "StringEncodingMask", 1, 64);
	l->str_enc_one_byte = (uint8_t)want(c, "OneByteStringTag", 1, 64);
	l->str_seq = (uint8_t)want(c, "SeqStringTag", 0, 15);
	l->str_cons = (uint8_t)want(c, "ConsStringTag", 0, 15);
	l->str_external = (uint8_t)want(c, "ExternalStringTag", 0, 15);
	l->str_sliced = (uint8_t)want(c, "SlicedStringTag", 0, 15);
	l->str_thin = (uint8_t)want(c, "ThinStringTag", 0, 15);
	if (!c->rc && ((l->str_enc_one_byte & l->str_enc_mask) != l->str_enc_one_byte ||
		       ((l->str_seq | l->str_cons | l->str_external | l->str_sliced | l->str_thin) & ~l->str_repr_mask))) {
		snprintf(c->why, c->len, "v8: the string tags do not fit their masks");
		c->rc = -EOPNOTSUPP;
	}
}

static void frames(struct ctx *c, struct hs_v8_layout *l, const struct known *k)
{
	expect(c, "off_fp_context_or_frame_type", -8);
	l->fp_context = fp_slot(c, "off_fp_context");
	l->fp_function = fp_slot(c, "off_fp_function");
	l->fp_bytecode_array = fp_slot(c, "off_fp_bytecode_array");
	l->fp_bytecode_offset = fp_slot(c, "off_fp_bytecode_offset");
	l->fp_argc = k->fp_argc;
	/* the argument count sits between the function and the bytecode array */
	if (!c->rc && (l->fp_function != l->fp_argc + 8 || l->fp_bytecode_array != l->fp_argc - 8 ||
		       l->fp_bytecode_offset != l->fp_bytecode_array - 8 || l->fp_context != -8)) {
		snprintf(c->why, c->len, "v8: the frame slots (%d, %d, %d, %d) are not V8 %u.%u's", l->fp_context,
			 l->fp_function, l->fp_bytecode_array, l->fp_bytecode_offset, k->major, k->minor);
		c->rc = -EOPNOTSUPP;
	}
	l->reg_bytecode_array = (uint8_t)want(c, "InterpreterBytecodeArrayRegister", 0, 15);
	l->reg_bytecode_offset = (uint8_t)want(c, "InterpreterBytecodeOffsetRegister", 0, 15);
	l->ft_entry = frame_type(c, "frametype_EntryFrame");
	l->ft_construct_entry = frame_type(c, "frametype_ConstructEntryFrame");
	l->ft_exit = frame_type(c, "frametype_ExitFrame");
	l->ft_builtin_exit = frame_type(c, "frametype_BuiltinExitFrame");
	l->ft_interpreted = frame_type(c, "frametype_InterpretedFrame");
	l->ft_baseline = frame_type(c, "frametype_BaselineFrame");
	l->ft_maglev = frame_type(c, "frametype_MaglevFrame");
	l->ft_turbofan = frame_type(c, "frametype_TurbofanFrame");
	l->ft_stub = frame_type(c, "frametype_StubFrame");
	l->ft_internal = frame_type(c, "frametype_InternalFrame");
	l->ft_construct = frame_type(c, "frametype_ConstructFrame");
	l->ft_builtin = frame_type(c, "frametype_BuiltinFrame");
}

static void objects(struct ctx *c, struct hs_v8_layout *l, const struct known *k)
{
	l->t_js_function_first = type(c, "type_JSFunction__JS_FUNCTION_TYPE");
	l->t_js_function_last = (uint16_t)(l->t_js_function_first + k->js_function_types - 1);
	l->t_sfi = type(c, "type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE");
	l->t_code = type(c, "type_Code__CODE_TYPE");
	l->t_bytecode_array = type(c, "type_BytecodeArray__BYTECODE_ARRAY_TYPE");
	l->t_script = type(c, "type_Script__SCRIPT_TYPE");
	l->t_scope_info = type(c, "type_ScopeInfo__SCOPE_INFO_TYPE");
	l->t_fixed_array = type(c, "type_FixedArray__FIXED_ARRAY_TYPE");
	l->t_byte_array = type(c, "type_ByteArray__BYTE_ARRAY_TYPE");
	l->t_weak_fixed_array = type(c, "type_WeakFixedArray__WEAK_FIXED_ARRAY_TYPE");
	l->t_instruction_stream = type(c, "type_InstructionStream__INSTRUCTION_STREAM_TYPE");
	expect(c, "class_HeapObject__map__Map", 0);
	l->map_instance_type = field(c, "class_Map__instance_type__uint16_t");
	l->fn_shared = field(c, "class_JSFunction__shared__SharedFunctionInfo");
	l->fn_code = (uint16_t)(l->fn_shared + k->fn_code_after_shared);
	l->sfi_function_data = field(c, "class_SharedFunctionInfo__function_data__Object");
	l->sfi_name_or_scope_info = field(c, "class_SharedFunctionInfo__name_or_scope_info__Object");
	l->sfi_script = field(c, "class_SharedFunctionInfo__script_or_debug_info__HeapObject");
	l->sfi_token_offset = field(c, "class_SharedFunctionInfo__raw_function_token_offset__int16_t");
	l->script_name = field(c, "class_Script__name__Object");
	l->script_source = field(c, "class_Script__source__Object");
	l->script_line_ends = field(c, "class_Script__line_ends__Object");
	l->array_length = field(c, "class_FixedArrayBase__length__SMI");
	l->array_data = field(c, "class_FixedArray__data__uintptr_t");
	l->str_length = field(c, "class_String__length__int32_t");
	l->str_seq_one = field(c, "class_SeqOneByteString__chars__char");
	l->str_seq_two = field(c, "class_SeqTwoByteString__chars__char");
	l->str_cons_first = field(c, "class_ConsString__first__String");
	l->str_cons_second = field(c, "class_ConsString__second__String");
	l->str_thin_actual = field(c, "class_ThinString__actual__String");
	l->str_sliced_parent = field(c, "class_SlicedString__parent__String");
	l->str_sliced_offset = field(c, "class_SlicedString__offset__SMI");
	/* an external string's resource, then its cached data pointer */
	l->str_external_data = (uint16_t)(field(c, "class_ExternalString__resource__Object") + 8);
	l->bytecode_data = field(c, "class_BytecodeArray__data__uintptr_t");
	l->bytecode_spt = (uint16_t)(l->array_length + k->bytecode_spt);
	l->code_spt = field(c, "class_Code__source_position_table__ByteArray");
	l->code_deopt = field(c, "class_Code__deoptimization_data__FixedArray");
	l->code_bytecode_offsets = field(c, "class_Code__bytecode_offset_table__ByteArray");
	l->code_start = (uint16_t)(l->code_spt + k->code_start);
	l->code_flags = (uint16_t)(l->code_spt + k->code_flags);
	l->code_size = (uint16_t)(l->code_spt + k->code_size);
	l->code_kind_mask = (uint8_t)want(c, "CodeKindFieldMask", 1, 255);
	l->code_kind_shift = (uint8_t)want(c, "CodeKindFieldShift", 0, 31);
	l->kind_interpreted = (uint8_t)want(c, "CodeKindInterpretedFunction", 0, 63);
	l->kind_baseline = (uint8_t)want(c, "CodeKindBaseline", 0, 63);
	l->kind_builtin = k->kind_builtin;
	l->kind_maglev = (uint8_t)(l->kind_baseline + k->kind_maglev);
	l->kind_turbofan = (uint8_t)(l->kind_baseline + k->kind_turbofan);
	l->scope_nparams = (uint8_t)want(c, "scopeinfo_idx_nparams", 0, 16);
	l->scope_ncontext_locals = (uint8_t)want(c, "scopeinfo_idx_ncontextlocals", 0, 16);
	l->scope_first_vars = (uint8_t)want(c, "scopeinfo_idx_first_vars", 0, 16);
	l->deopt_inlined_count = (uint8_t)want(c, "DeoptimizationDataInlinedFunctionCountIndex", 0, 32);
	l->deopt_literals = (uint8_t)want(c, "DeoptimizationDataLiteralArrayIndex", 0, 32);
	l->deopt_sfi = (uint8_t)want(c, "DeoptimizationDataSharedFunctionInfoIndex", 0, 32);
	l->deopt_inlining_positions = (uint8_t)want(c, "DeoptimizationDataInliningPositionsIndex", 0, 32);
	/* an interpreted frame's offset slot is the bytecode's offset from the array's tagged
	 * pointer, so that adding it gives the bytecode's address */
	l->bytecode_bias = (uint16_t)(l->bytecode_data - l->heap_tag);
	if (!c->rc && (l->kind_interpreted >= l->kind_baseline || l->code_kind_mask < l->kind_turbofan ||
		       l->t_js_function_last < l->t_js_function_first)) {
		snprintf(c->why, c->len, "v8: the code kinds are not V8 %u.%u's", k->major, k->minor);
		c->rc = -EOPNOTSUPP;
	}
}

int hs_v8_layout_read(const struct hs_v8_syms *s, struct hs_v8_layout *ret, char *why, size_t whylen)
{
	struct ctx c = {s, why, whylen, 0};
	const struct known *k = NULL;
	struct hs_v8_layout l = {0};

	if (!s->version[0]) {
		snprintf(why, whylen, "v8: the binary has v8dbg_ symbols but no v8::internal::Version");
		return -EOPNOTSUPP;
	}
	for (size_t i = 0; i < sizeof(known) / sizeof(*known); i++)
		if (known[i].major == s->version[0] && known[i].minor == s->version[1])
			k = &known[i];
	if (!k) {
		snprintf(why, whylen, "v8: V8 %u.%u is not supported (V8 11.3, Node.js 20, is)", s->version[0],
			 s->version[1]);
		return -EOPNOTSUPP;
	}
	l.major = s->version[0];
	l.minor = s->version[1];
	l.build = s->version[2];
	l.patch = s->version[3];
	tagging(&c, &l);
	frames(&c, &l, k);
	objects(&c, &l, k);
	if (s->sizes && s->nsizes >= 100 && s->nsizes <= 256) {
		for (int scale = 0; scale < 3; scale++)
			memcpy(l.sizes[scale], s->sizes + scale * s->nsizes, s->nsizes);
		l.nsizes = (uint16_t)s->nsizes;
	}
	if (c.rc)
		return c.rc;
	*ret = l;
	return 0;
}
