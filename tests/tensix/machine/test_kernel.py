"""The matmul kernel of spec 000 §4 as the real kernel runs it, on the Coprocessor.

The AddrMod sections are set with SETC16 words built here from the field layout of spec 000
§3.3 and the table of §4.1; the 16 MVMULs are loaded with ``REPLAY 16,16,0,1`` and replayed by
a MOP (template 1) once per fidelity phase; SETRWC resets the counters at the boundary.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from isaforge.tensix import Coprocessor, assemble

# ---- the kernel ------------------------------------------------------------------------------


def ab(srca_incr: int = 0, srca_cr: bool = False, srca_clr: bool = False, srcb_incr: int = 0,
       srcb_cr: bool = False, srcb_clr: bool = False) -> int:
    """ADDR_MOD_AB_SECn value (spec 000 §3.3)."""
    return (srca_incr | srca_cr << 6 | srca_clr << 7 | srcb_incr << 8 | srcb_cr << 14
            | srcb_clr << 15)


def dst(incr: int = 0, cr: bool = False, clr: bool = False, c_to_cr: bool = False,
        fid_incr: int = 0, fid_clr: bool = False) -> int:
    """ADDR_MOD_DST_SECn value (spec 000 §3.3)."""
    return (incr & 0x3FF) | cr << 10 | clr << 11 | c_to_cr << 12 | fid_incr << 13 | fid_clr << 15


#: §4.1: section -> (AB, DST)
ADDR_MODS = {
    0: (ab(srcb_incr=8), dst(incr=8)),
    1: (ab(srca_incr=16, srcb_cr=True), dst(incr=8)),
    2: (ab(srca_cr=True, srcb_incr=32, srcb_cr=True), dst(incr=8)),
    4: (ab(srca_incr=32, srca_cr=True, srcb_incr=48, srcb_cr=True), dst(cr=True)),
    5: (ab(srca_clr=True, srcb_clr=True), dst(clr=True, fid_incr=1)),
}
REPLAY_ORDER = [0, 1, 0, 2, 0, 1, 0, 4, 0, 1, 0, 2, 0, 1, 0, 5]  # §4.3
NOP = assemble("ttnop")[0]
REPLAY_EXEC = assemble("ttreplay 16,16,0,0")[0]


def matmul_kernel(phases: int, thread: int = 1, extra: str = "") -> str:
    """PROG.s of the kernel with ``phases`` fidelity phases (MopCfg: outer 1, inner phases,
    loop op = replay the 16 MVMULs)."""
    lines = [f".thread {thread}"]
    cfg = [1, phases, NOP, NOP, NOP, REPLAY_EXEC, NOP, REPLAY_EXEC, REPLAY_EXEC]
    lines += [f".mopcfg {i} {v:#x}" for i, v in enumerate(cfg)]
    lines.append(extra)
    for sec, (ab_v, dst_v) in ADDR_MODS.items():
        lines.append(f"ttsetc16 {12 + sec},{ab_v:#x}")
        lines.append(f"ttsetc16 {28 + sec},{dst_v:#x}")
    lines.append("ttreplay 16,16,0,1")
    lines += [f"ttmvmul 0,0,{m},0" for m in REPLAY_ORDER]
    lines.append("ttsetrwc 0,0,0,0,0,15")
    lines.append("ttmop 1,0,0")
    lines.append("ttsetrwc 0,0,0,0,0,15")
    return "\n".join(lines) + "\n"


#: §4.2, "After": (rwc_a, cr, rwc_b, cr, rwc_d, cr) for MVMULs 1..16.
TRACE_TABLE = [
    (0, 0, 8, 0, 8, 0), (16, 0, 0, 0, 16, 0), (16, 0, 8, 0, 24, 0), (0, 0, 32, 32, 32, 0),
    (0, 0, 40, 32, 40, 0), (16, 0, 32, 32, 48, 0), (16, 0, 40, 32, 56, 0),
    (32, 32, 16, 16, 0, 0), (32, 32, 24, 16, 8, 0), (48, 32, 16, 16, 16, 0),
    (48, 32, 24, 16, 24, 0), (32, 32, 48, 48, 32, 0), (32, 32, 56, 48, 40, 0),
    (48, 32, 48, 48, 48, 0), (48, 32, 56, 48, 56, 0), (0, 0, 0, 0, 0, 0),
]
#: §4.2 "Reads": (SrcB first row, SrcA first row, Dst first row) of MVMULs 1..16.
READS_TABLE = [
    (0, 0, 0), (8, 0, 8), (0, 16, 16), (8, 16, 24), (32, 0, 32), (40, 0, 40), (32, 16, 48),
    (40, 16, 56), (16, 32, 0), (24, 32, 8), (16, 48, 16), (24, 48, 24), (48, 32, 32),
    (56, 32, 40), (48, 48, 48), (56, 48, 56),
]


def run_kernel(phases: int, a: np.ndarray, b: np.ndarray, fmt: str, fp32_dst: bool,
               record: list | None = None, extra: str = "") -> Coprocessor:
    cp = Coprocessor()
    cp.load_program(matmul_kernel(phases, extra=extra))
    cp.load_src("a", 0, a, fmt)
    cp.load_src("b", 0, b, fmt)
    cp.config.set("ALU_ACC_CTRL_Fp32_enabled", int(fp32_dst))
    if record is not None:
        cp.hook_add("insn", lambda m, a, n, ev: record.append((ev, cp.rwc.v[ev.thread].copy())))
    cp.run(max_steps=10_000)
    return cp


# ---- the RWC trace ---------------------------------------------------------------------------


def test_setc16_words_match_the_spec_listing() -> None:
    """The AddrMod words decode back to the §4.1 table through the machine's own decoder."""
    z = np.zeros((64, 16), np.float32)
    cp = run_kernel(1, z, z, "bf16", True)
    am = {s: cp.thread_config.addr_mod(1, s) for s in ADDR_MODS}
    assert (am[0].srca_incr, am[0].srcb_incr, am[0].dst_incr) == (0, 8, 8)
    assert (am[1].srca_incr, am[1].srcb_cr, am[1].srcb_incr) == (16, True, 0)
    assert (am[2].srca_cr, am[2].srcb_cr, am[2].srcb_incr) == (True, True, 32)
    assert (am[4].srca_incr, am[4].srcb_incr, am[4].dst_cr, am[4].dst_incr) == (32, 48, True, 0)
    assert (am[5].srca_clr, am[5].srcb_clr, am[5].dst_clr, am[5].fidelity_incr) == (
        True, True, True, 1)


