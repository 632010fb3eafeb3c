"""The compiled (numba) instruction path of the Matrix Unit against the numpy path it replaces.

``fpu.mvmul``/``gapool``/``elwadd``/``elwsub``/``elwmul``/``gmpool`` and the MOV*s run as
the compiled kernels of ``fpu_jit`` on the register files when numba is importable (after
``fpu.JIT_AFTER`` calls; 0 here); with ``fpu.USE_JIT = False`` they take the numpy path
(the vectorised kernels that the oracle tests check case by case). Here both run on
identical copies of the register files, on random and edge operands, in every configuration,
fidelity phase, row offset, broadcast and Dst addressing mode, and ``Dst.bits``,
``Dst.valid`` and the Src banks must come out identical, bit for bit."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from isaforge.tensix.machine import formats as F
from isaforge.tensix.machine import fpu
from isaforge.tensix.machine.regfiles import Dst, SrcRegs
from tests.refdata import refdata, requires


def _require_numba() -> None:
    """numba is what this file tests: skip loudly without it, fail under CI=true."""
    requires("numba", "the compiled Matrix Unit path")


@pytest.fixture(autouse=True)
def _numba_present() -> Iterator[None]:
    _require_numba()
    saved = fpu.JIT_AFTER
    fpu.JIT_AFTER = 0  # compiled from the first instruction on
    yield
    fpu.JIT_AFTER = saved


#: (srca_fmt, srcb_fmt, fp32_dst, fp16a_force): every float style, both Dst widths, formats
#: that keep or drop the low mantissa bits, FP16 forced over BF16-coded formats.
CONFIGS = [
    (5, 5, False, False), (5, 5, True, False),  # BF16
    (0, 0, True, False), (6, 7, False, False),  # FP32 / BFP8_B / BFP4_B: BF16 math
    (4, 4, True, False), (4, 4, False, False),  # TF32 (16-bit Dst: BF16 storage)
    (4, 5, True, False), (5, 4, False, False),  # TF32 with BF16 on the other side
    (1, 1, False, False), (1, 1, True, False),  # FP16 into FP16 / FP32 Dst
    (10, 2, False, False), (3, 11, True, False),  # FP8, BFP8a, BFP4a, BFP2a: FP16 style
    (5, 5, False, True), (5, 0, True, True),  # FP16A_FORCE
]


def _cells(rng: np.random.Generator, shape: tuple[int, ...], fp16: bool) -> np.ndarray:
    """Src cells (physical layout) with exponents bunched, spread, zero or at the top, any
    mantissa (zero-exponent cells with non-zero mantissas included), random signs and, for
    FP16 style, garbage in the exponent bits the hardware ignores."""
    top = 31 if fp16 else 255
    centre = int(rng.integers(1, top + 1))
    exp = np.clip(centre + rng.integers(-4, 5, shape), 0, top)
    wild = rng.random(shape) < 0.25
    odd = [0, 0, 1, top, 128 if top == 255 else 16, int(rng.integers(0, top + 1))]
    exp = np.where(wild, rng.choice(odd, shape), exp)
    if fp16:
        exp = exp | (rng.integers(0, 8, shape) << 5) * (rng.random(shape) < 0.2)
    man = rng.integers(0, 1024, shape)
    sign = rng.integers(0, 2, shape)
    return F.src_from_logical((sign << 18) | (exp << 10) | man)


def _dst_bits(rng: np.random.Generator) -> np.ndarray:
    """Raw Dst storage: random bits, zeros, -0, Inf/NaN-like and maximal exponents."""
    bits = rng.integers(0, 1 << 16, (1024, 16)).astype(np.uint16)
    special = rng.choice(np.array([0, 0x8000, 0x00FF, 0x80FF, 0x7FFF, 0xFFFF, 0x001F],
                                  dtype=np.uint16), (1024, 16))
    return np.where(rng.random((1024, 16)) < 0.15, special, bits)


def _files(seed: int, fp16: bool, remap: bool, swizzle: bool
           ) -> tuple[Dst, SrcRegs, SrcRegs]:
    rng = np.random.default_rng(seed)
    dst, srca, srcb = Dst(), SrcRegs("SrcA"), SrcRegs("SrcB")
    dst.bits[:] = _dst_bits(rng)
    dst.valid[:] = rng.random(1024) < 0.7
    dst.remap_addrs, dst.swizzle_32b = remap, swizzle
    for src in (srca, srcb):
        src.cells[:] = _cells(rng, (2, 64, 16), fp16)
        src.matrix_bank = int(rng.integers(0, 2))
    # whole zero groups (SrcB half-rows, SrcA rows): all-zero products still vote with their
    # exponent, which then decides how Dst is aligned
    half = (rng.random((2, 64, 2)) < 0.2) | (rng.random((2, 64, 1)) < 0.1)
    srcb.cells[:] &= np.where(np.repeat(half, 8, axis=2), 0x7FF00, 0x7FFFF).astype(np.uint32)
    srca.cells[rng.random((2, 64)) < 0.1] &= 0x7FF00
    return dst, srca, srcb


@contextlib.contextmanager
def _jit(enabled: bool) -> Iterator[None]:
    saved = fpu.USE_JIT
    fpu.USE_JIT = enabled
    try:
        yield
    finally:
        fpu.USE_JIT = saved


def _both_paths(run: Callable[[Dst, SrcRegs, SrcRegs], None], seed: int, fp16: bool,
                remap: bool, swizzle: bool, compare_src: bool = True) -> None:
    """Run ``run`` compiled and on numpy, from the same state; compare everything (the Src
    banks must be unchanged, unless ``compare_src`` is False: then they must be equal)."""
    results = []
    for jit in (True, False):
        with _jit(jit):
            assert (fpu._jit() is not None) == jit, "the compiled path is (not) in use"
            dst, srca, srcb = _files(seed, fp16, remap, swizzle)
            run(dst, srca, srcb)
        results.append((dst.bits.copy(), dst.valid.copy(), srca.cells.copy(),
                        srcb.cells.copy()))
    (bits, valid, ca, cb), (ref_bits, ref_valid, ref_ca, ref_cb) = results
    bad = np.argwhere(bits != ref_bits)
    assert bad.size == 0, (f"{len(bad)} Dst cells differ; first at {bad[0].tolist()}: "
                           f"compiled {bits[tuple(bad[0])]:#06x}, "
                           f"numpy {ref_bits[tuple(bad[0])]:#06x}")
    assert (valid == ref_valid).all(), "Dst valid bits differ"
    assert (ca == ref_ca).all() and (cb == ref_cb).all(), "Src banks differ"
    if compare_src:
        dst, srca, srcb = _files(seed, fp16, remap, swizzle)
        assert (ca == srca.cells).all() and (cb == srcb.cells).all(), "Src banks changed"


rows = st.integers(0, 1023)
src_rows = st.integers(0, 63)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cfg=st.sampled_from(CONFIGS), phase=st.integers(0, 7),
       srca_row=src_rows, srcb_row=src_rows, dst_row=rows, bcast=st.booleans(),
       gapool=st.booleans(), remap=st.booleans(), swizzle=st.booleans())
def test_mvmul_and_gapool_compiled_equal_numpy(seed: int, cfg: tuple, phase: int,
                                               srca_row: int, srcb_row: int, dst_row: int,
                                               bcast: bool, gapool: bool, remap: bool,
                                               swizzle: bool) -> None:
    mc = fpu.MathConfig(srca_fmt=cfg[0], srcb_fmt=cfg[1], fp32_dst=cfg[2],
                        fp16a_force=cfg[3])
    kw = dict(srca_row=srca_row, srcb_row=srcb_row, dst_row=dst_row, phase=phase, cfg=mc)

    def run(dst: Dst, srca: SrcRegs, srcb: SrcRegs) -> None:
        if gapool:
            fpu.gapool(dst, srca, srcb, **kw)
        else:
            fpu.mvmul(dst, srca, srcb, bcast_srcb_row=bcast, **kw)

    _both_paths(run, seed, mc.style == "fp16", remap, swizzle)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cfg=st.sampled_from(CONFIGS),
       op=st.sampled_from(["elwadd", "elwsub", "elwmul"]), phase=st.integers(0, 7),
       srca_row=src_rows, srcb_row=src_rows, dst_row=rows, accumulate=st.booleans(),
       bcast_row=st.booleans(), bcast_col=st.booleans(), remap=st.booleans(),
       swizzle=st.booleans())
def test_elementwise_compiled_equal_numpy(seed: int, cfg: tuple, op: str, phase: int,
                                          srca_row: int, srcb_row: int, dst_row: int,
                                          accumulate: bool, bcast_row: bool, bcast_col: bool,
                                          remap: bool, swizzle: bool) -> None:
    mc = fpu.MathConfig(srca_fmt=cfg[0], srcb_fmt=cfg[1], fp32_dst=cfg[2],
                        fp16a_force=cfg[3])
    kw = dict(srca_row=srca_row, srcb_row=srcb_row, dst_row=dst_row, cfg=mc, phase=phase,
              bcast_srcb_row=bcast_row, bcast_srcb_col=bcast_col)
    if op != "elwmul":
        kw["accumulate"] = accumulate

    def run(dst: Dst, srca: SrcRegs, srcb: SrcRegs) -> None:
        getattr(fpu, op)(dst, srca, srcb, **kw)

    _both_paths(run, seed, mc.style == "fp16", remap, swizzle)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1),
       cfg=st.sampled_from(CONFIGS + [(14, 14, False, False), (1, 5, True, False)]),
       int8=st.booleans(), srca_row=src_rows, srcb_row=src_rows, dst_row=rows,
       remap=st.booleans(), swizzle=st.booleans())
def test_gmpool_compiled_equal_numpy(seed: int, cfg: tuple, int8: bool, srca_row: int,
                                     srcb_row: int, dst_row: int, remap: bool,
                                     swizzle: bool) -> None:
    """Every style (incl. integer "8" and a mixed FP16/BF16 pair, which GMPOOL accepts)."""
    mc = fpu.MathConfig(srca_fmt=cfg[0], srcb_fmt=cfg[1], fp32_dst=cfg[2],
                        fp16a_force=cfg[3], int8_math=int8 and cfg[0] == 14)

    def run(dst: Dst, srca: SrcRegs, srcb: SrcRegs) -> None:
        fpu.gmpool(dst, srca, srcb, srca_row=srca_row, srcb_row=srcb_row, dst_row=dst_row,
                   cfg=mc)

    _both_paths(run, seed, mc.style in ("fp16", "int8"), remap, swizzle)


MOVE_CONFIGS = CONFIGS + [(14, 14, True, False), (14, 14, False, False), (4, 4, True, False),
                          (4, 1, True, False)]  # TF32 twice more: its moves differ most


@pytest.mark.parametrize("op", ["movd2a", "movd2b", "mova2d", "movb2d", "movb2a"])
@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cfg=st.sampled_from(MOVE_CONFIGS), src_row=src_rows,
       dst_row=rows, flags=st.integers(0, 15), lo=st.booleans(),
       no_flush=st.booleans(), remap=st.booleans(), swizzle=st.booleans())
def test_moves_compiled_equal_numpy(op: str, seed: int, cfg: tuple, src_row: int,
                                    dst_row: int, flags: int, lo: bool, no_flush: bool,
                                    remap: bool, swizzle: bool) -> None:
    """MOV* in every format, row count, broadcast and Dst view (incl. UseDst32bLo); the
    combinations the numpy path rejects must be rejected the same way, before any change."""
    mc = fpu.MathConfig(srca_fmt=cfg[0], srcb_fmt=cfg[1], fp32_dst=cfg[2],
                        fp16a_force=cfg[3], zero_flag_disabled_src=no_flush)
    four, bcast_row, bcast_col = bool(flags & 1), bool(flags & 2), bool(flags & 4)

    def run(dst: Dst, srca: SrcRegs, srcb: SrcRegs) -> None:
        if op in ("movd2a", "movd2b"):
            src = srca if op == "movd2a" else srcb
            try:
                getattr(fpu, op)(dst, src, dst_row=dst_row, src_row=src_row, cfg=mc,
                                 four_rows=four, use_dst32b_lo=lo)
            except fpu.FpuError as e:
                dst.bits[0, 0] ^= len(str(e))  # the error (and its text) is part of the state
        elif op == "mova2d":
            fpu.mova2d(dst, srca, src_row=src_row, dst_row=dst_row, cfg=mc,
                       eight_rows=bool(flags & 8), use_dst32b_lo=lo)
        elif op == "movb2d":
            fpu.movb2d(dst, srcb, src_row=src_row, dst_row=dst_row, cfg=mc, four_rows=four,
                       bcast_row_to8=bcast_row, bcast_col0=bcast_col, use_dst32b_lo=lo)
        else:
            fpu.movb2a(srca, srcb, srcb_row=src_row, srca_row=dst_row & 0x3F,
                       four_rows=four)

    _both_paths(run, seed, mc.style in ("fp16", "int8"), remap, swizzle, compare_src=False)


@pytest.mark.parametrize("jit", [True, False])
def test_gmpool_ties_go_to_the_later_row(jit: bool) -> None:
    """Equal keys: the SrcA row wins over Dst (``>=``). Visible with integer "32" -0 in Dst
    against flushed (exponent-0) SrcA values: the result is +0."""
    dst, srca, srcb = Dst(), SrcRegs("SrcA"), SrcRegs("SrcB")
    srcb.cells[0, 0] = 0x10  # non-zero exponents in SrcB: no minus infinity
    srca.cells[0, :16] = 0x40100  # sign set, magnitude 1, exponent 0: flushed to +0
    dst.write32(np.arange(4), np.full((4, 16), 0x80000000))  # int32 -0 (sign-magnitude)
    with _jit(jit):
        fpu.gmpool(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=0,
                   cfg=fpu.MathConfig(srca_fmt=14, srcb_fmt=14, int8_math=True))
    assert (dst.read32(np.arange(4)) == 0).all()


@pytest.mark.parametrize("cfg", CONFIGS[:4] + CONFIGS[8:10])
def test_matmul_sequence_compiled_equal_numpy(cfg: tuple) -> None:
    """A whole 32x32x32 HiFi4 tile (64 dependent MVMULs, Dst starting invalid): the rounding
    of each phase feeds the next, so any difference would compound."""
    mc = fpu.MathConfig(srca_fmt=cfg[0], srcb_fmt=cfg[1], fp32_dst=cfg[2])
    sequence = [(16 * (2 * r + k) + 8 * h, 16 * (2 * k + c), 16 * (2 * r + c) + 8 * h)
                for r in range(2) for c in range(2) for k in range(2) for h in range(2)]

    def run(dst: Dst, srca: SrcRegs, srcb: SrcRegs) -> None:
        dst.invalidate_physical(slice(None))
        for phase in range(4):
            for b_row, a_row, d_row in sequence:
                fpu.mvmul(dst, srca, srcb, srca_row=a_row, srcb_row=b_row, dst_row=d_row,
                          phase=phase, cfg=mc)

    _both_paths(run, 99, mc.style == "fp16", False, False)


@pytest.mark.parametrize("cfg", [CONFIGS[1], CONFIGS[0], CONFIGS[8], CONFIGS[9]])
def test_runs_decode_their_own_operands(cfg: tuple) -> None:
    """A run keeps each decoded SrcA block and SrcB row for the whole run, keyed by rows and
    phase bit: consecutive runs on changed Src banks, with single MVMULs in between (which
    decode into the same work space), and a run whose SrcA rows wrap at 64, give numpy's
    result, MVMUL for MVMUL."""
    mc = fpu.MathConfig(srca_fmt=cfg[0], srcb_fmt=cfg[1], fp32_dst=cfg[2])
    plan = np.array([fpu.run_row(a, b, d, ph, bc) for ph in (0, 1, 3, 2, 1)
                     for a, b, d, bc in ((56, 0, 0, False), (0, 8, 8, False), (56, 16, 0, False),
                                         (8, 21, 17, True), (0, 8, 24, False))], np.int64)

    def run(dst: Dst, srca: SrcRegs, srcb: SrcRegs) -> None:
        rng = np.random.default_rng(3)
        for n in range(3):
            if fpu.USE_JIT:
                assert fpu.mvmul_run(dst, srca, srcb, plan, mc)
            else:
                for base, step, _, a_row, b_row, _, ph in plan:
                    fpu.mvmul(dst, srca, srcb, srca_row=int(a_row), srcb_row=int(b_row),
                              dst_row=int(base), phase=int(ph),
                              cfg=mc, bcast_srcb_row=step == 2)
            fpu.mvmul(dst, srca, srcb, srca_row=16 * n, srcb_row=32, dst_row=40, phase=n,
                      cfg=mc)
            for src in (srca, srcb):  # new operands for the next run
                src.cells[src.matrix_bank] = np.roll(src.cells[src.matrix_bank],
                                                     int(rng.integers(1, 64)), axis=0)

    _both_paths(run, 5, mc.style == "fp16", False, False, compare_src=False)


@pytest.mark.parametrize("op", ["mvmul", "gapool", "elwadd", "elwmul"])
def test_rejected_format_mix_raises_on_the_compiled_path(op: str) -> None:
    dst, srca, srcb = Dst(), SrcRegs("SrcA"), SrcRegs("SrcB")
    before = dst.bits.copy()
    cfg = fpu.MathConfig(srca_fmt=1, srcb_fmt=5)
    kw = dict(srca_row=0, srcb_row=0, dst_row=0, cfg=cfg)
    if op != "elwadd":
        kw["phase"] = 0
    with pytest.raises(fpu.FpuError, match="cannot be combined"):
        getattr(fpu, op)(dst, srca, srcb, **kw)
    assert (dst.bits == before).all() and dst.valid.all()


def test_int8_math_stays_on_numpy_and_is_exact() -> None:
    """Integer "8" has no compiled kernel; it must still work with the compiled path on."""
    rng = np.random.default_rng(3)
    a = rng.integers(-255, 256, (16, 16))
    b = rng.integers(-1023, 1024, (8, 16))
    dst, srca, srcb = Dst(), SrcRegs("SrcA"), SrcRegs("SrcB")
    srca.load(0, a, "int8")
    srcb.load(0, b, "int8")
    dst.invalidate_physical(slice(None))
    cfg = fpu.MathConfig(srca_fmt=14, srcb_fmt=14, int8_math=True)
    for phase in range(4):
        fpu.mvmul(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=0, phase=phase, cfg=cfg)
    assert (dst.read("int32", np.arange(8)) == b @ a).all()


# ---- mvmul_batch: the compiled twin of mvmul_kernel ----------------------------------------


def _logical(rng: np.random.Generator, shape: tuple[int, ...], fmt: int, fp16: bool
             ) -> np.ndarray:
    return fpu.mask_operand(F.src_to_logical(_cells(rng, shape, fp16)), fmt, fp16)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cfg=st.sampled_from(CONFIGS), phase=st.integers(0, 3),
       rows=st.sampled_from([1, 4, 8, 16]), batch=st.sampled_from([(), (3,), (2, 5)]))
def test_mvmul_batch_equals_mvmul_kernel(seed: int, cfg: tuple, phase: int, rows: int,
                                         batch: tuple[int, ...]) -> None:
    mc = fpu.MathConfig(srca_fmt=cfg[0], srcb_fmt=cfg[1], fp32_dst=cfg[2],
                        fp16a_force=cfg[3])
    fp16 = mc.style == "fp16"
    rng = np.random.default_rng(seed)
    a = _logical(rng, batch + (16, 16), cfg[0], fp16)
    b = _logical(rng, batch + (rows, 16), cfg[1], fp16)
    b[..., : rows // 2, :8] &= 0x403FF  # zero half-rows: all-zero product groups
    b[..., rows - 1, :] &= 0x403FF  # a zero row: both groups zero
    frame = fpu.dst_to_frame(_dst_bits(rng)[: int(np.prod(batch + (rows,)))]
                             .reshape(batch + (rows, 16)), mc)
    args = (a, b, frame, phase, mc.use_dst32b, mc.exp8)
    got = fpu.mvmul_batch(*args)
    want = fpu.mvmul_kernel(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    bad = np.argwhere(got != want)
    assert bad.size == 0, f"{len(bad)} differ; first {bad[0].tolist()}"


def test_mvmul_batch_broadcasts_and_rejects_bad_shapes() -> None:
    rng = np.random.default_rng(5)
    a = _logical(rng, (16, 16), 5, False)
    b = _logical(rng, (4, 8, 16), 5, False)
    dst = np.zeros((8, 16), dtype=np.int64)
    got = fpu.mvmul_batch(a, b, dst, 0, True, True)
    assert got.shape == (4, 8, 16)
    assert (got == fpu.mvmul_kernel(a, b, dst, 0, True, True)).all()
    with pytest.raises(fpu.FpuError, match="mvmul_batch wants"):
        fpu.mvmul_batch(a[:8], b, dst, 0, True, True)


@pytest.mark.parametrize("cfg_name", ["bf16_fp32dst", "bf16_bf16dst", "fp16_fp16dst",
                                      "tf32_fp32dst"])
def test_mvmul_batch_reproduces_the_oracle(cfg_name: str) -> None:
    """Every MVMUL case of the official simulator's vectors, through the compiled batch."""
    with np.load(refdata("tensix", "oracle", "fpu", f"mvmul_{cfg_name}.npz")) as f:
        d = {k: f[k] for k in f.files}
    p = d["params"]
    mc = fpu.MathConfig(srca_fmt=int(p[0, 1]), srcb_fmt=int(p[0, 2]), fp32_dst=bool(p[0, 3]))
    fp16 = mc.style == "fp16"
    a = fpu.mask_operand(d["srca"], mc.srca_fmt, fp16)
    b = fpu.mask_operand(d["srcb"], mc.srcb_fmt, fp16)
    prior = np.where(p[:, 6].astype(bool)[:, None, None],
                     fpu.logical_dst_to_frame(d["dst_in"], mc), 0)
    out = np.full(d["dst_out"].shape, 0xDEADBEEF, dtype=np.uint32)
    for phase in range(4):
        sel = p[:, 4] == phase
        r = fpu.mvmul_batch(a[sel], b[sel], prior[sel], phase, mc.use_dst32b, mc.exp8)
        out[sel] = fpu.frame_to_logical_dst(r, mc)
    bad = np.argwhere(out != d["dst_out"])
    assert bad.size == 0, f"{len(bad)} of {out.size} datums differ; first {bad[0].tolist()}"


