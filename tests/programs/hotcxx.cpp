// hotcxx: C++ hot functions with namespaces, templates, overloads, a lambda and an
// anonymous namespace, for demangling (perf report --sort sym shows them demangled).
// Built -O1 -g -fno-omit-frame-pointer -fPIE -pie.   usage: hotcxx [UNITS]
#include <cstdio>
#include <cstdlib>
#include <vector>

static const unsigned long UNIT = 10000000UL;

namespace hot {

template <typename T>
struct Worker {
	__attribute__((noinline)) T run(unsigned long n) const
	{
		volatile T acc = 0;
		for (unsigned long i = 0; i < n; i++)
			acc = acc + static_cast<T>(i & 7);
		return acc;
	}
};

__attribute__((noinline)) unsigned long spin(unsigned long n)
{
	volatile unsigned long acc = 0;
	for (unsigned long i = 0; i < n; i++)
		acc += i;
	return acc;
}

__attribute__((noinline)) double spin(double n)  // an overload of spin
{
	volatile double acc = 0;
	for (double i = 0; i < n; i += 1)
		acc += i;
	return acc;
}

namespace detail {
template <typename F>
__attribute__((noinline)) unsigned long apply(F f, unsigned long n)
{
	unsigned long r = 0;
	for (unsigned long i = 0; i < 4; i++)
		r += f(n / 4);
	return r;
}
}  // namespace detail

}  // namespace hot

namespace {
__attribute__((noinline)) unsigned long anon_spin(unsigned long n)
{
	volatile unsigned long acc = 1;
	for (unsigned long i = 0; i < n; i++)
		acc ^= i;
	return acc;
}
}  // namespace

struct Summer {
	__attribute__((noinline)) unsigned long operator()(unsigned long n) const
	{
		return hot::spin(n) + 1;
	}
};

int main(int argc, char **argv)
{
	unsigned long units = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1;
	unsigned long r = hot::Worker<int>().run(2 * units * UNIT);
	r += static_cast<unsigned long>(hot::Worker<double>().run(units * UNIT));
	r += hot::spin(units * UNIT) + static_cast<unsigned long>(hot::spin(double(units * UNIT / 2)));
	r += anon_spin(units * UNIT);
	r += hot::detail::apply(Summer(), units * UNIT);
	r += hot::detail::apply([](unsigned long n) { return anon_spin(n); }, units * UNIT);
	std::vector<unsigned long> v(16, r);
	std::printf("%lu\n", v[3] & 1);
	return 0;
}
