"""The Sync Unit and the Wait Gate: semaphores, mutexes, STALLWAIT and SEMWAIT.

* SEMINIT / SEMPOST / SEMGET change the 8 semaphores (4-bit ``Value`` and ``Max``) selected by
  a bit mask; SEMPOST saturates at 15 and SEMGET at 0.
* STALLWAIT and SEMWAIT latch a wait instruction at the thread's Wait Gate: a 9-bit *block
  mask* (B0..B8, 0 means B6) says which later instructions are held back, a *condition mask*
  says what to wait for. While the conditions do not all hold, an instruction the block mask
  covers cannot pass the gate; once they hold the latch is forgotten. A new STALLWAIT/SEMWAIT
  waits behind a latched one.
* ATGETM / ATRELM acquire and release Blackhole's mutexes (0, 2, 3, 4); ATGETM waits at the
  Wait Gate while another thread holds the mutex.

In this functional model every instruction finishes when it executes, so the pipeline
conditions of STALLWAIT (C0..C4, C9..C12) always hold; C5..C8 test the SrcA/SrcB
``AllowedClient`` of the relevant banks.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from .dispatch import Execute, Fields, Report, Unit, Wait
from .regfiles import SrcRegs
from .state import N_THREADS, Mutexes, Semaphores

# Which block-mask bits hold back which instruction (BlackholeA0 STALLWAIT.md's table).
B0, B1, B2, B3, B4, B5, B6, B7, B8 = (1 << i for i in range(9))
_SCALAR = ("ADDDMAREG", "SUBDMAREG", "MULDMAREG", "SHIFTDMAREG", "BITWOPDMAREG", "CMPDMAREG",
           "SETDMAREG", "FLUSHDMA", "DMANOP", "ATCAS", "ATINCGET", "ATINCGETPTR", "ATSWAP",
           "LOADIND", "LOADREG", "REG2FLOP", "STOREIND", "STOREREG")
_MISC = ("ADDRCRXY", "ADDRCRZW", "INCADCXY", "INCADCZW", "SETADC", "SETADCXX", "SETADCXY",
         "SETADCZW", "SETDVALID", "RSTDMA")
_MATRIX = ("APOOL3S1", "APOOL3S2", "CLEARDVALID", "CLREXPHIST", "CONV3S1", "CONV3S2", "DOTPV",
           "ELWADD", "ELWMUL", "ELWSUB", "GAPOOL", "GATESRCRST", "GMPOOL", "INCRWC", "MFCONV3S1",
           "MOVA2D", "MOVB2A", "MOVB2D", "MOVD2A", "MOVD2B", "MOVDBGA2D", "MPOOL3S1",
           "MPOOL3S2", "MVMUL", "SETRWC", "SHIFTXA", "SHIFTXB", "TRNSPSRCB", "ZEROACC",
           "ZEROSRC")
_CONFIG = ("CFGSHIFTMASK", "RDCFG", "RMWCIB0", "RMWCIB1", "RMWCIB2", "RMWCIB3", "SETC16",
           "STREAMWRCFG", "WRCFG")
_SYNC = ("ATGETM", "ATRELM", "SEMGET", "SEMINIT", "SEMPOST")

BLOCK_BITS: dict[str, int] = {}
BLOCK_BITS.update({n: B0 | B5 for n in _SCALAR})
BLOCK_BITS.update({n: B0 for n in _MISC})
BLOCK_BITS.update({n: B6 for n in _MATRIX})
BLOCK_BITS.update({n: B7 for n in _CONFIG})
BLOCK_BITS.update({n: B1 for n in _SYNC})
BLOCK_BITS.update({"PACR": B0 | B2, "PACR_SETREG": B0 | B2, "UNPACR": B0 | B3,
                   "UNPACR_NOP": B0 | B3, "XMOV": B0 | B4})
ALL_BLOCK = 0x1FF
BLOCK_BITS.update({"STALLWAIT": ALL_BLOCK, "SEMWAIT": ALL_BLOCK, "STREAMWAIT": ALL_BLOCK})


def block_bits(name: str) -> int:
    """The block-mask bits that hold back instruction ``name`` (SFPU instructions: B8; a
    plain NOP only when every bit is set)."""
    bits = BLOCK_BITS.get(name)
    if bits is not None:
        return bits
    if name.startswith("SFP"):
        return B8
    return 0


def is_blocked(name: str, block_mask: int) -> bool:
    if name == "NOP":
        return block_mask & ALL_BLOCK == ALL_BLOCK
    return bool(block_bits(name) & block_mask)


#: semaphore mask -> the semaphores it selects (:meth:`SyncUnit.selected`)
_SELECTED = tuple(tuple(i for i in range(Semaphores.N) if mask >> i & 1) for mask in range(256))


@dataclass(slots=True)
class LatchedWait:
    """The Wait Gate's latched wait instruction."""

    opcode: str  # "STALLWAIT" or "SEMWAIT"
    block_mask: int
    condition_mask: int
    semaphore_mask: int = 0


