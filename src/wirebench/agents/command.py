"""The `command` agent: a shell command run once per turn, in a sandbox of its own.

The contract is akcli's harness contract (its `--agent-cmd` lines work unchanged), plus
a few more variables. The command's environment is built from nothing and holds only:
  TASK_FILE      the task's prompt (task.md)
  OPS_OUT        where it must write its op-list
  PROMPT_FILE    the full prompt pack (the skills doc, akcli's op list and schema, pin
                 tables, then the task)
  SKILLS_DIR     the skills folder the model entry uses
  SYMBOLS_DIR    for each library the task uses, a copy with only the task's symbols
                 (corpus/libraries.trimmed_copies), for the agent's own akcli (on PATH)
  BASE_OPS       for an edit task: the op-list of the design the edit starts from
  TASK_ID, MODEL, SAMPLE, TURN
  FEEDBACK_FILE  from turn 2 on: why the previous answer failed (the repair loop)
plus PATH, HOME, LANG, LC_ALL, TMPDIR, VIRTUAL_ENV and the variables the entry's `env:`
list names. The files are copies, in a folder of their own: no path leads into the
corpus, `results/` or the project.

It runs inside bubblewrap (runtime/sandbox.py): it sees none of the corpus, `results/`,
the project or the home folders; everything it starts dies with it; and all it writes, in
files, counts against `max_output_bytes`. Its stdout and stderr are capped too.
Infra is declared, not assumed: the command declares an infra failure (its provider is
down, its quota is out) only by exiting 75 (EX_TEMPFAIL), which is retried and left out of
the pass rate. Any other end is the model's: a non-zero exit, a crash, a timeout, exit 0
with no OPS_OUT, or more than `max_output_bytes` written is a scored failure, with the
reason (the exit, the last line of stderr) in its errors. Only a sandbox that never started
the command is an infra_error the command did not declare.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import wirebench

from .answer import Answer, TurnContext
from .extract import extract_oplist

BASE_ENV = ("PATH", "LC_ALL", "VIRTUAL_ENV")
# The one exit by which a command declares that it could not run (sysexits.h EX_TEMPFAIL).
EX_TEMPFAIL = 75
# Written on the report pipe before the command starts: what follows is the command's.
STARTED = b"started\n"
STDERR_TAIL = 4096
# The tail is kept this much longer, so that a secret cut at its start is still whole
# when generate redacts it; generate cuts to STDERR_TAIL after redaction.
SECRET_MARGIN = 4096


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
                self.data = (self.data + chunk)[-(STDERR_TAIL + SECRET_MARGIN):]
            elif len(self.data) < self._cap:
                self.data += chunk[: self._cap - len(self.data)]
            if self.total > self._cap:
                self._overflow()

    def join(self) -> None:
        self._thread.join(timeout=5)


def _stage(ctx: TurnContext, inputs: Path) -> dict[str, str]:
    """Copy what the agent may read into `inputs`; the contract variables that name them,
    relative to the inputs folder."""
    inputs.mkdir()
    named = {"TASK_FILE": "task.md"}
    shutil.copyfile(ctx.task.prompt_path, inputs / "task.md")
    if ctx.prompt_path:
        shutil.copyfile(ctx.prompt_path, inputs / "prompt.md")
        named["PROMPT_FILE"] = "prompt.md"
    if ctx.skills_dir:
        shutil.copytree(ctx.skills_dir, inputs / "skills", symlinks=False)
        named["SKILLS_DIR"] = "skills"
    if ctx.task.base_ops_path:
        shutil.copyfile(ctx.task.base_ops_path, inputs / "base_ops.json")
        named["BASE_OPS"] = "base_ops.json"
    if ctx.feedback:
        (inputs / "feedback.txt").write_text(ctx.feedback, encoding="utf-8")
        named["FEEDBACK_FILE"] = "feedback.txt"
    if ctx.symbols:
        from wirebench.corpus.libraries import trimmed_copies

        # akcli parses every library it is given for every part it places: the agent's
        # own akcli gets each library the task uses with only the task's symbols.
        if trimmed_copies(ctx.symbols, ctx.task.shown_lib_ids(), inputs / "symbols"):
            named["SYMBOLS_DIR"] = "symbols"
    # Readable by the agent's uid, whatever the umask (run by root, it is not root's).
    for folder, _, files in os.walk(inputs):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)
    return named


def _own_files(spec: dict) -> list[str]:
    """The files an entry's `files:` globs match, from the workflow folder."""
    import glob

    return sorted({p for pattern in spec.get("files", [])
                   for p in glob.glob(pattern, recursive=True) if os.path.isfile(p)})


