"""Demangle symbol names as perf 6.1 (Debian's build) shows them.

Debian's perf demangles user-space names with libiberty's ``cplus_demangle(name, 0)``
(``DMGL_NO_OPTS``, see ``demangle_sym`` in ``tools/perf/util/symbol-elf.c``): C++ names
*without* parameter lists, return types or ``const`` of the method (``hot::spin``, both
overloads alike; ``hot::Worker<int>::run``); Rust legacy names without the ``::h<hash>``
suffix; Rust v0 (``_R``) names as libiberty prints them; OCaml ``caml`` names by perf's own
rule.  Kernel and module names are never demangled (perf's ``demangle_kernel`` is off).

The libraries: libiberty's own ``cplus_demangle`` where the system has it (binutils'
``libbfd-*.so`` exports it: the very code perf runs, in C, about 100x faster than the Python
Rust demangler); otherwise C++ through ``cxxfilt`` (the system's ``__cxa_demangle``, the same
cp-demangle code as libiberty, which prints parameters), whose output is cut back to the
name (:func:`strip_cxx_params`); Rust through ``rust-demangler``.  Both are imported on
first use.

Public API: :func:`demangle` ``(name) -> str`` (the name unchanged when it is not mangled
or does not demangle), :func:`demangle_many` ``(names) -> list[str]``,
:func:`strip_cxx_params` ``(demangled) -> str``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

__all__ = ["MANGLED_PREFIXES", "demangle", "demangle_many", "have_libiberty",
           "strip_cxx_params"]

#: :func:`demangle` returns every name that starts with none of these as it is
MANGLED_PREFIXES = ("_Z", "_R", "caml")

# A legacy Rust symbol: _ZN ... 17h<16 hex>E (the hash is the last path element).
_RUST_LEGACY = re.compile(r"_ZN.*17h[0-9a-f]{16}E(\.llvm\.\d+)?$")
_RUST_HASH = re.compile(r"::h[0-9a-f]{16}$")
# rust-demangler writes "{closure:#0}" where libiberty (and rustc-demangle) write
# "{closure#0}": a namespace tag without a name.
_EMPTY_NS_NAME = re.compile(r"\{([A-Za-z]+):#")
# rust-demangler 1.0 writes an ABI as 'extern "C-"fn' where libiberty writes 'extern "C" fn'.
_ABI_QUIRK = re.compile(r'extern "([^"]*)-"fn')
# A v0 symbol's ".0"-style suffix (LLVM's), which libiberty leaves out.
_V0_SUFFIX = re.compile(r"^(_R[0-9A-Za-z_]+)\.[0-9A-Za-z_.$]*$")
_TRAILING_QUALIFIERS = (" const", " volatile", " restrict", " &&", " &", " transaction_safe",
                        " noexcept")
_OPERATOR_TOKENS = tuple(sorted(
    ("<<=", ">>=", "<=>", "->*", "<<", ">>", "<=", ">=", "->", "()", "[]", "<", ">", "+=", "-=",
     "*=", "/=", "%=", "^=", "&=", "|=", "==", "!=", "&&", "||", "++", "--", ",", "+", "-",
     "*", "/", "%", "^", "&", "|", "~", "!", "=", '""', " new[]", " delete[]", " new",
     " delete", " co_await"),
    key=len, reverse=True))


def _is_ident(ch: str) -> bool:
    return ch.isalnum() or ch in "_$"


def _operator_end(s: str, i: int) -> int:
    """If ``s[i:]`` starts an ``operator`` keyword, the index just past its symbol."""
    if not s.startswith("operator", i) or (i > 0 and _is_ident(s[i - 1])):
        return -1
    j = i + len("operator")
    if j < len(s) and _is_ident(s[j]):
        return -1  # "operatorfoo" is an identifier
    for tok in _OPERATOR_TOKENS:
        if s.startswith(tok, j):
            return j + len(tok)
    return j


def _match_open(s: str, close_at: int) -> int:
    """Index of the ``(`` matching the ``)`` at ``close_at`` (counting parentheses only)."""
    depth = 0
    for k in range(close_at, -1, -1):
        c = s[k]
        if c == ")":
            depth += 1
        elif c == "(":
            depth -= 1
            if depth == 0:
                return k
    return -1


def _top_level_marks(s: str) -> tuple[list[int], list[int]]:
    """Depth-0 positions of spaces (outside operator names) and of ``::`` in ``s``."""
    spaces: list[int] = []
    colons: list[int] = []
    depth = 0
    in_operator = False
    i = 0
    while i < len(s):
        end = _operator_end(s, i)
        if end >= 0:
            in_operator = True
            i = end
            continue
        c = s[i]
        if c in "(<[{":
            depth += 1
        elif c in ")>]}":
            depth = max(0, depth - 1)
        elif depth == 0 and c == " " and not in_operator:
            spaces.append(i)
        elif depth == 0 and s.startswith("::", i):
            colons.append(i)
            in_operator = False
            i += 2
            continue
        i += 1
    return spaces, colons


def _last_component(name: str) -> str:
    _spaces, colons = _top_level_marks(name)
    return name[colons[-1] + 2:] if colons else name


def _is_template_id(component: str) -> bool:
    comp = re.sub(r"(\[abi:[^\]]*\])+$", "", component)
    if not comp.endswith(">"):
        return False
    if comp.startswith("operator"):
        end = _operator_end(comp, 0)
        # operator< <int> (a template operator) vs operator>> (no template arguments);
        # a conversion operator ("operator std::vector<int>") has no return type
        return end > len("operator") and comp[end:].lstrip().startswith("<")
    return True


def strip_cxx_params(full: str) -> str:
    """A full C++ demangling cut to what ``cplus_demangle(name, DMGL_NO_OPTS)`` prints.

    Drops the parameter list of the top-level function, the qualifiers after it and the
    return type printed before a function template's name; keeps everything nested.
    """
    s = full
    changed = True
    while changed:
        changed = False
        for q in _TRAILING_QUALIFIERS:
            if s.endswith(q):
                s = s[: -len(q)]
                changed = True
    if not s.endswith(")"):
        return full if s == full else s
    p = _match_open(s, len(s) - 1)
    if p <= 0:
        return full
    name = s[:p]
    if name.endswith(")") and not _last_component(name).startswith("operator"):
        # a function returning a function pointer: "void (*f(int))(double)"
        k = _match_open(name, len(name) - 1)
        inner = name[k + 1: -1] if k >= 0 else name
        return strip_cxx_params(inner.lstrip("*&"))
    if _is_template_id(_last_component(name)):
        spaces, _colons = _top_level_marks(name)
        if spaces:  # the return type ends at the last space outside brackets
            name = name[spaces[-1] + 1:]
    return name


_LIBIBERTY_GLOBS = ("/usr/lib/*-linux-gnu/libbfd-*-system.so", "/usr/lib/*-linux-gnu/libbfd*.so",
                    "/usr/lib64/libbfd*.so", "/usr/lib/libbfd*.so")


@lru_cache(maxsize=1)
def _libiberty():  # type: ignore[no-untyped-def]
    """(cplus_demangle, free) from the system's libbfd, or None."""
    import ctypes
    import glob

    for pattern in _LIBIBERTY_GLOBS:
        for path in sorted(glob.glob(pattern)):
            try:
                lib = ctypes.CDLL(path)
                fn = lib.cplus_demangle
            except (OSError, AttributeError):
                continue
            fn.argtypes = [ctypes.c_char_p, ctypes.c_int]
            fn.restype = ctypes.c_void_p
            libc = ctypes.CDLL(None)
            libc.free.argtypes = [ctypes.c_void_p]
            return fn, libc.free, ctypes.string_at
    return None


