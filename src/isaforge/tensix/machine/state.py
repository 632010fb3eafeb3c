"""Machine state of the Tensix coprocessor outside the tile register files (Dst, SrcA, SrcB).

Everything is sized as the hardware is and held in numpy arrays:

* :class:`RWCs`: per thread, the read-write counters SrcA/SrcB/Dst with their ``_Cr``
  checkpoints, FidelityPhase and ExtraAddrModBit (spec 000 §2.1);
* :class:`ThreadConfig`: per thread, the registers ``SETC16`` writes (AddrMod sections,
  DEST_TARGET_REG_CFG_MATH_Offset, FIDELITY_BASE, CLR_DVALID disables, ...);
* :class:`Config`: the thread-agnostic configuration, two banks (``CFG_STATE_ID_StateID``) of
  32-bit words, accessed by ``WRCFG``/``RDCFG``/``RMWCIB``;
* :class:`ADCs`: per thread, unpacker 0, unpacker 1 and the packers, two channels each, X/Y/Z/W
  with their ``_Cr`` copies (spec 000 §5.1);
* :class:`GPRs` (64 per thread), :class:`Semaphores` (8), :class:`Mutexes`;
* the per-thread MOP configuration and replay buffer live in :mod:`.mop` and :mod:`.replay`.

Named fields and sizes are the architecture's (:mod:`isaforge.tensix.isa`: ``config_fields``,
``thread_config_fields``, ``N_THREADS``, ...).

Undefined behaviour (the specs' ``UndefinedBehaviour()`` cases) is reported through a
:class:`UBPolicy`: ``"stop"`` raises :class:`UndefinedBehaviourError`, ``"continue"`` records
the event and carries on with the behaviour each model documents.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...core.errors import EmulationError
from ..isa import (
    CONFIG_WORDS,
    N_GPRS,
    N_SEMAPHORES,
    N_THREADS,
    THREAD_CONFIG_REGS,
    RegField,
    config_fields,
    thread_config_fields,
)


class UndefinedBehaviourError(EmulationError):
    """A program did something the specification calls undefined behaviour."""


class NotImplementedInstruction(EmulationError):
    """An instruction the functional model does not cover yet."""


class DeadlockError(EmulationError):
    """Every unfinished thread is waiting and nothing can wake any of them."""

    def __init__(self, message: str, reasons: dict[int, str]) -> None:
        super().__init__(message)
        self.reasons = reasons


class StepLimitError(EmulationError):
    """The program ran longer than the step limit allows."""


@dataclass(frozen=True)
class UBEvent:
    """One reported undefined-behaviour case."""

    thread: int
    instruction: str
    message: str


class UBPolicy:
    """What to do on undefined behaviour: ``"stop"`` (raise) or ``"continue"`` (record)."""

    def __init__(self, mode: str = "stop") -> None:
        if mode not in ("stop", "continue"):
            raise ValueError(f"undefined-behaviour policy must be 'stop' or 'continue', "
                             f"not {mode!r}")
        self.mode = mode
        self.events: list[UBEvent] = []

    def record(self, ev: UBEvent) -> None:
        """Keep ``ev``; under ``"stop"`` raise :class:`UndefinedBehaviourError` for it."""
        self.events.append(ev)
        if self.mode == "stop":
            raise UndefinedBehaviourError(f"thread {ev.thread}: {ev.instruction}: undefined "
                                          f"behaviour: {ev.message}")


@dataclass(frozen=True)
class RegWrite:
    """What a ``reg_write`` hook is told besides the register number and the value: the
    register's ``space`` (``"gpr"``, ``"config"``, ``"thread_config"``), the ``thread`` whose
    instruction wrote it (for ``"gpr"`` and ``"thread_config"`` also the thread the register
    belongs to) and, for ``"config"``, the Config ``bank`` (CFG_STATE_ID) written."""

    space: str
    thread: int
    bank: int | None = None


#: a watcher of register writes: (space, thread, register, value, bank)
WriteWatch = Callable[[str, int, int, int, "int | None"], None]


# --------------------------------------------------------------------------------------------
# Named configuration fields
# --------------------------------------------------------------------------------------------


def _lookup(table: dict[str, RegField], name: str, what: str) -> RegField:
    try:
        return table[name]
    except KeyError:
        raise EmulationError(f"unknown {what} field '{name}'") from None


class WriteCountedArray(np.ndarray):
    """A numpy array that counts the writes made to it, so that values derived from it (the
    Matrix Unit's configuration, decoded AddrMod sections) can be cached and recomputed only
    after a write: ``version`` changes on every item assignment (``a[i] = v``, also through
    a view such as ``a[0][i] = v``, and ``a[i] |= v``), every ufunc with the array as
    ``out`` (``a += 1``) and :meth:`fill`. Whoever writes its memory some other way (a raw
    buffer, ``np.copyto``) must call :meth:`touch`. Reading is an ordinary ndarray's."""

    _counter: list[int]

    def __array_finalize__(self, obj: object) -> None:
        # views share their base's counter; a new array gets its own
        self._counter = getattr(obj, "_counter", None) or [0]

    @property
    def version(self) -> int:
        """A number that changes whenever the array (or a view of it) is written."""
        return self._counter[0]

    def touch(self) -> None:
        """Record a write made behind numpy's back."""
        self._counter[0] += 1

    def __setitem__(self, key: object, value: object) -> None:
        super().__setitem__(key, value)
        self._counter[0] += 1

    def __deepcopy__(self, memo: dict) -> WriteCountedArray:
        new = super().__deepcopy__(memo)
        new._counter = [self._counter[0]]  # the copy counts its own writes from here
        return new

    def __reduce__(self) -> tuple:
        fn, args, state = super().__reduce__()  # type: ignore[misc]
        return fn, args, (state, self._counter[0])

    def __setstate__(self, state: tuple) -> None:
        array_state, count = state
        super().__setstate__(array_state)
        self._counter = [count + 1]  # past every version seen before pickling

    def fill(self, value: object) -> None:
        super().fill(value)
        self._counter[0] += 1

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: object,
                        out: tuple | None = None, **kwargs: object) -> object:
        args = [x.view(np.ndarray) if isinstance(x, WriteCountedArray) else x for x in inputs]
        if out is None:
            return getattr(ufunc, method)(*args, **kwargs)
        for o in out:
            if isinstance(o, WriteCountedArray):
                o._counter[0] += 1
        plain = tuple(o.view(np.ndarray) if isinstance(o, WriteCountedArray) else o
                      for o in out)
        getattr(ufunc, method)(*args, out=plain, **kwargs)
        return out[0] if len(out) == 1 else out


