"""Booting tt-metal's firmware on a tile, as on hardware, then one empty go.

:func:`boot` does what tt-metal's host does for a Tensix worker:

1. hold every core in soft reset; write the five firmware images (relocated spans) and the
   ``jal`` at BRISC's reset address; write the boot-time mailboxes (go signal
   ``RUN_MSG_INIT``, launch messages zeroed, core info, the bank and coordinate tables);
2. release BRISC only. BRISC's firmware programs the other cores' reset PCs, releases them,
   waits until each has signalled done in the subordinate sync word, then writes
   ``RUN_MSG_DONE`` to its go message: the **init handshake**. The run continues until every
   core is idle again (BRISC then waits for a go, TRISC0 has initialised the CB sync
   registers);
3. write a launch message that enables no kernel (dispatch mode "host", so no completion is
   sent over the NOC) and the go signal ``RUN_MSG_GO``; BRISC runs the launch, waits for its
   subordinates, and writes ``RUN_MSG_DONE`` again: the **go handshake**.

The result says, per core, how many instructions it executed, where it stopped (pc and
symbol) and in which state, and which go-signal values the host saw after each phase.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .errors import TileError
from .host import Host
from .loader import Firmware, load_firmware_dir
from .tile import Tile


@dataclass
class BootResult:
    """What :func:`boot` saw."""

    init_done: bool
    go_done: bool
    cores: dict[str, dict[str, Any]]
    go_signals: list[dict[str, Any]] = field(default_factory=list)
    instructions: int = 0
    tensix_instructions: int = 0
    wall_seconds: float = 0.0
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.init_done and self.go_done

    def as_json(self) -> dict[str, Any]:
        return result_json(self)


def result_json(result: Any) -> dict[str, Any]:
    """A boot result dataclass as JSON: its fields in order, ``wall_seconds`` rounded to the
    microsecond, ``error`` only when there is one."""
    out: dict[str, Any] = {f.name: getattr(result, f.name) for f in fields(result)}
    out["wall_seconds"] = round(out["wall_seconds"], 6)
    if out["error"] is None:
        del out["error"]
    return out


def boot(firmware: str | Path | Mapping[str, Firmware], max_steps: int | None = 2_000_000,
         tile: Tile | None = None) -> BootResult:
    """Boot ``firmware`` (a directory of the five ELFs, or loaded images) on ``tile`` (a new
    one by default) and send one empty go. ``max_steps`` bounds the RISC-V instructions of
    each phase. A deadlock or the step limit ends the boot with ``error`` set (and the
    handshakes not done); a :class:`~.errors.BadFirmware` is raised before anything runs."""
    images = firmware if isinstance(firmware, Mapping) else load_firmware_dir(firmware)
    tile = tile or Tile()
    host = Host(tile)
    msgs = tile.msgs
    done = msgs.const("RUN_MSG_DONE")
    result = BootResult(False, False, {})
    start = time.perf_counter()

    def phase(name: str, flag: str) -> None:
        """Run until the go signal reads RUN_MSG_DONE (the handshake ``flag`` names), then
        until every core waits again."""
        sent = host.go_signal()
        try:
            tile.run(max_steps, lambda: host.go_signal() == done)
        finally:
            seen = host.go_signal()
            result.go_signals.append({"phase": name, "sent": sent, "seen": seen})
        setattr(result, flag, seen == done)
        tile.run(max_steps)

    try:
        host.hold()
        host.load_firmware(images)
        host.init_mailboxes(brisc=images.get("brisc"))
        host.release("brisc")
        phase("init", "init_done")
        host.write_launch(0, enables=0, mode="host")
        host.send_go(0)
        phase("go", "go_done")
    except TileError as e:
        result.error = e.message
    result.wall_seconds = time.perf_counter() - start
    result.cores = tile.core_report()
    result.instructions = sum(c.instructions for c in tile.cores.values())
    result.tensix_instructions = tile.cp.steps
    return result


__all__ = ["BootResult", "boot"]
