/* Off-CPU known answer: 5 x 300 ms asleep in sleep_long, 5 x 100 ms in sleep_short, 20 ms
   of CPU work before each; the sleeps are raw nanosleep syscalls, so the user stack's leaf
   is the sleeping function itself.  -DLONG_MS=N and -DSHORT_MS=N change the two sleeps
   (a planned change for diff's tests); -DWORK_INSIDE moves each 20 ms of work into the
   sleeping function, before its nap (a --switch-events test: the SWITCH records carry no
   stack, and the last sample before a sleep lends it its own).  Each nap's wall time is measured around its syscall
   and the sums written to ./offcpu.times ("sleep_long NS" and "sleep_short NS"): what the
   off-CPU tests hold perftui to, whatever the machine's load adds to the nominal sleeps. */
#include <stdio.h>
#include <time.h>

#ifndef LONG_MS
#define LONG_MS 300
#endif
#ifndef SHORT_MS
#define SHORT_MS 100
#endif

static volatile unsigned long sink;
static long long slept_long, slept_short;

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static inline __attribute__((always_inline)) void nap(long ms, long long *slept)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    long r;
    long long a = now_ns();
    __asm__ volatile("syscall" : "=a"(r) : "a"(35L), "D"(&ts), "S"(0L) : "rcx", "r11", "memory");
    *slept += now_ns() - a;
}

__attribute__((noinline)) void burn(long ms)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        for (int i = 0; i < 10000; i++)
            sink += i;
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

#ifdef WORK_INSIDE
#define INSIDE(ms) burn(ms)
#define BEFORE(ms)
#else
#define INSIDE(ms)
#define BEFORE(ms) burn(ms)
#endif

__attribute__((noinline)) void sleep_long(void) { INSIDE(20); nap(LONG_MS, &slept_long); }
__attribute__((noinline)) void sleep_short(void) { INSIDE(20); nap(SHORT_MS, &slept_short); }

int main(void)
{
    for (int i = 0; i < 5; i++) {
        BEFORE(20);
        sleep_long();
        BEFORE(20);
        sleep_short();
    }
    FILE *f = fopen("offcpu.times", "w");
    if (!f)
        return 1;
    fprintf(f, "sleep_long %lld\nsleep_short %lld\n", slept_long, slept_short);
    return fclose(f) != 0;
}