@pytest.mark.parametrize("phases", [1, 4])
def test_rwc_trace_reproduces_spec_table(phases: int) -> None:
    record: list = []
    rng = np.random.default_rng(5)
    a = rng.standard_normal((64, 16)).astype(np.float32)
    run_kernel(phases, a, a, "bf16", True, record)
    mv = [(ev, v) for ev, v in record if ev.insn.name == "MVMUL"]
    assert len(mv) == 16 * phases
    for p in range(phases):
        for i, (_ev, v) in enumerate(mv[16 * p:16 * p + 16]):
            got = (int(v[0]), int(v[1]), int(v[2]), int(v[3]), int(v[4]), int(v[5]))
            assert got == TRACE_TABLE[i], f"phase {p}, MVMUL {i + 1}"
            fid_after = (p + 1) & 3 if i == 15 else p
            assert int(v[6]) == fid_after
    # the SETRWC at the boundary clears everything, fidelity included
    last_ev, last = record[-1]
    assert last_ev.insn.name == "SETRWC" and not last.any()


def test_trace_text_is_the_spec_notation() -> None:
    record: list = []
    a = np.ones((64, 16), np.float32)
    run_kernel(1, a, a, "bf16", True, record)
    mv = [ev for ev, _ in record if ev.insn.name == "MVMUL"]
    assert mv[2].rwc == "rwc_a=16(cr=0) rwc_b=8(cr=0) rwc_d=24(cr=0) fid=0"
    assert mv[15].rwc == "rwc_a=0(cr=0) rwc_b=0(cr=0) rwc_d=0(cr=0) fid=1"
    assert mv[0].insn.text == "ttmvmul\t0,0,0,0"


