/*
 * hotprog: three hot functions with known shares of the work (alpha 3, beta 2, gamma 1
 * units), a call into libhotlib.so's lib_spin (1 unit) and a tight loop over lib_tiny
 * through the PLT.  Built -O1 -g -fno-omit-frame-pointer -fPIE -pie.
 *
 * usage: hotprog [UNITS]   (one unit is about 10 million loop iterations)
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
	unsigned long r = hot_alpha(units) + hot_beta(units) + hot_gamma(units);
	r += lib_spin(units * UNIT) + plt_loop(units);
	printf("%lu\n", r & 1);
	return 0;
}