class SyncUnit(Unit):
    """Semaphores, mutexes and the per-thread latched waits; the STALLWAIT conditions C5..C8
    read the SrcA/SrcB banks' ownership."""

    def __init__(self, srca: SrcRegs, srcb: SrcRegs, report_ub: Report) -> None:
        self.sem = Semaphores()
        self.mutex = Mutexes()
        self.latched: list[LatchedWait | None] = [None] * N_THREADS
        self.srca = srca
        self.srcb = srcb
        self.report_ub = report_ub
        #: bumped by every semaphore change made here (SEMINIT, SEMPOST, SEMGET, and what
        #: calls seminit/sempost/semget: the tile's semaphore registers) and, by the
        #: coprocessor, whenever code from outside may have run (each run/step/burst call, a
        #: hook): while it keeps its value, the semaphores and the latched waits have not
        #: changed
        self.changes = 0

    # -- instructions -----------------------------------------------------------------------

    def handlers(self) -> Mapping[str, Execute]:
        return {"SEMINIT": self._seminit, "SEMPOST": self._sempost, "SEMGET": self._semget,
                "SEMWAIT": self._semwait, "STALLWAIT": self._stallwait,
                "ATGETM": self._atgetm, "ATRELM": self._atrelm}

    def waits(self) -> Mapping[str, Wait]:
        return {"ATGETM": lambda t, f: self.mutex_wait(t, f["mutex_index"])}

    def quiet(self) -> Collection[str]:
        return ("STALLWAIT", "SEMWAIT")  # (the executing thread's own latch only)

    def _seminit(self, t: int, f: Fields) -> None:
        self.seminit(f["sem_sel"] & 0xFF, f["init_value"], f["max_value"])

    def _sempost(self, t: int, f: Fields) -> None:
        self.sempost(f["sem_sel"] & 0xFF)

    def _semget(self, t: int, f: Fields) -> None:
        self.semget(f["sem_sel"] & 0xFF)

    def _semwait(self, t: int, f: Fields) -> None:
        cond = f["wait_sem_cond"]
        if not cond:
            self.report_ub("SEMWAIT with an empty condition mask")
            return
        self.latched[t] = LatchedWait("SEMWAIT", f["stall_res"] or 1 << 6, cond,
                                      f["sem_sel"] & 0xFF)

    def _stallwait(self, t: int, f: Fields) -> None:
        cond = f["wait_res"] & 0x1FFF or 0x0F
        self.latched[t] = LatchedWait("STALLWAIT", f["stall_res"] or 1 << 6, cond)

    def _atgetm(self, t: int, f: Fields) -> None:
        self.atgetm(t, f["mutex_index"])

    def _atrelm(self, t: int, f: Fields) -> None:
        self.atrelm(t, f["mutex_index"])

    # -- semaphores -------------------------------------------------------------------------

    @staticmethod
    def selected(mask: int) -> list[int]:
        return [i for i in range(Semaphores.N) if mask >> i & 1]

    def seminit(self, mask: int, init: int, maximum: int) -> None:
        self.changes += 1
        for i in self.selected(mask):
            self.sem.value[i] = init
            self.sem.max[i] = maximum

    def sempost(self, mask: int) -> None:
        self.changes += 1
        value = self.sem.value
        for i in _SELECTED[mask & 0xFF]:  # (selected)
            v = int(value[i])
            if v < 15:
                value[i] = v + 1

    def semget(self, mask: int) -> None:
        self.changes += 1
        value = self.sem.value
        for i in _SELECTED[mask & 0xFF]:
            v = int(value[i])
            if v > 0:
                value[i] = v - 1

    # -- wait conditions --------------------------------------------------------------------

    def stall_conditions_unmet(self, condition_mask: int) -> list[str]:
        """The STALLWAIT conditions (C0..C12) of ``condition_mask`` that say keep waiting."""
        checks = {
            5: (not self.srca.unpacker_ready(), "C5: SrcA unpacker bank not owned by Unpackers"),
            6: (not self.srcb.unpacker_ready(), "C6: SrcB unpacker bank not owned by Unpackers"),
            7: (not self.srca.matrix_ready(), "C7: SrcA bank not owned by the Matrix Unit"),
            8: (not self.srcb.matrix_ready(), "C8: SrcB bank not owned by the Matrix Unit"),
        }
        return [msg for bit, (waiting, msg) in checks.items()
                if condition_mask >> bit & 1 and waiting]

    def sem_conditions_unmet(self, semaphore_mask: int, condition_mask: int) -> list[str]:
        out = []
        for i in self.selected(semaphore_mask):
            v, m = int(self.sem.value[i]), int(self.sem.max[i])
            if condition_mask & 1 and v == 0:
                out.append(f"C0: semaphore {i} ({Semaphores.NAMES[i]}) Value == 0")
            if condition_mask & 2 and v >= m:
                out.append(f"C1: semaphore {i} ({Semaphores.NAMES[i]}) Value {v} >= Max {m}")
        return out

    def latched_unmet(self, t: int) -> list[str]:
        """Why thread ``t``'s latched wait still holds (empty: it is satisfied)."""
        w = self.latched[t]
        if w is None:
            return []
        if w.opcode == "SEMWAIT":
            return self.sem_conditions_unmet(w.semaphore_mask, w.condition_mask)
        return self.stall_conditions_unmet(w.condition_mask)

    def latched_holds(self, t: int) -> bool:
        """Whether thread ``t``'s latched wait still holds (:meth:`latched_unmet` is not
        empty), without naming the conditions."""
        w = self.latched[t]
        if w is None:
            return False
        if w.opcode != "SEMWAIT":  # the conditions stall_conditions_unmet checks
            m = w.condition_mask
            return bool((m >> 5 & 1 and not self.srca.unpacker_ready())
                        or (m >> 6 & 1 and not self.srcb.unpacker_ready())
                        or (m >> 7 & 1 and not self.srca.matrix_ready())
                        or (m >> 8 & 1 and not self.srcb.matrix_ready()))
        cond = w.condition_mask
        value, maximum = self.sem.value, self.sem.max
        for i in _SELECTED[w.semaphore_mask & 0xFF]:
            v = int(value[i])
            if (cond & 1 and v == 0) or (cond & 2 and v >= int(maximum[i])):
                return True
        return False

    def gate_blocks(self, t: int, name: str) -> bool:
        """Whether the latched wait of thread ``t`` holds back ``name`` (:meth:`gate` without
        the reason). A satisfied latch is forgotten here."""
        w = self.latched[t]
        if w is None:
            return False
        if not self.latched_holds(t):
            self.latched[t] = None
            return False
        return is_blocked(name, w.block_mask)

    def gate(self, t: int, name: str) -> str | None:
        """Whether the latched wait of thread ``t`` holds back ``name``: the reason, or None.
        A satisfied latch is forgotten here."""
        w = self.latched[t]
        if w is None:
            return None
        unmet = self.latched_unmet(t)
        if not unmet:
            self.latched[t] = None
            return None
        if is_blocked(name, w.block_mask):
            return f"{w.opcode} (block mask {w.block_mask:#05x}) waiting: " + "; ".join(unmet)
        return None

    # -- mutexes ----------------------------------------------------------------------------

    def mutex_wait(self, t: int, index: int) -> str | None:
        if index not in Mutexes.VALID:
            return f"ATGETM {index}: no such mutex (waits forever)"
        holder = int(self.mutex.held_by[index])
        if holder not in (-1, t):
            return f"ATGETM {index}: mutex held by thread {holder}"
        return None

    def atgetm(self, t: int, index: int) -> None:
        self.mutex.held_by[index] = t

    def atrelm(self, t: int, index: int) -> None:
        if index in Mutexes.VALID and int(self.mutex.held_by[index]) == t:
            self.mutex.held_by[index] = -1


__all__ = ["ALL_BLOCK", "BLOCK_BITS", "LatchedWait", "SyncUnit", "block_bits", "is_blocked"]