def _stage_mcp(ctx: TurnContext, inputs: Path, inside: str, work: str) -> None:
    """MCP_CONFIG for an entry with `mcp: true`: a `wirebench mcp` server the agent's CLI
    starts inside the sandbox, on a copy of what a draw needs from the task (the prompt,
    the base design, the arrange flags, the tool surface; never the answer key or the
    criteria), with OPS_OUT as where `submit` writes."""
    import json

    task = inputs / "tool_task"
    task.mkdir()
    shutil.copyfile(ctx.task.prompt_path, task / "task.md")
    for path in ctx.task.draw_inputs:
        shutil.copyfile(path, task / path.name)
    if "tool_surface" in ctx.task.meta:
        (task / "task.yaml").write_text(f"tool_surface: {ctx.task.meta['tool_surface']}\n")
    server = {"command": sys.executable, "args": [
        "-m", "wirebench.cli", "mcp", "--task", f"{inside}/tool_task", "--pair", work,
        "--submit", f"{work}/ops.json", "--symbols", *ctx.symbols],
        # An MCP client starts its server with a few variables of its own choosing: the
        # package must still be the one the sandbox shows (see _environment).
        "env": {"PYTHONPATH": _package_root()}}
    (inputs / "mcp.json").write_text(json.dumps({"mcpServers": {"wirebench": server}},
                                                indent=2))


def _environment(spec: dict, ctx: TurnContext, named: dict, inputs: str, work: str,
                 home: str) -> dict:
    """Built from nothing: the contract, a few basics, and what `env:` names."""
    env = {k: os.environ[k] for k in (*BASE_ENV, *spec.get("env", [])) if k in os.environ}
    # The akcli wirebench runs, first on PATH: the scripts folder of this interpreter's
    # environment, which the sandbox shows with the rest of the Python installation.
    import sysconfig

    tools = sysconfig.get_path("scripts")
    env["PATH"] = os.pathsep.join([tools, *(p for p in env.get("PATH", "").split(os.pathsep)
                                            if p and p != tools)])
    env.update({k: f"{inputs}/{name}" for k, name in named.items()})
    env.update({"HOME": home, "TMPDIR": home, "LANG": os.environ.get("LANG", "C.UTF-8"),
                "OPS_OUT": f"{work}/ops.json", "TASK_ID": ctx.task.id, "MODEL": ctx.model,
                "SAMPLE": str(ctx.sample), "TURN": str(ctx.turn),
                # The workflow folder, where `files:` are shown: `python3
                # "$PROJECT_DIR/agents/mine.py"` (the command itself starts elsewhere).
                "PROJECT_DIR": os.getcwd()})
    # wirebench's own agents (wirebench-baseline) import the package the harness runs,
    # the one the sandbox shows, even when that is not the installed one (a checkout on
    # PYTHONPATH, a breakage copy): the venv's own path would find a folder it hides.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [_package_root(), env.get("PYTHONPATH")]))
    return env


def _package_root() -> str:
    """The folder holding the wirebench package this harness runs (shown to the sandbox)."""
    return str(Path(wirebench.__file__).parent.parent)


# Runs the agent's command, then reports on the report pipe, which the command itself never
# holds (the shell cannot close an fd above 9, so this is Python): that it started (before
# the command runs, so that no command can unsay it), then the command's exit code and the
# bytes it left in the scope folder, then its answer.
_LAUNCHER = """
import os, subprocess, sys
fd, scope, command = int(sys.argv[1]), sys.argv[2], sys.argv[3]
# Run by root, the command runs as the agent's uid, with no capabilities. The launcher
# stays root, so the command cannot reach this process (its report pipe, in /proc).
uid = int(sys.argv[5]) if sys.argv[5] else None
who = {"user": uid, "group": uid, "extra_groups": []} if uid is not None else {}
os.write(fd, b"started\\n")
rc = subprocess.call(["/bin/sh", "-c", command], close_fds=True, **who)
rc = 128 - rc if rc < 0 else rc
dev, used = os.stat(scope).st_dev, 0
for folder, dirs, files in os.walk(scope):
    dirs[:] = [d for d in dirs if os.lstat(os.path.join(folder, d)).st_dev == dev]
    used += sum(os.lstat(os.path.join(folder, f)).st_size for f in files)
report = os.fdopen(fd, "wb")
report.write(b"%d %d\\n" % (rc, used))
try:
    with open(os.environ["OPS_OUT"], "rb") as answer:
        report.write(answer.read(int(sys.argv[4]) + 1))
except OSError:
    pass
report.close()
sys.exit(rc)
"""


def _launcher(report_fd: int, scope: str, command: str, cap: int, uid: int | None = None
              ) -> list[str]:
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(report_fd), scope, command,
            str(cap), "" if uid is None else str(uid)]


