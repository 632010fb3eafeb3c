#!/usr/bin/env python3
"""Differential run of random single Tensix instructions through the official simulator
(tenstorrent/ttsim, Blackhole build) and through isaforge's coprocessor, with the differences
written out.

Nothing in the tests needs ttsim: this script is how divergences are found; what it finds
becomes a fix with a test, or a vector file (``--write-vectors``) that
``tests/tensix/test_ttsim_vectors.py`` replays without ttsim.

Getting ttsim (outside this project; its code is never committed here)::

    git clone https://github.com/tenstorrent/ttsim /tmp/ttsim        # or: git archive of a mirror
    python3 tools/ttsim_diff.py --ttsim /tmp/ttsim --cases 300

The first run generates ttsim's headers with its own scripts, compiles its sources with the
system g++ for Blackhole and links ``tools/ttsim_driver.cpp`` (a small command driver) into
``--build`` (default ``/tmp/isaforge-ttsim-build``), which takes under a minute.

Each case resets both machines, applies the same state (Config words, ThreadConfig through
SETC16, Dst, SrcA/SrcB with their banks and implied formats, the address counters, an L1
window), executes the case's instructions on the same thread and
compares everything they can change: Dst and its valid bits, SrcA/SrcB and their bank state,
the address counters, the RWCs, the L1 window and whether an instruction waited. A case ttsim
refuses (it stops on what it does not support) is counted apart, as is one isaforge refuses.

Families (``--family``, default all): ``mov`` (MOVD2A, MOVD2B, MOVB2A, MOVA2D, MOVB2D after
random ZEROACCs), ``unpack`` (UNPACR: every L1 format ttsim converts, both unpackers, contexts,
tileize, transpose, unpack to Dst, dvalid), ``pack`` (PACR tiles of 1-4 instructions: every
conversion, edge masks, ReLU, L1 accumulation, interface selections, address modes).
"""

from __future__ import annotations

import argparse
import json
import struct
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from isaforge.core.errors import IsaforgeError  # noqa: E402
from isaforge.tensix import Coprocessor  # noqa: E402
from isaforge.tensix.isa import config_fields, ops, thread_config_fields  # noqa: E402
from isaforge.tensix.machine import formats as F  # noqa: E402
from isaforge.tensix.machine.regfiles import SrcClient  # noqa: E402
from isaforge.tensix.machine.state import DeadlockError  # noqa: E402

#: the L1 window cases use and compare
L1_BASE = 0x1000
L1_SIZE = 0x800
#: Config words ttsim keeps once for both banks (Blackhole)
UNBANKED = frozenset({180, 181, 182, 183, 209, 210, 211, 220})


class TtsimError(Exception):
    """ttsim stopped (it refuses what it does not support); the message is its report."""


# --------------------------------------------------------------------------------------------
# Building and driving ttsim
# --------------------------------------------------------------------------------------------


def build(ttsim: Path, out: Path) -> Path:
    """The driver executable, built from the ttsim tree ``ttsim`` into ``out`` if needed."""
    src = ttsim / "src"
    if not (src / "tensix.cpp").exists():
        raise SystemExit(f"ttsim_diff: {ttsim} is not a ttsim source tree (no src/tensix.cpp)")
    exe = out / "ttsim_driver"
    driver = ROOT / "tools" / "ttsim_driver.cpp"
    if exe.exists() and exe.stat().st_mtime > driver.stat().st_mtime:
        return exe
    gen = out / "gen"
    (gen / "bh").mkdir(parents=True, exist_ok=True)
    steps = [["python3", "riscv_gen_decode.py"]] + [
        ["python3", f"{name}_gen_{kind}.py", "--chip", "bh", "--out",
         str(gen / "bh" / f"{name}_{header}.h")]
        for name, kind, header in (("tensix", "decode", "decode"), ("tensix", "regs", "regs"),
                                   ("tile", "regs", "regs"))]
    for cmd in steps:
        subprocess.run(cmd, cwd=src, check=True)
    # riscv_gen_decode.py writes into the tree's _out; make it visible from ours
    flags = ["-std=c++20", "-O2", "-fno-exceptions", "-fno-rtti", "-DTT_ARCH_VERSION=1",
             "-DNUM_CHIPS=1", "-DNUM_MMIO_CHIPS=1", f"-I{gen / 'bh'}", f"-I{src / '_out'}",
             f"-I{src}"]
    objs = []
    for name in ("common", "sim", "tensix", "tile", "fma", "rv32", "libttsim"):
        obj = out / f"{name}.o"
        subprocess.run(["g++", *flags, "-c", str(src / f"{name}.cpp"), "-o", str(obj)],
                       check=True)
        objs.append(str(obj))
    subprocess.run(["g++", *flags, str(driver), *objs, "-o", str(exe)], check=True)
    return exe


