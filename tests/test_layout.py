"""The package's shape: sub-packages by concept, and imports that only run one way."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

import wirebench

PACKAGE = Path(wirebench.__file__).parent
SUBPACKAGES = ("agents", "corpus", "evidence", "reports", "runtime", "steps", "taskgen",
               "verify")


def module_name(path: Path) -> str:
    parts = ("wirebench", *path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> nx.DiGraph:
    """Every wirebench import, lazy ones inside functions included."""
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(files)
    for name, path in files.items():
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("wirebench"):
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            graph.add_edges_from((name, t) for t in targets if t in files and t != name)
    return graph


def concept(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 else module


def test_no_module_imports_itself_through_a_cycle():
    assert list(nx.simple_cycles(import_graph())) == []


def test_sub_packages_import_each_other_in_one_direction_only():
    graph = import_graph()
    concepts = nx.DiGraph((concept(a), concept(b)) for a, b in graph.edges
                          if concept(a) != concept(b))
    assert list(nx.simple_cycles(concepts)) == []


def test_only_the_front_doors_and_the_config_sit_at_the_top():
    top = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert top == ["__init__", "cli", "config", "inspect_task", "mcp_server", "worker"]
    assert all((PACKAGE / s / "__init__.py").is_file() for s in SUBPACKAGES)
