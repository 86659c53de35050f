"""What an ohmmeter reads on a demo's board, unpowered and with its chips out.

A value fault's bench note gives a number that follows from the circuit: the resistance
between two places, as the design has it and as the faulty board reads. Only resistors
and inductors conduct at DC with no supply and no chips (a capacitor is open, so are
diodes and transistors below their knee, and the chips are out of their sockets), so the
reading is the effective resistance of the resistor network between two nets.

One Laplacian pseudo-inverse per design answers every reading; a part's value changed is a
rank-one update of it (Sherman-Morrison), so checking that no other single decade slip
gives the same reading costs a few products per resistor, not a solve.
"""

from __future__ import annotations

import numpy as np

from wirebench.verify.design_rules import part_value

INDUCTOR_OHMS = 1e-3  # a choke or ferrite reads as a short on an ohmmeter


def _prefix(ref: str) -> str:
    return ref.rstrip("0123456789")


class Ohmmeter:
    def __init__(self, design, values: dict[str, str] | None = None):
        """`values`: parts fitted with another value than the design's (a fault)."""
        self.edges: dict[str, tuple[int, int, float]] = {}  # ref -> (net a, net b, ohms)
        nets = sorted({n for p in design.parts for n in p.pins.values()})
        self.index = {n: i for i, n in enumerate(nets)}
        for part in design.parts:
            if len(part.pins) != 2:
                continue
            a, b = (self.index[n] for n in part.pins.values())
            if a == b:
                continue
            kind = _prefix(part.ref)
            value = (values or {}).get(part.ref, part.value)
            ohms = part_value(value) if kind == "R" else INDUCTOR_OHMS if kind in (
                "L", "FB") else None
            if ohms and ohms > 0:
                self.edges[part.ref] = (a, b, ohms)
        n = len(nets)
        lap = np.zeros((n, n))
        for a, b, ohms in self.edges.values():
            g = 1 / ohms
            lap[a, a] += g
            lap[b, b] += g
            lap[a, b] -= g
            lap[b, a] -= g
        self.pinv = np.linalg.pinv(lap, hermitian=True)
        # which nets conduct to which: a reading across two pieces is an open circuit
        self.piece = list(range(n))
        for a, b, _ in self.edges.values():
            ra, rb = self._find(a), self._find(b)
            if ra != rb:
                self.piece[ra] = rb

    def _find(self, i: int) -> int:
        while self.piece[i] != i:
            self.piece[i] = self.piece[self.piece[i]]
            i = self.piece[i]
        return i

    def conducts(self, a: str, b: str) -> bool:
        return self._find(self.index[a]) == self._find(self.index[b])

    def _form(self, u: tuple[int, int], v: tuple[int, int]) -> float:
        p = self.pinv
        return p[u[0], v[0]] - p[u[0], v[1]] - p[u[1], v[0]] + p[u[1], v[1]]

    def reading(self, a: str, b: str, ref: str | None = None, factor: float = 1) -> float:
        """Ohms between nets `a` and `b`, with resistor `ref` (if named) `factor` times
        its value. inf where they do not conduct."""
        if not self.conducts(a, b):
            return float("inf")
        ab = (self.index[a], self.index[b])
        r = self._form(ab, ab)
        if ref is not None:
            i, j, was = self.edges[ref]
            dg = 1 / (was * factor) - 1 / was
            r -= dg * self._form(ab, (i, j)) ** 2 / (1 + dg * self._form((i, j), (i, j)))
        return float(r)

    def reaches(self, net: str, ref: str) -> bool:
        """Does conducting part `ref` sit in the piece of the board that `net` is in?"""
        return self._find(self.index[net]) == self._find(self.edges[ref][0])

    def resistors(self) -> list[str]:
        return [ref for ref in self.edges if _prefix(ref) == "R"]


def ohms_text(ohms: float) -> str:
    """A reading as a meter shows it: three figures at most and a prefix (4.7 kΩ)."""
    for scale, unit in ((1e6, "MΩ"), (1e3, "kΩ"), (1, "Ω")):
        if ohms >= scale:
            return f"{ohms / scale:.3g} {unit}"
    return f"{ohms:.3g} Ω"
