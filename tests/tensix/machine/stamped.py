"""What the tests of the waiting-thread shortcuts (``Coprocessor._gate_stamps``,
``_wait_stamps``) share: a coprocessor run step by step or burst by burst with the shortcut on
and off, whose states after each call must be the same while a counted method is called
less often with it on (the held threads were held still without looking)."""

from __future__ import annotations

from collections.abc import Callable

from isaforge.tensix import Coprocessor, assemble
from isaforge.tensix.machine.state import DeadlockError

#: the MMIO word of :class:`PokeMemory` whose store calls its ``poke``
POKE_ADDR = 0xFFB12000


class PokeMemory:
    """An empty memory whose MMIO word :data:`POKE_ADDR` calls ``poke(thread)`` when stored
    to (as a tile's register changing the coprocessor's state does)."""

    l1_size = 1 << 12

    def __init__(self) -> None:
        self.poke: Callable[[int], None] | None = None

    def read(self, addr: int, size: int) -> int:
        return 0

    def write(self, addr: int, size: int, value: int) -> None:
        pass

    def mmio_read(self, thread: int, addr: int) -> int:
        return 0

    def mmio_write(self, thread: int, addr: int, value: int) -> None:
        if addr == POKE_ADDR and self.poke is not None:
            self.poke(thread)


class Stamped:
    """Runs of a coprocessor with the class switch ``switch`` on or off. ``setup(cp, mem)``
    prepares each fresh machine (``mem.poke``...); ``counted`` is the (class, method) whose
    calls are counted; ``state(cp)`` is recorded after each call; at most ``calls`` calls,
    until every thread has finished; ``deadlocks``: a DeadlockError is recorded and ends the
    run (else it propagates)."""

    def __init__(self, switch: str, setup: Callable[[Coprocessor, PokeMemory], None],
                 counted: tuple[type, str], state: Callable[[Coprocessor], object],
                 calls: int, deadlocks: bool) -> None:
        self.switch, self.setup, self.counted = switch, setup, counted
        self.state, self.calls, self.deadlocks = state, calls, deadlocks

    def trace(self, on: bool, streams: dict[int, list[str]],
              between: Callable[[Coprocessor, int], None] | None = None,
              hook: Callable[[Coprocessor], None] | None = None,
              burst: int = 0) -> tuple[list[object], int]:
        """The states after each :meth:`~Coprocessor.step` (``burst``: each
        :meth:`~Coprocessor.burst` of that many rounds), ``between(cp, k)`` called before
        the ``k``-th, ``hook(cp)`` on every register write; and the counted method's calls."""
        setattr(Coprocessor, self.switch, on)
        mem = PokeMemory()
        cp = Coprocessor(memory=mem)
        self.setup(cp, mem)
        for t, lines in streams.items():
            cp.set_stream(t, assemble("\n".join(lines)))
        if hook is not None:
            cp.hook_add("reg_write", lambda c, reg, value, info: hook(c))
        calls = [0]
        cls, name = self.counted
        original = getattr(cls, name)

        def counted(*a: object) -> object:
            calls[0] += 1
            return original(*a)

        setattr(cls, name, counted)
        seen: list[object] = []
        try:
            for k in range(self.calls):
                if between is not None:
                    between(cp, k)
                if cp.finished:
                    break
                try:
                    if burst:
                        cp.burst(burst)
                    else:
                        cp.step()
                except DeadlockError as e:
                    if not self.deadlocks:
                        raise
                    seen.append(("deadlock", str(e), e.reasons))
                    break
                seen.append((cp.steps, cp.rounds, [th.executed for th in cp.threads],
                             [str(th.blocked) for th in cp.threads], self.state(cp)))
        finally:
            setattr(cls, name, original)
            setattr(Coprocessor, self.switch, True)
        return seen, calls[0]

    def same(self, make: Callable[[], dict[str, object]], stamped: bool = True
             ) -> list[object]:
        """:meth:`trace` on and off with the arguments ``make()`` gives (fresh for each run):
        the same states, and with ``stamped`` fewer counted calls on; the states."""
        on, on_calls = self.trace(True, **make())  # type: ignore[arg-type]
        off, off_calls = self.trace(False, **make())  # type: ignore[arg-type]
        assert on == off
        if stamped:
            assert on_calls < off_calls  # the held threads were held still without looking
        return on