def _counted(shape: tuple[int, ...], dtype: type) -> WriteCountedArray:
    return np.zeros(shape, dtype=dtype).view(WriteCountedArray)


def _replace(old: WriteCountedArray, value: object, what: str) -> WriteCountedArray:
    """``value`` as the new array behind ``old``'s attribute: same shape and dtype, and the
    same write counter, bumped (a replaced array is a write, and versions never repeat)."""
    new = np.array(value, dtype=old.dtype)
    if new.shape != old.shape:
        raise EmulationError(f"{what} must have shape {old.shape}, not {new.shape}")
    counted = new.view(WriteCountedArray)
    counted._counter = old._counter
    counted.touch()
    return counted


def field_bits(f: RegField) -> tuple[int, int, int]:
    """(register or word index, shift, mask) of a configuration field:
    ``array.item(row, index) >> shift & mask`` reads it."""
    return f.index, f.shift, (1 << f.size) - 1


#: CFG_STATE_ID_StateID (the Config bank a thread uses) as :func:`field_bits` gives it
_STATE_ID = field_bits(thread_config_fields()["CFG_STATE_ID_StateID"])


class ThreadConfig:
    """Per-thread configuration written by ``SETC16`` (16-bit registers): ``regs[thread, i]``
    (a :class:`WriteCountedArray`: ``version`` tells caches of derived values when to
    recompute)."""

    #: THD_STATE_SIZE-like count of registers (the highest named register + 1).
    N_REGS = THREAD_CONFIG_REGS

    def __init__(self) -> None:
        self._regs = _counted((N_THREADS, self.N_REGS), np.uint16)

    @property
    def regs(self) -> WriteCountedArray:
        """``(3, N_REGS) uint16``; assigning a new array copies it in (same shape)."""
        return self._regs

    @regs.setter
    def regs(self, value: np.ndarray) -> None:
        self._regs = _replace(self._regs, value, "ThreadConfig.regs")

    @property
    def version(self) -> int:
        """Changes whenever any ThreadConfig register is written (by any path)."""
        return self._regs._counter[0]

    def get(self, thread: int, name: str) -> int:
        f = _lookup(thread_config_fields(), name, "ThreadConfig")
        return (int(self.regs[thread, f.index]) >> f.shift) & ((1 << f.size) - 1)

    def bank(self, thread: int) -> int:
        """The Config bank ``thread`` uses: ``get(thread, "CFG_STATE_ID_StateID")``, read
        with ``item`` (no view of the write-counting array; the fast paths ask it often)."""
        index, shift, mask = _STATE_ID
        return self._regs.item(thread, index) >> shift & mask

    def set(self, thread: int, name: str, value: int) -> None:
        f = _lookup(thread_config_fields(), name, "ThreadConfig")
        if not 0 <= value < (1 << f.size):
            raise EmulationError(f"ThreadConfig {name}: {value} does not fit {f.size} bits")
        old = int(self.regs[thread, f.index])
        new = (old & ~f.mask) | (value << f.shift)
        if new != old:  # an unchanged register keeps the cached configuration valid
            self.regs[thread, f.index] = new

    # -- the AddrMod sections, decoded (spec 000 §3.3) --------------------------------------

    def addr_mod(self, thread: int, index: int) -> AddrMod:
        r = self.regs[thread]
        ab, dst, bias = int(r[12 + index]), int(r[28 + index]), int(r[47 + index])
        ab2 = int(r[20 + index])
        return AddrMod(
            srca_incr=ab & 0x3F, srca_cr=bool(ab >> 6 & 1),
            srca_clr=bool(ab >> 7 & 1),
            srcb_incr=ab >> 8 & 0x3F, srcb_cr=bool(ab >> 14 & 1),
            srcb_clr=bool(ab >> 15 & 1),
            dst_incr=dst & 0x3FF, dst_cr=bool(dst >> 10 & 1), dst_clr=bool(dst >> 11 & 1),
            dst_c_to_cr=bool(dst >> 12 & 1), fidelity_incr=dst >> 13 & 3,
            fidelity_clr=bool(dst >> 15 & 1),
            bias_incr=bias & 0xF, bias_clr=bool(bias >> 4 & 1), ab2=ab2 & 3,
        )

    def pack_addr_mod(self, thread: int, index: int) -> PackAddrMod:
        v = int(self.regs[thread, 37 + index])
        return PackAddrMod(ysrc_incr=v & 0xF, ysrc_cr=bool(v >> 4 & 1), ysrc_clr=bool(v >> 5 & 1),
                           ydst_incr=v >> 6 & 0xF, ydst_cr=bool(v >> 10 & 1),
                           ydst_clr=bool(v >> 11 & 1), zsrc_incr=v >> 12 & 1,
                           zsrc_clr=bool(v >> 13 & 1), zdst_incr=v >> 14 & 1,
                           zdst_clr=bool(v >> 15 & 1))


