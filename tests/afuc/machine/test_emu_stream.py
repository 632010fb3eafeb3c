"""Command-stream headers and stream files; fast and exact paths on random streams."""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isaforge.afuc import Emulator, assemble
from isaforge.afuc.machine.stream import (
    BadPacketError,
    StreamFormatError,
    odd_parity_bit,
    parse_header,
    parse_stream,
    pkt4_header,
    pkt7_header,
)
from isaforge.afuc.regdb import RegDB
from tests.refdata import refdata

DB = RegDB.for_variant("A6XX")


def test_headers_as_in_mesa_traces():
    # $01 after 'mov $01, $data' in Mesa's traces (type-4 headers shown with the type cleared)
    assert pkt7_header(DB.pm4_packet_id("CP_ME_INIT"), 1) == 0x70C80001
    assert pkt7_header(DB.pm4_packet_id("CP_NOP"), 4) == 0x70100004
    assert pkt7_header(DB.pm4_packet_id("CP_SET_DRAW_STATE"), 3) == 0x70438003
    assert pkt4_header(0x8801, 2) & 0x0FFFFFFF == 0x00880102


@given(st.integers(0, 0x3FFFF), st.integers(0, 0x7F), st.integers(0, 0x7F),
       st.integers(0, 0x3FFF))
@settings(max_examples=200)
def test_header_round_trip_and_parity(reg, count4, op, count7):
    h = parse_header(pkt4_header(reg, count4))
    assert (h.type, h.ident, h.count) == (4, reg, count4)
    h = parse_header(pkt7_header(op, count7))
    assert (h.type, h.ident, h.count) == (7, op, count7)
    for bit in (7, 27):  # any single parity bit flipped is caught
        with pytest.raises(BadPacketError):
            parse_header(pkt4_header(reg, count4) ^ (1 << bit))
    assert (bin(reg).count("1") + odd_parity_bit(reg)) % 2 == 1


def test_text_and_binary_streams():
    s = parse_stream(b"CP_ME_INIT 0 ; comment\n\n@0x2000: 1 2\nRB_RENDER_CNTL 0x11\n"
                     b"raw 0xdeadbeef\n#0x26 5\n", DB)
    assert s.rb == [pkt7_header(0x48, 1), 0, pkt4_header(0x8801, 1), 0x11, 0xDEADBEEF,
                    pkt7_header(0x26, 1), 5]
    assert s.memory == {0x2000: [1, 2]}
    words = [pkt7_header(0x48, 1), 0x0A0A0A0A, 0x20202020]
    assert parse_stream(struct.pack("<3I", *words), DB).rb == words
    with pytest.raises(StreamFormatError, match="not a whole number of dwords"):
        parse_stream(b"\x00\x01\x02", DB)
    with pytest.raises(StreamFormatError, match=r"s:2:1: error: 'CP_BOGUS' is neither"):
        parse_stream(b"CP_NOP\nCP_BOGUS 1\n", DB, "s")
    with pytest.raises(StreamFormatError, match="expected a number"):
        parse_stream(b"CP_NOP zz\n", DB)
    with pytest.raises(StreamFormatError, match="at most 127"):
        parse_stream(("RB_RENDER_CNTL" + " 1" * 128).encode(), DB)


PACKETS = st.one_of(
    st.tuples(st.just("RB_RENDER_CNTL"), st.lists(st.integers(0, 0xFFFFFFFF), min_size=1,
                                                  max_size=9)),
    st.tuples(st.just("CP_NOP"), st.lists(st.integers(0, 0xFFFFFFFF), max_size=6)),
    st.tuples(st.just("CP_MEM_WRITE"),
              st.lists(st.integers(0, 0xFFFFFFFF), min_size=1, max_size=8).map(
                  lambda d: [0x40000, 0, *d])),
    st.tuples(st.just("CP_CONTEXT_REG_BUNCH"),
              st.lists(st.tuples(st.integers(0x8800, 0x88FF), st.integers(0, 0xFFFF)),
                       min_size=1, max_size=4).map(lambda ps: [x for p in ps for x in p])),
    st.tuples(st.just("CP_SET_DRAW_STATE"),
              st.lists(st.integers(0, 31), min_size=1, max_size=3).map(
                  lambda gs: [x for g in gs for x in ((g << 24) | 0x00700004, 0x1000 * g, 0)])),
)


