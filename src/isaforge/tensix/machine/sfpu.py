"""Vector Unit (SFPU) data movement: SFPLOAD and SFPSTORE between Dst and the LRegs.

Only the addressing, the lane mapping and the ``Mod0`` data-type conversions are modelled
(the SFPU arithmetic comes later; of SFPCONFIG the LaneConfig form, VD=15, and the constant
LRegs 11..14 are modelled; SFPLOADI and SFPENCC as far as every lane stays enabled, which is
what tt-metal's firmware does at boot; every other SFP instruction is "not implemented").

Lane ``L`` (0..31) of an LReg maps to Dst row ``(Addr & ~3) + L // 8`` and column
``(L & 7) * 2``, plus one when bit 1 of ``Addr`` is set (ISA documentation, Blackhole
SFPLOAD/SFPSTORE). ``Addr = Imm10 + DEST_TARGET_REG_CFG_MATH_Offset`` plus, in every mode but
``MOD0_FMT_INT32_ALL``, ``DstOffset + (SpOffset & 3)``, and in ``MOD0_FMT_INT32_ALL``
``SpOffset + (DstOffset & 3)``, where ``DstOffset = RWC.Dst + DEST_REGW_BASE_Base`` and
``SpOffset = RWC.Sp + DEST_SP_BASE_Base`` (10-bit sums). In ``MOD0_FMT_INT32_ALL`` the stack
pointer RWC ``Sp`` moves by ThreadConfig ``SFPU_STACK_Incr``: SFPLOAD first decrements it (when
not zero; a pop), SFPSTORE increments it after forming the address (a push); the data
conversion is INT32's. Blackhole's deprecated ``MOD0_FMT_INT32_SM`` behaves as INT32 in both
directions; ``MOD0_FMT_INT8_COMP`` loads sign + 10-bit magnitude (Dst16b bits 14..5) and stores
as INT8 does. After the access the RWCs advance by ApplyPartialAddrMod (FidelityPhase
untouched). All 32 lanes are enabled (no SFPU condition codes yet). LaneConfig
(``lane_config``, written by SFPCONFIG VD=15) is honoured:
BLOCK_SFPU_RD_FROM_DEST / BLOCK_DEST_WR_FROM_SFPU skip a lane, DEST_RD/WR_COL_EXCHANGE (of
``LaneConfig[lane & 7]``) select the odd column, ENABLE_FP16A_INF reads FP16's largest
pattern as infinity, and ENABLE_DEST_INDEX with CAPTURE_DEFAULT_DEST_INDEX makes SFPLOAD to
LReg 0..3 also write ``(Row << 4) | Column`` to LReg VD + 4. Reading a ZEROACC'd row, or
writing part of one, is undefined behaviour and is reported.

The unit (:class:`Sfpu`) gets the state it uses, not the machine: Dst, the LRegs, LaneConfig,
the RWCs, Config and ThreadConfig, and the Matrix Unit, whose AddrMod logic (ApplyAddrMod and
the Dst addressing bits) it shares.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from . import formats as F
from .dispatch import Execute, Fields, Report, Unit
from .matrix import MatrixUnit, thread_cfg
from .regfiles import Dst
from .state import DST, Config, NotImplementedInstruction, RWCs, ThreadConfig

N_LREGS = 8  # the writable LRegs (LReg[8..15] are constants / special, not modelled)
LANES = 32

(SRCB, FP16, BF16, FP32, INT32, INT8, UINT16, HI16, INT16, LO16, INT32_ALL, ZERO, INT32_SM,
 INT8_COMP, LO16_ONLY, HI16_ONLY) = range(16)

LANE = np.arange(LANES)


def lane_rows_cols(addr: int) -> tuple[np.ndarray, np.ndarray]:
    """Dst16b/Dst32b row and column of each of the 32 lanes for address ``addr``."""
    addr &= 0x3FF
    rows = ((addr & ~3) + LANE // 8) & 0x3FF
    cols = (LANE & 7) * 2 + (1 if addr & 2 else 0)
    return rows, cols


def _group(addr: int) -> np.ndarray:
    """The four Dst rows an access at ``addr`` touches."""
    return ((addr & 0x3FC) + np.arange(4)) & 0x3FF


_LOAD32 = (FP32, INT32, INT32_ALL, INT32_SM)  # SFPLOAD reads Dst32b in these modes
_STORE32 = (FP32, INT32, INT32_ALL, INT32_SM, LO16, HI16)  # SFPSTORE writes Dst32b in these


# LaneConfig bits (ISA documentation, SFPCONFIG)
ENABLE_FP16A_INF, DISABLE_BACKDOOR_LOAD, ENABLE_DEST_INDEX, CAPTURE_DEFAULT_DEST_INDEX = 0, 1, 2, 3
BLOCK_DEST_WR_FROM_SFPU, BLOCK_SFPU_RD_FROM_DEST, DEST_RD_COL_EXCHANGE = 4, 5, 6
DEST_WR_COL_EXCHANGE = 7


def load_convert(mode: int, cells: np.ndarray, old: np.ndarray) -> np.ndarray:
    """Dst cells (uint32) -> LReg words for SFPLOAD mode ``mode``."""
    c = cells.astype(np.uint32)
    if mode == FP16:
        sign, man, exp = c >> 15 & 1, c >> 5 & 0x3FF, c & 0x1F
        exp = np.where(exp != 0, exp + 112, 0)
        return (sign << 31) | (exp << 23) | (man << 13)
    if mode == BF16:
        return F.dst16_to_bf16(c).astype(np.uint32) << 16
    if mode in (FP32, INT32, INT32_ALL, INT32_SM):
        return F.dst32_to_fp32(c).astype(np.uint32)
    if mode == INT8:
        return (c >> 15 << 31) | (c >> 5 & 0xFF)
    if mode == INT8_COMP:  # Blackhole: deprecated, sign + 10-bit magnitude, no conversion
        return (c >> 15 << 31) | (c >> 5 & 0x3FF)
    if mode == LO16_ONLY:
        return (old & 0xFFFF0000) | c
    if mode == HI16_ONLY:
        return (c << 16) | (old & 0xFFFF)
    if mode == INT16:
        return (c >> 15 << 31) | (c & 0x7FFF)
    if mode in (UINT16, LO16):
        return c & 0xFFFF
    if mode == HI16:
        return (c & 0xFFFF) << 16
    if mode == ZERO:
        return np.zeros_like(c)
    raise NotImplementedInstruction(f"not implemented: SFPLOAD mode {mode}")


def store_convert(mode: int, datum: np.ndarray) -> np.ndarray:
    """LReg words -> Dst cells (uint32; 16-bit modes give values < 2**16)."""
    x = datum.astype(np.uint32)
    if mode == FP16:
        sign = x >> 31
        exp = (x >> 23 & 0xFF).astype(np.int64) - 112
        man = x & 0x7FFFFF
        under, over = exp <= 0, exp > 31
        exp = np.where(under, 0, np.where(over, 31, exp)).astype(np.uint32)
        man = np.where(under, 0, np.where(over, 0x7FFFFF, man)).astype(np.uint32) >> 13
        ieee = (sign << 15) | (exp << 10) | man
        return F.fp16_to_dst16(ieee).astype(np.uint32)
    if mode == BF16:
        flushed = np.where(x & 0x7F800000, x, x & 0x80000000).astype(np.uint32)
        return F.bf16_to_dst16(flushed >> 16).astype(np.uint32)
    if mode == FP32:
        flushed = np.where(x & 0x7F800000, x, x & 0x80000000).astype(np.uint32)
        return F.fp32_to_dst32(flushed).astype(np.uint32)
    if mode in (INT32, INT32_ALL, INT32_SM):
        return F.fp32_to_dst32(x).astype(np.uint32)
    if mode in (INT8, INT8_COMP):
        return ((x >> 31 << 15) | (16 << 10) | (x & 0x3FF)).astype(np.uint32)
    if mode in (LO16_ONLY, UINT16):
        return x & 0xFFFF
    if mode == HI16_ONLY:
        return x >> 16
    if mode == INT16:
        return (x >> 31 << 15) | (x & 0x7FFF)
    if mode == LO16:
        return (x << 16) | (x >> 16)
    if mode == HI16:
        return x
    if mode == ZERO:
        return np.zeros_like(x)
    raise NotImplementedInstruction(f"not implemented: SFPSTORE mode {mode}")


# SFPCONFIG Mod1 bits
MOD1_IMM16_IS_VALUE, MOD1_IMM16_IS_LANE_MASK = 1, 8
LANE_CONFIG_MASK = (1 << 18) - 1


# SFPENCC Mod1 and Imm bits
ENCC_MOD1_EC, ENCC_MOD1_EI, ENCC_MOD1_RI = 1, 2, 8
ENCC_IMM_E, ENCC_IMM_R = 1, 2
# SFPLOADI Mod0
(LOADI_FLOATB, LOADI_FLOATA, LOADI_USHORT, LOADI_SHORT, LOADI_UPPER,
 LOADI_LOWER) = 0, 1, 2, 4, 8, 10
#: SFPCONFIG's default values of the constant LRegs 11..14 (MOD1_IMM16_IS_VALUE), as FP32 bits
CONST_DEFAULTS = np.array([-1.0, 1 / 65536, -0.67487759, -0.34484843],
                          dtype=np.float32).view(np.uint32)
LANE_CONFIG_DISABLE_BACKDOOR_LOAD = 1 << 1


def fp16a_to_fp32(x: int) -> int:
    """SFPLOADI's FP16 (FP16A) widening: the exponent rebiased by 112, no special cases."""
    sign, exp, man = x >> 15, (x >> 10) & 0x1F, x & 0x3FF
    return (sign << 31) | ((exp + 112) << 23) | (man << 13)


