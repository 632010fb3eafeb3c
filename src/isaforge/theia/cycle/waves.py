"""VCD waveforms of a cycle-model run (pyvcd), for GTKWave.

Signals, under ``theia.vp<N>``: ``issue`` (1 in each issue cycle) with ``issue_thread``,
``issue_station`` (the RTL's station id, 1..7), ``issue_ip``, ``issue_word``, ``issue_dst``;
``rs.<station>_busy`` for the seven reservation stations (the busy line the issue unit
sees); ``cbus_owner`` (the station driving the commit bus, 0 when idle) with ``cbus_dst``
and ``cbus_data`` (96 bits, x lane in bits 95..64); ``commit`` (1 in each commit cycle);
``branch_taken_t0`` / ``branch_taken_t1``. One clock cycle is ``period_ns`` of VCD time
(20 ns, the RTL's 50 MHz clock), from ``start_ns``: with the VP's start from reset the VCD's
time axis is ``vp.N.log``'s (a record stamped ``T ns`` is the VCD's time T). Only changes
are written, so skipped idle cycles cost nothing.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TextIO

from vcd import VCDWriter

from . import events as ev
from .model import VPCycleModel
from .stations import RS_NAMES

PULSES = ("issue", "commit", "branch_taken_t0", "branch_taken_t1")


def write_vcd(model: VPCycleModel, out: TextIO, period_ns: int = 20, start_ns: int = 0) -> None:
    """Write the waveforms of ``model`` (run with ``trace=True``) to ``out``; the model's
    cycle ``t`` is at ``start_ns + t * period_ns`` of VCD time, the stamp ``vp.N.log`` gives
    the same cycle (pass the VP's start, e.g. ``Boot.start_ns``, for the RTL's time base)."""
    changes: dict[int, list[tuple[str, int]]] = defaultdict(list)
    pulses: dict[str, set[int]] = {p: set() for p in PULSES}
    for e in model.events:
        t = e.cycle
        if isinstance(e, ev.Issue):
            pulses["issue"].add(t)
            changes[t] += [("issue_thread", e.thread), ("issue_station", e.rs),
                           ("issue_ip", e.ip & 0xFFFF), ("issue_word", e.word),
                           ("issue_dst", e.dst)]
        elif isinstance(e, ev.Commit):
            pulses["commit"].add(t)
            x, y, z = e.result
            changes[t] += [("cbus_owner", e.rs), ("cbus_dst", e.dst),
                           ("cbus_data", x << 64 | y << 32 | z)]
            if t + 1 not in changes or all(n != "cbus_owner" for n, _ in changes[t + 1]):
                changes[t + 1].append(("cbus_owner_idle", 0))
        else:
            pulses[f"branch_taken_t{e.thread}"].add(t)
    for sid, first, last in model.busy_log:
        name = f"{RS_NAMES[sid]}_busy"
        changes[first].append((name, 1))
        changes[last + 1].append((name, 0))
    for name, cycles in pulses.items():
        for t in cycles:
            changes[t].append((name, 1))
            if t + 1 not in cycles:
                changes[t + 1].append((name, 0))
    end = model.finished_at if model.finished_at is not None else model.cycle
    with VCDWriter(out, timescale="1 ns", date="today",
                   comment="isaforge THEIA VP cycle model") as w:
        scope = f"theia.vp{model.vp}"
        var = {
            "issue": w.register_var(scope, "issue", "wire", size=1, init=0),
            "issue_thread": w.register_var(scope, "issue_thread", "wire", size=1, init=0),
            "issue_station": w.register_var(scope, "issue_station", "wire", size=4, init=0),
            "issue_ip": w.register_var(scope, "issue_ip", "wire", size=16, init=0),
            "issue_word": w.register_var(scope, "issue_word", "wire", size=64, init=0),
            "issue_dst": w.register_var(scope, "issue_dst", "wire", size=8, init=0),
            "cbus_owner": w.register_var(scope, "cbus_owner", "wire", size=4, init=0),
            "cbus_dst": w.register_var(scope, "cbus_dst", "wire", size=8, init=0),
            "cbus_data": w.register_var(scope, "cbus_data", "wire", size=96, init=0),
            "commit": w.register_var(scope, "commit", "wire", size=1, init=0),
            "branch_taken_t0": w.register_var(scope, "branch_taken_t0", "wire", size=1, init=0),
            "branch_taken_t1": w.register_var(scope, "branch_taken_t1", "wire", size=1, init=0),
        }
        for sid in range(1, len(RS_NAMES)):
            name = f"{RS_NAMES[sid]}_busy"
            var[name] = w.register_var(f"{scope}.rs", name, "wire", size=1, init=0)
        for t in sorted(changes):
            if t > end + 1:
                break
            for name, value in changes[t]:
                if name == "cbus_owner_idle":
                    if not any(n == "cbus_owner" for n, _ in changes[t]):
                        w.change(var["cbus_owner"], start_ns + t * period_ns, 0)
                    continue
                w.change(var[name], start_ns + t * period_ns, value)
        w.flush(start_ns + (end + 1) * period_ns)
