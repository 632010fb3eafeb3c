"""Cases of the differential run against the official simulator (``tools/ttsim_diff.py
--write-vectors``): random single instructions (MOV* after ZEROACCs, UNPACR of every L1
format the simulator converts, PACR tiles of 1-4 instructions) and the state the simulator
(tenstorrent/ttsim, Blackhole) left after them, replayed here without it.

Every ``tests/tensix/data/ttsim/*.npz`` is a test (its id the file's stem), so more vectors
of the same layout need no code change. Layout (N cases; ``0xFFFFFFFF`` pads):

* ``cfg`` ``[N, K, 3]`` (Config bank, word index, value), ``pre`` ``[N, M, 2]`` and ``insns``
  ``[N, P, 2]`` (thread, Tensix word): set-up instructions, then the instructions under test;
* ``X_in`` the state before and ``X_delta`` its XOR with the state after, for ``dst``
  (``[N, 1024, 16]`` DstBits), ``valid`` (``[N, 1024]``), ``srca``/``srcb`` (``[N, 2, 64, 16]``
  cells in isaforge's Src layout), ``src_meta`` (``[N, 10]``: SrcA's Matrix-Unit-owned bank
  mask, unpacker bank, Matrix Unit bank, the same for SrcB, then the implied formats of
  SrcA's and SrcB's banks), ``adc`` (``[N, 3, 3, 16]``: per thread and unit (unpacker 0/1,
  packer) channel 0 X/Y/Z/W, channel 1 X/Y/Z/W, then their ``_Cr`` copies) and ``l1``
  (``[N, S]`` bytes at ``l1_base``);
* ``rwc_out`` ``[N, 3, 7]`` (per thread SrcA, SrcA_Cr, SrcB, SrcB_Cr, Dst, Dst_Cr,
  FidelityPhase after) and ``done`` ``[N, P]`` (False: the instruction waited at the gate).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from isaforge.tensix import Coprocessor
from isaforge.tensix.machine.regfiles import SrcClient
from isaforge.tensix.machine.state import DeadlockError

FOLDER = Path(__file__).parent / "data" / "ttsim"
FILES = sorted(FOLDER.glob("*.npz"))
NONE = 0xFFFFFFFF


def _load(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as d:
        return {k: d[k] for k in d.files}


def _setup(d: dict[str, np.ndarray], n: int) -> Coprocessor:
    cp = Coprocessor(ub="continue")
    for bank, index, value in d["cfg"][n]:
        if index != NONE:
            cp.config.words[bank, index] = value
    cp.dst.bits[:] = d["dst_in"][n]
    cp.dst.valid[:] = d["valid_in"][n]
    m = d["src_meta_in"][n]
    for k, src in enumerate((cp.srca, cp.srcb)):
        src.cells[:] = d[("srca_in", "srcb_in")[k]][n]
        mask = int(m[3 * k])
        src.allowed_client = [SrcClient.MATRIX_UNIT if mask >> b & 1 else SrcClient.UNPACKERS
                              for b in range(2)]
        src.unpacker_bank, src.matrix_bank = int(m[3 * k + 1]), int(m[3 * k + 2])
        src.implied_fmt[:] = m[6 + 2 * k:8 + 2 * k]
    a = d["adc_in"][n].reshape(3, 3, 4, 4)
    cp.adc.v[..., 0] = a[:, :, 0:2]
    cp.adc.v[..., 1] = a[:, :, 2:4]
    base = int(d["l1_base"])
    l1 = cp.memory.l1  # type: ignore[attr-defined]
    l1[base:base + d["l1_in"].shape[1]] = d["l1_in"][n]
    for thread, word in d["pre"][n]:
        if thread != NONE:
            cp.set_stream(int(thread), [int(word)])
            cp.run(max_steps=10)
    return cp


def _state(cp: Coprocessor, d: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    meta = np.zeros(10, np.uint32)
    for k, src in enumerate((cp.srca, cp.srcb)):
        meta[3 * k] = sum(1 << b for b in range(2)
                          if src.allowed_client[b] == SrcClient.MATRIX_UNIT)
        meta[3 * k + 1], meta[3 * k + 2] = src.unpacker_bank, src.matrix_bank
        meta[6 + 2 * k:8 + 2 * k] = src.implied_fmt
    v = cp.adc.v
    adc = np.concatenate([v[..., 0].reshape(3, 3, 8), v[..., 1].reshape(3, 3, 8)], axis=2)
    base = int(d["l1_base"])
    l1 = cp.memory.l1  # type: ignore[attr-defined]
    return {"dst": cp.dst.bits, "valid": cp.dst.valid, "srca": cp.srca.cells,
            "srcb": cp.srcb.cells, "src_meta": meta, "adc": adc,
            "l1": l1[base:base + d["l1_in"].shape[1]]}


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_case_ends_in_the_simulators_state(path: Path) -> None:
    d = _load(path)
    assert len(d["insns"]) > 0
    for n in range(len(d["insns"])):
        cp = _setup(d, n)
        done = []
        for thread, word in d["insns"][n]:
            if thread == NONE:
                continue
            cp.set_stream(int(thread), [int(word)])
            try:
                cp.run(max_steps=10)
                done.append(True)
            except DeadlockError:  # it waits at the gate, as the simulator's did
                done.append(False)
                cp.set_stream(int(thread), [])
        words = [f"{w:#010x}" for t, w in d["insns"][n] if t != NONE]
        assert done == d["done"][n][:len(done)].tolist(), f"case {n} {words}: waits"
        got = _state(cp, d)
        for name, value in got.items():
            want = d[f"{name}_in"][n] ^ d[f"{name}_delta"][n]
            bad = np.argwhere(np.asarray(value).astype(want.dtype) != want)
            assert bad.size == 0, (
                f"case {n} {words}: {name} differs at {len(bad)} places, first "
                f"{bad[0].tolist()}: got {np.asarray(value)[tuple(bad[0])]:#x}, "
                f"simulator {want[tuple(bad[0])]:#x}")
        assert (cp.rwc.v[:, :7] == d["rwc_out"][n]).all(), f"case {n} {words}: RWCs"


def test_vector_files_are_present() -> None:
    assert {p.stem for p in FILES} >= {"ttsim_mov", "ttsim_pack", "ttsim_unpack"}