def test_without_numba_the_numpy_path_runs() -> None:
    """A process where ``import numba`` fails still emulates (on the numpy path)."""
    code = (
        "import sys; sys.modules['numba'] = None\n"
        "import numpy as np\n"
        "from isaforge.tensix.machine import fpu\n"
        "fpu.JIT_AFTER = 0\n"
        "from isaforge.tensix.machine.regfiles import Dst, SrcRegs\n"
        "d, a, b = Dst(), SrcRegs(), SrcRegs()\n"
        "a.load(0, np.eye(16), 'bf16'); b.load(0, np.full((8, 16), 2.0), 'bf16')\n"
        "d.invalidate_physical(slice(None))\n"
        "fpu.mvmul(d, a, b, srca_row=0, srcb_row=0, dst_row=0, phase=0, "
        "cfg=fpu.MathConfig(fp32_dst=True))\n"
        "assert fpu._jit() is None\n"
        "print(d.read('fp32', np.arange(8)).sum())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(8 * 16 * 2.0)


@pytest.mark.parametrize("jit", [True, False])
def test_all_zero_groups_still_set_the_exponent(jit: bool) -> None:
    """FP16 into an FP32 Dst (adj = +97 in phase 0): a product with a zero operand votes
    with exponent 97 (oracle README, facts 3 and 5), so with SrcB all zero a small Dst value
    (exponent 95) is aligned to exponent 97 and loses its two low bits (rounded half up)."""
    dst, srca, srcb = Dst(), SrcRegs("SrcA"), SrcRegs("SrcB")
    srca.load(0, np.full((16, 16), 1.5), "fp16")
    prior = np.full((8, 16), 0x2F800001, dtype=np.uint32)  # exponent 95, mantissa ...01
    prior[:, 1] = 0x2F800003  # ...11: rounds up to ...100
    dst.write("fp32", prior.view(np.float32))
    with _jit(jit):
        fpu.mvmul(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=0, phase=0,
                  cfg=fpu.MathConfig(srca_fmt=1, srcb_fmt=1, fp32_dst=True))
    got = F.dst32_to_fp32(dst.read32(np.arange(8)))
    assert (got[:, 0] == 0x2F800000).all() and (got[:, 2:] == 0x2F800000).all()
    assert (got[:, 1] == 0x2F800004).all()


def test_kernels_load_after_jit_after_calls() -> None:
    """Short runs stay on numpy: the kernels are loaded at the (JIT_AFTER + 1)-th call; a
    batch loads them at once."""
    code = (
        "import numpy as np\n"
        "from isaforge.tensix.machine import fpu, fpu_jit\n"
        "from isaforge.tensix.machine.regfiles import Dst, SrcRegs\n"
        "fpu.JIT_AFTER = 2\n"
        "d, a, b = Dst(), SrcRegs(), SrcRegs()\n"
        "cfg = fpu.MathConfig(fp32_dst=True)\n"
        "for n in (1, 2, 3):\n"
        "    fpu.mvmul(d, a, b, srca_row=0, srcb_row=0, dst_row=0, phase=0, cfg=cfg)\n"
        "    assert fpu_jit.is_loaded() == (n == 3), n\n"
        "assert fpu_jit.load() is not None and fpu._jit() is fpu_jit.load()\n"
        "import importlib\n"
        "fpu_jit = importlib.reload(fpu_jit)\n"
        "fpu = importlib.reload(fpu)\n"
        "assert not fpu_jit.is_loaded()\n"
        "z = np.zeros((1, 8, 16), np.int64)\n"
        "fpu.mvmul_batch(np.zeros((1, 16, 16), np.int64), z, z, 0, True, True)\n"
        "assert fpu_jit.is_loaded() and fpu_jit.load() is not None\n"
        "print('ok')\n")
    _in_new_process(code)


def test_kernels_load_at_once_when_numba_is_imported() -> None:
    """With numba already imported (a tile's RISC-V fast path imports it) the first call
    loads the kernels (``fpu.JIT_EARLY``); switched off, the JIT_AFTER threshold holds; the
    MOVA2D result is the same either way."""
    code = (
        "import sys\n"
        "import numpy as np\n"
        "import numba\n"
        "from isaforge.tensix.machine import fpu, fpu_jit\n"
        "from isaforge.tensix.machine.regfiles import Dst, SrcRegs\n"
        "fpu.JIT_AFTER = 5\n"
        "early = sys.argv[1] == '1'\n"
        "fpu.JIT_EARLY = early\n"
        "d, a = Dst(), SrcRegs()\n"
        "a.cells[:] = np.random.default_rng(3).integers(0, 1 << 19, a.cells.shape)\n"
        "cfg = fpu.MathConfig(srca_fmt=5, fp32_dst=True)\n"
        "fpu.mova2d(d, a, src_row=8, dst_row=16, cfg=cfg, eight_rows=True)\n"
        "assert fpu_jit.is_loaded() == early, early\n"
        "print(d.bits.sum(dtype=np.int64), int(d.valid.sum()))\n")
    outs = []
    for early in ("1", "0"):
        out = subprocess.run([sys.executable, "-c", code, early], capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        outs.append(out.stdout)
    assert outs[0] == outs[1] and outs[0].strip()


def test_plain_python_lane_functions_equal_numpy() -> None:
    """Before :func:`fpu_jit.load` the MVMUL kernels are plain Python: the ``_v_*`` lane
    functions (the readable twins of the vector intrinsics) compute what the numpy reference
    does, block for block (run in a process that never loads numba's versions)."""
    code = (
        "import numpy as np\n"
        "from isaforge.tensix.machine import fpu, fpu_jit\n"
        "rng = np.random.default_rng(5)\n"
        "a = rng.integers(0, 1 << 19, (2, 16, 16)) & 0x7FFF8\n"
        "a[0, 3] = 0\n"
        "b = rng.integers(0, 1 << 19, (2, 8, 16)) & 0x7FFF8\n"
        "d = rng.integers(0, 1 << 32, (2, 8, 16))\n"
        "for phase, fp32, exp8 in ((0, True, False), (3, False, True), (1, False, False)):\n"
        "    out = np.empty_like(d)\n"
        "    ws = np.zeros((6, 16, 16), np.int32)\n"
        "    adj = fpu.exp_adjust(fp32, phase, exp8)\n"
        "    fpu_jit._k_mvmul_batch(a, b, d, out, phase, adj, fp32, exp8, ws)\n"
        "    ref = fpu.mvmul_kernel(a, b, d, phase, fp32, exp8)\n"
        "    assert (out == ref).all(), (phase, fp32, exp8)\n"
        "assert not fpu_jit.is_loaded()\n"
        "print('ok')\n")
    _in_new_process(code)


def test_plain_python_row_function_equals_numpy() -> None:
    """The plain-Python MVMUL row (``_v_mvmul_row``: the two groups, Dst read, accumulate and
    write, which the intrinsic fuses) gives numpy's result in the three Dst modes (FP32,
    BF16 and FP16 storage) and for a row that was invalid (read as 0)."""
    code = (
        "import numpy as np\n"
        "from isaforge.tensix.machine import fpu, fpu_jit\n"
        "from isaforge.tensix.machine.regfiles import Dst, SrcRegs\n"
        "fpu.USE_JIT = False\n"
        "rng = np.random.default_rng(7)\n"
        "for fmt, fp32, style in ((5, True, 'bf16'), (5, False, 'bf16'), (1, False, 'fp16'),\n"
        "                         (1, True, 'fp16')):\n"
        "    cfg = fpu.MathConfig(srca_fmt=fmt, srcb_fmt=fmt, fp32_dst=fp32)\n"
        "    fast = fpu._fast_cfg(cfg)\n"
        "    a, b = SrcRegs(), SrcRegs()\n"
        "    for s in (a, b):\n"
        "        v = rng.standard_normal((64, 16)) * np.exp2(rng.integers(-6, 6, (64, 16)))\n"
        "        v[rng.random((64, 16)) < 0.1] = 0\n"
        "        s.load(0, v.astype(np.float32), style)\n"
        "    d0 = Dst()\n"
        "    d0.bits[:] = rng.integers(0, 1 << 16, d0.bits.shape)\n"
        "    d0.valid[:] = rng.random(d0.valid.shape) < 0.8\n"
        "    for phase in range(4):\n"
        "        ref, got = Dst(), Dst()\n"
        "        for d in (ref, got):\n"
        "            d.bits[:], d.valid[:] = d0.bits, d0.valid\n"
        "        fpu.mvmul(ref, a, b, srca_row=8, srcb_row=16, dst_row=24, phase=phase, cfg=cfg)\n"
        "        ws, wrap = np.zeros_like(fpu_jit.WS), np.zeros((16, 16), np.uint32)\n"
        "        fpu_jit._k_mvmul(got.bits, got.valid, got.phys_table(fast.is32), fast.mode,\n"
        "                         24, 1, 8, a.cells, 0, 8, b.cells, 0, 16, 1, fast.a_mask,\n"
        "                         fast.b_mask, phase, fast.adj[phase], fast.is32, fast.exp8,\n"
        "                         ws, wrap)\n"
        "        assert (got.bits == ref.bits).all() and (got.valid == ref.valid).all()\n"
        "assert not fpu_jit.is_loaded()\n"
        "print('ok')\n")
    _in_new_process(code)


def test_kernels_without_avx2_equal_numpy(tmp_path: os.PathLike[str]) -> None:
    """Compiled for a CPU without AVX2 (numba told a generic x86-64; its own cache), the group
    pass is plain LLVM (no PSHUFB / PMULHRSW): MVMUL runs and single MVMULs still give
    numpy's result, with FP32, BF16 and FP16 Dst."""
    code = (
        "import numpy as np\n"
        "from isaforge.tensix.machine import fpu, fpu_jit\n"
        "from isaforge.tensix.machine.regfiles import Dst, SrcRegs\n"
        "assert not fpu_jit._x86_avx2()\n"
        "fpu.JIT_AFTER = 0\n"
        "assert fpu_jit.load() is not None\n"
        "rng = np.random.default_rng(11)\n"
        "plan = np.array([fpu.run_row(a, b, d, ph, False) for ph in range(4)\n"
        "                 for a, b, d in ((0, 0, 0), (16, 8, 8), (56, 16, 16))], np.int64)\n"
        "for fmt, fp32, style in ((5, True, 'bf16'), (5, False, 'bf16'), (1, False, 'fp16'),\n"
        "                         (1, True, 'fp16')):\n"
        "    cfg = fpu.MathConfig(srca_fmt=fmt, srcb_fmt=fmt, fp32_dst=fp32)\n"
        "    a, b = SrcRegs(), SrcRegs()\n"
        "    for s in (a, b):\n"
        "        v = rng.standard_normal((64, 16)) * np.exp2(rng.integers(-9, 9, (64, 16)))\n"
        "        v[rng.random((64, 16)) < 0.1] = 0\n"
        "        s.load(0, v.astype(np.float32), style)\n"
        "    d0 = Dst()\n"
        "    d0.bits[:] = rng.integers(0, 1 << 16, d0.bits.shape)\n"
        "    d0.valid[:] = rng.random(d0.valid.shape) < 0.8\n"
        "    out = []\n"
        "    for how in ('run', 'one', 'numpy'):\n"
        "        d = Dst()\n"
        "        d.bits[:], d.valid[:] = d0.bits, d0.valid\n"
        "        fpu.USE_JIT = how != 'numpy'\n"
        "        if how == 'run':\n"
        "            assert fpu.mvmul_run(d, a, b, plan, cfg)\n"
        "        else:\n"
        "            for base, _, _, ar, br, _, ph in plan:\n"
        "                fpu.mvmul(d, a, b, srca_row=int(ar), srcb_row=int(br),\n"
        "                          dst_row=int(base), phase=int(ph), cfg=cfg)\n"
        "        out.append((d.bits.copy(), d.valid.copy()))\n"
        "    for bits, valid in out[:2]:\n"
        "        assert (bits == out[2][0]).all() and (valid == out[2][1]).all(), (fmt, fp32)\n"
        "print('ok')\n")
    env = dict(os.environ, NUMBA_CPU_NAME="generic", NUMBA_CPU_FEATURES="",
               NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def _in_new_process(code: str) -> None:
    """Run ``code`` in a fresh Python (numba's kernels not loaded); it prints ``ok``."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


_lanes = st.lists(st.integers(-(1 << 15) + 1, (1 << 15) - 1) | st.sampled_from(
    [0, 1, -1, (1 << 15) - 1, -(1 << 15) + 1, 1 << 11, (1 << 11) - 1, 4095, -4096]),
    min_size=32, max_size=32)


@settings(max_examples=200, deadline=None)
@given(tot=_lanes, top=st.lists(st.integers(-40, 300), min_size=32, max_size=32),
       frames=st.lists(st.integers(0, 0xFFFFFFFF) | st.sampled_from(
           [0, 0x3F7FFFFF, 0xBF7FFFFF, 0x7F7FFFFF, 0x00800000, 0x80800000, 0x4B7FFFFF]),
           min_size=16, max_size=16),
       adj=st.sampled_from([-127, -139, 97, 85, -15, -27]),
       mode=st.sampled_from([(True, False), (False, True), (False, False)]))
def test_vector_accumulate_equals_scalar(tot: list[int], top: list[int], frames: list[int],
                                         adj: int, mode: tuple[bool, bool]) -> None:
    """The 16-lane accumulate (the LLVM intrinsic) equals the scalar ``_k_accumulate`` lane
    for lane, on group sums up to the largest 8 products give and Dst values at the edges."""
    _check_accumulate(tot, top, frames, adj, mode)


def test_vector_accumulate_bit_length_where_a_float_rounds_up() -> None:
    """The intrinsic takes a sum's bit length from its conversion to float32, which rounds
    25+ significant bits up to the next power of two: sums where it does, Dst 0x4B7FFFFF
    (mantissa all ones, exponent 150) plus a group of 2**24 at the same exponent is
    0x1FFFFFF, 25 ones (and the same negated, and one below)."""
    top = [150 - 97] * 3 + [0] * 13 + [-97] * 16  # group 1 has exponent 0: left out
    tot = [2048, -2048, 2047] + [0] * 29
    frames = [0x4B7FFFFF, 0xCB7FFFFF, 0x4B7FFFFF] + [0x3F800000] * 13
    _check_accumulate(tot, top, frames, 97, (True, False))
    _check_accumulate(tot, top, frames, 97, (False, True))


def _check_accumulate(tot: list[int], top: list[int], frames: list[int], adj: int,
                      mode: tuple[bool, bool]) -> None:
    from isaforge.tensix.machine import fpu_jit
    acc = _compiled("accumulate", lambda: lambda t, e, f, a, fp32, e8: fpu_jit._v_accumulate(
        t, e, f, 0, a, fp32, e8))
    t = np.array(tot, np.int32).reshape(2, 16)
    e = np.array(top, np.int32).reshape(2, 16)
    got = np.array(frames, np.uint32).astype(np.int64)
    acc(t, e, got, adj, *mode)
    if mode == (True, False):  # the FP32-Dst special case: flags known when compiling
        acc32 = _compiled("accumulate_fp32", lambda: lambda t, e, f, a: fpu_jit._v_accumulate(
            t, e, f, 0, a, True, False))
        got32 = np.array(frames, np.uint32).astype(np.int64)
        acc32(t, e, got32, adj)
        assert (got32 == got).all(), np.argwhere(got32 != got)[:4].tolist()
    if not mode[0]:  # the 16-bit-Dst special cases (BF16, FP16), likewise
        acc16 = _compiled("accumulate_bf16", lambda: lambda t, e, f, a: fpu_jit._v_accumulate(
            t, e, f, 0, a, False, True)) if mode[1] else _compiled(
            "accumulate_fp16", lambda: lambda t, e, f, a: fpu_jit._v_accumulate(
                t, e, f, 0, a, False, False))
        got16 = np.array(frames, np.uint32).astype(np.int64)
        acc16(t, e, got16, adj)
        assert (got16 == got).all(), np.argwhere(got16 != got)[:4].tolist()
    for c in range(16):
        t0, t1 = int(t[0, c]), int(t[1, c])
        e0, e1 = int(e[0, c]) + adj, int(e[1, c]) + adj
        if e0 <= 0:
            e0, t0 = 0, 0
        if e1 <= 0:
            e1, t1 = 0, 0
        want = fpu_jit._k_accumulate(int(t0 < 0), e0, abs(t0) << 13, int(t1 < 0), e1,
                                     abs(t1) << 13, frames[c], *mode)
        assert got[c] == want, (c, hex(int(got[c])), hex(want))


_COMPILED: dict[str, Callable[..., object]] = {}


def _compiled(name: str, make: Callable[[], Callable[..., object]]) -> Callable[..., object]:
    """A test wrapper around the intrinsics, compiled once per session."""
    if name not in _COMPILED:
        import numba  # a dependency

        from isaforge.tensix.machine import fpu_jit
        assert fpu_jit.load() is not None
        _COMPILED[name] = numba.njit(make())
    return _COMPILED[name]


def _group_both(ma: np.ndarray, ea: np.ndarray, mb: np.ndarray, eb: np.ndarray, zx: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """Both groups of B row 0 (slices ``mb``, exponents ``eb``) through the intrinsic (int16
    work arrays, as the kernels pass them) and through its plain-Python twin: ((tot, top)
    intrinsic, (tot, top) twin)."""
    from isaforge.tensix.machine import fpu_jit
    group = _compiled("group", lambda: lambda ma, ea, mb, eb, ab, zx, tot, top: (
        fpu_jit._v_group(ma, ea, mb, eb, ab, 0, 0, zx, tot, top),
        fpu_jit._v_group(ma, ea, mb, eb, ab, 0, 1, zx, tot, top)))
    ws = np.zeros((6, 16, 16), np.int16)  # as _v_decode keeps the operands:
    ws[0], ws[1], ws[2] = ma, ea, -ma  # SrcA: slices, exponents, negated slices
    ws[3, 0] = 2 * np.abs(mb) + 256  # SrcB: PMADDUBSW's bytes 2|slice| and 1,
    ws[4, 0] = [fpu_jit._wrap16(int(e) + fpu_jit._EB_BIAS) for e in eb]  # biased exponents,
    ws[5, 0] = 16 * np.arange(16) + np.where(mb < 0, 512, 0)  # where the SrcA slices are
    got = np.zeros((2, 2, 16), np.int16)
    group(ws[0], ws[1], ws[3], ws[4], ws[5], zx, got[0], got[1])
    want = np.zeros((2, 2, 16), np.int64)
    for g in (0, 1):
        fpu_jit.TWINS["_v_group"](ws[0], ws[1], ws[3], ws[4], ws[5], 0, g, zx, want[0],
                                  want[1])
    return got, want


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), base=st.integers(1, 255), spread=st.integers(0, 24),
       zx=st.sampled_from([0, 127, 139, 15, 27]))
def test_vector_group_equals_twin(seed: int, base: int, spread: int, zx: int) -> None:
    """The 16-bit group pass (PMULHRSW rounding, biased unsigned exponent arithmetic) equals its
    plain-Python twin on slices up to the largest (+-31 x +-127), exponents a few apart (d
    around 13..15 included), zero operands on either side or both (eA + eB = -2**15) and
    whole groups of zeros (the top is then ``zx``)."""
    from isaforge.tensix.machine.fpu_jit import _ZE
    rng = np.random.default_rng(seed)
    ea = np.clip(base + rng.integers(-spread, spread + 1, (16, 16)), 1, 255)
    eb = np.clip(base + rng.integers(-spread, spread + 1, 16), 1, 255)
    ma = np.where(rng.random((16, 16)) < 0.5, rng.choice([31, -31, 16, -16, 0, 1], (16, 16)),
                  rng.integers(-31, 32, (16, 16)))
    mb = np.where(rng.random(16) < 0.5, rng.choice([127, -127, 64, -64, 0, 8], 16),
                  rng.integers(-127, 128, 16))
    za, zb = rng.random((16, 16)) < 0.2, rng.random(16) < 0.2
    if rng.random() < 0.3:
        zb[:8] = True  # a whole group of zero B operands
    if rng.random() < 0.3:
        za[8:, :4] = True
    ea[za], ma[za], eb[zb], mb[zb] = _ZE, 0, _ZE, 0
    got, want = _group_both(ma, ea, mb, eb, zx)
    assert (got == want).all(), np.argwhere(got != want)[:4].tolist()


@pytest.mark.parametrize("d", [0, 1, 12, 13, 14, 15, 16, 29, 30, 200, 16384 + 300])
@pytest.mark.parametrize("sign", [1, -1])
def test_vector_group_rounds_at_and_beyond_d14(d: int, sign: int) -> None:
    """Group sums where the largest products (31 x 127 and 31 x -127, x = 2p - (p < 0) at its
    extreme) sit d exponent steps below the group's top, d from 0 through 14 (where
    PMULHRSW's multiplier reaches 1) to far beyond, and for the largest d a zero operand:
    each term is (2p + 2**d - (p < 0)) >> (d + 1), worked out here per product."""
    from isaforge.tensix.machine.fpu_jit import _ZE
    ma = np.full((16, 16), 31)
    ea = np.full((16, 16), 200)
    mb = np.array([1] + [sign * 127] * 7 + [-1] + [127 * -sign] * 7)
    eb = np.full(16, 100)
    eb[0] = eb[8] = 255  # product 0 of each group sets the top: 455
    low = 455 - d - 200  # eB giving eA + eB = top - d
    if low < -20000:
        eb[1:8], eb[9:16] = _ZE, _ZE  # zero operand (slice 0 in hardware; not here: extreme)
    else:
        eb[1:8] = eb[9:16] = low
    got, want = _group_both(ma, ea, mb, eb, 0)
    for g in (0, 1):
        s = 0
        for j in range(8):
            i = 8 * g + j
            p = int(ma[i, 0]) * int(mb[i])
            dd = min(455 - 200 - int(eb[i]), 29)
            s += ((p << 1) + (1 << dd) - (p < 0)) >> (dd + 1)
        assert (want[0, g] == s).all() and (want[1, g] == 455).all()
    assert (got == want).all(), (got[:, :, 0].tolist(), want[:, :, 0].tolist())


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), low=st.booleans(), for_a=st.booleans(),
       neg=st.sampled_from([512, 1024, 4096]))
def test_vector_decode_equals_twin(seed: int, low: bool, for_a: bool, neg: int) -> None:
    """The decode intrinsic keeps the operands as its plain-Python twin does (what the group
    pass reads: SrcA's slices and their negations, SrcB's PMADDUBSW words and the offsets
    that pick the negated SrcA slices for a negative operand), on Src cells with zero
    exponents, negative operands whose slice of the phase is 0 (a "-0" that must not pick the
    negated slices) and the largest slices."""
    from isaforge.tensix.machine import fpu_jit
    decode = _compiled("decode", lambda: lambda src, low, for_a, out, neg: fpu_jit._v_decode(
        src, 0, 0x7FFFF, True, low, for_a, out, 0, 16, 32, neg))
    rng = np.random.default_rng(seed)
    sign = rng.integers(0, 2, 16) << 18
    man = rng.integers(0, 1 << 10, 16)
    man[:4] = (0x3FF, 0, 0x3FF, 0)  # the largest slices, and slices of 0 in either phase
    exp = rng.integers(0, 256, 16)
    exp[4:6] = (0, 255)
    cells = (sign | (man << 8) | exp).astype(np.uint32)
    got, want = np.zeros(48, np.int16), np.zeros(48, np.int16)
    decode(cells, low, for_a, got, neg)
    fpu_jit.TWINS["_v_decode"](cells, 0, 0x7FFFF, True, low, for_a, want, 0, 16, 32, neg)
    assert (got == want).all(), (got.tolist(), want.tolist())
    if not for_a:  # the offsets pick the negated SrcA slices exactly for negative operands
        m = np.where(exp == 0, 0, np.where(sign != 0, -1, 1) * ((want[:16] & 0xFF) // 2))
        assert (want[32:] == 16 * np.arange(16) + np.where(m < 0, neg, 0)).all()


@pytest.mark.parametrize("exp8", [True, False])
@pytest.mark.parametrize("d", [12, 13, 14, 15, 16])
def test_vector_accumulate_16bit_rounds_twice(d: int, exp8: bool) -> None:
    """With a 16-bit Dst each term is aligned (rounded) and then rounded again to 10 bits below
    bit 23; the BF16 and FP16 special cases do both in one step, ``(q + 8193) >> 14``. Where
    the two roundings meet: group sums d = 12..16 exponent steps below the other group's exponent
    (``q`` = 8191 modulo 16384 from d = 14 on; that group's sum 0, Dst 0, so the one term is
    the result), and Dst mantissas 12 steps below a group's exponent (``q`` = 8191)."""
    adj = 97
    sums = [8191, 8192, 8190, -8193, -8192, -8191, 16383, 16382, -16385, -16386, 24575,
            -24577, 32767, -32767, 4095, 1]
    top = [150 - adj] * 16 + [150 + d - adj] * 16
    _check_accumulate(sums + [0] * 16, top, [0] * 16, adj, (False, exp8))
    top = [150 + 12 - adj] * 16 + [-adj] * 16  # Dst 12 steps below group 0 (sum 0)
    frames = [(150 << 23) | m for m in range(0x7FF800 - d, 0x800000, 0x80)]
    frames[8:] = [f | 1 << 31 for f in frames[8:]]
    _check_accumulate([0] * 32, top, frames, adj, (False, exp8))
