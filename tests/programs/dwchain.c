/*
 * dwchain: call stacks for DWARF unwinding (built -O2 -fomit-frame-pointer -g, so only CFI
 * tells the frames apart).  main runs, UNITS times over:
 *   - a chain five deep (lvl1 .. lvl4, then leaf) with an always-inlined helper (mix);
 *   - a call into libdwlib.so (dwlib_work -> dwlib_inner) that calls back into cb_square;
 *   - a tight loop over dwlib_tiny through the PLT;
 *   - qsort (libc) with a comparison of ours;
 *   - recursion 600 deep (deeper than an 8 KiB stack copy reaches);
 *   - a second thread running the chain (its stack ends in clone3, not _start);
 *   - a SIGPROF handler that runs the chain (frames through the signal trampoline).
 * usage: dwchain [UNITS]   (one unit is ~30 ms)
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include "dwlib.h"

static volatile unsigned long sink;

static inline __attribute__((always_inline)) unsigned long mix(unsigned long x)
{
	return x * 2654435761UL ^ (x >> 13);
}

#ifndef LEAF_LOOPS
#define LEAF_LOOPS 4000 /* (a build with more: a changed workload for the diff tests) */
#endif

__attribute__((noinline)) unsigned long leaf(unsigned long x)
{
	unsigned long s = 0;
	for (int i = 0; i < LEAF_LOOPS; i++)
		s += mix(x + i);
	return s;
}

__attribute__((noinline)) unsigned long lvl4(unsigned long x) { return leaf(x) + 1; }
__attribute__((noinline)) unsigned long lvl3(unsigned long x) { return lvl4(x ^ 3) + 2; }
__attribute__((noinline)) unsigned long lvl2(unsigned long x) { return lvl3(x + 7) * 3; }
__attribute__((noinline)) unsigned long lvl1(unsigned long x) { return lvl2(x - 1) + 5; }

__attribute__((noinline)) unsigned long cb_square(unsigned long x)
{
	unsigned long s = x;
	for (int i = 0; i < 50; i++)
		s = s * s + (unsigned long)i;
	return s;
}

__attribute__((noinline)) static unsigned long plt_loop(unsigned long n)
{
	unsigned long x = 0;
	for (unsigned long i = 0; i < n; i++)
		x = dwlib_tiny(x);
	return x;
}

static int cmp_ul(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
	return (x > y) - (x < y);
}

__attribute__((noinline)) static void sort_some(unsigned long seed)
{
	enum { N = 20000 };
	static unsigned long v[N];
	for (int i = 0; i < N; i++)
		v[i] = mix(seed + (unsigned long)i);
	qsort(v, N, sizeof v[0], cmp_ul);
	sink += v[N / 2];
}

__attribute__((noinline)) unsigned long deep(int depth, unsigned long x)
{
	volatile char pad[16];
	pad[0] = (char)x;
	if (depth == 0)
		return leaf(x) + (unsigned long)pad[0];
	return deep(depth - 1, x + 1) + 1;
}

static void *thread_main(void *arg)
{
	unsigned long units = (unsigned long)arg, t = 0;
	for (unsigned long i = 0; i < units * 1000; i++)
		t += lvl1(i);
	sink += t;
	return NULL;
}

static void on_prof(int sig)
{
	(void)sig;
	sink += lvl1(sink);
}

int main(int argc, char **argv)
{
	unsigned long units = argc > 1 ? strtoul(argv[1], NULL, 10) : 10, t = 0;
	pthread_t th;
	struct sigaction sa;
	struct itimerval it = {{0, 2000}, {0, 2000}};

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_prof;
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	pthread_create(&th, NULL, thread_main, (void *)units);
	for (unsigned long u = 0; u < units; u++) {
		for (unsigned long i = 0; i < 1000; i++)
			t += lvl1(i + u);
		t += dwlib_work(20000, cb_square);
		t += plt_loop(3000000);
		sort_some(u);
		for (int k = 0; k < 20; k++)
			t += deep(600, u + (unsigned long)k);
	}
	pthread_join(th, NULL);
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_PROF, &it, NULL);
	printf("%lu\n", t + sink);
	return 0;
}
