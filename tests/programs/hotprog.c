/*
 * hotprog: three hot functions with known shares of the work (alpha 3, beta 2, gamma 1
 * units), a call into libhotlib.so's lib_spin (1 unit) and a tight loop over lib_tiny
 * through the PLT.  Built -O1 -g -fno-omit-frame-pointer -fPIE -pie.
 *
 * usage: hotprog [UNITS [MIX]]   (one unit is about 10 million loop iterations)
 *
 * MIX scales each part: "A,B,G,L,P" multiplies the units of hot_alpha, hot_beta, hot_gamma,
 * lib_spin and plt_loop (default 1,1,1,1,1; 0 leaves a part out), so that two recordings of
 * the same program can have shifted shares (perftui diff's tests).
 */
#include <stdio.h>
#include <stdlib.h>
#include "hotlib.h"

#define UNIT 10000000UL

/* The same loop everywhere, so that time is proportional to the iterations. */
#define SPIN_LOOP(n)                                       \
	volatile unsigned long acc = 0;                    \
	for (unsigned long i = 0; i < (n); i++)            \
		acc += i;                                  \
	return acc

__attribute__((noinline)) static unsigned long spin(unsigned long n)
{
	SPIN_LOOP(n);
}

__attribute__((noinline)) unsigned long hot_alpha(unsigned long units)
{
	SPIN_LOOP(3 * units * UNIT);
}

__attribute__((noinline)) unsigned long hot_beta(unsigned long units)
{
	SPIN_LOOP(2 * units * UNIT);
}

__attribute__((noinline)) unsigned long hot_gamma(unsigned long units)
{
	return spin(units * UNIT);
}

__attribute__((noinline)) static unsigned long plt_loop(unsigned long units)
{
	unsigned long x = 0;
	for (unsigned long i = 0; i < units * UNIT; i++)
		x = lib_tiny(x);
	return x;
}

int main(int argc, char **argv)
{
	unsigned long units = argc > 1 ? strtoul(argv[1], NULL, 10) : 1;
	unsigned long mix[5] = {1, 1, 1, 1, 1};
	if (argc > 2) {
		char *p = argv[2];
		for (int i = 0; i < 5 && *p; i++) {
			mix[i] = strtoul(p, &p, 10);
			if (*p == ',')
				p++;
		}
	}
	unsigned long r = 0;
	if (mix[0])
		r += hot_alpha(mix[0] * units);
	if (mix[1])
		r += hot_beta(mix[1] * units);
	if (mix[2])
		r += hot_gamma(mix[2] * units);
	if (mix[3])
		r += lib_spin(mix[3] * units * UNIT);
	if (mix[4])
		r += plt_loop(mix[4] * units);
	printf("%lu\n", r & 1);
	return 0;
}
