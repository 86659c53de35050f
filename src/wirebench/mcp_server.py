"""`wirebench mcp`: one pair's akcli tools as a stdio MCP server (the official `mcp`
package), for agent CLIs that take tools as MCP servers.

The tools are steps/tools.py's, with the same surface, guard, confinement and output cap
as the tool-calling loop's. A call the toolbox refuses or that fails comes back as an
MCP tool error (`isError`), with the reason as its text, and the session goes on.
`submit` writes the op-list to --submit (a command agent's OPS_OUT) and says so;
`render` answers with an image content block beside its text (the client decides
whether its model sees it).

    wirebench mcp --task tasks/01-divider --pair WORK_DIR --symbols symbols/*.kicad_sym \\
        [--submit OPS_OUT]
"""

from __future__ import annotations

from pathlib import Path


def build(task_dir: Path, pair_dir: Path, symbols: list[str], submit: Path | None = None):
    """The MCP server and its toolbox (close the toolbox when the server stops)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.mcpserver.utilities.types import Image

    from wirebench.corpus.tasks import load_task
    from wirebench.evidence.files import write_bytes_atomic
    from wirebench.steps.tools import SPECS, Toolbox

    task = load_task(task_dir)
    Path(pair_dir).mkdir(parents=True, exist_ok=True)
    toolbox = Toolbox(task, symbols, Path(pair_dir), vision=True)
    server = MCPServer("wirebench", instructions=(
        f"akcli's tools for task {task.id}: inspect ops and pins, validate and dry-run a "
        "draw, query, check, render and simulate it, then submit the final op-list."))

    def run(name: str, args: dict):
        result = toolbox.call(name, args)
        if result.status != "ok":
            raise ToolError(f"[{result.status}] {result.text}")
        if result.submitted is not None and submit is not None:
            write_bytes_atomic(Path(submit), result.submitted)
            return f"submitted to {Path(submit).name}"
        if result.image is not None:
            return [result.text, Image(data=result.image, format="png")]
        return result.text

    # One function per tool, with its argument as a typed parameter: MCP clients read
    # the schema from the signature.
    def list_ops() -> str:
        return run("list_ops", {})

    def op_schema(op: str) -> str:
        return run("op_schema", {"op": op})

    def pins(lib_id: str) -> str:
        return run("pins", {"lib_id": lib_id})

    def nets() -> str:
        return run("nets", {})

    def validate(oplist: dict) -> str:
        return run("validate", {"oplist": oplist})

    def draw(oplist: dict) -> str:
        return run("draw", {"oplist": oplist})

    def submit_(oplist: dict) -> str:
        return run("submit", {"oplist": oplist})

    def query(net: str | None = None, pin: str | None = None,
              component: str | None = None) -> str:
        return run("query", {"net": net, "pin": pin, "component": component})

    def check(kind: str = "all") -> str:
        return run("check", {"kind": kind})

    def render() -> list:
        return run("render", {})

    def simulate(spec: dict) -> str:
        return run("simulate", {"spec": spec})

    functions = {"list_ops": list_ops, "op_schema": op_schema, "pins": pins, "nets": nets,
                 "validate": validate, "draw": draw, "submit": submit_, "query": query,
                 "check": check, "render": render, "simulate": simulate}
    for name in toolbox.names:
        server.add_tool(functions[name], name=name, description=SPECS[name][0],
                        structured_output=False)
    return server, toolbox


def serve(task_dir: Path, pair_dir: Path, symbols: list[str], submit: Path | None) -> int:
    server, toolbox = build(task_dir, pair_dir, symbols, submit)
    try:
        server.run("stdio")
    finally:
        toolbox.close()
    return 0