class Sfpu(Unit):
    """The Vector Unit's data movement (SFPLOAD, SFPSTORE), SFPCONFIG's LaneConfig and
    constant-LReg forms, SFPLOADI and SFPENCC (while every lane is enabled)."""

    def __init__(self, dst: Dst, lreg: np.ndarray, lane_config: np.ndarray, rwc: RWCs,
                 config: Config, thread_config: ThreadConfig, matrix: MatrixUnit,
                 report_ub: Report) -> None:
        self.dst = dst
        #: the writable LRegs, ``(8, 32)`` uint32
        self.lreg = lreg
        #: LaneConfig of each of the 32 lanes (18 bits)
        self.lane_config = lane_config
        self.rwc = rwc
        self.config = config
        self.thread_config = thread_config
        self.matrix = matrix
        self.report_ub = report_ub
        #: the constant LRegs 11..14 (SFPCONFIG writes them), ``(4, 32)`` uint32
        self.lreg_const = np.zeros((4, LANES), dtype=np.uint32)
        #: per lane: UseLaneFlagsForLaneEnable and LaneFlags (SFPENCC)
        self.use_lane_flags = np.zeros(LANES, dtype=bool)
        self.lane_flags = np.ones(LANES, dtype=bool)

    def handlers(self) -> Mapping[str, Execute]:
        return {"SFPLOAD": self.sfpload, "SFPSTORE": self.sfpstore, "SFPCONFIG": self.sfpconfig,
                "SFPLOADI": self.sfploadi, "SFPENCC": self.sfpencc}

    def enabled(self) -> np.ndarray:
        """Per lane: enabled by the condition-code state (LaneFlags when used)."""
        return ~self.use_lane_flags | self.lane_flags

    def sfpencc(self, t: int, f: Fields) -> None:
        """SFPENCC: set, keep or invert UseLaneFlagsForLaneEnable, and set LaneFlags (from
        the immediate, or to true), in lanes where ``VD < 12`` or DISABLE_BACKDOOR_LOAD. The
        other SFPU instructions here assume every lane enabled, so a result that disables a
        lane is not implemented (the SFPU condition codes come with the SFPU arithmetic)."""
        imm, vd, mod1 = f["imm12_math"], f["lreg_dest"], f["instr_mod1"]
        if vd < 12:
            lanes = np.ones(LANES, dtype=bool)
        else:
            lanes = (self.lane_config & LANE_CONFIG_DISABLE_BACKDOOR_LOAD).astype(bool)
        use = self.use_lane_flags
        if mod1 & ENCC_MOD1_EI:
            use = np.full(LANES, bool(imm & ENCC_IMM_E))
        elif mod1 & ENCC_MOD1_EC:
            use = ~use
        flags = np.full(LANES, bool(imm & ENCC_IMM_R) if mod1 & ENCC_MOD1_RI else True)
        use = np.where(lanes, use, self.use_lane_flags)
        flags = np.where(lanes, flags, self.lane_flags)
        if np.any(use & ~flags):
            raise NotImplementedInstruction("not implemented: SFPENCC leaving lanes disabled "
                                            "(SFPU lane predication)")
        self.use_lane_flags, self.lane_flags = use, flags

    def sfploadi(self, t: int, f: Fields) -> None:
        """SFPLOADI: a 16-bit immediate, widened per ``Mod0``, to every lane of LReg VD
        (VD < 8; VD 8..11 are not written; VD >= 12 with the back-door load enabled would be
        a LoadMacroConfig write, which is not implemented)."""
        vd, mod0, imm = f["lreg_ind"], f["instr_mod0"], f["imm16"]
        if vd >= 12 and not np.all(self.lane_config & LANE_CONFIG_DISABLE_BACKDOOR_LOAD):
            raise NotImplementedInstruction(f"not implemented: SFPLOADI VD={vd} as a "
                                            "LoadMacroConfig back-door write")
        if vd >= N_LREGS:
            return
        old = self.lreg[vd]
        if mod0 == LOADI_FLOATB:
            new = np.full(LANES, imm << 16, dtype=np.uint32)
        elif mod0 == LOADI_FLOATA:
            new = np.full(LANES, fp16a_to_fp32(imm), dtype=np.uint32)
        elif mod0 == LOADI_USHORT:
            new = np.full(LANES, imm, dtype=np.uint32)
        elif mod0 == LOADI_SHORT:
            new = np.full(LANES, imm - ((imm & 0x8000) << 1) & 0xFFFFFFFF, dtype=np.uint32)
        elif mod0 == LOADI_UPPER:
            new = (old & np.uint32(0xFFFF)) | np.uint32(imm << 16)
        elif mod0 == LOADI_LOWER:
            new = (old & np.uint32(0xFFFF0000)) | np.uint32(imm)
        else:
            self.report_ub(f"SFPLOADI Mod0 {mod0} is not a conversion")
            return
        self.lreg[vd] = np.where(self.enabled(), new, old)

    def cfg(self, t: int, name: str) -> int:
        return thread_cfg(self.config, self.thread_config, t, name)

    def _mode(self, t: int, mod0: int) -> int:
        if mod0 != SRCB:
            return mod0
        if self.cfg(t, "ALU_ACC_CTRL_SFPU_Fp32_enabled"):
            return FP32
        if self.cfg(t, "ALU_FORMAT_SPEC_REG_SrcB_override"):
            fmt = self.cfg(t, "ALU_FORMAT_SPEC_REG_SrcB_val")
        else:
            fmt = self.cfg(t, "ALU_FORMAT_SPEC_REG1_SrcB")
        if self.thread_config.get(t, "SFPU_DEST_FMT_Enable"):
            fmt = self.thread_config.get(t, "SFPU_DEST_FMT_Base")
        return BF16 if fmt in F.BF16_STYLE or fmt == F.DataFormat.TF32 else FP16

    def _sp_offset(self, t: int) -> int:
        return (int(self.rwc.sp[t]) + self.cfg(t, "DEST_SP_BASE_Base")) & 0x3FF

    def _addr(self, t: int, imm: int, mode: int = FP32) -> int:
        """The 10-bit Dst address of an SFPLOAD/SFPSTORE (``Sp`` already moved for a pop)."""
        base = imm + self.thread_config.get(t, "DEST_TARGET_REG_CFG_MATH_Offset")
        dst_offset = (self.rwc.get(t, DST) + self.cfg(t, "DEST_REGW_BASE_Base")) & 0x3FF
        if mode == INT32_ALL:
            return (base + self._sp_offset(t) + (dst_offset & 3)) & 0x3FF
        return (base + dst_offset + (self._sp_offset(t) & 3)) & 0x3FF

    def _move_sp(self, t: int, delta: int) -> None:
        self.rwc.sp[t] = (int(self.rwc.sp[t]) + delta) & self.rwc.SP_MASK

    def _lane_flag(self, bit: int) -> np.ndarray:
        """LaneConfig bit ``bit`` of each of the 32 lanes, as bools."""
        return (self.lane_config >> bit & 1).astype(bool)

    def _lane_cols(self, addr: int, exchange_bit: int) -> np.ndarray:
        """Dst column of each lane: odd when bit 1 of ``addr`` is set or when the lane's
        ``LaneConfig[lane & 7]`` column-exchange bit is."""
        odd = bool(addr & 2) | self._lane_flag(exchange_bit)[LANE & 7]
        return (LANE & 7) * 2 + odd.astype(np.int64)

    def sfpload(self, t: int, f: Fields) -> None:
        self.matrix.sync_dst_config(t)
        dst, lreg = self.dst, self.lreg
        mode = self._mode(t, f["instr_mod0"])
        if mode == INT32_ALL and self.rwc.sp[t] != 0:  # pop: Sp moves before the address
            self._move_sp(t, -self.thread_config.get(t, "SFPU_STACK_Incr"))
        vd = f["lreg_ind"]
        addr = self._addr(t, f["dest_reg_addr"] & 0x3FF, mode)
        rows, cols = _group(addr), self._lane_cols(addr, DEST_RD_COL_EXCHANGE)
        if vd < N_LREGS:
            is32 = mode in _LOAD32
            if not dst.row_valid(rows, is32).all():
                self.report_ub("SFPLOAD reads a ZEROACC'd (invalid) Dst row")
            old = lreg[vd].astype(np.uint32)
            if is32:
                cells = dst.read32(rows)[LANE // 8, cols]
            else:
                cells = dst.read16(rows)[LANE // 8, cols].astype(np.uint32)
            new = load_convert(mode, cells, old)
            if mode == FP16:  # LaneConfig.ENABLE_FP16A_INF: the largest FP16 value is infinity
                inf = self._lane_flag(ENABLE_FP16A_INF) & ((cells & 0x7FFF) == 0x7FFF)
                new = np.where(inf, (cells >> 15 << 31) | 0x7F800000, new).astype(np.uint32)
            on = ~self._lane_flag(BLOCK_SFPU_RD_FROM_DEST)
            lreg[vd] = np.where(on, new, old)
            if vd < 4:  # ENABLE_DEST_INDEX + CAPTURE_DEFAULT_DEST_INDEX: the index to VD + 4
                cap = on & self._lane_flag(ENABLE_DEST_INDEX) & self._lane_flag(
                    CAPTURE_DEFAULT_DEST_INDEX)
                index = (((addr & 0x3FC) + LANE // 8) << 4 | cols).astype(np.uint32)
                lreg[vd + 4] = np.where(cap, index, lreg[vd + 4])
        self.matrix.advance(t, f["sfpu_addr_mode"], update_fidelity=False)

    def sfpstore(self, t: int, f: Fields) -> None:
        self.matrix.sync_dst_config(t)
        dst = self.dst
        mode = self._mode(t, f["instr_mod0"])
        vd = f["lreg_ind"]
        if vd >= N_LREGS:
            raise NotImplementedInstruction(f"not implemented: SFPSTORE from LReg {vd} "
                                            "(constant / special LRegs)")
        addr = self._addr(t, f["dest_reg_addr"] & 0x3FF, mode)
        if mode == INT32_ALL:  # push: Sp moves after the address is formed
            self._move_sp(t, self.thread_config.get(t, "SFPU_STACK_Incr"))
        rows, cols = _group(addr), self._lane_cols(addr, DEST_WR_COL_EXCHANGE)
        on = ~self._lane_flag(BLOCK_DEST_WR_FROM_SFPU)
        is32 = mode in _STORE32
        if not dst.row_valid(rows, is32).all():
            self.report_ub("SFPSTORE writes some columns of a ZEROACC'd (invalid) Dst row")
        cells = store_convert(mode, self.lreg[vd])
        r, c = (LANE // 8)[on], cols[on]
        if is32:
            block = dst.read32(rows)
            block[r, c] = cells[on]
            dst.write32(rows, block)
        else:
            block = dst.read16(rows).astype(np.uint32)
            block[r, c] = cells[on]
            dst.write16(rows, block)
        dst.set_valid(rows, is32)
        self.matrix.advance(t, f["sfpu_addr_mode"], update_fidelity=False)

    def sfpconfig(self, t: int, f: Fields) -> None:
        """SFPCONFIG with VD=15: write, OR, AND or XOR LaneConfig of every lane (of the lanes
        ``Imm16`` selects under MOD1_IMM16_IS_LANE_MASK) with ``Imm16`` (MOD1_IMM16_IS_VALUE;
        the high two bits are kept) or with ``LReg[0][lane & 7]``. VD=11..14 write the
        constant LRegs from ``LReg[0][lane & 7]`` (or, with MOD1_IMM16_IS_VALUE, their
        documented default values); VD=9, 10 do nothing; the LoadMacroConfig forms (VD=0..8)
        are not implemented. Lanes follow the lane mask and LaneFlags (SFPENCC)."""
        vd, mod1, imm = f["config_dest"], f["instr_mod1"], f["imm16_math"]
        if vd <= 8:
            raise NotImplementedInstruction(f"not implemented: SFPCONFIG VD={vd} "
                                            "(LoadMacroConfig)")
        lanes = self.enabled()[LANE & 7]
        if mod1 & MOD1_IMM16_IS_LANE_MASK:
            lanes = lanes & ((imm >> ((LANE & 7) * 2)) & 1).astype(bool)
        if vd in (9, 10):
            return
        if vd != 15:
            k = vd - 11
            if mod1 & MOD1_IMM16_IS_VALUE:
                value = np.full(LANES, CONST_DEFAULTS[k], dtype=np.uint32)
            else:
                value = self.lreg[0][LANE & 7].astype(np.uint32)
            self.lreg_const[k] = np.where(lanes, value, self.lreg_const[k])
            return
        old = self.lane_config.astype(np.uint32)
        if mod1 & MOD1_IMM16_IS_VALUE:
            value = np.full(LANES, imm, dtype=np.uint32)
        else:
            value = self.lreg[0][LANE & 7].astype(np.uint32)
        op = mod1 & 6
        new = (value if op == 0 else old | value if op == 2 else old & value if op == 4
               else old ^ value)
        if mod1 & MOD1_IMM16_IS_VALUE:
            new = new | (old & ~np.uint32(0xFFFF))
        self.lane_config[:] = np.where(lanes, new & LANE_CONFIG_MASK, old)


__all__ = ["LANES", "N_LREGS", "Sfpu", "lane_rows_cols", "load_convert", "store_convert"]
