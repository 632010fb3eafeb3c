"""Speed of the THEIA VP cycle model: simulated cycles per second on long-running programs.

Two loops of ours (:func:`isaforge.theia.demo.loop_program`), each run as designed and with
every RTL defect switched on:

* ``alu``: MUL / ADD / LOGIC / ADD and the loop's ADD per iteration, every cycle does work
  (2 cycles per issue), so nothing can be skipped: the model's raw per-cycle speed;
* ``div``: a DIV (66 cycles) that the next iteration waits for: most cycles are idle and
  skipped (the RTL with its defects livelocks on it, re-issuing the DIV every 69 cycles, so
  that variant is run for a fixed number of cycles).

Then the RTL's own benchmark, a T-language loop (``c = a * b; i++`` 20,000 times, 360,274
cycles from reset on the 4-VP test bench with every RTL defect), run as ``isaforge theia
trace --rtl`` / ``run --rtl`` run it: the cycle model's cycles/s with the ``vp.N.log`` trace
written (streamed to a file) and without it (``run --rtl``). Given a ``verilator``
binary and an upstream THEIA checkout (branch beta_2.0; ``--verilator``/``--rtl`` or the
environment variables THEIA_VERILATOR / THEIA_RTL), the script builds the RTL's stock test
bench with Verilator (``--binary --timing -O3``, C++ at -O3; once, in ``--build-dir``), runs
it on the same program, checks that its ``vp.2.log`` is byte-identical to ours and prints
the ratios. Times are CPU seconds (user + system; the Verilator run's whole process), best
of ``--repeat`` runs.

Usage: python benchmarks/theia_cycle.py [--iterations N] [--repeat R] [--loop-only]
           [--verilator BIN --rtl DIR [--build-dir DIR]]
"""

from __future__ import annotations

import argparse
import filecmp
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from isaforge.theia.compiler import compile_programs
from isaforge.theia.cycle import DESIGNED, RTL, run_cycles
from isaforge.theia.cycle.runner import run_timed
from isaforge.theia.cycle.vplog import LogFormatter
from isaforge.theia.demo import loop_program, rtl_loop_sources


def measure(name: str, code: list[int], quirks: object, until: int | None,
            repeat: int) -> None:
    best = None
    for _ in range(repeat):  # the best of ``repeat`` runs: a loaded machine only slows some
        t0 = time.process_time()  # CPU time: the figures do not depend on other processes
        m = run_cycles(code, quirks=quirks, trace=False, until=until)  # type: ignore[arg-type]
        dt = time.process_time() - t0
        best = dt if best is None else min(best, dt)
    assert best is not None
    cycles = m.finished_at if m.done else m.cycle
    print(f"{name:26s} {cycles:>10,d} cycles {m.steps:>9,d} stepped {m.issues:>8,d} issues "
          f"{best:7.3f} s {cycles / best:>11,.0f} cycles/s {m.issues / best:>9,.0f} issues/s")


def calibrate() -> float:
    """CPU seconds of a plain 10-million-step Python loop (about 0.4 s on a current desktop
    with CPython 3.11): to compare figures taken on different machines."""
    t0 = time.process_time()
    x = 0
    for i in range(10_000_000):
        x += i
    return time.process_time() - t0


# the stock test bench copies TMEM words 0..2 (the reference data's reconstructed tmem.mem)
TMEM = [0xCAFE, 0xACED, 0xBABE, 0, 0xBEEF, 0xDEAD, 1, 2, 3, 4, 0, 0]


def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def loop_images(n: int, where: Path) -> tuple[list[int], list[int]]:
    """Compile the loop (VP and CP programs) and write the test bench's input files."""
    vp, cp = rtl_loop_sources(n)
    (where / "loop.vp").write_text(vp)
    (where / "loop.cp").write_text(cp)
    out = compile_programs([where / "loop.vp"], where)  # (writes code.mem and the CP's)
    assert out.vp is not None and out.cp is not None
    (where / "tmem.mem").write_text("".join(f"{w:x}\n" for w in TMEM))
    return out.vp.words, out.cp.words


