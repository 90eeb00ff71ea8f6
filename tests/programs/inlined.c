/* Inlined frames for the inline tests: a chain five deep whose leaf spends its time in
 * always-inlined helpers (mix inside braid_step inside leaf), the same helper inlined into
 * two neighbouring functions (spin_a, spin_b), and a static function gcc inlines on its
 * own.  Built -O2 -g with and without frame pointers; "inlined N" loops N times. */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

static inline __attribute__((always_inline)) unsigned long mix(unsigned long x)
{
	for (int i = 0; i < 40; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

static inline __attribute__((always_inline)) unsigned long braid_step(unsigned long x)
{
	return mix(x) ^ (x >> 7);
}

static unsigned long twist(unsigned long x)
{
	return (x << 13) ^ (x >> 3);
}

__attribute__((noinline)) unsigned long leaf(unsigned long x) { return braid_step(x) + 1; }
__attribute__((noinline)) unsigned long lvl4(unsigned long x) { return leaf(x) * 3; }
__attribute__((noinline)) unsigned long lvl3(unsigned long x) { return lvl4(x) + 5; }
__attribute__((noinline)) unsigned long lvl2(unsigned long x) { return lvl3(twist(x)) ^ 9; }
__attribute__((noinline)) unsigned long lvl1(unsigned long x) { return lvl2(x) - 1; }
__attribute__((noinline)) unsigned long spin_a(unsigned long x) { return mix(x) + 2; }
__attribute__((noinline)) unsigned long spin_b(unsigned long x) { return mix(x ^ 5) + 3; }

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], 0, 10) : 2000000;
	for (unsigned long i = 0; i < n; i++) {
		sink += lvl1(i);
		if (i % 4 == 0)
			sink += spin_a(i) + spin_b(i);
	}
	printf("%lu\n", sink);
	return 0;
}
