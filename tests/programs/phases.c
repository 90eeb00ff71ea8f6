/* The flame chart's known answer: one thread in three planned phases, each on the CPU
 * for a fixed time (argv[1] ms, default 600): phase_a, then phase_b (through
 * phase_b_inner), then phase_c.  Built -O1 -g -fno-omit-frame-pointer. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin_until(double end)
{
	while (now() < end)
		for (int i = 0; i < 1000; i++)
			sink += i;
}

__attribute__((noinline)) void phase_a(double s) { spin_until(now() + s); }
__attribute__((noinline)) void phase_b_inner(double s) { spin_until(now() + s); }
__attribute__((noinline)) void phase_b(double s) { phase_b_inner(s); sink++; }
__attribute__((noinline)) void phase_c(double s) { spin_until(now() + s); }

int main(int argc, char **argv)
{
	double s = (argc > 1 ? atoi(argv[1]) : 600) / 1000.0;
	phase_a(s);
	phase_b(s);
	phase_c(s);
	return 0;
}
