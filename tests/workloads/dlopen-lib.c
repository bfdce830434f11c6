/* The library dlopen-nofp loads: lib_entry -> lib_middle -> lib_leaf, spinning, built as a
 * shared module with -O2 -fomit-frame-pointer. */
__attribute__((noipa)) unsigned long lib_leaf(unsigned long seed);
__attribute__((noipa)) unsigned long lib_middle(unsigned long seed);
__attribute__((noipa)) unsigned long lib_entry(unsigned long seed);

unsigned long lib_leaf(unsigned long seed)
{
	unsigned long acc = seed;

	for (unsigned long i = 0; i < 1000000; i++) {
		acc = acc * 6364136223846793005ul + i;
		__asm__ volatile("" : "+r"(acc));
	}
	return acc;
}

unsigned long lib_middle(unsigned long seed)
{
	volatile unsigned long keep[6]; /* a frame of its own, live across the call */

	keep[0] = seed;
	keep[5] = lib_leaf(seed);
	return keep[0] ^ keep[5];
}

unsigned long lib_entry(unsigned long seed)
{
	volatile unsigned long keep[10];

	keep[0] = seed;
	keep[9] = lib_middle(seed + 1);
	return keep[0] + keep[9];
}