def test_mvmul_reads_the_rows_of_the_spec_table() -> None:
    """One-hot operands locate which SrcA/SrcB rows each MVMUL reads and which Dst rows it
    writes: MVMUL i with SrcB row block bi, SrcA block ai writes Dst block di."""
    for i, (b0, a0, d0) in enumerate(READS_TABLE):
        a = np.zeros((64, 16), np.float32)
        b = np.zeros((64, 16), np.float32)
        a[a0:a0 + 16] = np.eye(16)  # SrcA block = identity: result = SrcB rows
        b[b0:b0 + 8] = np.arange(1, 9)[:, None] * (i + 1)
        cp = Coprocessor()
        # run only MVMULs 1..i+1 by replaying a prefix of the kernel
        prog = matmul_kernel(1).replace("ttmop 1,0,0", f"ttreplay 16,{i + 1},0,0")
        cp.load_program(prog)
        cp.load_src("a", 0, a, "bf16")
        cp.load_src("b", 0, b, "bf16")
        cp.config.set("ALU_ACC_CTRL_Fp32_enabled", 1)
        before = cp.dst.read("fp32", range(64)).copy()
        cp.run()
        after = cp.dst.read("fp32", range(64))
        want = before.copy()
        want[d0:d0 + 8] += np.arange(1, 9)[:, None] * (i + 1)
        # only the last MVMUL sees the marked rows; earlier ones add exact zeros
        np.testing.assert_array_equal(after, want, err_msg=f"MVMUL {i + 1}")


# ---- the arithmetic against an independent reference -----------------------------------------

FORMATS = {"bf16": (7, 8), "fp16": (10, 5), "tf32": (10, 8)}  # mantissa bits, exponent bits


