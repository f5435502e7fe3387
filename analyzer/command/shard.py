"""`--shard K/N`: one of N disjoint parts of a run, for CI matrices (N jobs, each `--shard K/N`).

A run's units of work (the files `check` reads; the (builder, params, target) builds of `lint`,
`llm` and the configured run) are ordered by a SHA-256 hash of each unit's identity (its file name
as given, or its builder, parameters and target), then dealt round-robin: shard K takes the K-th,
(K+N)-th, ... of that order. So the split is the same on every machine and under every Python hash
seed, the shards differ in size by one unit at most, and every unit is in exactly one shard: the
union of the N shards' findings is the whole run's. Hashing first spreads the units of one builder
or one target over the shards, where dealing in the run's own order would put, say, every vulkan
build of a three-target sweep in one shard of three. A shard keeps the units it takes in the run's
own order, so its report reads as the whole run's does.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Shard:
    index: int    # K, from 1
    count: int    # N

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def take(self, units: list[T], identity: Callable[[T], Any]) -> list[T]:
        """This shard's units, in the order given."""
        order = sorted(range(len(units)), key=lambda i: (_digest(identity(units[i])), i))
        mine = {i for rank, i in enumerate(order) if rank % self.count == self.index - 1}
        return [u for i, u in enumerate(units) if i in mine]

    def describe(self, taken: int, total: int, what: str) -> dict[str, Any]:
        """What the report says of the shard."""
        return {"index": self.index, "count": self.count, "units": taken, "of": total, "unit": what}


def parse(text: str) -> Shard:
    """K/N with 1 <= K <= N; ValueError with the reason otherwise."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m:
        raise ValueError(f"expected K/N (shard K of N, e.g. 1/4), got '{text}'")
    k, n = int(m.group(1)), int(m.group(2))
    if n < 1 or not 1 <= k <= n:
        raise ValueError(f"expected K/N with 1 <= K <= N, got '{text}'")
    return Shard(k, n)


def _digest(identity: Any) -> str:
    # JSON with sorted keys, and repr for what JSON cannot say (a tuple parameter): the same text
    # on every machine, unlike hash().
    text = json.dumps(identity, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()

