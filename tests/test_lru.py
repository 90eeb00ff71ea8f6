"""perftui.lru.LRU against a plain model of least-recently-used eviction (a list in use
order), over random operations (hypothesis), and from several threads at once."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perftui.lru import LRU

OPS = st.lists(st.tuples(st.sampled_from(["get", "put", "make", "clear"]),
                         st.integers(0, 9), st.integers(0, 99)), max_size=200)


@settings(max_examples=150, deadline=None)
@given(size=st.integers(1, 6), ops=OPS)
def test_lru_equals_a_use_ordered_list(size: int, ops: list[tuple[str, int, int]]) -> None:
    lru: LRU[int, int] = LRU(size)
    order: list[int] = []  # keys, least recently used first
    values: dict[int, int] = {}

    def use(key: int) -> None:
        if key in order:
            order.remove(key)
        order.append(key)
        while len(order) > size:
            values.pop(order.pop(0))

    for op, key, value in ops:
        if op == "get":
            want = values.get(key)
            if want is not None:
                use(key)
            assert lru.get(key) == want
        elif op == "put":
            values[key] = value
            use(key)
            lru.put(key, value)
        elif op == "make":
            made: list[int] = []

            def make(v: int = value, made: list[int] = made) -> int:
                made.append(v)
                return v

            got = lru.get_or_make(key, make)
            if key in values:
                assert got == values[key] and made == []
            else:
                assert got == value and made == [value]
                values[key] = value
            use(key)
        else:
            lru.clear()
            order.clear()
            values.clear()
        assert len(lru) == len(order) <= size
        assert all(k in lru for k in order)


def test_a_size_below_one_is_refused() -> None:
    with pytest.raises(ValueError):
        LRU(0)


def test_threads_share_one_lru() -> None:
    lru: LRU[int, int] = LRU(64)
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            for i in range(20000):
                k = (i * 7 + seed) % 200
                v = lru.get_or_make(k, lambda k=k: k * 3)
                assert v == k * 3
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(lru) == 64