def _sig(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(11-bit significand M as int, scale) with x = M * scale (x exactly representable)."""
    m, e = np.frexp(x.astype(np.float64))
    big = np.ldexp(m, 11)
    assert np.array_equal(big, np.round(big)), "values need at most 11 significant bits"
    return np.abs(big).astype(np.int64), np.sign(x) * np.ldexp(1.0, e - 11)


PHASE_UNIT = {0: 12, 1: 17, 2: 19, 3: 24}  # log2 of a product's unit below 2**(eA + eB)


def sliced_reference(a: np.ndarray, b: np.ndarray, phases: int | list[int]
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Independent model of MVMUL's fidelity phases on one 32x32 tile product C = B @ A:
    phase p multiplies SrcA's 5-bit slice (M[10:6], or M[5:1] when p & 1) with SrcB's 7-bit
    slice (M[10:4], or M[3:0] when p & 2) and the phases accumulate.

    Returns, in Dst face order (rows 0..63): C; the sum of |terms|; the alignment bound of
    the adder (each MVMUL adds two groups of 8 products, each product rounded to the unit of
    the group's largest one, so a group is off by at most 4 of those units); and the scale of
    the roundings into Dst: per MVMUL (the kernel order: each phase, K rows 0..15 then
    16..31) its two group sums, the Dst value before and the Dst value after, in magnitude."""
    ma, sa = _sig(a)
    mb, sb = _sig(b)
    ea = np.where(a != 0, np.frexp(a)[1], -1000)
    eb = np.where(b != 0, np.frexp(b)[1], -1000)
    ta, tsa, tea = _tile(ma * 1.0).astype(np.int64), _tile(sa), _tile(ea * 1.0)
    tb, tsb, teb = _tile(mb * 1.0).astype(np.int64), _tile(sb), _tile(eb * 1.0)
    c = np.zeros((32, 32))
    mag = np.zeros((32, 32))
    align = np.zeros((32, 32))
    scale = np.zeros((32, 32))
    for p in range(phases) if isinstance(phases, int) else phases:
        amask = 0x03E if p & 1 else 0x7C0
        bmask = 0x00F if p & 2 else 0x7F0
        av = (ta & amask) * tsa
        bv = (tb & bmask) * tsb
        for h in (0, 16):
            g0 = bv[:, h:h + 8] @ av[h:h + 8]
            g1 = bv[:, h + 8:h + 16] @ av[h + 8:h + 16]
            after = c + g0 + g1
            scale += np.abs(g0) + np.abs(g1) + np.abs(c) + np.abs(after)
            c = after
        mag += np.abs(bv) @ np.abs(av)
        # unit of each product [i, k, j], then the largest per group of 8 k
        unit = np.exp2(teb[:, :, None] + tea[None, :, :] - PHASE_UNIT[p])
        align += 4 * unit.reshape(32, 4, 8, 32).max(axis=2).sum(axis=1)
    return _faces(c), _faces(mag), _faces(align), _faces(scale)


def _tile(m: np.ndarray) -> np.ndarray:
    f = [m[16 * k:16 * k + 16] for k in range(4)]
    return np.block([[f[0], f[1]], [f[2], f[3]]])


def _faces(c: np.ndarray) -> np.ndarray:
    return np.vstack([c[:16, :16], c[:16, 16:], c[16:, :16], c[16:, 16:]])


def _inputs(fmt: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(2):
        x = rng.standard_normal((64, 16)) * 2.0
        x[np.abs(x) < 2.0 ** -10] = 0.5  # stay clear of FP16 denormals
        if fmt == "bf16":
            x = x.astype(ml_dtypes.bfloat16).astype(np.float64)
        elif fmt == "fp16":
            x = x.astype(np.float16).astype(np.float64)
        else:  # tf32: 10 mantissa bits, 8-bit exponent
            x = x.astype(np.float32)
            x = (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
        out.append(x)
    return out[0], out[1]


FIDELITY = {"LoFi": 1, "HiFi2": 2, "HiFi3": 3, "HiFi4": 4}


@pytest.mark.parametrize("fmt", ["bf16", "fp16", "tf32"])
@pytest.mark.parametrize("fidelity", list(FIDELITY))
@pytest.mark.parametrize("fp32_dst", [True, False], ids=["fp32dst", "16bitdst"])
def test_matmul_tile_matches_sliced_reference(fmt: str, fidelity: str, fp32_dst: bool) -> None:
    phases = FIDELITY[fidelity]
    a, b = _inputs(fmt, seed=phases * 7 + len(fmt))
    load = {"bf16": "bf16", "fp16": "fp16", "tf32": "tf32"}[fmt]
    cp = run_kernel(phases, a.astype(np.float32), b.astype(np.float32), load, fp32_dst)
    if fp32_dst:
        got, precision = cp.dst.read("fp32", range(64)).astype(np.float64), 24
    elif fmt == "fp16":
        got, precision = cp.dst.read("fp16", range(64)).astype(np.float64), 11
    else:  # BF16 and TF32 accumulate into a BF16 Dst
        got, precision = cp.dst.read("bf16", range(64)).astype(np.float64), 8
    ref, _, align, scale = sliced_reference(a, b, phases)
    # the adder's alignment of products, then per MVMUL the alignment of the group sums with
    # Dst and the rounding into Dst (for a 16-bit Dst each term is rounded first too)
    # (each at most half an ulp, an ulp being at most 2**(1 - precision) of the magnitude;
    # the bound doubles that)
    tol = align + 2.0 ** (1 - precision) * scale
    err = np.abs(got - ref)
    assert (err <= tol).all(), f"max excess {np.max(err - tol)}"
    if phases <= 2 and fp32_dst:
        # the test tells fidelity phases apart: LoFi/HiFi2 drop whole slices, so the
        # full-precision product is further away than the tolerance
        full = _faces(_tile(b) @ _tile(a))
        assert np.max(np.abs(full - ref)) > np.max(tol)


def test_hifi4_bf16_fp32_dst_is_the_exact_float32_product() -> None:
    """Quarter-integers in [-4, 4]: every product and partial sum is exact in FP32, so HiFi4
    with an FP32 Dst must give exactly the float32 matrix product."""
    rng = np.random.default_rng(11)
    a = (rng.integers(-16, 17, (64, 16)) / 4).astype(np.float32)
    b = (rng.integers(-16, 17, (64, 16)) / 4).astype(np.float32)
    cp = run_kernel(4, a, b, "bf16", True)
    got = cp.dst.read("fp32", range(64))
    want = _faces(_tile(b.astype(np.float32)) @ _tile(a.astype(np.float32))).astype(np.float32)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("base", [1, 2, 3])
def test_fidelity_base_shifts_the_phase(base: int) -> None:
    """LoFi with FIDELITY_BASE_Phase = base runs phase ``base`` (RWC phase 0 + base)."""
    a, b = _inputs("bf16", seed=40 + base)
    cp = run_kernel(1, a.astype(np.float32), b.astype(np.float32), "bf16", True,
                    extra=f".threadconfig FIDELITY_BASE_Phase {base}")
    got = cp.dst.read("fp32", range(64)).astype(np.float64)
    ref, _, align, scale = sliced_reference(a, b, [base])
    assert (np.abs(got - ref) <= align + 2.0 ** -23 * scale).all()
    other, _, _, _ = sliced_reference(a, b, [0])
    assert np.max(np.abs(got - other)) > np.max(align + 2.0 ** -23 * scale)
