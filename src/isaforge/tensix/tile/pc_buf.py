"""PC buffers, TTSync and the Tensix semaphores: ``PC_BUF_BASE`` (and ``PC1``/``PC2``).

Behaviour as the tt-isa-documentation describes it (*PCBufs*, *TTSync*, *SyncUnit*):

* three PCBufs, FIFOs of up to 16 words from BRISC to TRISC *i*. BRISC pushes to PCBuf *i* by
  writing ``PC_BUF_BASE``/``PC1_BUF_BASE``/``PC2_BUF_BASE``; its read there waits until the FIFO
  is empty, TRISC *i* is waiting to read it and Tensix thread *i* is idle. TRISC *i* pops by
  reading ``PC_BUF_BASE`` (waiting while empty); its writes there are discarded. The override
  bits of ``RISCV_DEBUG_REG_TRISC_PC_BUF_OVERRIDE`` are honoured.
* TTSync, for TRISC *i*: a read of word ``PC_BUF_TENSIX_SYNC_WORD`` (``CoprocessorDoneCheck``,
  tt-llk's ``tensix_sync()``) waits until Tensix thread *i* has no instruction in flight; word
  ``PC_BUF_MOP_SYNC_WORD`` (``MOPExpanderDoneCheck``) waits until no ``MOP`` is queued before
  thread *i*'s MOP expander. Both return 0; stores to them are discarded.
* the eight Tensix semaphores from word ``PC_BUF_SEMAPHORE_BASE_WORD`` on: a read returns the
  value; a write with bit 0 set is a ``SEMGET`` (decrement unless 0), with bit 0 clear a
  ``SEMPOST`` (increment unless 15).
"""

from __future__ import annotations

from collections import deque

from .memmap import CoreInfo
from .mmio import Stall, Unmodelled, Window, word_offset

PCBUF_DEPTH = 16
N_SEMAPHORES = 8


class PCBufs:
    """The three FIFOs and which TRISCs are waiting to read theirs."""

    def __init__(self) -> None:
        self.fifo: list[deque[int]] = [deque() for _ in range(3)]
        self.reader_waiting = [False, False, False]


