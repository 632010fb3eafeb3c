"""Shared by the batch tests: manifests over the bundled example inputs, and comparisons."""

from __future__ import annotations

import filecmp
import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
EXAMPLES = SRC / "isaforge" / "examples"
PROGRAMS = EXAMPLES / "theia" / "programs"
TENSIX_KERNEL = SRC / "isaforge" / "tensix" / "data" / "matmul_kernel.s"
BATCH_EXAMPLE = REPO / "examples" / "batch"

#: a T-Language program that never ends (its loop condition is always true)
SPIN_VP = (PROGRAMS / "sum_loop.vp").read_text().replace("i.xxx < 11", "i.xxx > 0")
SPIN_CP = (PROGRAMS / "sum_loop.cp").read_text().replace("SUM_LOOP", "SPIN")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def spin_inputs(d: Path) -> tuple[Path, Path]:
    """spin.vp / spin.cp in ``d``: ``theia run spin.vp`` runs until its step limit."""
    return write(d / "spin.vp", SPIN_VP), write(d / "spin.cp", SPIN_CP)


def spin_job(job_id: str, timeout: float, isolate: bool | None = None) -> str:
    """A manifest's ``[[job]]`` running spin.vp (see :func:`spin_inputs`) until ``timeout``."""
    iso = "" if isolate is None else f"isolate = {str(isolate).lower()}\n"
    return (f'[[job]]\nid = "{job_id}"\n'
            f'args = ["theia", "run", "spin.vp", "--max-steps", "2000000000"]\n'
            f'inputs = ["spin.vp", "spin.cp"]\n{iso}timeout = {timeout}\n\n')


def sum_loop_jobs(job_id: str, n: int | None = None) -> str:
    """A ``[[job]]`` running the bundled sum_loop example, or with ``n`` a ``[[sweep]]`` of
    ``n`` copies of it (``{job_id}-1`` ...)."""
    kind = "job" if n is None else "sweep"
    text = (f'[[{kind}]]\nid = "{job_id}"\nargs = ["theia", "run", "sum_loop.vp", "-o", "out"]\n'
            f'inputs = ["{PROGRAMS}/sum_loop.vp", "{PROGRAMS}/sum_loop.cp"]\n')
    if n is not None:
        text += f"[sweep.over]\nn = {list(range(1, n + 1))}\n"
    return text + "\n"


def mixed_manifest(d: Path) -> Path:
    """The three architectures, in-process and subprocess jobs, a sweep, a multi-step job and
    a failing one, on the bundled example inputs only."""
    write(d / "bad.vp", "vector v = (1,2,3);\nv = v +;\n")
    return write(d / "mixed.toml", f"""
        [vars]
        programs = "{PROGRAMS}"
        operands = "{BATCH_EXAMPLE / 'tensix'}"

        [[sweep]]
        id = "theia-{{prog}}-{{cores}}"
        args = ["theia", "run", "{{prog}}.vp", "-o", "out", "--cores", "{{cores}}"]
        inputs = ["{{programs}}/{{prog}}.vp", "{{programs}}/{{prog}}.cp"]
        [sweep.over]
        prog = ["sum_loop", "cross_product"]
        cores = [3, 4]

        [[job]]
        id = "theia-bad"
        args = ["theia", "compile", "bad.vp"]
        inputs = ["bad.vp"]

        [[sweep]]
        id = "tensix-matmul"
        args = ["tensix", "run", "{TENSIX_KERNEL.name}", "--load", "srca:0:{{fmt}}=a.npy",
                "--load", "srcb:0:{{fmt}}=b.npy", "--dump", "dst:fp32=c.npy"]
        inputs = ["{TENSIX_KERNEL}", "{{operands}}/a.npy", "{{operands}}/b.npy"]
        [sweep.over]
        fmt = ["bf16", "fp16"]

        [[job]]
        id = "afuc-roundtrip"
        args = [["afuc", "asm", "demo_a6xx.asm", "-o", "demo.fw"],
                ["afuc", "disasm", "-v", "demo.fw"]]
        inputs = ["{EXAMPLES / 'afuc' / 'demo_a6xx.asm'}"]

        [[job]]
        id = "tensix-asm-isolated"
        args = ["tensix", "asm", "matmul_setup.s", "-o", "setup.bin"]
        inputs = ["{EXAMPLES / 'tensix' / 'matmul_setup.s'}"]
        isolate = true
        """)


def results(outdir: Path) -> list[dict]:
    return [json.loads(line) for line in (outdir / "results.jsonl").read_text().splitlines()]


def comparable(outdir: Path) -> list[dict]:
    """results.jsonl without the fields that may differ between runs."""
    return [{k: v for k, v in r.items() if k not in ("seconds", "attempts")}
            for r in results(outdir)]


def same_tree(a: Path, b: Path) -> bool:
    """Same files with the same bytes under both directories."""
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    if mismatch or errors:
        return False
    return all(same_tree(a / d, b / d) for d in cmp.common_dirs)


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), e.get("PYTHONPATH", "")) if p)
    return e


def batch_process(*args: str, **kw) -> subprocess.Popen:
    """``python -m isaforge batch ARGS`` as a child process (stdout and stderr piped)."""
    return subprocess.Popen([sys.executable, "-m", "isaforge", "batch", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(),
                            text=True, **kw)


def run_batch_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "isaforge", "batch", *args],
                          capture_output=True, text=True, env=env(), timeout=timeout)


def processes_where(cwd_matches: Callable[[str], bool]) -> list[int]:
    """Processes whose working directory ``cwd_matches``."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{name}/cwd")
        except OSError:
            continue
        if cwd_matches(cwd):
            out.append(int(name))
    return out


def processes_in(directory: Path) -> list[int]:
    """Processes whose working directory is ``directory`` or below it."""
    root = str(directory.resolve())
    return processes_where(lambda cwd: cwd == root or cwd.startswith(root + "/"))


def wait_for(predicate, timeout: float = 60.0, step: float = 0.05):
    """Poll ``predicate`` until it returns something true; fail after ``timeout`` s."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout} s waiting for {predicate}")
