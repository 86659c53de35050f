"""What an ohmmeter reads on a demo's board, unpowered and with its chips out.

A value fault's bench note gives a number that follows from the circuit: the resistance
between two places, as the design has it and as the faulty board reads. Only resistors
(an array's too), inductors and fuses conduct at DC with no supply and no chips (a
capacitor is open, so are diodes and transistors below their knee, and the chips are out
of circuit), so the reading is the effective resistance of that network between two nets.
Where a part of unknown state (a trimmer, a jumper, a toggle) closes a loop in a piece of
the board, the schematic does not say what the piece reads, and no note is given there.

One Laplacian pseudo-inverse per design answers every reading; a part's value changed is a
rank-one update of it (Sherman-Morrison), so checking that no other single decade slip
gives the same reading costs a few products per resistor, not a solve. Two parts' values
exchanged is a rank-two update (Woodbury), worked out for every pair of a piece of the
board at once.
"""

from __future__ import annotations

import re

import numpy as np

from wirebench.verify.design_rules import part_value

INDUCTOR_OHMS = 1e-3  # a choke, a ferrite or a fuse reads as a short on an ohmmeter
# Parts by their symbol: what conducts at DC, and what conducts in a state the schematic
# does not give (a trimmer's wiper, a jumper fitted or not, a toggle's position). A push
# button at rest and a crystal are open.
RESISTOR = re.compile(r"^R(_.*)?$")
ARRAY = re.compile(r"^(RR\d+|R_Pack\d+.*|R_Network\d+.*)$")  # pin 1 common, one R a pin
SHORT = re.compile(r"^(L|INDUCTOR|FUSE|Fuse|Ferrite.*|FerriteBead.*|L_.*)$")
UNSURE = re.compile(r"^(POT|R_POT.*|R_Pot.*|R_Variable.*|JUMPER.*|Jumper.*|SolderJumper.*"
                    r"|TEST|SWITCH.*|SW_SPDT.*|SW_DIP.*|Thermistor.*)$")


def _prefix(ref: str) -> str:
    return ref.rstrip("0123456789")


def _symbol(part) -> str:
    return part.lib_id.split(":")[-1]


def _array_ohms(value) -> float | None:
    """An array's value, "8x10K": each of its resistors' value."""
    return part_value(str(value).split("x", 1)[-1]) if value else None


class _Sets:
    """Disjoint sets of net indices (union-find)."""

    def __init__(self, n: int):
        self.up = list(range(n))

    def find(self, i: int) -> int:
        while self.up[i] != i:
            self.up[i] = self.up[self.up[i]]
            i = self.up[i]
        return i

    def join(self, a: int, b: int) -> None:
        self.up[self.find(a)] = self.find(b)