class PCBufWindow(Window):
    """``PC_BUF_BASE`` (index 0: BRISC's PCBuf 0 and each TRISC's own side), ``PC1_BUF_BASE``,
    ``PC2_BUF_BASE`` (BRISC only)."""

    observes_coprocessor = True

    def __init__(self, tile: object, base: int, size: int, index: int, sync_word: int,
                 mop_sync_word: int, sem_word: int) -> None:
        super().__init__(tile, base, size)
        self.index = index
        self.name = f"PC buffer {index}"
        self.sync_word = sync_word
        self.mop_sync_word = mop_sync_word
        self.sem_word = sem_word

    # -- the override bits ----------------------------------------------------------------

    def _override(self, i: int) -> tuple[bool, bool, int]:
        bits = self.tile.pcbuf_override >> (10 * i)
        return bool(bits & 1), bool(bits & 2), (bits >> 2) & 0xFF

    # -- TRISC side -----------------------------------------------------------------------

    def _trisc_read(self, core: CoreInfo, word: int) -> int:
        i = core.thread
        assert i is not None
        tile = self.tile
        if word == 0:
            fifo = tile.pcbufs.fifo[i]
            if fifo:
                tile.pcbufs.reader_waiting[i] = False
                return fifo.popleft()
            en, _busy, value = self._override(i)
            if en:
                return value
            tile.pcbufs.reader_waiting[i] = True
            raise Stall(f"reading PC buffer {i}: empty, waiting for BRISC to push",
                        lambda: bool(tile.pcbufs.fifo[i]) or self._override(i)[0])
        if word == self.sync_word:
            if tile.tensix_idle(i) or all(self._override(i)[:2]):
                return 0
            raise Stall(f"TTSync: waiting for Tensix thread {i} to finish its instructions",
                        lambda: tile.tensix_idle(i) or all(self._override(i)[:2]))
        if word == self.mop_sync_word:
            if not tile.tensix_mop_queued(i) or all(self._override(i)[:2]):
                return 0
            raise Stall(f"TTSync: waiting for Tensix thread {i}'s MOP expander",
                        lambda: not tile.tensix_mop_queued(i) or all(self._override(i)[:2]))
        sem = word - self.sem_word
        if 0 <= sem < N_SEMAPHORES:
            return int(tile.cp.semaphores.value[sem])
        raise Unmodelled(f"{self.name}: word {word} (offset {word * 4:#x}) is not modelled")

    def _trisc_write(self, core: CoreInfo, word: int, value: int) -> None:
        if word in (0, self.sync_word, self.mop_sync_word):
            return  # discarded by the hardware (a store before a TTSync load orders it)
        sem = word - self.sem_word
        if 0 <= sem < N_SEMAPHORES:
            if value & 1:
                self.tile.cp.sync.semget(1 << sem)
            else:
                self.tile.cp.sync.sempost(1 << sem)
            refresh = getattr(self.tile, "refresh_semaphores", None)
            if refresh is not None:
                refresh()  # (the copy a TRISC's compiled path reads)
            return
        raise Unmodelled(f"{self.name}: word {word} (offset {word * 4:#x}) is not modelled")

    def fresh_word(self, core: CoreInfo, addr: int, size: int) -> int | None:
        """For a TRISC's aligned 32-bit read of a semaphore, which only returns its value: the
        word of the tile's latch array holding a copy of it (``tile.sem_mirror + i``, kept
        current by ``tile.refresh_semaphores`` before each run of a core and after each
        semaphore store here; a store the core's compiled path defers is not in it until made,
        so the core's loads there go through this window while one waits), else None."""
        off = addr - self.base
        if size != 4 or off & 3 or core.thread is None or self.index:
            return None
        sem = (off >> 2) - self.sem_word
        mirror = getattr(self.tile, "sem_mirror", None)
        return mirror + sem if mirror is not None and 0 <= sem < N_SEMAPHORES else None

    def store_latch(self, core: CoreInfo, addr: int, size: int) -> tuple[str, int] | None:
        """A TRISC's semaphore store (SEMPOST/SEMGET: only the coprocessor, which does not run
        during a core's run, and reads of this window see it) or discarded store may wait (see
        :meth:`Window.store_latch`); BRISC's pushes may stall, so they may not."""
        off = addr - self.base
        if size != 4 or off & 3 or core.thread is None or self.index:
            return None
        word = off >> 2
        if word in (0, self.sync_word, self.mop_sync_word) \
                or 0 <= word - self.sem_word < N_SEMAPHORES:
            return ("defer", 0)
        return None

    # -- BRISC side -----------------------------------------------------------------------

    def _brisc_read(self, word: int) -> int:
        i, tile = self.index, self.tile
        if word:
            raise Unmodelled(f"{self.name}: BRISC read at word {word} is not modelled")

        def done() -> bool:
            en, busy, _ = self._override(i)
            if en and busy:
                return True
            return (not tile.pcbufs.fifo[i] and tile.pcbufs.reader_waiting[i]
                    and tile.tensix_idle(i))
        if done():
            return 0
        raise Stall(f"reading PC buffer {i}: waiting for TRISC{i} to drain it and wait, and "
                    f"for Tensix thread {i} to be idle", done)

    def _brisc_write(self, word: int, value: int) -> None:
        i, tile = self.index, self.tile
        if word:
            raise Unmodelled(f"{self.name}: BRISC write at word {word} is not modelled")
        fifo = tile.pcbufs.fifo[i]
        if len(fifo) >= PCBUF_DEPTH:
            raise Stall(f"PC buffer {i} is full", lambda: len(fifo) < PCBUF_DEPTH)
        fifo.append(value & 0xFFFFFFFF)

    # -- dispatch -------------------------------------------------------------------------

    def read(self, core: CoreInfo, addr: int, size: int) -> int:
        word = word_offset(self, addr, size)
        if core.name == "brisc":
            return self._brisc_read(word)
        if core.thread is not None and self.index == 0:
            return self._trisc_read(core, word)
        raise Unmodelled(f"{self.name} is not mapped for {core.name}")

    def write(self, core: CoreInfo, addr: int, size: int, value: int) -> None:
        word = word_offset(self, addr, size)
        if core.name == "brisc":
            self._brisc_write(word, value)
        elif core.thread is not None and self.index == 0:
            self._trisc_write(core, word, value)
        else:
            raise Unmodelled(f"{self.name} is not mapped for {core.name}")


__all__ = ["N_SEMAPHORES", "PCBUF_DEPTH", "PCBufWindow", "PCBufs"]
