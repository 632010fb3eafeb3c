"""Matrix Unit (FPU) dispatch: resolves addresses, formats, fidelity and bank ownership, then
calls :mod:`.fpu` for the arithmetic; also the Matrix Unit's data movement (MOVD2A, MOVD2B,
MOVA2D, MOVB2D, MOVB2A), ZEROACC, ZEROSRC, TRNSPSRCB and the Src bank hand-over instructions
(SETDVALID, CLEARDVALID, UNPACR_NOP's SETDVALID and ZEROSRC forms).

The arithmetic and the conversions of the moves are :mod:`.fpu`'s; this module resolves what
the instruction word, the RWCs and the configuration say and then advances the RWCs.

Formats (ISA documentation, Blackhole): the SrcA format is ``ALU_FORMAT_SPEC_REG_SrcA_val``
when ``..._override`` is set, else ``ALU_FORMAT_SPEC_REG0_SrcA``, except that Blackhole uses
the *implied* format latched with the Matrix Unit's SrcA bank unless the thread's
``DISABLE_IMPLIED_SRCA_FMT_Base`` is set. ``FP16A_FORCE_Enable`` forces FP16 style and a 16-bit
Dst; ``ALU_ACC_CTRL_INT8_math_enabled`` selects integer math with a 32-bit Dst; otherwise
``ALU_ACC_CTRL_Fp32_enabled`` selects the 32-bit Dst.

Rows of Dst read as the identity when invalid (ZEROACC'd) and become valid when written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from . import formats as F
from . import fpu
from .regfiles import SrcClient
from .rwc import addr_mod_index, apply_addr_mod
from .state import DST, FIDELITY, SRCA, SRCB, NotImplementedInstruction

if TYPE_CHECKING:
    from .coprocessor import Coprocessor

Fields = Mapping[str, int]

NEEDS_BOTH = frozenset({"MVMUL", "ELWADD", "ELWSUB", "ELWMUL", "GMPOOL", "GAPOOL"})
NEEDS_SRCA = frozenset({"MOVA2D"})
NEEDS_SRCB = frozenset({"MOVB2D", "MOVB2A", "TRNSPSRCB"})

#: Src-load format name -> the data-format code an unpacker would latch as the implied format.
IMPLIED_CODE = {"bf16": F.DataFormat.FLOAT16_B, "fp16": F.DataFormat.FLOAT16,
                "tf32": F.DataFormat.TF32, "fp32": F.DataFormat.TF32,
                "int8": F.DataFormat.INT8, "int16": F.DataFormat.INT16,
                "raw": F.DataFormat.FLOAT16_B}


# --------------------------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------------------------


def sync_dst_config(cp: Coprocessor, t: int) -> None:
    """Keep the Dst addressing bits in step with the configuration."""
    cp.dst.remap_addrs = bool(cp.cfg(t, "DEST_ACCESS_CFG_remap_addrs"))
    cp.dst.swizzle_32b = bool(cp.cfg(t, "DEST_ACCESS_CFG_swizzle_32b"))


def src_format(cp: Coprocessor, t: int, which: str) -> int:
    """The data-format code the Matrix Unit uses for SrcA (``which="A"``) or SrcB."""
    if which == "A":
        if cp.cfg(t, "ALU_FORMAT_SPEC_REG_SrcA_override"):
            fmt = cp.cfg(t, "ALU_FORMAT_SPEC_REG_SrcA_val")
        else:
            fmt = cp.cfg(t, "ALU_FORMAT_SPEC_REG0_SrcA")
        if not cp.thread_config.get(t, "DISABLE_IMPLIED_SRCA_FMT_Base"):
            fmt = int(cp.srca.implied_fmt[cp.srca.matrix_bank])
    else:
        if cp.cfg(t, "ALU_FORMAT_SPEC_REG_SrcB_override"):
            fmt = cp.cfg(t, "ALU_FORMAT_SPEC_REG_SrcB_val")
        else:
            fmt = cp.cfg(t, "ALU_FORMAT_SPEC_REG1_SrcB")
        if not cp.thread_config.get(t, "DISABLE_IMPLIED_SRCB_FMT_Base"):
            fmt = int(cp.srcb.implied_fmt[cp.srcb.matrix_bank])
    return fmt


def dst_base(cp: Coprocessor, t: int, field: int) -> int:
    """``field + DEST_TARGET_REG_CFG_MATH_Offset + RWC.Dst + DEST_REGW_BASE_Base`` (unmasked)."""
    return (field + cp.thread_config.get(t, "DEST_TARGET_REG_CFG_MATH_Offset")
            + cp.rwc.get(t, DST) + cp.cfg(t, "DEST_REGW_BASE_Base"))


def fidelity_phase(cp: Coprocessor, t: int) -> int:
    return (cp.rwc.get(t, FIDELITY) + cp.thread_config.get(t, "FIDELITY_BASE_Phase")) & 3


def advance(cp: Coprocessor, t: int, addr_mode: int, update_fidelity: bool = True) -> None:
    """ApplyAddrMod (or ApplyPartialAddrMod) with the section ``addr_mode`` selects."""
    am = cp.thread_config.addr_mod(t, addr_mod_index(cp.rwc, cp.thread_config, t, addr_mode))
    if am.ab2:
        raise NotImplementedInstruction("not implemented: ADDR_MOD_AB2 section bits (their "
                                        "effect is not documented)")
    apply_addr_mod(cp.rwc, t, am, update_fidelity)


def flip_banks(cp: Coprocessor, t: int, flips: int) -> None:
    """The end-of-instruction bank flips of MVMUL/ELW*/SETRWC (``clear_dvalid`` /
    ``clear_ab_vld``): bit 0 SrcA, bit 1 SrcB; CLR_DVALID_Src?_Disable keeps the bank with the
    Matrix Unit but it still moves to the other bank."""
    if flips & 1:
        keep = cp.thread_config.get(t, "CLR_DVALID_SrcA_Disable")
        cp.srca.release_to_unpackers(flip=True, release=not keep)
    if flips & 2:
        keep = cp.thread_config.get(t, "CLR_DVALID_SrcB_Disable")
        cp.srcb.release_to_unpackers(flip=True, release=not keep)


# --------------------------------------------------------------------------------------------
# Arithmetic and data movement (through fpu.py)
# --------------------------------------------------------------------------------------------


def math_config(cp: Coprocessor, t: int) -> fpu.MathConfig:
    """The configuration a Matrix Unit instruction of thread ``t`` reads."""
    return fpu.MathConfig(
        srca_fmt=src_format(cp, t, "A"),
        srcb_fmt=src_format(cp, t, "B"),
        fp32_dst=bool(cp.cfg(t, "ALU_ACC_CTRL_Fp32_enabled")),
        int8_math=bool(cp.cfg(t, "ALU_ACC_CTRL_INT8_math_enabled")),
        fp16a_force=bool(cp.thread_config.get(t, "FP16A_FORCE_Enable")),
        zero_flag_disabled_src=bool(cp.cfg(t, "ALU_ACC_CTRL_Zero_Flag_disabled_src")),
    )


def _fpu(cp: Coprocessor, call: Callable[[], None]) -> None:
    """Run an fpu.py operation; the configurations it rejects are undefined behaviour."""
    try:
        call()
    except fpu.FpuError as e:
        cp.report_ub(e.message)


def _arith(cp: Coprocessor, t: int, f: Fields, op: str) -> None:
    sync_dst_config(cp, t)
    cfg = math_config(cp, t)
    rows = dict(srca_row=cp.rwc.get(t, SRCA), srcb_row=cp.rwc.get(t, SRCB),
                dst_row=dst_base(cp, t, f["dst"]) & 0x3FF)
    phase = fidelity_phase(cp, t)
    mod = f["instr_mod19"]
    if op == "MVMUL":
        _fpu(cp, lambda: fpu.mvmul(cp.dst, cp.srca, cp.srcb, **rows, phase=phase, cfg=cfg,
                                   bcast_srcb_row=bool(mod & 1)))
    elif op in ("ELWADD", "ELWSUB", "ELWMUL"):
        fn = {"ELWADD": fpu.elwadd, "ELWSUB": fpu.elwsub, "ELWMUL": fpu.elwmul}[op]
        kw = dict(bcast_srcb_row=bool(mod & 2), bcast_srcb_col=bool(mod & 1), phase=phase)
        if op != "ELWMUL":
            kw["accumulate"] = bool(f["dest_accum_en"])
        elif f["dest_accum_en"]:
            cp.report_ub("ELWMUL with dest_accum_en (ELWMUL always accumulates)")
        _fpu(cp, lambda: fn(cp.dst, cp.srca, cp.srcb, **rows, cfg=cfg, **kw))
    elif op == "GAPOOL":
        _fpu(cp, lambda: fpu.gapool(cp.dst, cp.srca, cp.srcb, **rows, phase=phase, cfg=cfg))
    else:  # GMPOOL
        if f["max_pool_index_en"]:
            raise NotImplementedInstruction("not implemented: GMPOOL with max_pool_index_en")
        _fpu(cp, lambda: fpu.gmpool(cp.dst, cp.srca, cp.srcb, **rows, cfg=cfg))
    flip_banks(cp, t, f["clear_dvalid"])
    if op in ("GMPOOL", "GAPOOL"):
        if f["pool_addr_mode"] > 7:
            cp.report_ub(f"{op} pool_addr_mode {f['pool_addr_mode']} (sections are 0..7)")
        advance(cp, t, f["pool_addr_mode"] & 7)
    else:
        advance(cp, t, f["addr_mode"])


def _move(cp: Coprocessor, t: int, f: Fields, op: str) -> None:
    sync_dst_config(cp, t)
    cfg = math_config(cp, t)
    dst_row = dst_base(cp, t, f.get("dst", 0)) & 0x3FF
    lo = bool(f.get("dest_32b_lo", 0))
    if op in ("MOVD2A", "MOVD2B"):
        four = bool(f["instr_mod"] >> 1 & 1)
        src, col = (cp.srca, SRCA) if op == "MOVD2A" else (cp.srcb, SRCB)
        fn = fpu.movd2a if op == "MOVD2A" else fpu.movd2b
        src_row = f["src"] + cp.rwc.get(t, col)
        _fpu(cp, lambda: fn(cp.dst, src, dst_row=dst_row, src_row=src_row, cfg=cfg,
                            four_rows=four, use_dst32b_lo=lo))
    elif op == "MOVA2D":
        eight = bool(f["instr_mod"] >> 1 & 1)
        src_row = f["src"] + cp.rwc.get(t, SRCA)
        _fpu(cp, lambda: fpu.mova2d(cp.dst, cp.srca, src_row=src_row, dst_row=dst_row,
                                    cfg=cfg, eight_rows=eight, use_dst32b_lo=lo))
    elif op == "MOVB2D":
        mod = f["movb2d_instr_mod"]
        src_row = f["src"] + cp.rwc.get(t, SRCB)
        _fpu(cp, lambda: fpu.movb2d(cp.dst, cp.srcb, src_row=src_row, dst_row=dst_row,
                                    cfg=cfg, four_rows=bool(mod & 4),
                                    bcast_row_to8=bool(mod & 2), bcast_col0=bool(mod & 1),
                                    use_dst32b_lo=lo))
    else:  # MOVB2A
        four = bool(f["instr_mod"] >> 1 & 1)
        fpu.movb2a(cp.srca, cp.srcb, srcb_row=f["srcb"] + cp.rwc.get(t, SRCB),
                   srca_row=f["srca"] + cp.rwc.get(t, SRCA), four_rows=four)
    advance(cp, t, f["addr_mode"])


# --------------------------------------------------------------------------------------------
# ZEROACC, ZEROSRC, TRNSPSRCB
# --------------------------------------------------------------------------------------------

ZEROACC_ONE_ROW, ZEROACC_16_ROWS, ZEROACC_HALF, ZEROACC_ALL = range(4)


def zeroacc_rows(cp: Coprocessor, t: int, f: Fields) -> np.ndarray:
    """The physical Dst rows ZEROACC marks (empty for an out-of-range 16-row block)."""
    mode = f["clear_mode"] & 3
    imm = f["where"] & 0x3FF
    if mode == ZEROACC_ONE_ROW:
        row = dst_base(cp, t, imm) & 0x3FF
        is32 = bool(cp.cfg(t, "ALU_ACC_CTRL_Fp32_enabled")
                    or cp.cfg(t, "ALU_ACC_CTRL_INT8_math_enabled"))
        return np.atleast_1d(cp.dst.phys(row, is32))
    if mode == ZEROACC_16_ROWS:
        imm &= 0xFF  # current silicon uses the low 8 bits
        i = np.arange(16)
        if f["use_32_bit_mode"]:
            return imm * 32 + (i & 8) * 2 + (i & 7) if imm < 32 else np.zeros(0, dtype=int)
        return imm * 16 + i if imm < 64 else np.zeros(0, dtype=int)
    if mode == ZEROACC_HALF:
        return np.arange(512, 1024) if imm & 1 else np.arange(512)
    return np.arange(1024)


def zeroacc(cp: Coprocessor, t: int, f: Fields) -> None:
    """ZEROACC: mark 1, 16, 512 or 1024 Dst rows invalid (``clear_zero_flags`` = Revert)."""
    sync_dst_config(cp, t)
    if f["clear_mode"] > 3:
        cp.report_ub(f"ZEROACC clear_mode {f['clear_mode']} (only 0..3 exist)")
    revert = bool(f["clear_zero_flags"])
    if revert:
        cp.report_ub("ZEROACC with Revert (clear_zero_flags) set")
    rows = zeroacc_rows(cp, t, f)
    cp.dst.valid[rows] = revert
    if f["clear_mode"] & 3 in (ZEROACC_ONE_ROW, ZEROACC_16_ROWS):
        advance(cp, t, f["addr_mode"])


def zerosrc(cp: Coprocessor, t: int, f: Fields) -> None:
    """ZEROSRC: clear the unpacker's bank, the Matrix Unit's (``write_mode``) or both
    (``bank_mask``) of SrcA (bit 0) and/or SrcB (bit 1). ``zero_val`` bit 0 selects -inf
    (all ones) as the clear value, on SrcA only (Wormhole's documented NegativeInfSrcA); other
    ``zero_val`` bits are Blackhole's wider clear-value field, not documented."""
    if f["zero_val"] & ~1:
        raise NotImplementedInstruction(f"not implemented: ZEROSRC zero_val={f['zero_val']:#x}")
    neg_inf = bool(f["zero_val"] & 1)
    for bit, src in ((1, cp.srca), (2, cp.srcb)):
        if not f["src_mask"] & bit:
            continue
        if f["bank_mask"]:
            banks = [0, 1]
        elif f["write_mode"]:
            banks = [src.matrix_bank]
        else:
            banks = [src.unpacker_bank]
        value = F.SRC_MASK if neg_inf and bit == 1 else 0
        for b in banks:
            src.cells[b] = value


def trnspsrcb(cp: Coprocessor, t: int, f: Fields) -> None:
    """TRNSPSRCB: transpose rows 16..31 of the Matrix Unit's SrcB bank in place."""
    bank = cp.srcb.cells[cp.srcb.matrix_bank]
    bank[16:32] = bank[16:32].T.copy()


# --------------------------------------------------------------------------------------------
# Bank hand-over
# --------------------------------------------------------------------------------------------


def setdvalid(cp: Coprocessor, t: int, f: Fields) -> None:
    """SETDVALID: the unpackers' SrcA (bit 0) / SrcB (bit 1) banks go to the Matrix Unit.
    Unsupported on Blackhole (its implied format becomes unpredictable): reported as
    undefined behaviour; when continuing, the implied format is left as it was."""
    flips = f["setvalid"]
    if flips & ~3:
        cp.report_ub(f"SETDVALID {flips:#x}: only bits 0 and 1 are defined")
    cp.report_ub("SETDVALID is unsupported on Blackhole (UNPACR_NOP 0x7 is the alternative)")
    if flips & 1:
        cp.srca.give_to_matrix_unit(t, cp.thread_config.get(t, "SRCA_SET_Base"))
    if flips & 2:
        cp.srcb.give_to_matrix_unit(t, cp.thread_config.get(t, "SRCB_SET_Base"))


def cleardvalid(cp: Coprocessor, t: int, f: Fields) -> None:
    """CLEARDVALID: the Matrix Unit's banks go back to the unpackers and (unless
    KeepReadingSameSrc, bit 1 of ``reset``) the Matrix Unit flips to the other bank; bit 0 of
    ``reset`` resets everything (unsupported: reported, then done as documented)."""
    flips, reset = f["cleardvalid"], f["reset"]
    if reset & ~3:
        raise NotImplementedInstruction(f"not implemented: CLEARDVALID reset={reset:#x} "
                                        "(Blackhole's dest-dvalid fields)")
    if reset & 1:
        cp.report_ub("CLEARDVALID Reset is unsupported functionality")
        for src in (cp.srca, cp.srcb):
            src.matrix_bank = src.unpacker_bank = 0
            src.allowed_client = [SrcClient.UNPACKERS, SrcClient.UNPACKERS]
            src.implied_fmt[:] = 0
        return
    keep = bool(reset & 2)
    if flips & 1:
        cp.srca.release_to_unpackers(flip=not keep)
    if flips & 2:
        cp.srcb.release_to_unpackers(flip=not keep)


def unpacr_nop_zerosrc_wait(cp: Coprocessor, f: Fields) -> str | None:
    """UNPACR_NOP's ZEROSRC form waits for the bank to belong to the unpackers."""
    src = cp.srcb if f["Unpacker_Select"] else cp.srca
    like_unpacr = f["Bank_Clr_Ctrl"]  # WaitLikeUnpacr (bit 4 of the operation)
    bank = src.unpacker_bank if like_unpacr else src.matrix_bank
    if src.allowed_client[bank] == SrcClient.UNPACKERS:
        return None
    return f"UNPACR_NOP ZEROSRC waiting for {src.name} bank {bank} to belong to the unpackers"


def unpacr_nop(cp: Coprocessor, t: int, f: Fields) -> None:
    """UNPACR_NOP: the SETDVALID form (low bits 0x7) and the ZEROSRC form (low bits 0x1)."""
    which = f["Unpacker_Select"]
    src = cp.srcb if which else cp.srca
    low = f["Unpack_Pop"] | (f["Src_ClrVal_Ctrl"] << 2) | (f["Bank_Clr_Ctrl"] << 4)
    if low == 0x7:  # SETDVALID
        base = cp.thread_config.get(t, "SRCB_SET_Base" if which else "SRCA_SET_Base")
        src.implied_fmt[src.unpacker_bank] = cp.cfg(t, f"THCON_SEC{which}_REG2_Out_data_format")
        src.give_to_matrix_unit(t, base)
        return
    if f["Unpack_Pop"] == 1:  # op 0x1: ZEROSRC
        neg_inf = bool(f["Src_ClrVal_Ctrl"] & 1)
        both = bool(f["Src_ClrVal_Ctrl"] & 2)
        if both:
            cp.report_ub("UNPACR_NOP ZEROSRC on both banks is unsupported functionality")
        banks = [0, 1] if both else [src.unpacker_bank]
        for b in banks:
            src.cells[b] = F.SRC_MASK if neg_inf else 0
        return
    raise NotImplementedInstruction(f"not implemented: UNPACR_NOP (operation {low:#x})")


HANDLERS: dict[str, Callable[[Coprocessor, int, Fields], None]] = {
    "MVMUL": lambda cp, t, f: _arith(cp, t, f, "MVMUL"),
    "ELWADD": lambda cp, t, f: _arith(cp, t, f, "ELWADD"),
    "ELWSUB": lambda cp, t, f: _arith(cp, t, f, "ELWSUB"),
    "ELWMUL": lambda cp, t, f: _arith(cp, t, f, "ELWMUL"),
    "GMPOOL": lambda cp, t, f: _arith(cp, t, f, "GMPOOL"),
    "GAPOOL": lambda cp, t, f: _arith(cp, t, f, "GAPOOL"),
    "MOVD2A": lambda cp, t, f: _move(cp, t, f, "MOVD2A"),
    "MOVD2B": lambda cp, t, f: _move(cp, t, f, "MOVD2B"),
    "MOVA2D": lambda cp, t, f: _move(cp, t, f, "MOVA2D"),
    "MOVB2D": lambda cp, t, f: _move(cp, t, f, "MOVB2D"),
    "MOVB2A": lambda cp, t, f: _move(cp, t, f, "MOVB2A"),
    "ZEROACC": zeroacc,
    "ZEROSRC": zerosrc,
    "TRNSPSRCB": trnspsrcb,
    "SETDVALID": setdvalid,
    "CLEARDVALID": cleardvalid,
    "UNPACR_NOP": unpacr_nop,
}

__all__ = ["HANDLERS", "NEEDS_BOTH", "NEEDS_SRCA", "NEEDS_SRCB", "math_config", "src_format"]
