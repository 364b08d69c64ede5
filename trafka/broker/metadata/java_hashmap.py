"""The iteration order of a java.util.HashMap, for answers whose order Kafka leaves to one.

Kafka answers some requests by walking a HashMap (AlterClientQuotas' results, the client quotas
of DescribeClientQuotas), so a client sees the map's order: by bucket, the spread hash of the key
masked by the table's capacity, and within a bucket in insertion order (a resize splits a bucket
keeping its order). The capacity follows from the size the map was made with and how many keys
went in: `HashMap(n)` starts at the power of two at or above n, the default at 16, and the table
doubles whenever the size passes three quarters of it. Treeified buckets (eight keys or more in
one bucket of a table of at least 64) are not modelled.
"""

from __future__ import annotations

from typing import Callable, Hashable, Iterable, Mapping, TypeVar

K = TypeVar("K", bound=Hashable)

_MASK = 0xFFFFFFFF
DEFAULT_CAPACITY = 16


def string_hash(text: str | None) -> int:
    """Java's String.hashCode (0 for null), over UTF-16 code units, as an unsigned 32-bit int."""
    if text is None:
        return 0
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & _MASK
    return h


def string_map_hash(entries: Mapping[str, str | None]) -> int:
    """Java's AbstractMap.hashCode of a Map<String, String>: the sum of key ^ value hashes."""
    return sum(string_hash(k) ^ string_hash(v) for k, v in entries.items()) & _MASK


def capacity(size: int, initial: int | None = None) -> int:
    """The table size of a HashMap made with `initial` (None: the default) after `size` puts of
    distinct keys."""
    cap = DEFAULT_CAPACITY if initial is None else 1 << max(initial - 1, 0).bit_length()
    while size > cap * 3 // 4:
        cap *= 2
    return cap


def iteration_order(keys: Iterable[K], hash_of: Callable[[K], int], initial: int | None = None) -> list[K]:
    """`keys` (distinct, in the order they were put) in the order a HashMap made with
    `initial` (None: the default size) iterates them."""
    keys = list(keys)
    mask = capacity(len(keys), initial) - 1

    def bucket(key: K) -> int:
        h = hash_of(key) & _MASK
        return (h ^ (h >> 16)) & mask

    return sorted(keys, key=bucket)  # stable: insertion order within a bucket
