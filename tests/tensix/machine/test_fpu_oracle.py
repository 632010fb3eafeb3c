"""MVMUL / ELWADD / ELWSUB / ELWMUL against every case of the official simulator's oracle
vectors (refdata/tensix/oracle/fpu), bit for bit: once through the vectorised kernels on the
logical values (all cases of a file in one call per fidelity phase), once through the
instructions on the register files, comparing Dst's storage layout (``dst_out_raw``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from isaforge.tensix.machine import formats as F
from isaforge.tensix.machine import fpu
from isaforge.tensix.machine.regfiles import Dst, SrcClient, SrcRegs
from tests.refdata import npz_files, refdata

OPS = {0: "mvmul", 1: "elwadd", 2: "elwsub", 3: "elwmul"}


FILES = npz_files("tensix", "oracle", "fpu", placeholder="fpu_summary.json")


def _load(name: str) -> dict[str, np.ndarray]:
    with np.load(refdata("tensix", "oracle", "fpu", name)) as d:
        return {k: d[k] for k in d.files}


def _cfg(params: np.ndarray) -> fpu.MathConfig:
    ops = set(params[:, 0].tolist())
    fmts = {tuple(r) for r in params[:, 1:4].tolist()}
    assert len(ops) == 1 and len(fmts) == 1, "one op and one configuration per file"
    a, b, fp32 = fmts.pop()
    return fpu.MathConfig(srca_fmt=a, srcb_fmt=b, fp32_dst=bool(fp32))


@pytest.mark.parametrize("name", FILES)
def test_kernels_match_every_oracle_case(name: str) -> None:
    d = _load(name)
    p = d["params"]
    cfg = _cfg(p)
    op = OPS[int(p[0, 0])]
    fp16 = cfg.style == "fp16"
    a = fpu.mask_operand(d["srca"], cfg.srca_fmt, fp16)
    b = fpu.mask_operand(d["srcb"], cfg.srcb_fmt, fp16)
    if op == "elwsub":
        b = b ^ (1 << 18)
    valid = p[:, 6].astype(bool)[:, None, None]
    prior = np.where(valid, fpu.logical_dst_to_frame(d["dst_in"], cfg), 0)
    out = np.full(d["dst_out"].shape, 0xDEADBEEF, dtype=np.uint32)
    for phase in range(4):
        sel = p[:, 4] == phase
        if not sel.any():
            continue
        if op == "mvmul":
            r = fpu.mvmul_kernel(a[sel], b[sel], prior[sel], phase, cfg.fp32_dst, cfg.exp8)
        elif op == "elwmul":
            r = fpu.elwmul_kernel(a[sel], b[sel], prior[sel], phase, cfg.fp32_dst, cfg.exp8)
        else:
            acc = p[sel, 5].astype(bool)[:, None, None]
            r = np.where(acc,
                         fpu.elwadd_kernel(a[sel], b[sel], prior[sel], True, cfg.fp32_dst,
                                           cfg.exp8),
                         fpu.elwadd_kernel(a[sel], b[sel], prior[sel], False, cfg.fp32_dst,
                                           cfg.exp8))
        out[sel] = fpu.frame_to_logical_dst(r, cfg)
    bad = np.argwhere(out != d["dst_out"])
    assert bad.size == 0, (
        f"{len(bad)} of {out.size} datums differ; first at case/row/col {bad[0].tolist()}: "
        f"got {out[tuple(bad[0])]:#x}, oracle {d['dst_out'][tuple(bad[0])]:#x}")


@pytest.mark.parametrize("name", FILES)
def test_instructions_on_register_files_match_raw_dst(name: str) -> None:
    d = _load(name)
    p = d["params"]
    cfg = _cfg(p)
    op = OPS[int(p[0, 0])]
    is32 = cfg.use_dst32b
    dst, srca, srcb = Dst(), SrcRegs("SrcA"), SrcRegs("SrcB")
    for s in (srca, srcb):
        s.allowed_client = [SrcClient.MATRIX_UNIT] * 2
    a_cells = F.src_from_logical(d["srca"])
    b_cells = F.src_from_logical(d["srcb"])
    got = np.zeros_like(d["dst_out_raw"])
    rows = np.arange(8)
    for n in range(len(p)):
        srca.write(0, np.arange(a_cells.shape[1]), a_cells[n])
        srcb.write(0, rows, b_cells[n])
        if is32:
            dst.write32(rows, d["dst_in_raw"][n])
        else:
            dst.write16(rows, d["dst_in_raw"][n])
        dst.valid[:] = bool(p[n, 6])
        phase, acc = int(p[n, 4]), bool(p[n, 5])
        kw = dict(srca_row=0, srcb_row=0, dst_row=0, cfg=cfg)
        if op == "mvmul":
            fpu.mvmul(dst, srca, srcb, phase=phase, **kw)
        elif op == "elwmul":
            fpu.elwmul(dst, srca, srcb, phase=phase, **kw)
        elif op == "elwadd":
            fpu.elwadd(dst, srca, srcb, accumulate=acc, **kw)
        else:
            fpu.elwsub(dst, srca, srcb, accumulate=acc, **kw)
        got[n] = dst.read32(rows) if is32 else dst.read16(rows)
        assert dst.row_valid(rows, is32).all(), "written rows become valid"
    bad = np.argwhere(got != d["dst_out_raw"])
    assert bad.size == 0, (
        f"{len(bad)} raw datums differ; first at {bad[0].tolist()}: "
        f"got {got[tuple(bad[0])]:#x}, oracle {d['dst_out_raw'][tuple(bad[0])]:#x}")


def test_present_files_agree_with_the_summary() -> None:
    """What is present is what the summary describes: every .npz file present is listed in
    fpu_summary.json with its number of cases, and every listed name is an op/configuration
    these tests know how to run. Files the summary lists but the folder lacks are not an
    error (the folder may hold a subset); those present are all checked above, whatever they
    are, so a new file of the same layout needs no code change."""
    folder = refdata("tensix", "oracle", "fpu")
    summary = json.loads((folder / "fpu_summary.json").read_text())
    cfgs = ("bf16_fp32dst", "bf16_bf16dst", "fp16_fp16dst", "tf32_fp32dst", "fp16_fp32dst",
            "fp32src_fp32dst")
    for name in summary:
        op, _, cfg = name.removesuffix(".npz").partition("_")
        assert op in OPS.values() and cfg in cfgs, f"summary names an unknown case: {name}"
    present = sorted(f.name for f in folder.glob("*.npz"))
    assert present, "no oracle file present"
    for name in present:
        assert name in summary, f"{name} is not in fpu_summary.json"
        with np.load(folder / name) as d:
            assert len(d["params"]) == summary[name], name


@pytest.mark.parametrize("op", ["mvmul", "elwadd", "elwsub", "elwmul"])
def test_fp32_src_format_ignores_low_bits(op: str) -> None:
    """Src format FP32 (0) is BF16 math: random low 3 mantissa bits change nothing, so the
    bf16_fp32dst oracle outputs hold for format 0 with garbage in those bits."""
    d = _load(f"{op}_bf16_fp32dst.npz")
    p = d["params"]
    rng = np.random.default_rng(7)
    a = d["srca"] | rng.integers(0, 8, d["srca"].shape).astype(np.uint32)
    b = d["srcb"] | rng.integers(0, 8, d["srcb"].shape).astype(np.uint32)
    a = fpu.mask_operand(a, F.DataFormat.FLOAT32, False)
    b = fpu.mask_operand(b, F.DataFormat.FLOAT32, False)
    if op == "elwsub":
        b = b ^ (1 << 18)
    prior = np.where(p[:, 6].astype(bool)[:, None, None], d["dst_in"], 0)
    out = np.zeros_like(d["dst_out"])
    for phase in range(4):
        sel = p[:, 4] == phase
        if not sel.any():
            continue
        if op == "mvmul":
            r = fpu.mvmul_kernel(a[sel], b[sel], prior[sel], phase, True, True)
        elif op == "elwmul":
            r = fpu.elwmul_kernel(a[sel], b[sel], prior[sel], phase, True, True)
        else:
            acc = p[sel, 5].astype(bool)[:, None, None]
            r = np.where(acc, fpu.elwadd_kernel(a[sel], b[sel], prior[sel], True, True, True),
                         fpu.elwadd_kernel(a[sel], b[sel], prior[sel], False, True, True))
        out[sel] = r
    assert (out == d["dst_out"]).all()


def test_raw_and_logical_oracle_layouts_agree_with_formats() -> None:
    """The oracle's two Dst encodings are related by our storage conversions."""
    for name, conv in (("mvmul_bf16_fp32dst.npz", F.fp32_to_dst32),
                       ("mvmul_bf16_bf16dst.npz", F.bf16_to_dst16),
                       ("mvmul_fp16_fp16dst.npz", F.fp16_to_dst16)):
        d = _load(name)
        width = np.uint32 if conv is F.fp32_to_dst32 else np.uint16
        assert (conv(d["dst_out"].astype(width)) == d["dst_out_raw"]).all(), name
        assert (conv(d["dst_in"].astype(width)) == d["dst_in_raw"]).all(), name


def test_oracle_never_outputs_negative_zero_and_neither_do_we() -> None:
    d = _load("elwsub_bf16_fp32dst.npz")
    assert not (d["dst_out"] == 0x80000000).any()
    cfg = fpu.MathConfig(fp32_dst=True)
    a = fpu.mask_operand(np.array([0x40000 | (127 << 10)]), 5, False)  # -1.0
    out = fpu.elwadd_kernel(a, a ^ (1 << 18), np.array([0x80000000]), True, True, True)
    assert int(out[0]) == 0
    assert cfg.use_dst32b
