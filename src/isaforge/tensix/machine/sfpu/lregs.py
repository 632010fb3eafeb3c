"""The Vector Unit's state: the LReg file, lane predication, the flag stack, the PRNG and
the LoadMacroConfig (ISA documentation, Blackhole ``LReg.md``, ``VectorUnit.md``,
``SFPCONFIG.md``, ``SFPLOADMACRO.md``).

``LReg[0..7]`` are the general registers; ``LReg[8]`` (0.8373), ``LReg[9]`` (0),
``LReg[10]`` (1.0) and ``LReg[15]`` (lane * 2) are read-only constants; ``LReg[11..14]`` are
written by SFPCONFIG only; ``LReg[16]`` only by instructions SFPLOADMACRO schedules. The
documentation gives no reset value for ``LReg[11..14]``: we take the official simulator's
(ttsim's ``tensix_init``: -1.0, 2**-9, -0.67487759, -0.34484843), which is also what
SFPI's runtime loads (LReg[11] = -1.0).

Lane predication (``VectorUnit.md``): each lane has ``LaneFlags`` and
``UseLaneFlagsForLaneEnable`` (both false at reset) and a stack of up to 8 such pairs; a
lane is enabled unless ``LaneConfig[lane & 7].ROW_MASK`` has bit ``lane // 8`` set, or it
uses its flags and its flag is false.
"""

from __future__ import annotations

import numpy as np

LANES = 32
#: LReg[0..16]
N_LREGS = 17
#: LReg[0..7] are the general (writable) registers
N_WRITABLE = 8
#: the bonus register only SFPLOADMACRO's instructions write (and its SFPSTORE reads)
LREG_MACRO = 16
#: flag-stack entries per lane
STACK_DEPTH = 8

LANE = np.arange(LANES)
LANE_ROW = LANE // 8
LANE_COL = LANE & 7

#: reset values of the constant LRegs 8..14 (8, 9, 10 are read-only; 11..14 SFPCONFIG's)
CONSTANTS = {8: 0x3F56594B, 9: 0, 10: 0x3F800000, 11: 0xBF800000, 12: 0x3B000000,
             13: 0xBF2CC4C7, 14: 0xBEB08FF9}
#: SFPCONFIG's documented default values of LReg[11..14] (MOD1_IMM16_IS_VALUE)
CONST_DEFAULTS = np.array([-1.0, 1 / 65536, -0.67487759, -0.34484843],
                          dtype=np.float32).view(np.uint32)

# LaneConfig bits (SFPCONFIG.md)
ENABLE_FP16A_INF, DISABLE_BACKDOOR_LOAD, ENABLE_DEST_INDEX, CAPTURE_DEFAULT_DEST_INDEX = 0, 1, 2, 3
BLOCK_DEST_WR_FROM_SFPU, BLOCK_SFPU_RD_FROM_DEST, DEST_RD_COL_EXCHANGE = 4, 5, 6
DEST_WR_COL_EXCHANGE, EXCHANGE_SRCB_SRCC, ROW_MASK = 7, 8, 12
LANE_CONFIG_MASK = (1 << 18) - 1


def reset_lregs(lreg: np.ndarray) -> None:
    """Give ``lreg`` (``(17, 32)`` uint32) its reset contents: zeros and the constants."""
    lreg[:] = 0
    for k, v in CONSTANTS.items():
        lreg[k] = v
    lreg[15] = LANE * 2


def all_zero(a: np.ndarray) -> bool:
    """Whether every element of the small array ``a`` is zero (cheaper than ``a.any()``
    for the 32 lanes: no ufunc)."""
    return a.tobytes() == bytes(a.nbytes)


def all_true(a: np.ndarray) -> bool:
    """Whether every element of the small bool array ``a`` is True (numpy's bools are the
    bytes 0 and 1)."""
    return a.tobytes() == b"\x01" * a.size


class LaneState:
    """Per-lane predication (LaneFlags, UseLaneFlagsForLaneEnable, the flag stack), the
    PRNG and the LoadMacroConfig; ``lane_config`` is the LaneConfig array the unit shares
    with the Matrix Unit."""

    def __init__(self, lane_config: np.ndarray) -> None:
        self.lane_config = lane_config
        self.flags = np.zeros(LANES, dtype=bool)
        self.use_flags = np.zeros(LANES, dtype=bool)
        #: flag stack: entries ``[depth, lane]`` (LaneFlags, UseLaneFlagsForLaneEnable)
        self.stack_flags = np.zeros((STACK_DEPTH, LANES), dtype=bool)
        self.stack_use = np.zeros((STACK_DEPTH, LANES), dtype=bool)
        self.depth = np.zeros(LANES, dtype=np.int64)
        #: the documented per-lane PRNG (state 0 at reset, as in ttsim)
        self.prng = np.zeros(LANES, dtype=np.uint32)
        #: LoadMacroConfig per lane: InstructionTemplate[4], Sequence[4], Misc (12 bits)
        self.templates = np.zeros((4, LANES), dtype=np.uint32)
        self.sequences = np.zeros((4, LANES), dtype=np.uint32)
        self.misc = np.zeros(LANES, dtype=np.uint32)

    def lane_flag(self, bit: int) -> np.ndarray:
        """LaneConfig bit ``bit`` of each lane, as bools."""
        return (self.lane_config >> bit & 1).astype(bool)

    def enabled(self) -> np.ndarray:
        """``LaneEnabled`` of each lane (``IsLaneEnabled``)."""
        by_flags = self.flags | ~self.use_flags
        if all_zero(self.lane_config):  # no ROW_MASK anywhere (the usual case)
            return by_flags
        masked = (self.lane_config[LANE_COL] >> (ROW_MASK + LANE_ROW) & 1).astype(bool)
        return ~masked & by_flags

    def top(self, empty_flags: bool, empty_use: bool) -> tuple[np.ndarray, np.ndarray]:
        """The stack top of each lane (LaneFlags, Use), or the given values where empty."""
        idx = np.maximum(self.depth - 1, 0)
        empty = self.depth == 0
        flags = np.where(empty, empty_flags, self.stack_flags[idx, LANE])
        use = np.where(empty, empty_use, self.stack_use[idx, LANE])
        return flags, use

    def set_top(self, lanes: np.ndarray, flags: np.ndarray, use: np.ndarray) -> None:
        """Overwrite the stack top of ``lanes`` (which must not be empty)."""
        lanes = lanes & (self.depth > 0)
        idx = self.depth[lanes] - 1
        self.stack_flags[idx, LANE[lanes]] = flags[lanes]
        self.stack_use[idx, LANE[lanes]] = use[lanes]

    def advance_prng(self, lanes: np.ndarray) -> np.ndarray:
        """``AdvancePRNG()`` in ``lanes``: each lane's current state (uint32), stepping it."""
        state = self.prng
        taps = state & np.uint32(0x80200003)
        parity = (taps ^ (taps >> 1) ^ (taps >> 21) ^ (taps >> 31)) & 1
        nxt = ((parity ^ 1) << 31).astype(np.uint32) | (state >> 1)
        result = state.copy()
        self.prng = np.where(lanes, nxt, state).astype(np.uint32)
        return result


__all__ = ["CONSTANTS", "CONST_DEFAULTS", "LANE", "LANES", "LANE_COL", "LANE_ROW",
           "LREG_MACRO", "LaneState", "N_LREGS", "N_WRITABLE", "STACK_DEPTH", "reset_lregs"]
