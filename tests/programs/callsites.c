/*
 * callsites: one function, work, called from three sites (site_one, site_two and, through
 * site_one, site_three), with two callees of its own (leaf_a twice leaf_b's work) and self
 * time; leaf_b also called from site_two directly; and qsort from libc calling back into
 * cmp (a run of libc frames between two of ours).  The sandwich's and the transforms'
 * program (issue 30).  Built -O1 -g -fno-omit-frame-pointer.
 *
 * usage: callsites [UNITS]   (one unit is about 10 million loop iterations)
 */
#include <stdio.h>
#include <stdlib.h>

#define UNIT 10000000UL

#define SPIN_LOOP(n)                                       \
	volatile unsigned long acc = 0;                    \
	for (unsigned long i = 0; i < (n); i++)            \
		acc += i;                                  \
	return acc

__attribute__((noinline)) unsigned long leaf_a(unsigned long n)
{
	SPIN_LOOP(n);
}

__attribute__((noinline)) unsigned long leaf_b(unsigned long n)
{
	SPIN_LOOP(n);
}

__attribute__((noinline)) unsigned long work(unsigned long n)
{
	unsigned long r = leaf_a(2 * n) + leaf_b(n);
	volatile unsigned long acc = 0;
	for (unsigned long i = 0; i < n; i++)
		acc += i;
	return r + acc;
}

__attribute__((noinline)) unsigned long site_one(unsigned long units)
{
	return work(units * UNIT) + 1;
}

__attribute__((noinline)) unsigned long site_two(unsigned long units)
{
	return work(2 * units * UNIT) + leaf_b(units * UNIT) + 1;
}

__attribute__((noinline)) unsigned long site_three(unsigned long units)
{
	return site_one(units) + 1;
}

static volatile unsigned long compared;

__attribute__((noinline)) static int cmp(const void *a, const void *b)
{
	compared++;
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return (x > y) - (x < y);
}

__attribute__((noinline)) unsigned long sorter(unsigned long units)
{
	enum { N = 1 << 16 };
	static unsigned v[N];
	unsigned long r = 0;
	for (unsigned long k = 0; k < units * 8; k++) {
		unsigned s = (unsigned)k * 2654435761u + 1;
		for (int i = 0; i < N; i++)
			v[i] = s = s * 1103515245u + 12345u;
		qsort(v, N, sizeof v[0], cmp);
		r += v[N / 2];
	}
	return r;
}

int main(int argc, char **argv)
{
	unsigned long units = argc > 1 ? strtoul(argv[1], NULL, 10) : 1;
	unsigned long r = site_one(units) + site_two(units) + site_three(units) + sorter(units);
	printf("%lu\n", r & 1);
	return 0;
}