@given(st.lists(PACKETS, min_size=1, max_size=8))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_fast_and_exact_paths_agree_on_random_streams(packets):
    fw = refdata("afuc", "firmware", "a630_sqe.fw").read_bytes()
    runs = []
    for exact in (False, True):
        emu = Emulator(fw)
        emu.packet("CP_ME_INIT", 0)
        for name, payload in packets:
            emu.packet(name, *payload)
        assert emu.run(max_steps=100_000, exact=exact) == "idle"
        runs.append(emu)
    fast, exact = runs
    assert fast.effects_raw == exact.effects_raw
    assert (fast.steps, fast.instructions, fast.packets) == (
        exact.steps, exact.instructions, exact.packets)
    assert fast.packets == len(packets) + 1
    assert fast.main.gpr == exact.main.gpr


def test_instructions_count_as_mesa_with_rep_iterations_apart():
    """One per instruction issued, as Mesa counts (issue 17: s1 is 160,438 instructions);
    the (rep) iterations past each one's first are counted apart, and steps (what
    max_steps limits) is the sum."""
    fw = refdata("afuc", "firmware", "a630_sqe.fw").read_bytes()
    words = [pkt7_header(0x48, 1), 0]
    for i in range(1000):
        words += [pkt4_header(0x8800 + (i * 8) % 0x100, 8), *range(8)]
    for exact in (False, True):
        emu = Emulator(fw)
        emu.feed(words)
        emu.run(exact=exact)
        assert emu.steps == emu.instructions + emu.rep_iterations
        assert emu.rep_iterations > 0
        # 1000 more packets add the same per packet: per-packet counts of the s1 stream
        more = Emulator(fw)
        more.feed(words + words[2:])
        more.run(exact=exact)
        per_packet = (more.instructions - emu.instructions) / 1000
        assert per_packet == 4, per_packet  # waitin, its delay slot, ushr, the (rep) mov
        assert (more.rep_iterations - emu.rep_iterations) / 1000 == 3  # 4 iterations of 2


def test_rep_with_rem_zero_is_one_instruction():
    emu = Emulator(assemble("[016ee001]\nmov $rem, 0x0\n(rep)mov $02, 0x5\nwaitin\n"
                            "mov $01, $data\n"))
    emu.run(exact=True)
    assert emu.read_gpr(2) == 0  # never ran
    # issued: mov, (rep)mov, waitin and its delay slot; the (rep) ran no iteration, which
    # steps (the budget) does not count
    assert emu.instructions == 4 and emu.steps == 3


RAW_TOKEN = st.one_of(st.integers(-0x80000000, 0xFFFFFFFF).map(str),
                      st.integers(0, 0xFFFFFFFF).map(hex),
                      st.sampled_from(["0x1_0", "08", "1e3", "0x100000000", "-0x80000001"]))


@given(st.lists(st.lists(RAW_TOKEN, max_size=6), max_size=6), st.booleans())
@settings(max_examples=200, deadline=None)
def test_raw_only_text_reads_as_the_line_parser_reads_it(lines, blank):
    """A stream of only ``raw`` lines is read at once; a comment line sends the same text
    through the line-by-line parser: same dwords, or the same error."""
    text = "".join(f"raw {' '.join(toks)}\n" + ("\n" if blank else "") for toks in lines)

    def parse(t: str) -> list[int] | str:
        try:
            return parse_stream(t.encode(), DB, "s.txt").rb
        except StreamFormatError as e:
            return str(e)

    assert parse(text) == parse(text + "; the line parser\n")
