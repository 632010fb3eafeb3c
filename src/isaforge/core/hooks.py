"""Hooks as Unicorn has them: ``hook_add(kind, callback, begin=None, end=None) -> handle``
and ``hook_del(handle)``, with one vocabulary of kinds for every machine.

A machine owns a :class:`Hooks` registry, lists the kinds it supports, and calls
:meth:`Hooks.fire` (or reads :meth:`Hooks.callbacks` in a fast path) where each event
happens. ``begin``/``end`` (inclusive, as in Unicorn) restrict a hook to an address range:
an instruction's address for ``insn``, the memory address for ``mem_*``, the register number
for ``reg_write``. ``None`` means no bound.

Every callback is called as ``callback(machine, address, *args)``; what follows ``address``
depends only on the kind (:data:`KINDS`), not on the architecture. ``info`` is the
architecture's own record of the event (documented by each machine).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .errors import IsaforgeError

#: every hook kind, and the arguments its callbacks receive
KINDS: dict[str, str] = {
    "insn": "callback(machine, address, size, info): each instruction as it executes",
    "mem_read": "callback(machine, address, size, value): each memory read",
    "mem_write": "callback(machine, address, size, value): each memory write",
    "reg_write": "callback(machine, reg, value, info): each write to a register of the "
    "machine's outside world (info names its space)",
    "packet": "callback(machine, address, header, info): each command packet dispatched",
    "ub": "callback(machine, address, message, info): each undefined behaviour reported",
}


class HookError(IsaforgeError):
    """An unknown hook kind, or a handle that is not (or no longer) registered."""


@dataclass(frozen=True, slots=True)
class Hook:
    """One registered callback."""

    handle: int
    kind: str
    callback: Callable[..., Any]
    begin: int | None
    end: int | None

    def covers(self, address: int) -> bool:
        return (self.begin is None or address >= self.begin) and (
            self.end is None or address <= self.end
        )


class Hooks:
    """The hooks of one machine: add, delete, and fire them."""

    def __init__(self, kinds: Iterable[str], on_change: Callable[[], None] | None = None) -> None:
        self.kinds = tuple(kinds)
        for k in self.kinds:
            if k not in KINDS:
                raise ValueError(f"{k!r} is not a hook kind")
        self._by_kind: dict[str, tuple[Hook, ...]] = {k: () for k in self.kinds}
        self._by_handle: dict[int, Hook] = {}
        self._next = 1
        self._on_change = on_change

    def add(self, kind: str, callback: Callable[..., Any], begin: int | None = None,
            end: int | None = None) -> int:
        """Register ``callback`` for events of ``kind``; the handle that deletes it."""
        if kind not in self._by_kind:
            known = ", ".join(self.kinds)
            raise HookError(f"unknown hook kind {kind!r} for this machine; one of: {known}")
        if not callable(callback):
            raise HookError(f"hook callback for {kind!r} is not callable")
        hook = Hook(self._next, kind, callback, begin, end)
        self._next += 1
        self._by_handle[hook.handle] = hook
        self._by_kind[kind] = (*self._by_kind[kind], hook)
        if self._on_change is not None:
            self._on_change()
        return hook.handle

    def delete(self, handle: int) -> None:
        """Remove the hook ``add`` returned ``handle`` for."""
        hook = self._by_handle.pop(handle, None)
        if hook is None:
            raise HookError(f"no hook with handle {handle!r}")
        self._by_kind[hook.kind] = tuple(h for h in self._by_kind[hook.kind] if h is not hook)
        if self._on_change is not None:
            self._on_change()

    def callbacks(self, kind: str) -> tuple[Hook, ...]:
        """The hooks of ``kind`` in the order they were added (empty if none, or unsupported)."""
        return self._by_kind.get(kind, ())

    def any(self, kind: str | None = None) -> bool:
        """Whether any hook (of ``kind``) is registered."""
        if kind is None:
            return bool(self._by_handle)
        return bool(self._by_kind.get(kind))

    def fire(self, kind: str, machine: Any, address: int, *args: Any) -> None:
        """Call every hook of ``kind`` whose range covers ``address``."""
        for hook in self._by_kind.get(kind, ()):
            if hook.covers(address):
                hook.callback(machine, address, *args)


__all__ = ["KINDS", "Hook", "HookError", "Hooks"]