def _iberty_demangle(name: str) -> str | None:
    """libiberty's ``cplus_demangle(name, DMGL_NO_OPTS)`` (perf's call), or None."""
    lib = _libiberty()
    if lib is None:
        return None
    fn, free, string_at = lib
    raw = name.encode("utf-8", "surrogateescape")
    if b"\0" in raw or len(raw) > 1 << 16:
        return None
    ptr = fn(raw, 0)
    if not ptr:
        return None
    try:
        out: bytes = string_at(ptr)
    finally:
        free(ptr)
    return out.decode("utf-8", "backslashreplace")


def have_libiberty() -> bool:
    """True when names are demangled by the system's libiberty (perf's demangler)."""
    return _libiberty() is not None


@lru_cache(maxsize=1)
def _cxxfilt():  # type: ignore[no-untyped-def]
    import cxxfilt

    return cxxfilt


@lru_cache(maxsize=1)
def _rust():  # type: ignore[no-untyped-def]
    import rust_demangler
    import rust_demangler.rust_v0 as v0

    # rust-demangler 1.0 print()s its partial output when a v0 name fails to demangle:
    # nothing may reach the terminal, so its module gets a print that does nothing.
    v0.print = lambda *args, **kwargs: None
    return rust_demangler


def _ocaml(name: str) -> str | None:
    """perf's ``ocaml_demangle_sym``: ``camlFoo__bar_12`` -> ``Foo.bar_12``."""
    if not (name.startswith("caml") and len(name) > 4 and "A" <= name[4] <= "Z"):
        return None
    out: list[str] = []
    i, n = 4, len(name)
    hexd = "0123456789abcdefABCDEF"
    while i < n:
        if name[i] == "_" and i + 1 < n and name[i + 1] == "_":
            out.append(".")
            i += 2
        elif name[i] == "$" and i + 2 < n and name[i + 1] in hexd and name[i + 2] in hexd:
            out.append(chr(int(name[i + 1: i + 3], 16)))
            i += 3
        else:
            out.append(name[i])
            i += 1
    return "".join(out)