@dataclass(frozen=True)
class AddrMod:
    """One AddrMod section (AB + AB2 + DST + BIAS sub-descriptors), decoded."""

    srca_incr: int
    srca_cr: bool
    srca_clr: bool
    srcb_incr: int
    srcb_cr: bool
    srcb_clr: bool
    dst_incr: int  # 10-bit two's complement
    dst_cr: bool
    dst_clr: bool
    dst_c_to_cr: bool
    fidelity_incr: int
    fidelity_clr: bool
    bias_incr: int
    bias_clr: bool
    ab2: int = 0  # ADDR_MOD_AB2 bits (Blackhole); their effect is not documented


@dataclass(frozen=True)
class PackAddrMod:
    """One ADDR_MOD_PACK section (packer ADC Y/Z update), decoded."""

    ysrc_incr: int
    ysrc_cr: bool
    ysrc_clr: bool
    ydst_incr: int
    ydst_cr: bool
    ydst_clr: bool
    zsrc_incr: int
    zsrc_clr: bool
    zdst_incr: int
    zdst_clr: bool


class Config:
    """Thread-agnostic configuration: ``words[state_id, index]`` (two banks of 32-bit words;
    a :class:`WriteCountedArray`, see :attr:`version`)."""

    #: CFG_STATE_SIZE * 4 (the named words go up to 222).
    N_WORDS = CONFIG_WORDS

    def __init__(self) -> None:
        self._words = _counted((2, self.N_WORDS), np.uint32)

    @property
    def words(self) -> WriteCountedArray:
        """``(2, N_WORDS) uint32``; assigning a new array copies it in (same shape)."""
        return self._words

    @words.setter
    def words(self, value: np.ndarray) -> None:
        self._words = _replace(self._words, value, "Config.words")

    @property
    def version(self) -> int:
        """Changes whenever any Config word is written (WRCFG, RMWCIB*, :meth:`set`, a
        program's ``.config``, or a user writing or replacing ``words``)."""
        return self._words._counter[0]

    def get(self, name: str, state: int = 0) -> int:
        f = _lookup(config_fields(), name, "Config")
        return (int(self.words[state, f.index]) >> f.shift) & ((1 << f.size) - 1)

    def set(self, name: str, value: int, state: int | None = None) -> None:
        """Set a field in one bank, or in both when ``state`` is None."""
        f = _lookup(config_fields(), name, "Config")
        if not 0 <= value < (1 << f.size):
            raise EmulationError(f"Config {name}: {value} does not fit {f.size} bits")
        for s in (0, 1) if state is None else (state,):
            old = int(self.words[s, f.index])
            new = (old & ~f.mask & 0xFFFFFFFF) | (value << f.shift)
            if new != old:  # an unchanged word keeps the cached configuration valid
                self.words[s, f.index] = new


