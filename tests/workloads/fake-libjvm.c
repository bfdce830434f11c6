/* A libjvm.so that is none: it exports the symbols that lead to HotSpot's VMStructs tables, with
 * garbage behind them, chosen by FAKE_JVM when it is loaded (tests/e2e/hotspot-tables.sh):
 * random (every value random), stride (an entry's size of 1 TiB), text (names that are not
 * text), endless (a table without an end), empty (tables with no entries). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SYM(name) uint64_t name
SYM(gHotSpotVMStructs);
SYM(gHotSpotVMStructEntryArrayStride);
SYM(gHotSpotVMStructEntryTypeNameOffset);
SYM(gHotSpotVMStructEntryFieldNameOffset);
SYM(gHotSpotVMStructEntryTypeStringOffset);
SYM(gHotSpotVMStructEntryIsStaticOffset);
SYM(gHotSpotVMStructEntryOffsetOffset);
SYM(gHotSpotVMStructEntryAddressOffset);
SYM(gHotSpotVMTypes);
SYM(gHotSpotVMTypeEntryArrayStride);
SYM(gHotSpotVMTypeEntryTypeNameOffset);
SYM(gHotSpotVMTypeEntrySizeOffset);
SYM(gHotSpotVMIntConstants);
SYM(gHotSpotVMIntConstantEntryArrayStride);
SYM(gHotSpotVMIntConstantEntryNameOffset);
SYM(gHotSpotVMIntConstantEntryValueOffset);
SYM(gHotSpotVMLongConstants);
SYM(gHotSpotVMLongConstantEntryArrayStride);
SYM(gHotSpotVMLongConstantEntryNameOffset);
SYM(gHotSpotVMLongConstantEntryValueOffset);

static uint64_t table[8 * 4096]; /* entries of 8 words */
static char bad_name[] = "\x01\x02\xff";
static char a_name[] = "Klass";

static void shape(uint64_t *base, uint64_t *stride, uint64_t *a, uint64_t *b)
{
	*base = (uint64_t)(uintptr_t)table;
	*stride = 64;
	*a = 0;
	*b = 8;
}

__attribute__((constructor)) static void fake_init(void)
{
	const char *mode = getenv("FAKE_JVM");
	uint64_t *all[] = {&gHotSpotVMStructs,
			   &gHotSpotVMStructEntryArrayStride,
			   &gHotSpotVMStructEntryTypeNameOffset,
			   &gHotSpotVMStructEntryFieldNameOffset,
			   &gHotSpotVMStructEntryTypeStringOffset,
			   &gHotSpotVMStructEntryIsStaticOffset,
			   &gHotSpotVMStructEntryOffsetOffset,
			   &gHotSpotVMStructEntryAddressOffset};
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	if (!mode || !strcmp(mode, "random")) {
		uint64_t *syms[] = {&gHotSpotVMTypes, &gHotSpotVMTypeEntryArrayStride, &gHotSpotVMIntConstants,
				    &gHotSpotVMLongConstants};
		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			*all[i] = x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
			*syms[i] = x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		return;
	}
	/* a plausible shape: 64-byte entries, names at 0 and 8, the rest at 16.. */
	shape(&gHotSpotVMStructs, &gHotSpotVMStructEntryArrayStride, &gHotSpotVMStructEntryTypeNameOffset,
	      &gHotSpotVMStructEntryFieldNameOffset);
	gHotSpotVMStructEntryTypeStringOffset = 16;
	gHotSpotVMStructEntryIsStaticOffset = 24;
	gHotSpotVMStructEntryOffsetOffset = 32;
	gHotSpotVMStructEntryAddressOffset = 40;
	shape(&gHotSpotVMTypes, &gHotSpotVMTypeEntryArrayStride, &gHotSpotVMTypeEntryTypeNameOffset,
	      &gHotSpotVMTypeEntrySizeOffset);
	shape(&gHotSpotVMIntConstants, &gHotSpotVMIntConstantEntryArrayStride, &gHotSpotVMIntConstantEntryNameOffset,
	      &gHotSpotVMIntConstantEntryValueOffset);
	shape(&gHotSpotVMLongConstants, &gHotSpotVMLongConstantEntryArrayStride, &gHotSpotVMLongConstantEntryNameOffset,
	      &gHotSpotVMLongConstantEntryValueOffset);
	if (!strcmp(mode, "stride")) {
		gHotSpotVMStructEntryArrayStride = 1ULL << 40;
	} else if (!strcmp(mode, "text")) {
		table[0] = (uint64_t)(uintptr_t)bad_name;
	} else if (!strcmp(mode, "endless")) {
		/* 8-byte entries whose every field is the same name, 32768 of them */
		for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
			table[i] = (uint64_t)(uintptr_t)a_name;
		gHotSpotVMStructEntryArrayStride = 8;
		for (size_t i = 2; i < sizeof(all) / sizeof(all[0]); i++)
			*all[i] = 0;
	}
	/* empty: every table ends at once (a NULL name) */
}
