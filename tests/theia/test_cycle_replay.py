"""Loop replay (cycle/replay.py) against the plain per-cycle model: the same records (the
vp.N.log bytes), the same final state and cycle count, traced and cycles-only, on every
regression, on the RTL's loop with several iteration counts and on random loops."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from isaforge.theia import assemble
from isaforge.theia.compiler import compile_programs
from isaforge.theia.cycle import DESIGNED, Quirks
from isaforge.theia.cycle.events import Replayed, expand
from isaforge.theia.cycle.model import VPCycleModel
from isaforge.theia.cycle.runner import run_timed
from isaforge.theia.cycle.vplog import LogFormatter, format_log
from isaforge.theia.demo import rtl_loop_sources
from isaforge.theia.image import read_mem, read_tmem
from tests.refdata import refdata

RTL = Quirks.rtl()
REGRESSIONS = ["test1_IO", "test1_out_of_order_1", "test1_tmem", "test_arrays_1",
               "test_bitwise_operations", "test_branches_1", "test_expressions",
               "test_multihtread1", "test_omem_1"]
TMEM = [0xCAFE, 0xACED, 0xBABE, 0, 0xBEEF, 0xDEAD, 1, 2, 3, 4, 0, 0]


def _state(m: VPCycleModel) -> tuple:
    # (the state register of a unit that has ended, EOF re-fetched while the last results
    # commit, depends on which of those cycles were skipped: the plain loop itself gives
    # other values when paused, as the runner's windows do; nothing reads it)
    i0 = m.iius[0]
    return (m.done, m.finished_at, m.cycle, m.deadlock, m.rf, bytes(m.known), m.omem.tobytes(),
            m.omem_written.tobytes(), m.seq, m.commits, m.dropped, m.fifo_overflows,
            i0.issued, i0.stall_cycles, i0.pc, None if i0.ended else i0.state, m.arb.grants,
            [s.executed for s in m.stations])


def _pair(code: list[int], tmem: list[int] | None, trace: bool, quirks: Quirks = RTL,
          **kw: object) -> tuple[VPCycleModel, VPCycleModel, str | None]:
    out = []
    for fast in (False, True):
        m = VPCycleModel(code, quirks=quirks, tmem=tmem, trace=trace, fast=fast, **kw)  # type: ignore[arg-type]
        try:
            m.run(max_cycles=400_000)
        except Exception as e:  # noqa: BLE001 (both must fail the same way)
            out.append((m, repr(e)))
            continue
        out.append((m, None))
    (a, ea), (b, eb) = out
    assert ea == eb  # (a runaway: the same error, same PC)
    return a, b, ea


def _same(code: list[int], tmem: list[int] | None = None, quirks: Quirks = RTL,
          **kw: object) -> VPCycleModel:
    """Plain and replayed runs, traced and cycles-only: the same; returns the replayed
    traced model."""
    a, b, err = _pair(code, tmem, True, quirks, **kw)
    c, d, _ = _pair(code, tmem, False, quirks, **kw)
    if err is not None:  # stopped at the cycle limit: the plain loop may have skipped past it
        return b
    assert _state(a) == _state(b)
    assert format_log(a.events) == format_log(b.events)
    assert _state(c) == _state(d) == _state(a)
    e = VPCycleModel(code, quirks=quirks, tmem=tmem, fast=True, **kw)  # type: ignore[arg-type]
    e.blocks = True  # the replayed iterations as blocks: LogFormatter prints the same
    e.run(max_cycles=400_000)
    assert _state(e) == _state(a)
    assert "".join(LogFormatter(2, 0).lines(e.events)) == format_log(a.events)
    assert format_log(expand(e.events)) == format_log(a.events)
    return b


def _tmem(d: Path) -> list[int] | None:
    p = d / "tmem.mem"
    return read_tmem(p.read_text()) if p.is_file() else None


@pytest.mark.parametrize("name", REGRESSIONS)
def test_regressions_replayed_equal_plain(name: str) -> None:
    d = refdata("theia", "regressions", name, "vp.2.log").parent
    _same(read_mem((d / "code.mem").read_text()), _tmem(d))


PROLOGUE = """ADD R[0].x__ I(0) 0
ADD R[0]._y_ I(1) 0
ADD R[0].__z I(2) 0
ADD R[2].__z I(0) 0
ADD R[3].xyz I(0) 0
ADD R[10].xyz I(0) 0
ADD R[14].xyz I({n:x}) 0
"""


def _random_loop(rng: random.Random, n: int, div: bool = True) -> list[int]:
    """A loop of ``n`` iterations over random ALU operations (with ``div``, maybe DIVs:
    the RTL re-issues a DIV that finds its station busy, forever)."""
    lines = PROLOGUE.format(n=n).splitlines()
    regs = list(range(20, 27))
    for r in regs:
        for lane in ("x__", "_y_", "__z"):
            lines.append(f"ADD R[{r}].{lane} I({rng.getrandbits(32):x}) 0")
    head = len(lines)
    body = []
    swz = ["xyz", "zyx", "xxx", "-x-y-z", "yzx", "x-yz", "zzz"]
    wes = ["xyz", "x__", "_y_", "__z", "xy_", "_yz"]
    for _ in range(rng.randint(1, 8)):
        op = rng.choice(["ADD", "ADD", "MUL", "DIV", "LOGIC"] if div else
                        ["ADD", "ADD", "MUL", "LOGIC"])
        d = rng.choice(regs)
        a = rng.choice(regs + [10])
        b = rng.choice(regs + [10])
        if rng.random() < 0.15:  # an immediate
            body.append(f"ADD R[{d}].{rng.choice(['xyz', 'x__', '_y_'])} "
                        f"I({rng.getrandbits(32):x}) 0")
            continue
        body.append(f"{op} R{d}.{rng.choice(wes)} R{a}.{rng.choice(swz)} "
                    f"R{b}.{rng.choice(swz)}")
    end = head + 1 + len(body) + 2
    lines.append(f"ADD <BRANCH.ZERO_OR_NOT_SIGN> @{end}.___ R10.xxx R14.-x-y-z")
    lines += body
    lines.append("ADD R10.xyz R10.xyz R0.yyy")
    lines.append(f"ADD <BRANCH.ALWAYS> @{head}.___ R0.xyz R0.xyz")
    lines.append("ADD R66.xyz R20.xyz R0.xxx")
    lines.append("ADD R0.___ R0.xyz R0.xyz {EOF=1}")
    return assemble("\n".join(lines) + "\n")


@pytest.mark.parametrize("seed", range(24))
def test_random_loops_replayed_equal_plain(seed: int) -> None:
    rng = random.Random(seed)
    code = _random_loop(rng, rng.choice([1, 2, 3, 9, 40, 150]), div=seed % 4 == 3)
    _same(code, clock0=rng.randint(0, 3))
    # the two defects replay needs, without the others (the designed issue unit otherwise)
    _same(code, quirks=replace(DESIGNED, rtl_scoreboard=True, branch_next_cycle=True))


@pytest.mark.parametrize("seed", range(3))
def test_loops_are_replayed(seed: int) -> None:
    # (the comparisons above would pass without replay: the fast path must be taken)
    code = _random_loop(random.Random(seed), 300, div=False)
    m = _same(code)
    assert m.done and m.replay_templates
    assert m.steps < m.cycle // 4
    b = VPCycleModel(code, quirks=RTL, fast=True)
    b.blocks = True
    b.run()
    assert any(type(e) is Replayed for e in b.events)
    fmt = LogFormatter(2, 0)
    assert "".join(fmt.lines(b.events)) == format_log(m.events)
    assert fmt._blocks and all(fmt._blocks.values())  # printed from the blocks' templates




def _timed(code: list[int], control: list[int], trace: bool, fast: bool,
           window: int, blocks: bool = False) -> tuple[int | None, dict[int, str],
                                                        dict[int, tuple]]:
    texts: dict[int, list[str]] = {}
    fmts: dict[int, LogFormatter] = {}

    def sink(i: int, start_ns: int, events: list) -> None:
        fmt = fmts.setdefault(i, LogFormatter(i, start_ns))
        texts.setdefault(i, []).extend(fmt.lines(events))

    run = run_timed(code, control, TMEM, quirks=RTL, trace=trace, sink=sink, fast=fast,
                    window=window, blocks=blocks)
    return (run.end_ns, {i: "".join(t) for i, t in texts.items()},
            {i: _state(m) for i, m in run.models.items()})


@pytest.mark.parametrize("n", [1, 2, 5, 37, 400])
def test_rtl_loop_replayed_equal_plain(tmp_path: Path, n: int) -> None:
    # the RTL's benchmark loop from reset (the timed run of `trace --rtl` / `run --rtl`),
    # streamed in small windows so that replays meet window ends and the first EOF's cut
    vp, cp = rtl_loop_sources(n)
    (tmp_path / "loop.vp").write_text(vp)
    (tmp_path / "loop.cp").write_text(cp)
    out = compile_programs([tmp_path / "loop.vp"], tmp_path)
    assert out.vp is not None and out.cp is not None
    code, control = out.vp.words, out.cp.words
    plain = _timed(code, control, True, False, 1 << 15)
    for window in (1 << 15, 333):
        for blocks in (False, True):  # (replayed iterations as records, or as blocks)
            assert _timed(code, control, True, True, window, blocks) == plain
    quiet = _timed(code, control, False, True, 1 << 15)
    assert quiet[0] == plain[0] and quiet[2] == plain[2]
    assert plain[0] is not None and plain[1][2].count("COMMIT MUL") >= n
