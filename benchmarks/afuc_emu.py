"""afuc emulator throughput on a630_sqe.fw, against Mesa (prints figures; not a test).

    python benchmarks/afuc_emu.py [--packets N] [--reg-writes N] [--type3 N] [--repeat N]
                                  [--quick]

Streams (generated here, as issue 17 describes them):

* s1: CP_ME_INIT, then N (40,000) type-4 packets of 8 registers each;
* s2: CP_ME_INIT, then N (30,000) CP_REG_WRITE packets;
* then, Python API only: CP_ME_INIT and N (10,000) packets of one of the type-3 handlers
  real streams hit (CP_MEM_WRITE of 2 dwords, CP_SET_DRAW_STATE of one group,
  CP_INDIRECT_BUFFER of an IB holding 2 type-4 packets, CP_REG_WRITE).

For each: whole processes (wall time, median of --repeat; start-up included) of
``isaforge afuc trace`` (every instruction, Mesa's -e format), ``afuc debug`` fed Mesa's
script (``p NAME payload...``, or ``raw ...``, then ``r`` per packet, output to /dev/null;
the listing it shows is kept in the cache too) and ``afuc run`` (every effect printed),
and the Python API in-process without trace (fast path, best of --repeat, CPU time of this
process: the machine is shared). Whole processes run with their bytecode
cached (see cli_time) and the CLI's generated-code cache (CODECACHE; the first run of a
command fills it: the medians are of warm runs) and print their CPU time too. Rates:
packets/s and instructions/s, counting instructions as Mesa does (one per instruction
issued; (rep) iterations are printed apart).

Mesa's afuc tools are not installed on this machine: its figures are issue 17's measurement
(``afuc-disasm -e`` built from source, same machine kind), printed as
"Mesa (issue 17's measurement)". The emulations are checked to agree (same effects, same
counts) between the fast and the exact path before timing.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# SRC: the isaforge sources measured (--src DIR, e.g. another checkout, for before/after)
SRC = Path(sys.argv[sys.argv.index("--src") + 1]) if "--src" in sys.argv else ROOT / "src"
sys.path.insert(0, str(SRC))
from isaforge.afuc.machine import Emulator  # noqa: E402
from isaforge.afuc.machine.stream import pkt4_header, pkt7_header  # noqa: E402

PYCACHE = os.path.join(tempfile.gettempdir(), "isaforge-bench-pycache")
# the CLI keeps the emulator's generated code on disk (afuc.machine.codecache): here in a
# directory of the benchmark's own, filled by the first run of each command
CODECACHE = os.path.join(tempfile.gettempdir(), "isaforge-bench-codecache")
FW = Path(os.environ.get("ISAFORGE_REFDATA", ROOT.parent / "shared" / "refdata")) / (
    "afuc/firmware/a630_sqe.fw")
# seconds for the default sizes, issue 17's first table (Mesa: afuc-disasm -e, wall median)
MESA = {"s1": 3.51, "s2": 3.90}
CP_ME_INIT, CP_REG_WRITE = 0x48, 0x6D
CP_MEM_WRITE, CP_SET_DRAW_STATE, CP_INDIRECT_BUFFER = 0x3D, 0x43, 0x3F
IB_ADDR = 0x200000  # the IB the CP_INDIRECT_BUFFER stream runs
IB_WORDS = [pkt4_header(0x8800, 2), 1, 2, pkt4_header(0x8810, 1), 3]


def s1(n: int) -> list[int]:
    words = [pkt7_header(CP_ME_INIT, 1), 0]
    for i in range(n):
        words += [pkt4_header(0x8800 + (8 * i) % 0x100, 8), *range(i, i + 8)]
    return words


def s2(n: int) -> list[int]:
    words = [pkt7_header(CP_ME_INIT, 1), 0]
    for i in range(n):
        words += [pkt7_header(CP_REG_WRITE, 3), 0, 0xA00E + i % 16, i]
    return words


def type3(op: int, n: int) -> list[int]:
    """CP_ME_INIT, then n packets ``op`` (payloads as the module docstring says)."""
    payload = {CP_MEM_WRITE: lambda i: [0x10000 + 8 * (i % 4096), 0, i, i + 1],
               CP_SET_DRAW_STATE: lambda i: [0x00030004 | (i % 4) << 24, 0x20000 + 64 * i, 0],
               CP_INDIRECT_BUFFER: lambda i: [IB_ADDR, 0, len(IB_WORDS)],
               CP_REG_WRITE: lambda i: [0, 0xA00E + i % 16, i]}[op]
    words = [pkt7_header(CP_ME_INIT, 1), 0]
    for i in range(n):
        p = payload(i)
        words += [pkt7_header(op, len(p)), *p]
    return words


def text_of(words: list[int]) -> str:
    return "\n".join("raw " + " ".join(f"{w:#x}" for w in words[i:i + 16])
                     for i in range(0, len(words), 16)) + "\n"


def debug_script(words: list[int], names: bool = False) -> str:
    """Mesa's way of feeding a stream through the prompt: each packet queued, then r; the
    packet as ``p NAME payload...`` (a PM4 packet's or the first register's name, as Mesa's
    prompt takes it) with ``names``, else raw (``raw HEADER payload...``)."""
    from isaforge.afuc.regdb import RegDB

    db = RegDB.for_variant("A6XX")
    out, i = [], 0
    while i < len(words):
        hdr = words[i]
        count = hdr & 0x7F if hdr >> 28 == 4 else hdr & 0x3FFF
        payload = " ".join(f"{w:#x}" for w in words[i + 1:i + 1 + count])
        if not names:
            out.append(f"raw {hdr:#x} {payload}")
        elif hdr >> 28 == 4:
            reg = (hdr >> 8) & 0x3FFFF
            out.append(f"p {db.gpu_reg_name(reg) or hex(reg)} {payload}")
        else:
            out.append(f"p {db.pm4_packet_name((hdr >> 16) & 0x7F)} {payload}")
        out.append("r")
        i += 1 + count
    return "\n".join(out) + "\nq\n"


def counts(fw: bytes, words: list[int], exact: bool) -> Emulator:
    emu = Emulator(fw)
    emu.load_memory(IB_ADDR, IB_WORDS)
    emu.feed(words)
    emu.run(max_steps=1 << 40, exact=exact)
    return emu


def api_time(fw: bytes, words: list[int], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        emu = Emulator(fw)
        emu.load_memory(IB_ADDR, IB_WORDS)
        emu.run()  # boot (compiled blocks are shared by emulators of one firmware)
        emu.feed(words)
        t = time.process_time()
        emu.run(max_steps=1 << 40)
        best = min(best, time.process_time() - t)
    return best


CPU: list[float] = []  # the CPU seconds (user + system) of the last cli_time's runs


def cli_time(args: list[str], repeat: int, stdin: str | None = None) -> float:
    """Median wall time of ``isaforge afuc ARGS`` as a whole process, start-up included.
    Bytecode is cached (in a directory of its own, as an installed package has its .pyc
    files; PYTHONDONTWRITEBYTECODE would compile every module at each start), after one
    ``compileall`` run; CPU holds each run's CPU time (the machine is shared: wall time
    includes waiting for a core)."""
    env = dict(os.environ, PYTHONPATH=str(SRC), PYTHONPYCACHEPREFIX=PYCACHE,
               ISAFORGE_CACHE_DIR=CODECACHE)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cmd = [sys.executable, "-m", "isaforge", "afuc", *args]
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(SRC / "isaforge")], env=env,
                   stdout=subprocess.DEVNULL, check=False)
    times = []
    CPU.clear()
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, env=env, input=stdin, text=True, stdout=subprocess.DEVNULL,
                       check=False)
        times.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        CPU.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(times)


def report(name: str, secs: float, packets: int, insns: int, cpu: bool = False) -> None:
    extra = f"  (CPU {statistics.median(CPU):.3f} s)" if cpu and CPU else ""
    print(f"  {name:44s} {secs:8.3f} s {packets / secs:12,.0f} packets/s "
          f"{insns / secs:14,.0f} instructions/s{extra}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packets", type=int, default=40_000, help="s1's type-4 packets")
    ap.add_argument("--reg-writes", type=int, default=30_000, help="s2's CP_REG_WRITEs")
    ap.add_argument("--type3", type=int, default=10_000, help="packets of each type-3 stream")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--src", help="measure the isaforge sources in this directory instead")
    ap.add_argument("--quick", action="store_true", help="no debugger runs")
    opt = ap.parse_args()
    fw = FW.read_bytes()
    streams = {"s1": s1(opt.packets), "s2": s2(opt.reg_writes)}
    desc = {"s1": f"CP_ME_INIT + {opt.packets:,} type-4 packets x 8 registers",
            "s2": f"CP_ME_INIT + {opt.reg_writes:,} CP_REG_WRITE packets"}
    with tempfile.TemporaryDirectory() as tmp:
        for key, words in streams.items():
            fast, exact = counts(fw, words, False), counts(fw, words, True)
            same = (fast.effects_raw == exact.effects_raw
                    and fast.steps == exact.steps)
            # (sources from before issue 17 count steps only: each (rep) iteration)
            insns = getattr(fast, "instructions", fast.steps)
            reps = fast.steps - insns
            n = fast.packets
            print(f"{key}: {desc[key]}: {n:,} packets, {insns:,} instructions as Mesa counts "
                  f"them (+{reps:,} (rep) iterations), "
                  f"{len(fast.effects_raw):,} effects; fast == exact: {same}")
            path = Path(tmp) / f"{key}.txt"
            path.write_text(text_of(words))
            default = (opt.packets if key == "s1" else opt.reg_writes) == (
                40_000 if key == "s1" else 30_000)
            if default:
                mesa = MESA[key]
                report("Mesa (issue 17's measurement) afuc-disasm -e", mesa, n, insns)
            trace = cli_time(["trace", str(FW), str(path)], opt.repeat)
            report("isaforge afuc trace (whole process)", trace, n, insns, cpu=True)
            if not opt.quick and key == "s1":
                cli_time(["debug", str(FW)], 1, "q\n")  # (a first run fills the caches)
                for names, how in ((True, "p NAME"), (False, "raw")):
                    dbg = cli_time(["debug", str(FW)], opt.repeat, debug_script(words, names))
                    report(f"isaforge afuc debug, Mesa's script, {how}", dbg, n, insns,
                           cpu=True)
                    print(f"    debug / trace: {dbg / trace:.2f}x (goal <= 1.5x)")
            run = cli_time(["run", str(FW), str(path)], opt.repeat)
            report("isaforge afuc run (whole process)", run, n, insns, cpu=True)
            api = api_time(fw, words, opt.repeat)
            report("Python API, no trace, in-process (best)", api, n, insns)
            if default:
                print(f"    vs Mesa: trace {mesa / trace:.2f}x (goal >= 2x), run "
                      f"{mesa / run:.2f}x, API {mesa / api:.0f}x (goal >= 100x)")

    print(f"type-3 handlers, Python API, no trace, in-process (best of {opt.repeat}), "
          f"CP_ME_INIT + {opt.type3:,} packets:")
    for op, name in ((CP_MEM_WRITE, "CP_MEM_WRITE"), (CP_SET_DRAW_STATE, "CP_SET_DRAW_STATE"),
                     (CP_INDIRECT_BUFFER, "CP_INDIRECT_BUFFER"), (CP_REG_WRITE, "CP_REG_WRITE")):
        words = type3(op, opt.type3)
        fast, exact = counts(fw, words, False), counts(fw, words, True)
        same = fast.effects_raw == exact.effects_raw and fast.steps == exact.steps
        api = api_time(fw, words, opt.repeat)
        report(f"{name} (fast == exact: {same})", api, fast.packets, fast.instructions)


if __name__ == "__main__":
    main()