def timed_run(code: list[int], control: list[int], out: Path, trace: bool) -> int:
    """What ``isaforge theia trace --rtl`` (``trace``) or ``run --rtl`` does with the cycle
    model: the test bench from reset, the vp.N.log files streamed as it runs; returns the
    stamp (ns) of the first EOF, which ends the run."""
    logs = {i: open(out / f"vp.{i}.log", "w") for i in range(4)} if trace else {}
    fmts: dict[int, LogFormatter] = {}

    def sink(i: int, start_ns: int, events: list) -> None:
        fmt = fmts.get(i)
        if fmt is None:
            fmt = fmts[i] = LogFormatter(i, start_ns)
        logs[i].write("".join(fmt.lines(events)))

    try:
        run = run_timed(code, control, TMEM, quirks=RTL, trace=trace, sink=sink, blocks=True)
    finally:
        for f in logs.values():
            f.close()
    assert run.end_ns is not None
    return run.end_ns


def measure_loop(code: list[int], control: list[int], out: Path, repeat: int,
                 trace: bool) -> tuple[float, int]:
    best = None
    for _ in range(repeat):
        t0 = _cpu()
        end_ns = timed_run(code, control, out, trace)
        dt = _cpu() - t0
        best = dt if best is None else min(best, dt)
    assert best is not None
    return best, end_ns


