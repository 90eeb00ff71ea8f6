/* libhotlib.so: the shared library of hotprog (called through the PLT). */
#include "hotlib.h"

/* A spin loop: the library's share of the samples. */
unsigned long lib_spin(unsigned long n)
{
	volatile unsigned long acc = 0;
	for (unsigned long i = 0; i < n; i++)
		acc += i ^ (acc >> 3);
	return acc;
}

/* Almost no work: called in a tight loop so that the PLT stub itself gets samples. */
unsigned long lib_tiny(unsigned long x)
{
	return x * 3 + 1;
}
