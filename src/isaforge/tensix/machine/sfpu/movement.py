"""Vector Unit data movement: SFPLOAD, SFPSTORE, SFPLOADI, SFPMOV, SFPSWAP, SFPTRANSP,
SFPSHFT2, SFPCONFIG and SFPNOP (ISA documentation, Blackhole, one page each).

SFPLOAD/SFPSTORE addressing: lane ``L`` maps to Dst row ``(Addr & ~3) + L // 8`` and column
``(L & 7) * 2``, plus one when bit 1 of ``Addr`` is set. ``Addr = Imm10 +
DEST_TARGET_REG_CFG_MATH_Offset`` plus, in every mode but ``MOD0_FMT_INT32_ALL``,
``DstOffset + (SpOffset & 3)``, and in ``MOD0_FMT_INT32_ALL`` ``SpOffset + (DstOffset & 3)``,
where ``DstOffset = RWC.Dst + DEST_REGW_BASE_Base`` and ``SpOffset = RWC.Sp +
DEST_SP_BASE_Base`` (10-bit sums). In ``MOD0_FMT_INT32_ALL`` the stack pointer RWC ``Sp``
moves by ThreadConfig ``SFPU_STACK_Incr`` (SFPLOAD first decrements it when not zero, a pop;
SFPSTORE increments it after forming the address, a push) and LaneEnabled is ignored.
After the access the RWCs advance by ApplyPartialAddrMod (not for an SFPSTORE that
SFPLOADMACRO scheduled: it uses the address its SFPLOADMACRO formed). LaneConfig:
BLOCK_SFPU_RD_FROM_DEST / BLOCK_DEST_WR_FROM_SFPU skip a lane, DEST_RD/WR_COL_EXCHANGE (of
``LaneConfig[lane & 7]``) select the odd column, ENABLE_FP16A_INF reads FP16's largest
pattern as infinity, and ENABLE_DEST_INDEX with CAPTURE_DEFAULT_DEST_INDEX makes SFPLOAD to
LReg 0..3 also write ``(Row << 4) | Column`` to LReg VD + 4. Reading a ZEROACC'd row, or
writing part of one, is undefined behaviour and is reported. SFPLOAD writes LReg 0..7 only;
SFPSTORE stores any LReg (12..15 need DISABLE_BACKDOOR_LOAD, 16 SFPLOADMACRO).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ...isa import config_fields
from .. import formats as F
from ..matrix import thread_cfg
from ..state import DST, Config, ThreadConfig
from .base import SIGN, SfpuBase
from .convert import (
    BF16,
    FP16,
    FP32,
    INT32_ALL,
    LOAD32,
    LOAD_TABLE_MODES,
    SRCB,
    STORE32,
    load_convert,
    load_table,
    loadi_value,
    sign_mag_key,
    store_convert,
    store_table_bf16,
)
from .lregs import (
    BLOCK_DEST_WR_FROM_SFPU,
    BLOCK_SFPU_RD_FROM_DEST,
    CAPTURE_DEFAULT_DEST_INDEX,
    CONST_DEFAULTS,
    DEST_RD_COL_EXCHANGE,
    DEST_WR_COL_EXCHANGE,
    ENABLE_DEST_INDEX,
    ENABLE_FP16A_INF,
    EXCHANGE_SRCB_SRCC,
    LANE,
    LANE_COL,
    LANE_CONFIG_MASK,
    LANE_ROW,
    LANES,
    N_WRITABLE,
    all_true,
    all_zero,
)
from .ops import Op

# SFPCONFIG Mod1 bits
MOD1_IMM16_IS_VALUE, MOD1_IMM16_IS_LANE_MASK = 1, 8
# SFPMOV Mod1 bits
MOV_NEGATE, MOV_ALL_LANES, MOV_FROM_SPECIAL = 1, 2, 8
# SFPSHFT2 modes
(COPY4, SUBVEC_CHAINED_COPY4, SUBVEC_SHFLROR1_AND_COPY4, SUBVEC_SHFLROR1, SUBVEC_SHFLSHR1,
 SHFT_LREG, SHFT_IMM) = range(7)
#: SFPSWAP: per mode, the lanes where VD gets the minimum (mode 0 swaps unconditionally)
SWAP_VD_MIN = {1: 0xFFFFFFFF, 2: 0x0000FFFF, 3: 0x00FF00FF, 4: 0xFF0000FF, 5: 0x000000FF,
               6: 0x0000FF00, 7: 0x00FF0000, 8: 0xFF000000}


ROWS4 = np.arange(4)
COLS_EVEN = LANE_COL * 2
COLS_ODD = LANE_COL * 2 + 1


class _SfpuRegs:
    """What SFPLOAD/SFPSTORE read from Config and ThreadConfig, read once per configuration
    (as :class:`~..matrix.MathRegs` is): ``MOD0_FMT_SRCB``'s resolved mode (FP32 when
    ALU_ACC_CTRL_SFPU_Fp32_enabled, else BF16 or FP16 by the SrcB format: the override, or
    SFPU_DEST_FMT when enabled), the Dst address offsets and SFPU_STACK_Incr."""

    #: the Config fields it reads (:meth:`MovementMixin._regs` keys on their words alone)
    CONFIG_READS = ("ALU_ACC_CTRL_SFPU_Fp32_enabled", "ALU_FORMAT_SPEC_REG_SrcB_override",
                    "ALU_FORMAT_SPEC_REG_SrcB_val", "ALU_FORMAT_SPEC_REG1_SrcB",
                    "DEST_REGW_BASE_Base", "DEST_SP_BASE_Base")

    def __init__(self, config: Config, thread_config: ThreadConfig, t: int) -> None:
        def cfg(name: str) -> int:
            if name not in self.CONFIG_READS:
                raise KeyError(f"_SfpuRegs reads {name}: add it to CONFIG_READS")
            return thread_cfg(config, thread_config, t, name)

        def tc(name: str) -> int:
            return thread_config.get(t, name)

        if cfg("ALU_ACC_CTRL_SFPU_Fp32_enabled"):
            self.srcb_mode = FP32
        else:
            if cfg("ALU_FORMAT_SPEC_REG_SrcB_override"):
                fmt = cfg("ALU_FORMAT_SPEC_REG_SrcB_val")
            else:
                fmt = cfg("ALU_FORMAT_SPEC_REG1_SrcB")
            if tc("SFPU_DEST_FMT_Enable"):
                fmt = tc("SFPU_DEST_FMT_Base")
            bf16 = fmt in F.BF16_STYLE or fmt == F.DataFormat.TF32
            self.srcb_mode = BF16 if bf16 else FP16
        self.math_offset = tc("DEST_TARGET_REG_CFG_MATH_Offset")
        self.regw_base = cfg("DEST_REGW_BASE_Base")
        self.sp_base = cfg("DEST_SP_BASE_Base")
        self.stack_incr = tc("SFPU_STACK_Incr")

    def values(self) -> tuple[int, ...]:
        """What the record holds (equal values: the same settings)."""
        return (self.srcb_mode, self.math_offset, self.regw_base, self.sp_base,
                self.stack_incr)


@cache
def _config_words() -> np.ndarray:
    """The Config word indices of :attr:`_SfpuRegs.CONFIG_READS`."""
    fields = config_fields()
    return np.array(sorted({fields[name].index for name in _SfpuRegs.CONFIG_READS}))


def lane_rows_cols(addr: int) -> tuple[np.ndarray, np.ndarray]:
    """Dst16b/Dst32b row and column of each of the 32 lanes for address ``addr``."""
    addr &= 0x3FF
    rows = ((addr & ~3) + LANE_ROW) & 0x3FF
    cols = LANE_COL * 2 + (1 if addr & 2 else 0)
    return rows, cols


def _rotate_right(v: np.ndarray, fill: np.ndarray | None) -> np.ndarray:
    """Within each group of eight lanes, each lane takes its left neighbour's value; the
    first lane of a group takes the group's last (``fill`` None) or ``fill``."""
    g = v.reshape(4, 8)
    first = g[:, 7] if fill is None else fill.reshape(4, 8)[:, 0]
    return np.concatenate([first[:, None], g[:, :7]], axis=1).reshape(LANES)


