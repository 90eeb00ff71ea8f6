"""Demangling against binutils' ``c++filt -p -i``: the same libiberty ``cplus_demangle``
that Debian's perf 6.1 links, with parameters off and without implementation details
(perf calls it with DMGL_NO_OPTS).  Corpus: every C++ name libstdc++ exports, and every
C++ and Rust name of the test programs."""

from __future__ import annotations

import subprocess

from perfprograms import Built, require

from perftui.symbols.tables.demangle import demangle, strip_cxx_params

LIBSTDCXX = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"


def mangled_names(*paths: str, dynamic: bool = False) -> list[str]:
    names: set[str] = set()
    for p in paths:
        cmd = ["nm", "-D", "--defined-only", p] if dynamic else ["nm", "--defined-only", p]
        out = subprocess.run(cmd, capture_output=True, text=True).stdout
        for line in out.splitlines():
            n = line.split()[-1].split("@")[0] if line.split() else ""  # no version suffix
            if n.startswith(("_Z", "_R")):
                names.add(n)
    return sorted(names)


def cxxfilt_oracle(names: list[str]) -> list[str]:
    require("c++filt")
    out = subprocess.run(["c++filt", "-p", "-i"], input="\n".join(names) + "\n",
                         capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def compare(names: list[str]) -> list[tuple[str, str, str]]:
    want = cxxfilt_oracle(names)
    assert len(want) == len(names)
    return [(n, w, demangle(n)) for n, w in zip(names, want, strict=True) if demangle(n) != w]


def test_libstdcxx_names_match_cplus_demangle() -> None:
    require("nm")
    names = mangled_names(LIBSTDCXX, dynamic=True)
    assert len(names) > 3000
    bad = compare(names)
    print(f"libstdc++: {len(names) - len(bad)}/{len(names)} names as c++filt -p -i")
    assert not bad, bad[:5]


def test_program_names_match_cplus_demangle(built: Built) -> None:
    require("nm")
    paths = [str(built.hotcxx)] + [str(p) for p in (built.hotrust_v0, built.hotrust_legacy) if p]
    names = mangled_names(*paths)
    bad = compare(names)
    print(f"programs: {len(names) - len(bad)}/{len(names)} names as c++filt -p -i")
    # rust-demangler 1.0 cannot read v0 names with higher-ranked lifetimes ("dyn for<'a>")
    # and leaves them mangled; they are in Rust's std, not in the hot code
    assert all(w.count("for<'") for _n, w, _g in bad), bad[:5]
    assert len(bad) <= max(3, len(names) // 100)


def test_strip_keeps_nested_parameters() -> None:
    assert strip_cxx_params("foo(int)::{lambda()#1}::operator()() const") == (
        "foo(int)::{lambda()#1}::operator()")
    assert strip_cxx_params("unsigned long ns::f<int>(int)") == "ns::f<int>"
    assert strip_cxx_params("bool operator< <int>(A<int> const&, A<int> const&)") == (
        "operator< <int>")
    assert demangle("not_mangled") == "not_mangled"
    assert demangle("camlFoo__bar_12") == "Foo.bar_12"
