#ifndef HOTLIB_H
#define HOTLIB_H
unsigned long lib_spin(unsigned long n);
unsigned long lib_tiny(unsigned long x);
#endif
