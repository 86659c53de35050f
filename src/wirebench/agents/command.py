"""The `command` agent: a shell command run once per turn, in its own empty folder.

The contract is akcli's harness contract (its `--agent-cmd` lines work unchanged), plus
a few more variables. The command's environment holds only:
  TASK_FILE      the task's prompt (task.md)
  OPS_OUT        where it must write its op-list
  PROMPT_FILE    the full prompt pack (the skills doc, akcli's op list and schema, pin
                 tables, then the task)
  SKILLS_DIR     the skills folder the model entry uses
  TASK_ID, MODEL, SAMPLE, TURN
  FEEDBACK_FILE  from turn 2 on: why the previous answer failed (the repair loop)
plus PATH, HOME, LANG, LC_ALL, TMPDIR, VIRTUAL_ENV and the variables the entry's `env:`
list names. Everything else (other API keys above all) is scrubbed.

It runs with a timeout and a cap on the bytes it may write (files, stdout, stderr).
A crash (non-zero exit) or a timeout is an infra_error; exit 0 with no OPS_OUT, or an
answer over the cap, is the model's own failure.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from .answer import Answer, TurnContext
from .extract import extract_oplist

BASE_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "VIRTUAL_ENV")
STDERR_TAIL = 4096


class _Capped:
    """Drain a pipe in a thread, keeping the head (stdout) or the tail (stderr)."""

    def __init__(self, pipe, cap: int, keep_tail: bool, on_overflow):
        self.data, self.total = b"", 0
        self._cap, self._tail, self._overflow = cap, keep_tail, on_overflow
        self._thread = threading.Thread(target=self._drain, args=(pipe,), daemon=True)
        self._thread.start()

    def _drain(self, pipe) -> None:
        for chunk in iter(lambda: pipe.read(1 << 16), b""):
            self.total += len(chunk)
            if self._tail:
                self.data = (self.data + chunk)[-STDERR_TAIL:]
            elif len(self.data) < self._cap:
                self.data += chunk[: self._cap - len(self.data)]
            if self.total > self._cap:
                self._overflow()

    def join(self) -> None:
        self._thread.join(timeout=5)


def _environment(spec: dict, ctx: TurnContext, ops_out: Path, feedback: Path | None) -> dict:
    env = {k: os.environ[k] for k in (*BASE_ENV, *spec.get("env", [])) if k in os.environ}
    env.update({
        "TASK_FILE": str(ctx.task.prompt_path.resolve()),
        "OPS_OUT": str(ops_out),
        "TASK_ID": ctx.task.id,
        "MODEL": ctx.model,
        "SAMPLE": str(ctx.sample),
        "TURN": str(ctx.turn),
    })
    if ctx.prompt_path:
        env["PROMPT_FILE"] = str(Path(ctx.prompt_path).resolve())
    if ctx.skills_dir:
        env["SKILLS_DIR"] = str(Path(ctx.skills_dir).resolve())
    if feedback:
        env["FEEDBACK_FILE"] = str(feedback)
    return env


def answer(spec: dict, ctx: TurnContext) -> Answer:
    timeout = float(spec.get("timeout", 600))
    cap = int(spec.get("max_output_bytes", 1 << 20))
    work = Path(tempfile.mkdtemp(prefix="wirebench-agent-"))
    try:
        ops_out = work / "ops.json"
        feedback = None
        if ctx.feedback:
            feedback = work.parent / f"{work.name}.feedback.txt"
            feedback.write_text(ctx.feedback)

        def limit_files():  # runs in the child: no file it writes may exceed the cap
            resource.setrlimit(resource.RLIMIT_FSIZE, (cap, cap))
            _die_with_parent()

        proc = subprocess.Popen(
            spec["command"], shell=True, cwd=work, env=_environment(spec, ctx, ops_out, feedback),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True, preexec_fn=limit_files,
        )
        overflow = threading.Event()

        def kill(*_):
            overflow.set()
            _kill_group(proc)

        out = _Capped(proc.stdout, cap, keep_tail=False, on_overflow=kill)
        err = _Capped(proc.stderr, cap, keep_tail=True, on_overflow=kill)
        started = time.monotonic()
        try:
            rc = proc.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            rc, timed_out = proc.wait(), True
        out.join()
        err.join()
        detail = {"exit_code": rc, "stderr_tail": err.data.decode(errors="replace"),
                  "wall_s": round(time.monotonic() - started, 3)}
        if timed_out:
            return Answer(None, "infra_error", f"agent timed out after {timeout:g} s",
                          detail=detail)
        # A write past the file cap kills the writer with SIGXFSZ; through `sh -c` that
        # shows as exit 128 + SIGXFSZ. A file cut off at exactly the cap is a hit too.
        too_big = overflow.is_set() or rc in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ) or (
            ops_out.is_file() and ops_out.stat().st_size >= cap)
        if too_big:
            return Answer(None, "no_answer", f"agent wrote more than max_output_bytes ({cap})",
                          detail=detail)
        if rc != 0:
            return Answer(None, "infra_error", f"agent crashed (exit {rc})", detail=detail)
        if not ops_out.is_file() or ops_out.stat().st_size == 0:
            return Answer(None, "no_answer", "agent exited 0 but wrote nothing to OPS_OUT",
                          detail=detail)
        raw = ops_out.read_bytes()
        found = extract_oplist(raw.decode(errors="replace"))
        return Answer(found.encode() if found is not None else raw, detail=detail)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if ctx.feedback:
            (work.parent / f"{work.name}.feedback.txt").unlink(missing_ok=True)


def _die_with_parent() -> None:
    """Linux: if the generate step is killed (kill -9 of a run), take the agent with it
    instead of leaving it running, and billing, with nobody to read its answer."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
