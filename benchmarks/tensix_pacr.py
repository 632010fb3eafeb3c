"""The packer's part of add1: microseconds per PACR and per run of PACRs, with the prepared
plans (``Packer.ready_plans``) on and off in the same process (prints figures; not a test).

    python benchmarks/tensix_pacr.py [--tiles N] [--repeat R]

After a warm-up add1 call (400 tiles), R rounds each run N tiles of add1 with the switch on,
then off, timing every ``Packer.pacr`` and ``Packer.pacr_run`` call by the thread's CPU time
(so that the other processes of a shared machine do not count; reading that clock costs a
little): the best round's mean per call of each. Then the last 16 single PACRs of a call are
replayed in a loop (their packer ADCs and packer state restored before each; the restoring is
timed alone and subtracted): the cost of a PACR with its code and data hot. On and off
alternate, so that both see the same machine load (the VM's speed drifts; compare the two
columns, not figures from other runs).
"""

from __future__ import annotations

import argparse
import sys
import time
import timeit
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from isaforge.tensix.examples import Add1Device  # noqa: E402
from isaforge.tensix.machine.pack import Packer  # noqa: E402


def _timed(name: str, fn: Callable[..., Any], acc: Counter[str],
           cnt: Counter[str]) -> Callable[..., Any]:
    def timed(*args: Any) -> Any:
        start = time.thread_time()  # (CPU time: a shared machine's preemptions excluded)
        try:
            return fn(*args)
        finally:
            acc[name] += time.thread_time() - start
            cnt[name] += 1
    return timed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tiles", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    acc: Counter[str] = Counter()
    cnt: Counter[str] = Counter()
    seen: list[tuple[Packer, int, Any, np.ndarray, tuple[int, ...]]] = []
    pacr, pacr_run = Packer.pacr, Packer.pacr_run

    recording = [False]

    def spy(self: Packer, t: int, f: Any) -> None:
        if recording[0]:
            seen.append((self, t, f, self.adc.v[t, 2].copy(), self.state.key()))
        pacr(self, t, f)

    Packer.pacr = _timed("PACR", spy, acc, cnt)  # type: ignore[method-assign]
    Packer.pacr_run = _timed("pacr_run", pacr_run, acc, cnt)  # type: ignore[method-assign]
    dev = Add1Device()  # (its dispatch table holds the methods above)
    rng = np.random.default_rng(1)
    dev.add1(rng.integers(0, 1 << 16, (400, 32, 32), dtype=np.uint16))
    x = rng.integers(0, 1 << 16, (args.tiles, 32, 32), dtype=np.uint16)
    best: dict[tuple[bool, str], float] = {}
    for _ in range(args.repeat):
        for on in (True, False):
            Packer.ready_plans = on
            acc.clear()
            cnt.clear()
            dev.add1(x)
            for name in ("PACR", "pacr_run"):
                us = acc[name] / max(cnt[name], 1) * 1e6
                best[on, name] = min(best.get((on, name), us), us)
    print(f"add1, {args.tiles} tiles: {cnt['PACR']} PACRs and {cnt['pacr_run']} runs per call")
    for name in ("PACR", "pacr_run"):
        print(f"  {name:9s} on {best[True, name]:7.2f} us   off {best[False, name]:7.2f} us "
              f"per call CPU (with the timing wrappers' cost)")
    recording[0] = True
    dev.add1(x[:4])
    Packer.pacr = pacr  # type: ignore[method-assign]
    last = seen[-16:]

    def replay() -> None:
        for pk, t, f, adc, key in last:
            pk.adc.v[t, 2] = adc
            pk.state.restore(key)
            pacr(pk, t, f)

    def restore() -> None:
        for pk, t, _, adc, key in last:
            pk.adc.v[t, 2] = adc
            pk.state.restore(key)

    times: dict[object, list[float]] = {True: [], False: [], "restore": []}
    for _ in range(40 * args.repeat):
        for on in (True, False):
            Packer.ready_plans = on
            times[on].append(timeit.timeit(replay, number=50) / 50 / len(last))
        times["restore"].append(timeit.timeit(restore, number=50) / 50 / len(last))
    base = min(times["restore"])
    print(f"  one PACR, hot: on {(min(times[True]) - base) * 1e6:.2f} us   "
          f"off {(min(times[False]) - base) * 1e6:.2f} us")
    Packer.ready_plans = True


if __name__ == "__main__":
    main()