class Ttsim:
    """The driver process (restarted after ttsim stops on an error)."""

    def __init__(self, exe: Path) -> None:
        self.exe = exe
        self.proc: subprocess.Popen | None = None

    def _start(self) -> subprocess.Popen:
        if self.proc is None or self.proc.poll() is not None:
            # ttsim's prints go to a file: a pipe nobody reads until it stops could fill up
            self.err = tempfile.TemporaryFile()
            self.proc = subprocess.Popen([str(self.exe)], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=self.err)
        return self.proc

    def _send(self, data: bytes) -> None:
        p = self._start()
        try:
            p.stdin.write(data)  # type: ignore[union-attr]
            p.stdin.flush()  # type: ignore[union-attr]
        except BrokenPipeError:
            self._died()

    def _recv(self, n: int) -> bytes:
        p = self.proc  # the process the command went to, even if it has stopped since
        assert p is not None
        data = p.stdout.read(n) if n else b""  # type: ignore[union-attr]
        if len(data) < n:
            self._died()
        return data

    def _died(self) -> None:
        p = self.proc
        assert p is not None
        p.wait()
        self.err.seek(0)
        err = self.err.read().decode(errors="replace").strip()
        self.err.close()
        self.proc = None
        line = err.splitlines()[-1] if err else f"exit status {p.returncode}"
        raise TtsimError(line.split("ERROR: ", 1)[-1])

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.write(b"Q")  # type: ignore[union-attr]
            self.proc.stdin.close()  # type: ignore[union-attr]
            self.proc.wait()
        self.proc = None

    def reset(self) -> None:
        self._send(b"I")

    def cfg(self, bank: int, index: int, value: int) -> None:
        self._send(b"C" + struct.pack("<3I", bank, index, value & 0xFFFFFFFF))

    def cfg_read(self, bank: int, index: int) -> int:
        self._send(b"c" + struct.pack("<2I", bank, index))
        return struct.unpack("<I", self._recv(4))[0]

    def execute(self, pipe: int, word: int) -> bool:
        self._send(b"X" + struct.pack("<2I", pipe, word))
        return self._recv(1) == b"\x01"

    def set_dst(self, bits: np.ndarray, valid: np.ndarray) -> None:
        self._send(b"D" + bits.astype("<u2").tobytes() + valid.astype(np.uint8).tobytes())

    def dst(self) -> tuple[np.ndarray, np.ndarray]:
        self._send(b"d")
        bits = np.frombuffer(self._recv(1024 * 16 * 2), "<u2").reshape(1024, 16)
        return bits.copy(), np.frombuffer(self._recv(1024), np.uint8).astype(bool)

    def set_src(self, a: np.ndarray, b: np.ndarray, meta: np.ndarray) -> None:
        self._send(b"S" + a.astype("<u4").tobytes() + b.astype("<u4").tobytes()
                   + meta.astype("<u4").tobytes())

    def src(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        self._send(b"s")
        a = np.frombuffer(self._recv(2 * 64 * 16 * 4), "<u4").reshape(2, 64, 16).copy()
        b = np.frombuffer(self._recv(2 * 64 * 16 * 4), "<u4").reshape(2, 64, 16).copy()
        return a, b, np.frombuffer(self._recv(40), "<u4").copy()

    def set_adc(self, pipe: int, unit: int, words: np.ndarray) -> None:
        self._send(b"A" + struct.pack("<2I", pipe, unit) + words.astype("<u4").tobytes())

    def adc(self) -> np.ndarray:
        self._send(b"a")
        return np.frombuffer(self._recv(3 * 3 * 16 * 4), "<u4").reshape(3, 3, 16).copy()

    def write_l1(self, addr: int, data: np.ndarray) -> None:
        self._send(b"L" + struct.pack("<2I", addr, len(data)) + data.astype(np.uint8).tobytes())

    def read_l1(self, addr: int, n: int) -> np.ndarray:
        self._send(b"l" + struct.pack("<2I", addr, n))
        return np.frombuffer(self._recv(n), np.uint8).copy()

    def rwc(self) -> np.ndarray:
        self._send(b"R")
        return np.frombuffer(self._recv(3 * 7 * 4), "<u4").reshape(3, 7).copy()


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


def encode(name: str, **values: int) -> int:
    """A Tensix word from its instruction name and field values (0 where not given)."""
    op = ops()[name]
    word = op.opcode << 24
    known = {f.name: f for f in op.fields}
    for key, v in values.items():
        f = known[key]
        width = f.high - f.low + 1
        if not 0 <= v < (1 << width):
            raise ValueError(f"{name}.{key}={v} does not fit {width} bits")
        word |= v << f.low
    return word


def setc16(name: str, value: int) -> int:
    """The SETC16 word that writes ThreadConfig register ``name``'s whole 16-bit word with
    ``value`` placed in the field (other fields of the word 0)."""
    fld = thread_config_fields()[name]
    return encode("SETC16", setc16_reg=fld.index, setc16_value=value << fld.shift)


@dataclass
class Case:
    """One differential case: the state both machines start from and the instructions."""

    family: str
    config: dict[tuple[int, int], int] = field(default_factory=dict)  # (bank, index) -> word
    pre: list[tuple[int, int]] = field(default_factory=list)  # (thread, word) executed first
    dst: np.ndarray = field(default_factory=lambda: np.zeros((1024, 16), np.uint16))
    valid: np.ndarray = field(default_factory=lambda: np.ones(1024, bool))
    srca: np.ndarray = field(default_factory=lambda: np.zeros((2, 64, 16), np.uint32))
    srcb: np.ndarray = field(default_factory=lambda: np.zeros((2, 64, 16), np.uint32))
    src_meta: np.ndarray = field(default_factory=lambda: np.zeros(10, np.uint32))
    adc: np.ndarray = field(default_factory=lambda: np.zeros((3, 3, 16), np.uint32))
    l1: np.ndarray = field(default_factory=lambda: np.zeros(L1_SIZE, np.uint8))
    insns: list[tuple[int, int]] = field(default_factory=list)

    def set(self, name: str, value: int, bank: int = 0) -> None:
        """Set a named Config field in the case's words (bank ``bank``)."""
        f = config_fields()[name]
        key = (bank, f.index)
        old = self.config.get(key, 0)
        self.config[key] = (old & ~f.mask & 0xFFFFFFFF) | ((value << f.shift) & f.mask)


@dataclass
class State:
    """What a case compares afterwards (Src in ttsim's layout: the 19-bit logical value << 13)."""

    dst: np.ndarray
    valid: np.ndarray
    srca: np.ndarray
    srcb: np.ndarray
    src_meta: np.ndarray
    adc: np.ndarray
    rwc: np.ndarray
    l1: np.ndarray
    done: list[bool]


def run_ttsim(sim: Ttsim, case: Case) -> tuple[State, dict[tuple[int, int], int]]:
    """Run ``case`` on ttsim; the state after and the Config words per bank (ttsim keeps a
    few registers once for both banks)."""
    sim.reset()
    words = {}
    for (bank, index), value in sorted(case.config.items()):
        sim.cfg(bank, index, value)
        for b in (0, 1) if index in UNBANKED else (bank,):
            words[(b, index)] = value
    sim.set_dst(case.dst, case.valid)
    sim.set_src(case.srca, case.srcb, case.src_meta)
    for pipe in range(3):
        for unit in range(3):
            sim.set_adc(pipe, unit, case.adc[pipe, unit])
    sim.write_l1(L1_BASE, case.l1)
    for pipe, word in case.pre:
        if not sim.execute(pipe, word):
            raise TtsimError(f"setup instruction {word:#010x} waited")
    done = [sim.execute(pipe, word) for pipe, word in case.insns]
    d, v = sim.dst()
    a, b, meta = sim.src()
    return State(d, v, a, b, meta, sim.adc(), sim.rwc(), sim.read_l1(L1_BASE, L1_SIZE),
                 done), words


def _to_cells(v: np.ndarray) -> np.ndarray:
    return F.src_from_logical((v >> 13) & F.SRC_MASK)


def _from_cells(c: np.ndarray) -> np.ndarray:
    return F.src_to_logical(c).astype(np.uint32) << 13


def run_ours(case: Case, words: dict[tuple[int, int], int]) -> State:
    """Run ``case`` on isaforge's coprocessor, Config as ttsim kept it."""
    cp = Coprocessor(ub="continue")
    for (bank, index), value in words.items():
        cp.config.words[bank, index] = value
    cp.dst.bits[:] = case.dst
    cp.dst.valid[:] = case.valid
    m = case.src_meta
    for src, cells, valid, unp, mat, fmts in ((cp.srca, case.srca, m[0], m[1], m[2], m[6:8]),
                                              (cp.srcb, case.srcb, m[3], m[4], m[5], m[8:10])):
        src.cells[:] = _to_cells(cells)
        src.allowed_client = [SrcClient.MATRIX_UNIT if valid >> b & 1 else SrcClient.UNPACKERS
                              for b in range(2)]
        src.unpacker_bank, src.matrix_bank = int(unp), int(mat)
        src.implied_fmt[:] = fmts
    a = case.adc.reshape(3, 3, 4, 4)  # [thread, unit, (ch0, ch1, ch0_cr, ch1_cr), dim]
    cp.adc.v[..., 0] = a[:, :, 0:2]
    cp.adc.v[..., 1] = a[:, :, 2:4]
    l1 = cp.memory.l1  # type: ignore[attr-defined]
    l1[L1_BASE:L1_BASE + L1_SIZE] = case.l1
    for pipe, word in case.pre:
        cp.set_stream(pipe, [word])
        cp.run(max_steps=10)
    done = []
    for pipe, word in case.insns:
        cp.set_stream(pipe, [word])
        try:
            cp.run(max_steps=10)
            done.append(True)
        except DeadlockError:
            done.append(False)
            cp.set_stream(pipe, [])
    meta = np.zeros(10, np.uint32)
    for k, src in enumerate((cp.srca, cp.srcb)):
        meta[3 * k] = sum(1 << b for b in range(2)
                          if src.allowed_client[b] == SrcClient.MATRIX_UNIT)
        meta[3 * k + 1], meta[3 * k + 2] = src.unpacker_bank, src.matrix_bank
        meta[6 + 2 * k:8 + 2 * k] = src.implied_fmt
    v = cp.adc.v
    adc = np.concatenate([v[..., 0].reshape(3, 3, 8), v[..., 1].reshape(3, 3, 8)], axis=2)
    rwc = cp.rwc.v[:, :7].astype(np.uint32)
    return State(cp.dst.bits.copy(), cp.dst.valid.copy(), _from_cells(cp.srca.cells),
                 _from_cells(cp.srcb.cells), meta, adc.astype(np.uint32), rwc,
                 l1[L1_BASE:L1_BASE + L1_SIZE].copy(), done)


def differences(want: State, got: State) -> list[str]:
    """What differs, one line per part (first few positions)."""
    out = []
    mask = 0xFFFFE000

    def cmp(name: str, a: np.ndarray, b: np.ndarray) -> None:
        bad = np.argwhere(a != b)
        if bad.size:
            first = [tuple(int(x) for x in p) for p in bad[:3]]
            vals = [(int(a[p]), int(b[p])) for p in first]
            out.append(f"{name}: {len(bad)} differ, first at {first}: ttsim/ours "
                       + ", ".join(f"{x:#x}/{y:#x}" for x, y in vals))

    if want.done != got.done:
        out.append(f"executed (False: waited): ttsim {want.done}, ours {got.done}")
    cmp("Dst", want.dst, got.dst)
    cmp("Dst valid", want.valid, got.valid)
    cmp("SrcA", want.srca & mask, got.srca & mask)
    cmp("SrcB", want.srcb & mask, got.srcb & mask)
    cmp("Src banks/formats", want.src_meta, got.src_meta)
    cmp("ADCs", want.adc & np.uint32(0x3FFFF), got.adc)
    cmp("RWCs", want.rwc, got.rwc)
    cmp("L1", want.l1, got.l1)
    return out


# --------------------------------------------------------------------------------------------
# Random case families
# --------------------------------------------------------------------------------------------


def _random_src(rng: np.random.Generator) -> np.ndarray:
    """SrcA/SrcB contents in ttsim's layout (19-bit logical values << 13), with some cells of
    exponent 0 (what the moves flush) and some FP16-shaped ones."""
    logical = rng.integers(0, 1 << 19, (2, 64, 16), dtype=np.uint32)
    zero_exp = rng.random((2, 64, 16)) < 0.15
    logical = np.where(zero_exp, logical & ~np.uint32(0x3FC00), logical)
    return (logical << 13).astype(np.uint32)


def _random_dst(rng: np.random.Generator, rows: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """Random Dst bits and valid bits in the first ``rows`` physical rows (the rest 0)."""
    bits = np.zeros((1024, 16), np.uint16)
    bits[:rows] = rng.integers(0, 1 << 16, (rows, 16), dtype=np.uint16)
    valid = np.ones(1024, bool)
    valid[:rows] = rng.random(rows) < 0.8
    return bits, valid


def gen_mov(rng: np.random.Generator) -> Case:
    c = Case("mov")
    c.dst, c.valid = _random_dst(rng, 256)  # Dst rows below are < 128: physical < 256
    c.srca, c.srcb = _random_src(rng), _random_src(rng)
    fp32 = int(rng.integers(2))
    c.set("ALU_ACC_CTRL_Fp32_enabled", fp32)
    c.set("ALU_ACC_CTRL_Zero_Flag_disabled_src", int(rng.integers(2)))
    fa = [0, 4, 5, 6, 7] if fp32 else [1, 5, 6, 7]
    fmt_a = [int(rng.choice(fa)) for _ in range(2)]
    fmt_b = [int(rng.choice(fa)) for _ in range(2)]
    c.src_meta = np.array([rng.integers(4), rng.integers(2), rng.integers(2),
                           rng.integers(4), rng.integers(2), rng.integers(2), *fmt_a, *fmt_b],
                          dtype=np.uint32)
    t = 1
    if rng.random() < 0.3:  # formats from the configuration instead of the banks
        c.pre.append((t, setc16("DISABLE_IMPLIED_SRCA_FMT_Base", 1)))
        c.set("ALU_FORMAT_SPEC_REG0_SrcA", int(rng.choice(fa)))
    if rng.random() < 0.3:
        c.pre.append((t, setc16("DISABLE_IMPLIED_SRCB_FMT_Base", 1)))
        c.set("ALU_FORMAT_SPEC_REG1_SrcB", int(rng.choice(fa)))
    for _ in range(int(rng.integers(0, 3))):
        mode = int(rng.choice([0, 1, 2, 3]))
        where = {0: int(rng.integers(0, 128)), 1: int(rng.integers(16)),
                 2: int(rng.integers(2)), 3: 0}[mode]
        use32 = 0
        if mode == 1 and fp32 and rng.random() < 0.5:
            use32, where = 1, int(rng.integers(8))
        c.pre.append((t, encode("ZEROACC", clear_mode=mode, use_32_bit_mode=use32,
                                where=where)))
    kind = str(rng.choice(["MOVD2A", "MOVD2B", "MOVB2A", "MOVA2D", "MOVB2D"]))
    if kind == "MOVD2A":
        lo = 0
        c.insns.append((t, encode(kind, dest_32b_lo=lo, src=4 * int(rng.integers(16)),
                                  instr_mod=2, dst=4 * int(rng.integers(32)))))
    elif kind == "MOVD2B":
        lo = int(rng.integers(2)) if fp32 else 0
        c.insns.append((t, encode(kind, dest_32b_lo=lo, src=4 * int(rng.integers(16)),
                                  instr_mod=int(rng.choice([0, 2])),
                                  dst=4 * int(rng.integers(32)))))
    elif kind == "MOVB2A":
        c.insns.append((t, encode(kind, srca=4 * int(rng.integers(16)), instr_mod=2,
                                  srcb=4 * int(rng.integers(16)))))
    elif kind == "MOVA2D":
        c.insns.append((t, encode(kind, dest_32b_lo=int(rng.integers(2)) if fp32 else 0,
                                  src=8 * int(rng.integers(8)), instr_mod=2,
                                  dst=8 * int(rng.integers(16)))))
    else:
        mod = int(rng.choice([2, 3, 4, 5]))
        n = 8 if mod & 2 else 4
        c.insns.append((t, encode(kind, dest_32b_lo=int(rng.integers(2)) if fp32 else 0,
                                  src=n * int(rng.integers(64 // n)), movb2d_instr_mod=mod,
                                  dst=n * int(rng.integers(128 // n)))))
    return c


#: (in, out) L1 -> Src conversions ttsim implements, and the unpack-to-Dst ones
UNPACK_SRC = [(0, 1), (0, 4), (0, 5), (1, 1), (5, 5), (6, 6), (7, 7), (15, 15), (9, 9),
              (10, 10), (14, 14)]
UNPACK_DST = [(0, 0), (0, 4), (8, 8)]


def gen_unpack(rng: np.random.Generator) -> Case:
    c = Case("unpack")
    t = 0
    which = int(rng.integers(2))
    to_dst = which == 0 and rng.random() < 0.25
    table = UNPACK_DST if to_dst else UNPACK_SRC
    in_fmt, out_fmt = table[int(rng.integers(len(table)))]
    bits = {0: 32, 1: 16, 4: 32, 5: 16, 6: 8, 7: 4, 15: 2, 8: 32, 9: 16, 10: 8, 14: 8}[in_fmt]
    out_bytes = {0: 4, 4: 4, 8: 4, 1: 2, 5: 2, 9: 2}.get(out_fmt, 1)
    sec, unp = f"THCON_SEC{which}_", f"UNP{which}_"
    context = int(rng.integers(2))
    tileize = which == 0 and not to_dst and bits >= 8 and rng.random() < 0.2
    haloize = which == 0 and not to_dst and not tileize and rng.random() < 0.2
    force = in_fmt in (6, 7, 15) and rng.random() < 0.2
    shift = int(rng.integers(1, 8))
    while True:  # dimensions and counters whose datums fit the L1 window
        x_dim = 16 * int(rng.integers(1, 9))
        y_dim = int(rng.integers(1, 4))
        z_dim = int(rng.integers(1, 3))
        count = 16 * int(rng.integers(1, 5)) if haloize else int(rng.integers(1, 257))
        x0 = 0 if (tileize or haloize) else int(rng.integers(0, 40))
        y0, z0 = int(rng.integers(0, 2)), int(rng.integers(0, 2))
        rel = 16 * int(rng.integers(0, 8))
        offset = int(rng.integers(0, 4))
        first = (z0 * y_dim + y0) * x_dim + x0
        exps = 0 if force or in_fmt not in (6, 7, 15) else \
            ((x_dim * y_dim * z_dim + 15) // 16 + 15) // 16 * 16
        width = 16 if bits <= 8 else 32
        data = (count // width + 1) * shift * 16 if tileize else (count * bits + 7) // 8
        start = rel + 16 * offset + exps + (first * bits) // 8
        if start + data + 16 <= L1_SIZE:
            break
    c.config[(0, 64 + 48 * which)] = in_fmt | (1 << 4) | (x_dim << 16)
    c.config[(0, 65 + 48 * which)] = y_dim | (z_dim << 16)
    c.set(f"{sec}REG2_Out_data_format", out_fmt)
    c.set(f"{sec}REG2_Disable_zero_compress_cntx{context}", 1)
    if which == 0:
        c.set(f"{sec}REG5_Tile_x_dim_cntx{context}", x_dim)
    c.set(f"{sec}REG2_Tileize_mode", int(tileize))
    c.set(f"{sec}REG2_Haloize_mode", int(haloize))
    if tileize:
        c.set(f"{sec}REG2_Shift_amount_cntx0", shift)
    if in_fmt == 10:
        c.set(f"{sec}REG1_Unp_LF8_4b_exp", int(rng.integers(2)))
    if in_fmt == 14:
        c.set(f"ALU_FORMAT_SPEC_REG0_Src{'B' if which else 'A'}Unsigned", int(rng.integers(2)))
    c.set(f"{sec}REG2_Force_shared_exp", int(force))
    if which == 0:  # (Blackhole has no UNP1_FORCED_SHARED_EXP nor THCON_SEC1_REG7: 0)
        c.set(f"{unp}FORCED_SHARED_EXP_shared_exp", int(rng.integers(256)))
    else:
        offset = 0
    base = (L1_BASE + rel) // 16 - 1
    if context:
        c.set(f"{sec}REG3_Base_cntx1_address", base)
        if offset:
            c.set(f"{sec}REG7_Offset_cntx1_address", offset)
    else:
        c.set(f"{sec}REG3_Base_address", base)
        if offset:
            c.set(f"{sec}REG7_Offset_address", offset)
    c.l1 = rng.integers(0, 256, L1_SIZE, dtype=np.uint8)
    adc = np.zeros(16, np.uint32)
    adc[0], adc[1], adc[2] = x0, y0, z0
    adc[4] = x0 + count - 1
    adc[5] = int(rng.integers(0, 2))
    if which == 0:  # (Blackhole has no UNP1_ADDR_CTRL_XY_REG_1: its Y stride is 0)
        c.set(f"{unp}ADDR_CTRL_XY_REG_1_Ystride", 16 * out_bytes * int(rng.integers(0, 3)))
        c.set(f"{sec}REG5_Dest_cntx{context}_address",
              64 + 128 * int(rng.integers(0, 8 if to_dst else 4)))
        c.set(f"{unp}ADD_DEST_ADDR_CNTR_add_dest_addr_cntr", int(rng.integers(2)))
        if to_dst:
            c.set(f"{sec}REG2_Unpack_if_sel_cntx{context}", 1)
        elif count > 16:
            adc[5] = 0  # SrcA bursts start on an 8-row boundary
    c.adc[t, which] = adc
    if not to_dst:
        c.pre.append((t, setc16("SRCA_SET_SetOvrdWithAddr", 1)))
    if context:
        c.pre.append((t, setc16(f"UNPACK_MISC_CFG_CfgContextOffset_{which}", 1)))
    busy = rng.random() < 0.1
    ub = int(rng.integers(2))
    c.src_meta = np.array([(1 << ub) if busy and which == 0 else 0, ub, 1 - ub,
                           (1 << ub) if busy and which == 1 else 0, ub, 1 - ub,
                           5, 5, 5, 5], dtype=np.uint32)
    c.insns.append((t, encode("UNPACR", Unpack_block_selection=which,
                              AddrMode=int(rng.integers(256)), OvrdThreadId=1,
                              SetDatValid=int(rng.integers(2)), Last=1)))
    return c


#: (Read_32b_data, intermediate, output) of the packer conversions ttsim implements
PACK_CONVERSIONS = [(0, 1, 0), (0, 1, 1), (0, 1, 5), (0, 2, 6), (0, 5, 0), (0, 5, 5),
                    (0, 5, 6), (0, 5, 7), (0, 5, 15), (0, 6, 0), (0, 6, 5), (0, 6, 6),
                    (0, 6, 7), (0, 9, 9), (1, 0, 0), (1, 0, 1), (1, 0, 6), (1, 0, 7),
                    (1, 0, 15), (1, 1, 1), (1, 5, 5), (1, 6, 6), (1, 6, 7), (1, 8, 8),
                    (1, 9, 9), (1, 14, 14)]


def gen_pack(rng: np.random.Generator) -> Case:
    c = Case("pack")
    t = 2
    read32, inter, out = PACK_CONVERSIONS[int(rng.integers(len(PACK_CONVERSIONS)))]
    c.dst, c.valid = _random_dst(rng, 256)  # what the PACRs below can reach
    c.set("PCK_DEST_RD_CTRL_Read_32b_data", read32)
    c.set("PCK_DEST_RD_CTRL_Round_10b_mant", int((read32, inter, out) == (1, 1, 1)))
    if inter == 14:
        c.set("PCK_DEST_RD_CTRL_Read_unsigned", int(rng.integers(2)))
    c.set("ALU_FORMAT_SPEC_REG2_Dstacc", inter)
    c.set("THCON_SEC0_REG1_In_data_format", inter)
    c.set("THCON_SEC0_REG1_Out_data_format", out)
    plane = int(rng.integers(1, 17))
    c.set("PACK_COUNTERS_SEC0_pack_reads_per_xy_plane", plane)
    masks = [0xFFFF, 0xFFFF, 0, 1]
    c.set("PCK_EDGE_OFFSET_SEC0_mask", int(rng.choice(masks)))
    c.set("PCK_EDGE_OFFSET_SEC1_mask", int(rng.choice(masks)))
    c.set("PCK_EDGE_TILE_ROW_SET_SELECT_select", int(rng.integers(2)))
    for k in (0, 1):
        for r in range(16):
            if rng.random() < 0.3:
                c.set(f"TILE_ROW_SET_MAPPING_{k}_row_set_mapping_{r}", 1)
    out_bits = {0: 32, 1: 16, 5: 16, 6: 8, 7: 4, 15: 2, 8: 32, 9: 16, 14: 8}[out]
    c.set("THCON_SEC0_REG1_Exp_section_size", int(rng.integers(0, 3)))
    c.set("THCON_SEC0_REG1_L1_Dest_addr", L1_BASE // 16 - 1 + int(rng.integers(0, 8)))
    if out in (0, 1, 5) and rng.random() < 0.3:
        c.set("THCON_SEC0_REG1_Pack_L1_Acc", 1)
        c.l1 = rng.integers(0, 256, L1_SIZE, dtype=np.uint8)
    relu_ok = inter in (0, 1, 2, 5, 6) or (inter == 8)
    if relu_ok and rng.random() < 0.3:
        mode = 1 if inter == 8 else int(rng.integers(1, 4))
        c.set("STACC_RELU_ApplyRelu", mode)
        c.set("STACC_RELU_ReluThreshold", int(rng.integers(0, 0x8000)))
    align = {32: 4, 16: 2}.get({0: 32, 1: 16, 2: 8, 5: 16, 6: 8, 8: 32, 9: 16, 14: 8}[inter], 1)
    c.set("PCK0_ADDR_CTRL_XY_REG_0_Ystride", 16 * align)
    c.set("PCK0_ADDR_CTRL_ZW_REG_0_Zstride", 16 * 16 * align)
    c.set("PCK0_ADDR_CTRL_XY_REG_1_Ystride", 16 * int(rng.integers(0, 3)))
    c.config[(0, 180)] = int(rng.integers(0, 4)) * 16  # DEST_TARGET_REG_CFG_PACK_SEC0_Offset
    for sec in range(4):
        y_incr = int(rng.integers(0, 5))
        mod = (y_incr | (int(rng.integers(2)) << 4) | (int(rng.random() < 0.2) << 5)
               | (int(rng.integers(0, 3)) << 6) | (int(rng.random() < 0.2) << 11)
               | (int(rng.integers(2)) << 12) | (int(rng.random() < 0.2) << 13)
               | (int(rng.integers(2)) << 14) | (int(rng.random() < 0.2) << 15))
        c.pre.append((t, encode("SETC16", setc16_reg=37 + sec, setc16_value=mod)))
    n = int(rng.integers(1, 5))
    sels = [0, 0, 1, 3, 5, 10] if out_bits >= 8 else [0, 3, 5, 10]
    adc = np.zeros(16, np.uint32)
    adc[1] = int(rng.integers(0, 4))
    adc[4] = 15
    adc[5] = int(rng.integers(0, 3))
    c.adc[t, 2] = adc
    for k in range(n):
        sel = int(rng.choice(sels))
        c.insns.append((t, encode("PACR", Last=int(k == n - 1), ReadIntfSel=sel,
                                  AddrMode=int(rng.integers(4)))))
    return c


FAMILIES: dict[str, Callable[[np.random.Generator], Case]] = {
    "mov": gen_mov, "unpack": gen_unpack, "pack": gen_pack}


# --------------------------------------------------------------------------------------------
# Vectors (cases both machines agree on, replayed by the tests without ttsim)
# --------------------------------------------------------------------------------------------


def save_vectors(path: Path, cases: list[tuple[Case, dict, State]]) -> None:
    """The cases, their Config words and ttsim's results, as one .npz file (the layout
    tests/tensix/test_ttsim_vectors.py reads). Results are stored as the XOR of the state
    after with the state before (``*_delta``), which compresses to almost nothing where an
    instruction changed little."""
    n = len(cases)
    kcfg = max(len(w) for _, w, _ in cases)
    npre = max(len(c.pre) for c, _, _ in cases) or 1
    nins = max(len(c.insns) for c, _, _ in cases)
    none = 0xFFFFFFFF
    cfg = np.full((n, kcfg, 3), none, np.uint32)
    pre = np.full((n, npre, 2), none, np.uint32)
    ins = np.full((n, nins, 2), none, np.uint32)
    done = np.ones((n, nins), bool)
    for i, (c, words, s) in enumerate(cases):
        for j, ((bank, index), value) in enumerate(sorted(words.items())):
            cfg[i, j] = (bank, index, value)
        for j, (pipe, word) in enumerate(c.pre):
            pre[i, j] = (pipe, word)
        for j, (pipe, word) in enumerate(c.insns):
            ins[i, j] = (pipe, word)
        done[i, :len(s.done)] = s.done

    def pair(name: str, before: Callable, after: Callable) -> dict[str, np.ndarray]:
        b = np.stack([before(c) for c, _, _ in cases])
        a = np.stack([after(s) for _, _, s in cases]).astype(b.dtype)
        return {f"{name}_in": b, f"{name}_delta": b ^ a}

    arrays = {"cfg": cfg, "pre": pre, "insns": ins, "done": done,
              "l1_base": np.uint32(L1_BASE),
              **pair("dst", lambda c: c.dst, lambda s: s.dst),
              **pair("valid", lambda c: c.valid, lambda s: s.valid),
              **pair("srca", lambda c: _to_cells(c.srca), lambda s: _to_cells(s.srca)),
              **pair("srcb", lambda c: _to_cells(c.srcb), lambda s: _to_cells(s.srcb)),
              **pair("src_meta", lambda c: c.src_meta, lambda s: s.src_meta),
              **pair("adc", lambda c: c.adc, lambda s: s.adc),
              **pair("l1", lambda c: c.l1, lambda s: s.l1),
              "rwc_out": np.stack([s.rwc for _, _, s in cases])}
    np.savez_compressed(path, **arrays)


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ttsim", type=Path, required=True, help="ttsim source tree")
    ap.add_argument("--build", type=Path, default=Path("/tmp/isaforge-ttsim-build"))
    ap.add_argument("--family", action="append", choices=sorted(FAMILIES))
    ap.add_argument("--cases", type=int, default=200, help="cases per family")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("ttsim_diff.jsonl"),
                    help="differences, one JSON object per case")
    ap.add_argument("--write-vectors", type=Path, metavar="DIR",
                    help="write the cases both agree on as DIR/ttsim_<family>.npz")
    ap.add_argument("--vectors", type=int, action="append", metavar="N",
                    help="cases per vector file (once, or once per --family; default 32)")
    ap.add_argument("--verbose", action="store_true", help="print each case as it runs")
    args = ap.parse_args(argv)
    args.build.mkdir(parents=True, exist_ok=True)
    sim = Ttsim(build(args.ttsim.resolve(), args.build.resolve()))
    rng = np.random.default_rng(args.seed)
    report = args.out.open("w")
    try:
        for index, family in enumerate(args.family or sorted(FAMILIES)):
            tally: Counter = Counter()
            kinds: Counter = Counter()
            agreed: list[tuple[Case, dict, State]] = []
            for n in range(args.cases):
                case = FAMILIES[family](rng)
                record = {"family": family, "case": n, "seed": args.seed,
                          "insns": [f"{p}:{w:#010x}" for p, w in case.insns]}
                if args.verbose:
                    print(f"{family} {n}: {' '.join(record['insns'])}", file=sys.stderr,
                          flush=True)
                try:
                    want, words = run_ttsim(sim, case)
                except TtsimError as e:
                    tally["ttsim refused"] += 1
                    kinds[f"ttsim: {str(e)[:70]}"] += 1
                    continue
                try:
                    got = run_ours(case, words)
                except IsaforgeError as e:
                    tally["isaforge refused"] += 1
                    kinds[f"isaforge: {str(e)[:70]}"] += 1
                    record["isaforge_error"] = str(e)
                    report.write(json.dumps(record) + "\n")
                    continue
                diff = differences(want, got)
                if diff:
                    tally["differ"] += 1
                    record["differences"] = diff
                    record["config"] = {f"{b}:{i}": f"{v:#x}" for (b, i), v in words.items()}
                    report.write(json.dumps(record) + "\n")
                else:
                    tally["agree"] += 1
                    agreed.append((case, words, want))
            print(f"{family}: {args.cases} cases: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(tally.items())))
            for k, v in kinds.most_common(8):
                print(f"    {v:4d}  {k}")
            if args.write_vectors and agreed:
                args.write_vectors.mkdir(parents=True, exist_ok=True)
                path = args.write_vectors / f"ttsim_{family}.npz"
                limits = args.vectors or [32]
                k = limits[min(index, len(limits) - 1)]
                save_vectors(path, agreed[:k])
                print(f"    wrote {min(len(agreed), k)} cases to {path}")
    finally:
        sim.close()
        report.close()
    print(f"differences: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
