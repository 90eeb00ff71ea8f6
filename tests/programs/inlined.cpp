// Inlined frames of C++ for the inline tests: a class template's always-inlined member,
// a function template instantiated twice (long, double), a lambda inlined into std::sort,
// std::map and std::string code from the headers, and an exception caught each round.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace ns {
template <typename T> struct Acc {
	T v{};
	inline __attribute__((always_inline)) void add(T x) { v += x * x + 1; }
};

template <typename T> __attribute__((noinline)) T churn(std::vector<T> &xs)
{
	Acc<T> a;
	std::sort(xs.begin(), xs.end(), [](T p, T q) { return p > q; });
	for (auto &x : xs)
		a.add(x);
	return a.v;
}
} // namespace ns

static int thrower(int i)
{
	if (i % 3 == 2)
		throw std::runtime_error("round");
	return i;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? std::atoi(argv[1]) : 200;
	std::vector<long> v;
	std::vector<double> d;
	long s = 0;
	for (int r = 0; r < rounds; r++) {
		v.clear();
		d.clear();
		for (int i = 0; i < 20000; i++) {
			v.push_back((i * 7919L) % 10007);
			d.push_back(i * 0.5);
		}
		s += ns::churn(v) + static_cast<long>(ns::churn(d));
		std::map<std::string, int> m;
		for (int i = 0; i < 200; i++)
			m[std::to_string(i)] = i;
		try {
			s += thrower(r);
		} catch (std::exception &) {
			s++;
		}
	}
	std::printf("%ld\n", s);
	return 0;
}