class Ohmmeter:
    def __init__(self, design, values: dict[str, str] | None = None):
        """`values`: parts fitted with another value than the design's (a fault)."""
        # ref -> (net a, net b, ohms); an array's resistors as REF.PIN
        self.edges: dict[str, tuple[int, int, float]] = {}
        nets = sorted({n for p in design.parts for n in p.pins.values()})
        self.index = {n: i for i, n in enumerate(nets)}
        unsure: list[list[int]] = []
        for part in design.parts:
            sym = _symbol(part)
            value = (values or {}).get(part.ref, part.value)
            at = [self.index[n] for n in part.pins.values()]
            if UNSURE.match(sym) or (RESISTOR.match(sym) and len(part.pins) > 2):
                unsure.append(sorted(set(at)))  # two pins on one net: shorted, no loop
            elif ARRAY.match(sym) and "1" in part.pins:
                common, ohms = self.index[part.pins["1"]], _array_ohms(value)
                for pin, net in part.pins.items():
                    if pin != "1" and ohms and self.index[net] != common:
                        self.edges[f"{part.ref}.{pin}"] = (common, self.index[net], ohms)
            elif len(part.pins) == 2 and at[0] != at[1]:
                ohms = (part_value(value) if RESISTOR.match(sym)
                        else INDUCTOR_OHMS if SHORT.match(sym) else None)
                if ohms and ohms > 0:
                    self.edges[part.ref] = (*at, ohms)
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
        self.pieces = _Sets(n)
        for a, b, _ in self.edges.values():
            self.pieces.join(a, b)
        # A piece whose figure depends on a part of unknown state: one where such parts,
        # through the rest of the board, join two of its nets (a path that bypasses the
        # piece's own resistors). A jumper to a piece that leads nowhere else, or a loop
        # back to the one net it left, changes no reading.
        self.doubtful: set[int] = set()
        for piece in {self._find(i) for at in unsure for i in at}:
            outside = _Sets(n)
            for a, b, _ in self.edges.values():
                if self._find(a) != piece:
                    outside.join(a, b)
            for at in unsure:
                for j in at[1:]:
                    outside.join(at[0], j)
            entries = {i for at in unsure for i in at if self._find(i) == piece}
            if len({outside.find(i) for i in entries}) < len(entries):
                self.doubtful.add(piece)

    def sure(self, net: str) -> bool:
        """Does a reading in `net`'s piece of the board follow from the schematic alone?"""
        return self._find(self.index[net]) not in self.doubtful

    def piece(self, net: str) -> int:
        """Which piece of the board the net is in: nets that conduct to each other share
        one."""
        return self._find(self.index[net])

    def _find(self, i: int) -> int:
        return self.pieces.find(i)

    def conducts(self, a: str, b: str) -> bool:
        return self._find(self.index[a]) == self._find(self.index[b])

    def _form(self, u: tuple[int, int], v: tuple[int, int]) -> float:
        p = self.pinv
        return p[u[0], v[0]] - p[u[0], v[1]] - p[u[1], v[0]] + p[u[1], v[1]]

    def reading(self, a: str, b: str, ref: str | None = None, factor: float = 1) -> float:
        """Ohms between nets `a` and `b`, with resistor `ref` (if named) `factor` times
        its value. inf where they do not conduct, NaN where the schematic does not say
        (a part of unknown state in the way)."""
        if not self.conducts(a, b):
            return float("inf")
        if not self.sure(a):
            return float("nan")
        ab = (self.index[a], self.index[b])
        r = self._form(ab, ab)
        if ref is not None:
            i, j, was = self.edges[ref]
            dg = 1 / (was * factor) - 1 / was
            r -= dg * self._form(ab, (i, j)) ** 2 / (1 + dg * self._form((i, j), (i, j)))
        return float(r)

    def swapped(self, a: str, b: str, refs: list[str]):
        """Ohms between nets `a` and `b` were resistors `refs[k]` and `refs[l]` to trade
        values, for every k and l at once: a matrix, NaN on the pairs of equal value
        (trading them changes nothing) and on the diagonal."""
        ab = (self.index[a], self.index[b])
        i = np.array([self.edges[r][0] for r in refs])
        j = np.array([self.edges[r][1] for r in refs])
        ohms = np.array([self.edges[r][2] for r in refs])
        p = self.pinv
        c = p[ab[0], i] - p[ab[0], j] - p[ab[1], i] + p[ab[1], j]  # form(ab, e_k)
        m = p[np.ix_(i, i)] - p[np.ix_(i, j)] - p[np.ix_(j, i)] + p[np.ix_(j, j)]
        # k takes l's value and l takes k's: conductance changes d and -d
        d = 1 / ohms[None, :] - 1 / ohms[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            a00 = 1 / d + np.diag(m)[:, None]
            a11 = -1 / d + np.diag(m)[None, :]
            det = a00 * a11 - m ** 2
            quad = (c[:, None] ** 2 * a11 - 2 * np.outer(c, c) * m
                    + c[None, :] ** 2 * a00) / det
            out = self._form(ab, ab) - quad
        out[(d == 0) | np.eye(len(refs), dtype=bool)] = np.nan
        return out

    def refitted(self, a: str, b: str, refs: list[str], values: list[float]):
        """Ohms between nets `a` and `b` were resistor `refs[k]` fitted at `values[u]`
        ohms instead, for every k and u at once (rank-one updates, as `reading`)."""
        ab = (self.index[a], self.index[b])
        i = np.array([self.edges[r][0] for r in refs])
        j = np.array([self.edges[r][1] for r in refs])
        ohms = np.array([self.edges[r][2] for r in refs])
        p = self.pinv
        c = p[ab[0], i] - p[ab[0], j] - p[ab[1], i] + p[ab[1], j]
        m = p[i, i] - 2 * p[i, j] + p[j, j]
        dg = 1 / np.asarray(values, dtype=float)[None, :] - 1 / ohms[:, None]
        return self._form(ab, ab) - dg * c[:, None] ** 2 / (1 + dg * m[:, None])

    def reaches(self, net: str, ref: str) -> bool:
        """Does conducting part `ref` sit in the piece of the board that `net` is in?"""
        return self._find(self.index[net]) == self._find(self.edges[ref][0])

    def resistors(self) -> list[str]:
        """The discrete resistors (an array's resistors cannot be fitted apart)."""
        return [ref for ref in self.edges if "." not in ref and _prefix(ref) == "R"]


def ohms_text(ohms: float) -> str:
    """A reading as a meter shows it: three figures at most and a prefix (4.7 kΩ)."""
    for scale, unit in ((1e6, "MΩ"), (1e3, "kΩ"), (1, "Ω")):
        if ohms >= scale:
            return f"{ohms / scale:.3g} {unit}"
    return f"{ohms:.3g} Ω"