def _rust_demangle(name: str) -> str | None:
    m = _V0_SUFFIX.match(name)
    if m:
        name = m.group(1)
    try:
        out = _rust().demangle(name)
    except Exception:  # the library raises its own error classes for non-Rust names
        return None
    if not isinstance(out, str) or not out or out == name:
        return None
    out = _RUST_HASH.sub("", out)
    return _ABI_QUIRK.sub(r'extern "\1" fn', _EMPTY_NS_NAME.sub(r"{\1#", out))


def _cxx_demangle(name: str) -> str | None:
    try:
        out = _cxxfilt().demangle(name, external_only=False)
    except Exception:  # cxxfilt.InvalidName and friends
        return None
    if not isinstance(out, str) or not out or out == name:
        return None
    if name[2:3] in ("T", "G"):
        # special names (vtables, thunks, guard variables, clones): libiberty prints the
        # encoding inside them in full, parameters included
        return out
    return strip_cxx_params(out)


@lru_cache(maxsize=65536)
def demangle(name: str) -> str:
    """``name`` as perf 6.1 prints it (unchanged when it is not a mangled name)."""
    if name[:2] in ("_Z", "_R") and have_libiberty():
        m = _V0_SUFFIX.match(name)
        out = _iberty_demangle(name)
        if out is None and m:
            out = _iberty_demangle(m.group(1))
        if out is not None:
            return _RUST_HASH.sub("", out) if _RUST_LEGACY.match(name) else out
        ocaml = _ocaml(name)
        return ocaml if ocaml is not None else name
    if name.startswith("_R") or (name.startswith("_ZN") and _RUST_LEGACY.match(name)):
        out = _rust_demangle(name)
        if out is not None:
            return out
    if name.startswith("_Z"):
        out = _cxx_demangle(name)
        if out is not None:
            return out
    ocaml = _ocaml(name)
    return ocaml if ocaml is not None else name


def demangle_many(names: Iterable[str]) -> list[str]:
    """:func:`demangle` for each name (names that cannot be mangled pass straight through)."""
    out = []
    for n in names:
        out.append(demangle(n) if n.startswith(MANGLED_PREFIXES) else n)
    return out
