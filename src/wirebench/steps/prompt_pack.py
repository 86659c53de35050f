"""The prompt pack: everything an agent is given for one task, as one Markdown file.

It is the skills folder's own guide, then what akcli itself ships (`akcli ops list`, the
op-list JSON Schema, and `akcli pins` tables of the symbols the task names, with the common
small parts for a spec task), our datasheets on the parts it names (notes, or for a spec
task full write-ups), the sheet an edit starts from, then the task. A rule builds one per
skills folder and task; its hash is an input of `generate`, so a docs edit reruns exactly
the agents that read those docs.
"""

from __future__ import annotations

from pathlib import Path

from wirebench.corpus.tasks import load_task
from wirebench.evidence.files import write_bytes_atomic


def build(task_dir: Path, skills_dir: Path, symbols: list[str]) -> str:
    from wirebench.runtime import akcli_backend

    task = load_task(task_dir)
    guides = sorted(Path(skills_dir).glob("*.md"))
    if not guides:
        raise FileNotFoundError(f"{skills_dir}: no skills documents (*.md)")
    parts = [g.read_text(encoding="utf-8").rstrip() for g in guides]
    parts.append("# Reference: `akcli ops list`\n\n```\n" + akcli_backend.ops_list_text().rstrip()
                 + "\n```")
    parts.append("# Reference: the op-list JSON Schema (`akcli schema ops`)\n\n```json\n"
                 + akcli_backend.ops_schema_text().rstrip() + "\n```")
    tables = []
    for lib_id in task.shown_lib_ids():
        res = akcli_backend.pins_text(lib_id, symbols)
        if res.rc == 0:
            tables.append("```\n" + res.stdout.rstrip() + "\n```")
    if tables:
        parts.append("# Reference: pin tables (`akcli pins`)\n\n" + "\n\n".join(tables))
    # A spec task's pack holds whole datasheets, where what its rules check sits among
    # what they do not; a board's holds our notes for the schematic.
    notes = [p.read_text(encoding="utf-8").rstrip() for p in task.datasheet_paths]
    if notes:
        title = "datasheets" if task.full_datasheets else "datasheet notes"
        parts.append(f"# Reference: {title}\n\n" + "\n\n".join(notes))
    if task.base_ops_path:  # an edit: the agent must see what it edits
        parts.append("# The sheet you start from (its op-list, already drawn)\n\n```json\n"
                     + task.base_ops_path.read_text(encoding="utf-8").rstrip() + "\n```")
    # The task comes last: a real design's sheet runs to 2,000 lines, and a helper
    # reading video's pack found the task "easy to miss" in the middle of it.
    parts.append("# Your task\n\n" + task.prompt_path.read_text(encoding="utf-8").rstrip())
    return "\n\n".join(parts) + "\n"


def write(task_dir: Path, skills_dir: Path, symbols: list[str], out: Path) -> None:
    write_bytes_atomic(out, build(task_dir, skills_dir, symbols).encode())