def config_versions(config: Config, thread_config: ThreadConfig) -> tuple[int, int]:
    """``(config.version, thread_config.version)`` in one call: what the units key their
    configuration records on (asked on every executed instruction that reads them)."""
    return config._words._counter[0], thread_config._regs._counter[0]


# --------------------------------------------------------------------------------------------
# Counters
# --------------------------------------------------------------------------------------------

# RWC array columns
SRCA, SRCA_CR, SRCB, SRCB_CR, DST, DST_CR, FIDELITY, EXTRA = range(8)
RWC_MASKS = (0x3F, 0x3F, 0x3F, 0x3F, 0x3FF, 0x3FF, 0x3, 0x1)


class RWCs:
    """Read-write counters of the three threads: ``v[thread, column]`` with columns
    SrcA, SrcA_Cr, SrcB, SrcB_Cr, Dst, Dst_Cr, FidelityPhase, ExtraAddrModBit."""

    #: width mask of the SFPU stack pointer RWC ``Sp`` (10 bits, like Dst)
    SP_MASK = 0x3FF

    def __init__(self) -> None:
        self.v = np.zeros((N_THREADS, 8), dtype=np.uint16)
        #: the SFPU stack pointer RWC ``Sp`` of each thread (Blackhole; moved only by
        #: SFPLOAD/SFPSTORE in MOD0_FMT_INT32_ALL mode), kept apart from ``v`` so that the
        #: Matrix Unit's counter rows keep their shape
        self.sp = np.zeros(N_THREADS, dtype=np.uint16)

    def get(self, thread: int, col: int) -> int:
        return int(self.v[thread, col])

    def set(self, thread: int, col: int, value: int) -> None:
        self.v[thread, col] = value & RWC_MASKS[col]

    def text(self, thread: int) -> str:
        """The spec's notation: ``rwc_a=16(cr=0) rwc_b=8(cr=0) rwc_d=24(cr=0) fid=0``."""
        r = [int(x) for x in self.v[thread]]
        return (f"rwc_a={r[SRCA]}(cr={r[SRCA_CR]}) rwc_b={r[SRCB]}(cr={r[SRCB_CR]}) "
                f"rwc_d={r[DST]}(cr={r[DST_CR]}) fid={r[FIDELITY]}")


# ADC layout: [thread, unit, channel, dimension, (value, cr)]
UNP0, UNP1, PACK = range(3)
X, Y, Z, W = range(4)
ADC_MASKS = (0x3FFFF, 0x1FFF, 0xFF, 0xFF)  # X 18 bits, Y 13, Z 8, W 8