class MovementMixin(SfpuBase):
    """SFPLOAD, SFPSTORE, SFPLOADI, SFPMOV, SFPSWAP, SFPTRANSP, SFPSHFT2, SFPCONFIG, SFPNOP."""

    # ---- SFPLOAD / SFPSTORE --------------------------------------------------------------

    def _regs(self, t: int) -> _SfpuRegs:
        """Thread ``t``'s :class:`_SfpuRegs`, read again after a Config/ThreadConfig write."""
        key = (self.config.version, self.thread_config.version)
        hit = self._regs_cache.get(t)
        if hit is not None and hit[0] == key:
            return hit[1]
        # _SfpuRegs reads only the thread's ThreadConfig row and the Config words of its
        # CONFIG_READS in its bank: a kernel rewriting its configuration (or other Config
        # words) tile after tile finds them by their bytes
        tc = self.thread_config
        content = (t, tc.regs[t].tobytes(),
                   self.config.words[tc.bank(t)][_config_words()]
                   .tobytes())
        regs = self._regs_canonical.get(content)  # type: ignore[assignment]
        if regs is None:
            regs = _SfpuRegs(self.config, tc, t)
            # the same values are the same object (single instructions' plans key on it)
            regs = self._regs_canonical.setdefault(regs.values(), regs)
            if len(self._regs_canonical) > 256:
                self._regs_canonical.clear()
            self._regs_canonical[content] = regs
        self._regs_cache[t] = (key, regs)
        return regs

    def _addr(self, t: int, regs: _SfpuRegs, imm: int, mode: int) -> int:
        """The 10-bit Dst address of an SFPLOAD/SFPSTORE (``Sp`` already moved for a pop)."""
        base = imm + regs.math_offset
        dst_offset = (int(self.rwc.v[t, DST]) + regs.regw_base) & 0x3FF
        sp_offset = (int(self.rwc.sp[t]) + regs.sp_base) & 0x3FF
        if mode == INT32_ALL:
            return (base + sp_offset + (dst_offset & 3)) & 0x3FF
        return (base + dst_offset + (sp_offset & 3)) & 0x3FF

    def _move_sp(self, t: int, delta: int) -> None:
        self.rwc.sp[t] = (int(self.rwc.sp[t]) + delta) & self.rwc.SP_MASK

    def _lane_cols(self, addr: int, exchange_bit: int, lane_config: bool) -> np.ndarray:
        """Dst column of each lane: odd when bit 1 of ``addr`` is set or when the lane's
        ``LaneConfig[lane & 7]`` column-exchange bit is."""
        if not lane_config:
            return COLS_ODD if addr & 2 else COLS_EVEN
        odd = bool(addr & 2) | self.lanes.lane_flag(exchange_bit)[LANE_COL]
        return LANE_COL * 2 + odd.astype(np.int64)

    def _cells(self, addr: int, is32: bool) -> tuple[np.ndarray, np.ndarray]:
        """The 4 physical Dst rows an access at ``addr`` touches and each lane's flat
        DstBits index, without LaneConfig (remembered per address and Dst addressing bits;
        shared: do not modify)."""
        dst = self.dst
        key = (addr, is32, bool(dst.remap_addrs), bool(dst.swizzle_32b))
        hit = self._cells_cache.get(key)
        if hit is None:
            phys = dst.phys_table(is32)[((addr & 0x3FC) + ROWS4) & 0x3FF]
            at = phys[LANE_ROW] * 16 + (COLS_ODD if addr & 2 else COLS_EVEN)
            phys.flags.writeable = at.flags.writeable = False
            hit = self._cells_cache[key] = (phys, at)
        return hit

    def x_sfpload(self, t: int, op: Op) -> int:
        """SFPLOAD (and SFPLOADMACRO's load); returns the Dst address it formed."""
        self.matrix.sync_dst_config(t)
        dst, lreg, lanes = self.dst, self.lreg, self.lanes
        regs = self._regs(t)
        mode = regs.srcb_mode if op.mod == SRCB else op.mod
        if mode == INT32_ALL and self.rwc.sp[t] != 0:  # pop: Sp moves before the address
            self._move_sp(t, -regs.stack_incr)
        vd = op.vd
        addr = self._addr(t, regs, op.addr, mode)
        if vd < N_WRITABLE:
            has_cfg = not all_zero(self.lane_config)
            is32 = mode in LOAD32
            if has_cfg:
                phys = dst.phys_table(is32)[((addr & 0x3FC) + ROWS4) & 0x3FF]
                cols = self._lane_cols(addr, DEST_RD_COL_EXCHANGE, has_cfg)
                at = phys[LANE_ROW] * 16 + cols  # flat DstBits index of each lane's cell
            else:
                phys, at = self._cells(addr, is32)
            if not all_true(dst.valid[phys]):
                self.report_ub("SFPLOAD reads a ZEROACC'd (invalid) Dst row")
            flat = dst.bits.reshape(-1)
            old = lreg[vd]
            if is32:  # every 32-bit mode reads FP32 / sign-magnitude words unchanged
                hi = flat[at]
                new = F.dst32_halves_to_fp32(hi, flat[at + 128])
                cells = hi  # (FP16's infinity test below never sees these)
            elif mode in LOAD_TABLE_MODES and not has_cfg:
                cells = flat[at]
                new = load_table(mode)[cells]
            else:
                cells = flat[at].astype(np.uint32)
                new = load_convert(mode, cells, old)
            on = self.exec_mask if mode == INT32_ALL else self.enabled()
            if has_cfg:
                if mode == FP16:  # ENABLE_FP16A_INF: the largest FP16 value is infinity
                    inf = lanes.lane_flag(ENABLE_FP16A_INF) & ((cells & 0x7FFF) == 0x7FFF)
                    new = np.where(inf, (cells >> 15 << 31) | 0x7F800000, new)
                on = on & ~lanes.lane_flag(BLOCK_SFPU_RD_FROM_DEST)
            if all_true(on):
                lreg[vd] = new
            else:
                lreg[vd] = np.where(on, new, old)
            if vd < 4 and has_cfg:  # ENABLE_DEST_INDEX + CAPTURE_DEFAULT_DEST_INDEX
                cap = on & lanes.lane_flag(ENABLE_DEST_INDEX) & lanes.lane_flag(
                    CAPTURE_DEFAULT_DEST_INDEX)
                index = (((addr & 0x3FC) + LANE_ROW) << 4 | cols).astype(np.uint32)
                lreg[vd + 4] = np.where(cap, index, lreg[vd + 4])
        self.matrix.advance(t, op.addr_mode, update_fidelity=False)
        return addr

    def x_sfpstore(self, t: int, op: Op) -> None:
        self.matrix.sync_dst_config(t)
        dst = self.dst
        regs = self._regs(t)
        mode = regs.srcb_mode if op.mod == SRCB else op.mod
        if op.macro:
            addr = op.store_addr
        else:
            addr = self._addr(t, regs, op.addr, mode)
            if mode == INT32_ALL:  # push: Sp moves after the address is formed
                self._move_sp(t, regs.stack_incr)
        has_cfg = not all_zero(self.lane_config)
        on = self.exec_mask if mode == INT32_ALL else self.enabled()
        if has_cfg:
            on = on & ~self.lanes.lane_flag(BLOCK_DEST_WR_FROM_SFPU)
        if not all_zero(on):
            is32 = mode in STORE32
            if has_cfg:
                phys = dst.phys_table(is32)[((addr & 0x3FC) + ROWS4) & 0x3FF]
                cols = self._lane_cols(addr, DEST_WR_COL_EXCHANGE, has_cfg)
                at = phys[LANE_ROW] * 16 + cols  # flat DstBits index of each lane's cell
            else:
                phys, at = self._cells(addr, is32)
            if not all_true(dst.valid[phys]):
                self.report_ub("SFPSTORE writes some columns of a ZEROACC'd (invalid) Dst row")
            flat = dst.bits.reshape(-1)
            if mode == BF16:
                cells = store_table_bf16()[self.lreg[op.vd] >> 16]
            else:
                cells = store_convert(mode, self.lreg[op.vd])
            if not all_true(on):
                at, cells = at[on], cells[on]
            if is32:  # the high half in BF16 storage order, the low half 8 rows further
                flat[at] = (cells >> 16).astype(np.uint16)
                flat[at + 128] = cells.astype(np.uint16)
            else:
                flat[at] = cells.astype(np.uint16)
            dst.valid[phys] = True
        if not op.macro:
            self.matrix.advance(t, op.addr_mode, update_fidelity=False)

    # ---- immediates and moves ------------------------------------------------------------

    def x_sfploadi(self, t: int, op: Op) -> None:
        if op.vd >= N_WRITABLE:
            return
        new = loadi_value(op.mod, op.imm16, self.lreg[op.vd])
        if new is None:
            self.report_ub(f"SFPLOADI Mod0 {op.mod} is no conversion")
            return
        self.write(op.vd, new, self.enabled())

    def x_sfpmov(self, t: int, op: Op) -> None:
        lanes = self.enabled() if op.mod != MOV_ALL_LANES else self.exec_mask
        if op.mod & MOV_FROM_SPECIAL:
            vc, st = op.c, self.lanes
            if vc < 4:
                x = st.templates[vc].copy()
            elif vc < 8:
                x = st.sequences[vc - 4].copy()
            elif vc == 8:
                x = st.misc.copy()
            elif vc == 9:
                x = st.advance_prng(lanes)
            elif vc == 15:
                x = self.lane_config.astype(np.uint32)
            else:
                x = np.zeros(LANES, dtype=np.uint32)
        else:
            x = self.lreg[op.c]
            if op.mod & MOV_NEGATE:
                x = x ^ SIGN
        self.write(op.vd, x, lanes)

    def x_sfpswap(self, t: int, op: Op) -> None:
        vc, vd, lreg = op.c, op.vd, self.lreg
        cval, dval = lreg[vc].copy(), lreg[vd].copy()
        lanes = self.enabled()
        if op.mod == 0:
            swap = np.ones(LANES, dtype=bool)
        else:
            vd_min = ((SWAP_VD_MIN.get(op.mod, 0) >> LANE) & 1).astype(bool)
            smaller = sign_mag_key(cval) < sign_mag_key(dval)
            swap = np.where(vd_min, smaller, ~smaller)
            swap ^= self.lanes.lane_flag(EXCHANGE_SRCB_SRCC)
        swap &= lanes
        index = swap & self.lanes.lane_flag(ENABLE_DEST_INDEX)
        plain = swap & ~index
        # argmin/argmax: results only in LReg 0..3, and the index registers swap too
        if vc < 4:
            lreg[vc] = np.where(index, dval, lreg[vc])
        if vd < 4:
            lreg[vd] = np.where(index, cval, lreg[vd])
        ca, da = 4 + (vc & 3), 4 + (vd & 3)
        ia, ib = lreg[ca].copy(), lreg[da].copy()
        lreg[ca] = np.where(index, ib, lreg[ca])
        lreg[da] = np.where(index, ia, lreg[da])
        if vc < N_WRITABLE:
            lreg[vc] = np.where(plain, dval, lreg[vc])
        if vd < N_WRITABLE:
            lreg[vd] = np.where(plain, cval, lreg[vd])

    def x_sfptransp(self, t: int, op: Op) -> None:
        lanes = self.enabled()
        for base in (0, 4):
            block = self.lreg[base:base + 4].reshape(4, 4, 8)
            moved = block.transpose(1, 0, 2).reshape(4, LANES)
            self.lreg[base:base + 4] = np.where(lanes, moved, self.lreg[base:base + 4])

    def x_sfpshft2(self, t: int, op: Op) -> None:
        lreg, mode = self.lreg, op.mod
        lanes = self.enabled()
        if mode in (COPY4, SUBVEC_CHAINED_COPY4, SUBVEC_SHFLROR1_AND_COPY4):
            if mode == COPY4:
                new3 = np.zeros(LANES, dtype=np.uint32)
            elif mode == SUBVEC_CHAINED_COPY4:
                new3 = np.concatenate([lreg[0][8:], np.zeros(8, dtype=np.uint32)])
            else:
                new3 = _rotate_right(lreg[op.c], None)
            moved = np.stack([lreg[1], lreg[2], lreg[3], new3])
            lreg[0:4] = np.where(lanes, moved, lreg[0:4])
        elif mode == SUBVEC_SHFLROR1:
            self.write(op.vd, _rotate_right(lreg[op.c], None), lanes)
        elif mode == SUBVEC_SHFLSHR1:
            self.write(op.vd, _rotate_right(lreg[op.c], np.zeros(LANES, dtype=np.uint32)),
                       lanes)
        elif mode in (SHFT_LREG, SHFT_IMM):
            if mode == SHFT_LREG:
                amount = lreg[op.c].view(np.int32).astype(np.int64)
            else:
                imm = op.imm12 - ((op.imm12 & 0x800) << 1)
                amount = np.full(LANES, imm, dtype=np.int64)
            x = lreg[op.b].astype(np.int64)
            left = (x << (amount & 31)) & 0xFFFFFFFF
            right = x >> (-amount & 31)
            self.write(op.vd, np.where(amount >= 0, left, right).astype(np.uint32), lanes)
        # other modes: no effect (the documented switch has no case for them)

    def x_sfpnop(self, t: int, op: Op) -> None:
        pass

    # ---- SFPCONFIG -----------------------------------------------------------------------

    def x_sfpconfig(self, t: int, op: Op) -> None:
        """SFPCONFIG: LoadMacroConfig (VD 0..8), the constant LRegs 11..14, LaneConfig (15),
        from ``LReg[0][lane & 7]`` or ``Imm16``, in the lanes the lane mask and the flags of
        lane ``lane & 7`` allow."""
        vd, mod1, imm = op.vd, op.mod, op.imm16
        st = self.lanes
        lanes = ~st.use_flags[LANE_COL] | st.flags[LANE_COL]
        if mod1 & MOD1_IMM16_IS_LANE_MASK:
            lanes = lanes & ((imm >> (LANE_COL * 2)) & 1).astype(bool)
        lanes = lanes & self.exec_mask
        from_l0 = self.lreg[0][LANE_COL].astype(np.uint32)
        value = np.full(LANES, imm, dtype=np.uint32) if mod1 & MOD1_IMM16_IS_VALUE else from_l0
        if vd < 4:
            st.templates[vd] = np.where(lanes, from_l0, st.templates[vd])
        elif vd < 8:
            st.sequences[vd - 4] = np.where(lanes, value, st.sequences[vd - 4])
        elif vd == 8:
            st.misc = np.where(lanes, self._combine(mod1, st.misc, value & 0xFFF),
                               st.misc).astype(np.uint32)
        elif 11 <= vd <= 14:
            if mod1 & MOD1_IMM16_IS_VALUE:
                value = np.full(LANES, CONST_DEFAULTS[vd - 11], dtype=np.uint32)
            else:
                value = from_l0
            self.lreg[vd] = np.where(lanes, value, self.lreg[vd])
        elif vd == 15:
            old = self.lane_config.astype(np.uint32)
            new = self._combine(mod1, old, value)
            if mod1 & MOD1_IMM16_IS_VALUE:
                new = (new & np.uint32(0xFFFF)) | (old & ~np.uint32(0xFFFF))
            self.lane_config[:] = np.where(lanes, new & LANE_CONFIG_MASK, old)
        # VD 9, 10: no effect

    @staticmethod
    def _combine(mod1: int, old: np.ndarray, value: np.ndarray) -> np.ndarray:
        op = mod1 & 6
        if op == 0:
            return value
        return old | value if op == 2 else old & value if op == 4 else old ^ value


__all__ = ["MovementMixin", "lane_rows_cols"]