def answer(spec: dict, ctx: TurnContext) -> Answer:
    from wirebench.runtime import sandbox
    from wirebench.runtime.confine import die_with_parent, sandbox_off

    timeout = float(spec.get("timeout", 600))
    cap = int(spec.get("max_output_bytes", 1 << 20))
    host = Path(tempfile.mkdtemp(prefix="wirebench-agent-"))
    try:
        named = _stage(ctx, host / "inputs")
        inside, work = ((str(host / "inputs"), str(host / "work")) if sandbox_off()
                        else (sandbox.INPUTS, sandbox.WORK))
        if spec.get("mcp"):
            _stage_mcp(ctx, host / "inputs", inside, work)
            named["MCP_CONFIG"] = "mcp.json"
        report_r, report_w = os.pipe()
        if sandbox_off():
            (host / "work").mkdir()
            env = _environment(spec, ctx, named, str(host / "inputs"), str(host / "work"),
                               str(host / "work"))
            argv = _launcher(report_w, str(host / "work"), spec["command"], cap)
            cwd = host / "work"
        else:
            env = _environment(spec, ctx, named, sandbox.INPUTS, sandbox.WORK, "/tmp")
            argv = sandbox.command(
                _launcher(report_w, "/tmp", spec["command"], cap,
                          sandbox.AGENT_UID if os.geteuid() == 0 else None),
                inputs=host / "inputs",
                # An MCP server reads the task's libraries (read-only, as the rest).
                expose=[Path(p).resolve() for p in (*spec.get("expose", []),
                                                    *_own_files(spec),
                                                    *(ctx.symbols if spec.get("mcp") else ()))],
                network=bool(spec.get("network", True)), size=cap)
            cwd = Path("/")

        def limit_files():  # in the child: no single file past the cap, and die with us
            resource.setrlimit(resource.RLIMIT_FSIZE, (cap, cap))
            die_with_parent()

        try:
            proc = subprocess.Popen(
                argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True, preexec_fn=limit_files,
                pass_fds=(report_w,))
        finally:
            os.close(report_w)
        overflow = threading.Event()

        def kill(*_):
            overflow.set()
            _kill_group(proc)

        with os.fdopen(report_r, "rb") as report_pipe:
            out = _Capped(proc.stdout, cap, keep_tail=False, on_overflow=kill)
            err = _Capped(proc.stderr, cap, keep_tail=True, on_overflow=kill)
            report = _Capped(report_pipe, cap + 64, keep_tail=False, on_overflow=lambda: None)
            started = time.monotonic()
            try:
                rc = proc.wait(timeout=timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                rc, timed_out = proc.wait(), True
            for pipe in (out, err, report):
                pipe.join()
        return _verdict(rc, timed_out, overflow.is_set(), report, err, cap, timeout, started,
                        spec)
    finally:
        shutil.rmtree(host, ignore_errors=True)


def _last_line(err, spec: dict) -> str:
    """The last line the command printed on stderr, redacted before it is cut."""
    from .secrets import redact

    lines = redact(err.data.decode(errors="replace"), spec).strip().splitlines()
    return f": {lines[-1].strip()[-300:]}" if lines else ""


def _verdict(rc, timed_out, overflowed, report, err, cap, timeout, started, spec) -> Answer:
    began = report.data.startswith(STARTED)
    head, _, ops = report.data[len(STARTED):].partition(b"\n") if began else (b"", b"", b"")
    fields = head.split()
    reported = len(fields) == 2 and all(f.isdigit() for f in fields)
    agent_rc = int(fields[0]) if reported else rc
    used = int(fields[1]) if reported else 0
    detail = {"exit_code": agent_rc, "stderr_tail": err.data.decode(errors="surrogateescape"),
              "wall_s": round(time.monotonic() - started, 3), "bytes_written": used}
    said = _last_line(err, spec)
    if not began:  # the sandbox never ran the command: the harness's failure, not its
        return Answer(None, "infra_error", f"the sandbox did not start the agent (exit {rc})"
                      f"{said}", detail=detail)
    if timed_out:
        return Answer(None, "no_answer", f"agent timed out after {timeout:g} s", detail=detail)
    # Past the cap a write fails (the sandbox's tmpfs is full) or kills the writer with
    # SIGXFSZ, which through `sh -c` shows as exit 128 + SIGXFSZ.
    too_big = (overflowed or used > cap or len(ops) >= cap
               or agent_rc in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ))
    if too_big:
        return Answer(None, "no_answer", f"agent wrote more than max_output_bytes ({cap})",
                      detail=detail)
    if not reported:  # the command killed the launcher that reports on it
        return Answer(None, "no_answer", f"agent ended its sandbox without a report "
                      f"(exit {rc}){said}", detail=detail)
    if agent_rc == EX_TEMPFAIL:
        return Answer(None, "infra_error", f"agent declared an infra failure (exit "
                      f"{EX_TEMPFAIL}, EX_TEMPFAIL){said}", detail=detail)
    if agent_rc != 0:
        return Answer(None, "no_answer", f"agent failed (exit {agent_rc}; only exit "
                      f"{EX_TEMPFAIL} declares an infra failure){said}", detail=detail)
    if not ops:
        return Answer(None, "no_answer", "agent exited 0 but wrote nothing to OPS_OUT",
                      detail=detail)
    found = extract_oplist(ops.decode(errors="replace"))
    return Answer(found.encode() if found is not None else ops, detail=detail)


def _kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
