// dwcxx: C++ call stacks for DWARF unwinding (built -O2 -fomit-frame-pointer -g): templates
// instantiated at several types, a virtual call, std::sort with a lambda, and exceptions
// thrown and caught in a loop (stacks through libstdc++'s __cxa_throw and libgcc_s's
// _Unwind_RaiseException, which run their own CFI).  usage: dwcxx [UNITS]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace dw {

template <typename T> __attribute__((noinline)) T accumulate_squares(const std::vector<T> &v)
{
	T s = 0;
	for (int r = 0; r < 20; r++)
		for (const T &x : v)
			s += x * x + static_cast<T>(r);
	return s;
}

struct Shape {
	virtual ~Shape() = default;
	virtual double area(int n) const = 0;
};

struct Square : Shape {
	double side;
	explicit Square(double s) : side(s) {}
	__attribute__((noinline)) double area(int n) const override
	{
		double a = 0;
		for (int i = 0; i < n; i++)
			a += side * side / (i + 1);
		return a;
	}
};

__attribute__((noinline)) int checked(int x)
{
	if (x % 7 == 0)
		throw std::runtime_error("seven");
	return x * 2;
}

__attribute__((noinline)) long thrower(int n)
{
	long caught = 0;
	for (int i = 0; i < n; i++) {
		try {
			caught += checked(i);
		} catch (const std::exception &e) {
			caught += e.what()[0];
		}
	}
	return caught;
}

template <typename T> __attribute__((noinline)) T sorted_median(std::vector<T> v)
{
	std::sort(v.begin(), v.end(), [](const T &a, const T &b) { return a > b; });
	return v[v.size() / 2];
}

} // namespace dw

int main(int argc, char **argv)
{
	int units = argc > 1 ? std::atoi(argv[1]) : 10;
	std::vector<long> vl(20000);
	std::vector<double> vd(20000);
	for (size_t i = 0; i < vl.size(); i++) {
		vl[i] = static_cast<long>((i * 2654435761u) % 100003);
		vd[i] = static_cast<double>(vl[i]) / 7.0;
	}
	dw::Shape *s = new dw::Square(1.5);
	double total = 0;
	for (int u = 0; u < units; u++) {
		total += dw::accumulate_squares(vl);
		total += dw::accumulate_squares(vd);
		total += s->area(200000);
		total += dw::thrower(3000);
		total += dw::sorted_median(vl);
		total += dw::sorted_median(vd);
	}
	delete s;
	std::printf("%g\n", total);
	return 0;
}