def measure_cli(mode: str, inputs: Path, repeat: int) -> float:
    """CPU seconds of a whole ``isaforge theia {trace,run} --rtl`` process on the loop
    (Python's start and the imports included, as Verilator's figure includes its start);
    ``mode`` "start" times ``isaforge theia --help``: Python, isaforge and click only.

    The processes read compiled bytecode, as an installed isaforge does (pip compiles it):
    it is cached in a folder of the benchmark's (PYTHONPYCACHEPREFIX; PYTHONDONTWRITEBYTECODE
    dropped, which would make every run compile every module) and a first, untimed run
    writes it."""
    out = inputs / f"cli-{mode}"
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parent.parent / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(inputs / "pycache")
    args = ["--help"] if mode == "start" else [mode, "--rtl", str(inputs / "code.mem"),
                                               "-o", str(out)]
    best = None
    for k in range(repeat + 1):
        c0 = _cpu_children()
        subprocess.run([sys.executable, "-m", "isaforge", "theia", *args], check=True,
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        dt = _cpu_children() - c0
        if k > 0:  # (the first run compiles the bytecode)
            best = dt if best is None else min(best, dt)
    assert best is not None
    return best


def build_verilator(verilator: str, rtl: Path, build: Path) -> Path:
    """The stock test bench under Verilator (built once in ``build``)."""
    exe = build / "obj" / "Vtestbench_theia_icarus"
    if exe.is_file():
        return exe
    build.mkdir(parents=True, exist_ok=True)
    cmd = [verilator, "--binary", "--timing", "-O3", "-Wno-fatal", "-Wno-lint", "-Wno-style",
           "-Irtl", "--Mdir", str(build / "obj"), "--top-module", "testbench_theia_icarus",
           "testbench/testbench_theia_icarus.v", *sorted(str(p.relative_to(rtl)) for p in
                                                         (rtl / "rtl").glob("*.v")),
           "-CFLAGS", "-O3", "-MAKEFLAGS", "OPT_FAST=-O3 OPT_SLOW=-O3 OPT_GLOBAL=-O3"]
    print("building:", " ".join(cmd), flush=True)
    with open(build / "build.log", "w") as log:
        subprocess.run(cmd, cwd=rtl, stdout=log, stderr=subprocess.STDOUT, check=True)
    return exe


def measure_verilator(exe: Path, inputs: Path, repeat: int) -> tuple[float, float, Path]:
    best = best_wall = None
    run = Path(tempfile.mkdtemp(prefix="theia-vl-"))
    for name in ("code.mem", "control_code.mem", "tmem.mem"):
        shutil.copy(inputs / name, run / name)
    for _ in range(repeat):
        c0, w0 = _cpu_children(), time.perf_counter()
        subprocess.run([str(exe), "+verilator+error+limit+2"], cwd=run, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        dt, wall = _cpu_children() - c0, time.perf_counter() - w0
        best = dt if best is None else min(best, dt)
        best_wall = wall if best_wall is None else min(best_wall, wall)
    assert best is not None and best_wall is not None
    return best, best_wall, run


def rtl_loop(args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="theia-loop-"))
    code, control = loop_images(args.loop_iterations, tmp)
    out = tmp / "ours"
    out.mkdir()
    untraced, end_ns = measure_loop(code, control, out, args.repeat, trace=False)
    traced, end_ns = measure_loop(code, control, out, args.repeat, trace=True)
    cycles = end_ns // 20  # (the 20 ns clock, from reset)
    cli = {mode: measure_cli(mode, tmp, args.repeat) for mode in ("trace", "run", "start")}
    print(f"RTL loop, {args.loop_iterations} iterations: {cycles:,d} cycles from reset "
          f"(4-VP test bench, VP2 running), every RTL defect")
    print(f"  cycle model, vp.2.log written  {traced:7.3f} s {cycles / traced:>11,.0f} cycles/s")
    print(f"  cycle model, no trace          {untraced:7.3f} s "
          f"{cycles / untraced:>11,.0f} cycles/s")
    for mode, what in (("trace", "vp.N.log written"), ("run", "no trace")):
        print(f"  isaforge theia {mode:5s} --rtl   {cli[mode]:7.3f} s "
              f"{cycles / cli[mode]:>11,.0f} cycles/s (whole process, {what})")
    print(f"  of which start-up              {cli['start']:7.3f} s (isaforge theia --help: "
          "Python, isaforge, click)")
    verilator = args.verilator or os.environ.get("THEIA_VERILATOR")
    rtl = args.rtl or os.environ.get("THEIA_RTL")
    if not verilator or not rtl:
        print("  (Verilator: give --verilator BIN and --rtl DIR, or THEIA_VERILATOR and "
              "THEIA_RTL, to time the RTL side by side)")
        return
    build = Path(args.build_dir or tmp / "verilator")
    exe = build_verilator(verilator, Path(rtl), build)
    vl, wall, run = measure_verilator(exe, tmp, args.repeat)
    same = filecmp.cmp(run / "vp.2.log", out / "vp.2.log", shallow=False)
    print(f"  Verilator ({exe.name})   {vl:7.3f} s {cycles / vl:>11,.0f} cycles/s "
          f"(wall {wall:.3f} s); vp.2.log {'byte-identical' if same else 'DIFFERS'}")
    print(f"  ratio: traced {vl / traced:.2f}x Verilator, no trace {vl / untraced:.2f}x; "
          f"whole processes: traced {vl / cli['trace']:.2f}x, no trace {vl / cli['run']:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=20_000)
    ap.add_argument("--loop-iterations", type=int, default=20_000,
                    help="iterations of the RTL loop (20,000: 360,274 cycles)")
    ap.add_argument("--repeat", type=int, default=5, help="runs per figure (the best is shown)")
    ap.add_argument("--loop-only", action="store_true", help="only the RTL loop")
    ap.add_argument("--verilator", help="verilator binary (or THEIA_VERILATOR)")
    ap.add_argument("--rtl", help="upstream theia_gpu checkout, beta_2.0 (or THEIA_RTL)")
    ap.add_argument("--build-dir", help="where to build (and reuse) the Verilator binary")
    args = ap.parse_args()
    n, r = args.iterations, args.repeat
    print(f"calibration: 10M-step Python loop {calibrate():.2f} CPU s")
    if not args.loop_only:
        alu = loop_program("alu", n)
        div = loop_program("div", n // 4)
        measure("alu loop, designed", alu, DESIGNED, None, r)
        measure("alu loop, RTL defects", alu, RTL, None, r)
        measure("div loop, designed", div, DESIGNED, None, r)
        measure("div loop, RTL (livelock)", div, RTL, 69 * n // 4, r)
    rtl_loop(args)


if __name__ == "__main__":
    main()
