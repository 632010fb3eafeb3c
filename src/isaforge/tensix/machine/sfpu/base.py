"""What every part of the Vector Unit shares: its state and the lane-level write rules.

:class:`SfpuBase` holds the state the unit is given (Dst, the LRegs, LaneConfig, the RWCs,
Config, ThreadConfig, the Matrix Unit whose AddrMod logic SFPLOAD/SFPSTORE share, the
machine's ``report_ub``) and its own (:class:`~.lregs.LaneState`). The instruction groups
(:mod:`.movement`, :mod:`.arithmetic`, :mod:`.conditions`) are mixins of it, joined in
:class:`~.unit.Sfpu`.
"""

from __future__ import annotations

import numpy as np

from ..dispatch import Report
from ..matrix import MatrixUnit, thread_cfg
from ..regfiles import Dst
from ..state import Config, RWCs, ThreadConfig
from .lregs import LANE, LANES, LREG_MACRO, N_WRITABLE, LaneState, all_true, all_zero
from .ops import Op

ALL_LANES = np.ones(LANES, dtype=bool)
SIGN = np.uint32(0x80000000)


class SfpuBase:
    """The Vector Unit's state and helpers (see the module documentation)."""

    def __init__(self, dst: Dst, lreg: np.ndarray, lane_config: np.ndarray, rwc: RWCs,
                 config: Config, thread_config: ThreadConfig, matrix: MatrixUnit,
                 report_ub: Report) -> None:
        self.dst = dst
        #: LReg[0..16], ``(17, 32)`` uint32
        self.lreg = lreg
        #: LaneConfig of each lane (18 bits), shared with the Matrix Unit
        self.lane_config = lane_config
        self.rwc = rwc
        self.config = config
        self.thread_config = thread_config
        self.matrix = matrix
        self.report_ub = report_ub
        self.lanes = LaneState(lane_config)
        #: lanes an instruction may touch besides LaneEnabled (not those taking the
        #: back-door template load)
        self.exec_mask = ALL_LANES
        #: per thread: ((Config version, ThreadConfig version), SFPLOAD/SFPSTORE's settings)
        self._regs_cache: dict[int, tuple[tuple[int, int], object]] = {}
        #: _SfpuRegs by their values and by the register bytes they were read from
        #: (Sfpu._regs gives one object per values)
        self._regs_canonical: dict[tuple[object, ...], object] = {}
        #: SFPLOAD/SFPSTORE's Dst rows and cell indices by (address, 32-bit, addressing bits)
        self._cells_cache: dict[tuple[int, bool, bool, bool], tuple[np.ndarray, np.ndarray]] = {}

    def cfg(self, t: int, name: str) -> int:
        return thread_cfg(self.config, self.thread_config, t, name)

    def enabled(self) -> np.ndarray:
        """LaneEnabled of each lane, for the instruction being executed."""
        lanes = self.lanes
        if all_zero(self.lane_config) and (all_zero(lanes.use_flags) or all_true(lanes.flags)):
            # every lane enabled by its flags (the usual case, with or without conditional
            # execution on): IsLaneEnabled is True everywhere, the exec mask decides
            return self.exec_mask.copy()
        return lanes.enabled() & self.exec_mask

    def write(self, vd: int, values: np.ndarray, lanes: np.ndarray) -> None:
        """``LReg[vd] = values`` in ``lanes`` when ``vd`` is writable (0..7, or 16)."""
        if vd < N_WRITABLE or vd == LREG_MACRO:
            self.lreg[vd] = np.where(lanes, values, self.lreg[vd])

    def write_indirect(self, op: Op, indirect: bool, values: np.ndarray,
                       lanes: np.ndarray) -> None:
        """Write a MAD-style result: to ``VD``, or with ``indirect`` (and ``VD != 16``) to
        the register each lane's ``LReg[7] & 15`` names; only 0..7 and 16 are written."""
        if not indirect or op.vd == LREG_MACRO:
            self.write(op.vd, values, lanes)
            return
        vd = (self.lreg[7] & 15).astype(np.int64)
        lanes = lanes & ((vd < N_WRITABLE) | (vd == LREG_MACRO))
        self.lreg[vd[lanes], LANE[lanes]] = values[lanes]

    def read_indirect(self, reg: int, indirect: bool) -> np.ndarray:
        """``LReg[reg]``, or with ``indirect`` each lane's ``LReg[LReg[7] & 15]``."""
        if not indirect:
            return self.lreg[reg]
        return self.lreg[(self.lreg[7] & 15).astype(np.int64), LANE]

    def set_flags(self, values: np.ndarray, lanes: np.ndarray) -> None:
        """``LaneFlags = values`` in ``lanes``."""
        self.lanes.flags = np.where(lanes, values, self.lanes.flags)


__all__ = ["ALL_LANES", "SIGN", "SfpuBase"]
