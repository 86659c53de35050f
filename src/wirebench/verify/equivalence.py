"""Relabel-tolerant equivalence: is the candidate the expected circuit up to renaming?

Exact scoring calls a correct answer that named a net VREF instead of VOUT, or numbered
R2/R1 the other way round, a miss. This check builds each netlist as a bipartite graph
(parts and nets; an edge carries the pin numbers by which a part touches a net) and asks
networkx whether the two graphs are isomorphic, with parts matched only to parts of the
same type (the designator's letters: R, C, U, ...) and nets matched whatever their names.
Nets with fewer than two real pins say nothing about connectivity and are left out.
It is reported on its own and never changes the exact pass.
"""

from __future__ import annotations

import re

from wirebench.verify.scoring import is_real_pin


def part_type(ref: str) -> str:
    m = re.match(r"[A-Za-z]+", ref)
    return m.group(0).upper() if m else ref


def _graph(nets: list[frozenset[str]]):
    import networkx as nx  # lazy: 0.15 s, paid only when an exact match failed

    g = nx.Graph()
    for i, members in enumerate(nets):
        if len(members) < 2:
            continue
        net = ("net", i)
        g.add_node(net, kind="net")
        pins: dict[str, set[str]] = {}
        for member in members:
            ref, pin = member.split(".", 1)
            pins.setdefault(ref, set()).add(pin)
        for ref, numbers in pins.items():
            g.add_node(("part", ref), kind=part_type(ref))
            g.add_edge(net, ("part", ref), pins=frozenset(numbers),
                       pin_text=",".join(sorted(numbers)))
    return g


def relabel_equivalent(expected: dict[str, frozenset[str]], nets_doc: dict) -> bool:
    from networkx.algorithms.isomorphism import GraphMatcher

    observed = [frozenset(m for m in n.get("members", []) if is_real_pin(m))
                for n in nets_doc.get("nets", [])]
    # The same pins grouped the same way, only the names differ: no search needed (the
    # matcher can take minutes to map a large, symmetric design onto itself).
    if ({m for m in observed if len(m) > 1}
            == {m for m in expected.values() if len(m) > 1}):
        return True
    want, got = _graph(list(expected.values())), _graph(observed)
    if (want.number_of_nodes(), want.number_of_edges()) != (got.number_of_nodes(),
                                                            got.number_of_edges()):
        return False
    # Isomorphic graphs hash alike, so differing hashes settle it in milliseconds. The
    # matcher alone may search for hours to prove two large netlists apart (a real-tier
    # demo of 58 parts with a diode turned round: 16 minutes, and not done).
    from networkx import weisfeiler_lehman_graph_hash as wl

    if (wl(want, node_attr="kind", edge_attr="pin_text")
            != wl(got, node_attr="kind", edge_attr="pin_text")):
        return False
    matcher = GraphMatcher(want, got, node_match=lambda a, b: a["kind"] == b["kind"],
                           edge_match=lambda a, b: a["pins"] == b["pins"])
    return matcher.is_isomorphic()
