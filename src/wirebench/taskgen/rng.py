"""A random stream that is the same on every machine and every Python: SHA-256 in
counter mode over the stream's key (family, version, seed, index)."""

from __future__ import annotations

import hashlib


class Rng:
    def __init__(self, *key):
        self._key = "\x1f".join(str(k) for k in key).encode()
        self._counter = 0

    def _bits(self) -> int:
        self._counter += 1
        block = hashlib.sha256(self._key + self._counter.to_bytes(8, "big")).digest()
        return int.from_bytes(block[:8], "big")

    def below(self, n: int) -> int:
        """Uniform in [0, n), without modulo bias."""
        if n <= 0:
            raise ValueError("below() needs n > 0")
        limit = (1 << 64) - (1 << 64) % n
        while (x := self._bits()) >= limit:
            pass
        return x % n

    def randint(self, lo: int, hi: int) -> int:
        return lo + self.below(hi - lo + 1)

    def choice(self, seq):
        return seq[self.below(len(seq))]

    def chance(self, percent: int) -> bool:
        return self.below(100) < percent

    def shuffle(self, items: list) -> list:
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]
        return items

    def sample(self, seq, k: int) -> list:
        return self.shuffle(list(seq))[:k]
