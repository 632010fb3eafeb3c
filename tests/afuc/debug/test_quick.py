"""The debugger's shortcuts for a script's packet and ``r`` lines (``debug/quick.py``) and its
script loop: a session prints exactly what the general path prints, and leaves the emulator
in the same state, whatever the lines (plain ones, and the near misses the shortcuts must
leave to the general path)."""

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isaforge.afuc import Emulator
from isaforge.afuc.debug import Batched, Debugger, repl
from isaforge.afuc.machine.stream import pkt4_header, pkt7_header
from tests.refdata import refdata

FW: bytes | None = None


def a630() -> bytes:
    global FW
    if FW is None:
        FW = refdata("afuc", "firmware", "a630_sqe.fw").read_bytes()
    return FW


def hexes(words: list[int]) -> str:
    return " ".join(f"{w:#x}" for w in words)


TYPE4 = st.builds(lambda reg, vals: [pkt4_header(reg, len(vals)), *vals],
                  st.sampled_from([0x8800, 0x8810, 0xA00E, 0xB980, 0xFFFE]),
                  st.lists(st.integers(0, 0xFFFFFFFF), min_size=1, max_size=5))
TYPE7 = st.sampled_from([
    [pkt7_header(0x6D, 3), 0, 0xA00E, 5],  # CP_REG_WRITE
    [pkt7_header(0x3D, 3), 0x10000, 0, 9],  # CP_MEM_WRITE
    [pkt7_header(0x10, 1), 7],  # CP_NOP
])
RAW = st.one_of(TYPE4, TYPE7).map(lambda ws: "raw " + hexes(ws))
# Mesa's p NAME payload: register and packet names, a number, near misses
NAMES = st.sampled_from(["RB_RENDER_CNTL", "VFD_FETCH[0x2].STRIDE", "0x8800", "34816", "CP_NOP",
                         "CP_MEM_WRITE", "CP_REG_WRITE", "0x99999", "NOT_A_REG", "raw", "#16",
                         "@0x1000:"])
VALUES = st.lists(st.sampled_from(["0", "1", "0x10", "0xffffffff", "0x100000000", "-1", "08",
                                   "0b11", "0o7", "1_000", "x"]), max_size=4)
PACKET = st.builds(lambda cmd, name, vals: " ".join([cmd, name, *vals]),
                   st.sampled_from(["p", "packet", "pkt", "P"]), NAMES, VALUES)
ODD_LINES = ["r", "run", " r ", "r\t", "R", "r 1", "raw", "p", "s", "s 3", "c", "n",
                       "b", "b CP_NOP", "b packet PKT4", "delete", "trace off", "trace on",
                       "view on", "view off", "regs", "where", "drop", "limit 5",
                       "limit 1000000", "; comment", "raw 0x10 ; comment", "raw 1 // x",
                       "raw 0x48880001\t5", "raw 0x48880001 5\x0c0x48880001 6",
             "p CP_NOP 1\u20282", "raw 0x48880001 5\r", "p RB_RENDER_CNTL 1\x1c2",
             "p 0x8800 1 2", "p CP_NOP", "raw 0x48880001 0x100000000", "raw 0x48880001 -1",
             "raw 0x48880001 x", "pkt 0x99999 1", "p raw 0x48880001 5"]
ODD = st.sampled_from(ODD_LINES)
LINES = st.lists(st.one_of(RAW, PACKET, ODD, st.just("r"), st.just("r")), max_size=24)


def session(lines: list[str], quick: bool, trace: bool = True) -> tuple:
    d = Debugger(Emulator(a630()), trace=trace, max_steps=5000)
    if not quick:
        d.quick = None
    out = [d.execute(line) for line in ["raw " + hexes([pkt7_header(0x48, 1), 0]), "r", *lines]]
    p = d.emu.main
    return (out, d.failed, d.prompt, d.current, d.emu.effects_raw, d.emu.steps,
            d.emu.instructions, d.emu.packets, list(p.gpr), p.pc, p.bt, p.waitin_pending,
            p.header, p.nreads, p.data_mode, p.limit, bytes(d.emu.gpu), d.emu.roq(),
            dict(d.emu.mem), d.where())


@pytest.mark.parametrize("line", ODD_LINES)
def test_each_near_miss_is_done_as_the_general_path_does_it(line):
    """After a type-4 packet has run once (its template made), the same header queued again,
    then ``line``, then r: the shortcuts must not take what is not theirs."""
    packet = "raw " + hexes([pkt4_header(0x8800, 2), 1, 2])
    lines = [packet, "r", packet, line, "r", packet, "r"]
    assert session(lines, True) == session(lines, False)
    assert session(lines[2:], True) == session(lines[2:], False)


@given(LINES, st.booleans())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_shortcuts_print_and_do_what_the_general_path_does(lines, trace):
    assert session(lines, True, trace) == session(lines, False, trace)


@given(st.lists(st.one_of(TYPE4, TYPE7), min_size=1, max_size=6), st.integers(1, 4))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_mesa_scripts_packet_then_r_repeated(packets, times):
    """Mesa's way of feeding a stream: each packet, then r; headers come back (templates)."""
    lines = [c for ws in packets * times for c in ("raw " + hexes(ws), "r")]
    assert session(lines, True) == session(lines, False)


def script_session(lines: list[str], fast: bool) -> tuple:
    """A piped session: lines read by the script loop; ``fast``: into a Batched echo with
    the shortcuts (Mesa's packet-then-r pairs done at once), else a line at a time without."""
    script = "".join(line.replace("\n", " ") + "\n" for line in
                     ["raw " + hexes([pkt7_header(0x48, 1), 0]), "r", *lines])
    d = Debugger(Emulator(a630()), max_steps=5000)
    got: list[str] = []
    if fast:
        echo = Batched(got.append, batch=3)
        repl(d, io.StringIO(script), echo, interactive=False)
        echo.flush()
    else:
        d.quick = None
        repl(d, io.StringIO(script), got.append, interactive=False)
    p = d.emu.main
    return ("\n".join(got), d.failed, d.done, d.emu.effects_raw, d.emu.steps,
            d.emu.instructions, d.emu.packets, list(p.gpr), p.pc, p.bt, p.waitin_pending,
            p.header, p.nreads, p.data_mode, p.limit, bytes(d.emu.gpu), d.emu.roq(),
            d.where())


@given(LINES)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_script_loop_prints_what_a_line_at_a_time_prints(lines):
    assert script_session(lines, True) == script_session(lines, False)


@given(st.lists(st.one_of(TYPE4, TYPE7), min_size=1, max_size=6), st.integers(1, 4),
       st.lists(st.sampled_from(ODD_LINES + ["q"]), max_size=2), st.integers(0, 30))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_script_loop_mesa_pairs_with_an_odd_line_anywhere(packets, times, odd, at):
    """Mesa's script (packet, r, again; headers come back), an odd line or two (or q)
    inserted somewhere: the pairs done at once stop and start again where they must."""
    lines = [c for ws in packets * times for c in ("raw " + hexes(ws), "r")]
    lines[at:at] = odd
    assert script_session(lines, True) == script_session(lines, False)