class ADCs:
    """Address counters: ``v[thread, unit, channel, dim, 0]`` is the counter and ``[..., 1]``
    its ``_Cr``; units are unpacker 0, unpacker 1 and the packers; dims X, Y, Z, W."""

    def __init__(self) -> None:
        self.v = np.zeros((N_THREADS, 3, 2, 4, 2), dtype=np.uint32)

    def get(self, thread: int, unit: int, channel: int, dim: int, cr: bool = False) -> int:
        return int(self.v[thread, unit, channel, dim, int(cr)])

    def set(self, thread: int, unit: int, channel: int, dim: int, value: int,
            cr: bool | None = None) -> None:
        """Set the counter (``cr=False``), its ``_Cr`` (``True``) or both (``None``)."""
        value &= ADC_MASKS[dim]
        if cr is None or not cr:
            self.v[thread, unit, channel, dim, 0] = value
        if cr is None or cr:
            self.v[thread, unit, channel, dim, 1] = value


class GPRs:
    """The 64 32-bit general-purpose registers of each thread: ``v[thread, index]``.

    :meth:`set` is how instructions write them; ``watch`` (set by the machine while a
    ``reg_write`` hook is registered) is told of each such write."""

    N = N_GPRS

    def __init__(self) -> None:
        self.v = np.zeros((N_THREADS, self.N), dtype=np.uint32)
        self.watch: WriteWatch | None = None

    def get(self, thread: int, index: int) -> int:
        return int(self.v[thread, index])

    def set(self, thread: int, index: int, value: int) -> None:
        value &= 0xFFFFFFFF
        self.v[thread, index] = value
        if self.watch is not None:
            self.watch("gpr", thread, index, value, None)


class Packers:
    """The packer state that SETDMAREG's special form reads (ISA documentation,
    SETDMAREG_Special, written for Wormhole's four packers; Blackhole has a single packer,
    PACR.md, so only packer 0 exists here): ``acc_tile_size[thread]`` (16 bits),
    ``last_tile_size`` and ``last_thread`` (the thread that packed last, -1: none),
    ``all_zero_flags`` (32 bits), a 32-bin ``exp_histogram`` of saturating byte counters and
    ``exp_histogram_max``. PACR does not keep these counts and histograms (unmodelled; its
    own state is :class:`~.pack.PackerState`), so only SETDMAREG (which can reset
    ``acc_tile_size``) and the user change these; they start at zero (nothing packed)."""

    def __init__(self) -> None:
        self.acc_tile_size = np.zeros(N_THREADS, dtype=np.uint16)
        self.last_tile_size = 0
        self.last_thread = -1
        self.all_zero_flags = 0
        self.exp_histogram = np.zeros(32, dtype=np.uint8)
        self.exp_histogram_max = 0


class Semaphores:
    """The 8 semaphores of the Sync Unit: ``value[i]`` and ``max[i]`` (4 bits each)."""

    N = N_SEMAPHORES
    NAMES = ("FPU_SFPU", "MATH_PACK", "UNPACK_TO_DEST", "UNPACK_OPERAND_SYNC", "PACK_DONE",
             "UNPACK_SYNC", "UNPACK_MATH_DONE", "MATH_DONE")

    def __init__(self) -> None:
        self.value = np.zeros(self.N, dtype=np.uint8)
        self.max = np.zeros(self.N, dtype=np.uint8)


class Mutexes:
    """The Sync Unit's mutexes (Blackhole: indices 0, 2, 3, 4); ``held_by[i]`` is the thread
    holding mutex ``i`` or -1."""

    VALID = (0, 2, 3, 4)

    def __init__(self) -> None:
        self.held_by = np.full(5, -1, dtype=np.int8)


__all__ = [
    "ADCs",
    "AddrMod",
    "Config",
    "DeadlockError",
    "GPRs",
    "Mutexes",
    "NotImplementedInstruction",
    "N_THREADS",
    "PackAddrMod",
    "Packers",
    "RWCs",
    "RegField",
    "RegWrite",
    "Semaphores",
    "StepLimitError",
    "ThreadConfig",
    "UBEvent",
    "UBPolicy",
    "UndefinedBehaviourError",
    "WriteCountedArray",
    "WriteWatch",
    "config_fields",
    "thread_config_fields",
]
