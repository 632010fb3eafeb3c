"""Running under the debugger: step, run to the end of a packet, to the next packet, or
continue every processor, until a breakpoint, the step limit, an error or idle."""

from __future__ import annotations

from typing import Any

from ...core.errors import EmulationError
from ..machine.emulator import Emulator
from ..machine.processor import StreamEndError
from ..machine.replay import replay_of
from ..machine.stream import HEADERS, BadPacketError, parse_header
from .breakpoints import Breakpoints
from .view import describe_packet

MODES = ("step", "waitin", "packet", "continue")


class Runner:
    """Executes an emulator's processors one instruction at a time (the exact path), noting
    the packets they dispatch (a ``packet`` hook) to stop at packet breakpoints."""

    def __init__(self, emu: Emulator, breakpoints: Breakpoints) -> None:
        self.emu = emu
        self.breakpoints = breakpoints
        self.dispatched: list[tuple[str, int]] = []
        self.hook = emu.hook_add("packet", self._on_packet)

    def _on_packet(self, emu: Emulator, address: int, hdr: int, proc: Any) -> None:
        self.dispatched.append((proc.name, hdr))

    def run(self, start: Any, mode: str, count: int, max_steps: int) -> tuple[str, str]:
        """Execute: mode "step" (``count`` instructions), "waitin" (until a waitin has run),
        "packet" (until a packet is dispatched) on processor ``start``, or "continue" (every
        processor, until a breakpoint or idle); at most ``max_steps`` steps except when
        stepping. Returns (why it stopped, or " " when it did what was asked; the name of
        the processor to show next)."""
        emu = self.emu
        db = emu.db
        current = start.name
        steps = 0  # instructions executed (a (rep) instruction is one)
        start_steps = emu.steps  # the emulator's count: each (rep) iteration is one
        limit = count if mode == "step" else max_steps
        reason = ""  # why it stopped; " " when it did what was asked (nothing to say)
        self.dispatched.clear()
        procs = [start] if mode != "continue" else None
        running = start
        quick = (mode in ("continue", "waitin") and not self.breakpoints and len(emu.procs) == 1
                 and len(emu.packet_hooks) == 1)  # (the runner's own)
        try:
            progress = True
            while progress and not reason:
                progress = False
                for p in procs or list(emu.procs):
                    running = p
                    first = p is start and steps == 0
                    alone = len(emu.procs) == 1  # (then p.steps is emu.steps)
                    while True:
                        if not first and self.breakpoints:
                            bp = self.breakpoints.at_pc(p.name, p.pc)
                            if bp is not None:
                                bp.hits += 1
                                current = p.name
                                reason = f"breakpoint {bp.number}: {p.name} pc {p.pc:#06x}"
                                break
                        if (steps if mode == "step" else
                                (p.steps if alone else emu.steps) - start_steps) >= limit:
                            if mode != "step":
                                current = p.name
                                reason = (f"stopped: step limit of {limit} reached "
                                          "('limit N' changes it)")
                            else:
                                reason = " "
                            break
                        if quick and p.waitin_pending and p.tw is not None and p.tw.joined:
                            # runs of type-4 packets from the trace's templates (the runner's
                            # packet hook is only for breakpoints and "packet": none here)
                            rp = replay_of(p)
                            p.limit = 1 << 62  # (as emu.step has it: the runner counts)
                            if p.pc == rp.slot and rp.run(p, start_steps + limit, True,
                                                          1 if mode == "waitin" else -1):
                                first = False
                                progress = True
                                if mode == "waitin":  # (a packet ends with its waitin)
                                    reason = " "
                                    break
                                continue
                        bad = bad_header(p) if p.waitin_pending else None
                        if bad:
                            current = p.name
                            reason = bad
                            break
                        was_waitin = mode == "waitin" and _is_waitin(p)
                        if not emu.step(p.name):
                            if mode != "continue":
                                reason = ("idle: waiting for a packet (queue one with "
                                          "'p CP_NAME payload...')")
                            break
                        steps += 1
                        first = False
                        progress = True
                        if self.dispatched:
                            hit = self.breakpoints.on_packet(self.dispatched)
                            if hit is not None:
                                bp, proc, hdr = hit
                                bp.hits += 1
                                current = proc
                                reason = (f"packet breakpoint {bp.number}: "
                                          f"{describe_packet(db, hdr)} on {proc}")
                                break
                            if mode == "packet":
                                proc, hdr = self.dispatched[-1]
                                current = proc
                                reason = f"packet {describe_packet(db, hdr)}"
                                break
                            self.dispatched.clear()
                        if was_waitin:
                            reason = " "
                            break
                    if reason:
                        break
            if not reason:
                reason = "idle: every processor waits for a packet"
        except KeyboardInterrupt:
            current = running.name
            reason = "interrupted (in the middle of an instruction if one was running)"
        except StreamEndError as e:  # Mesa: "FIFO empty, input a packet!"
            current = running.name
            reason = f"error: {e.message}; queue the rest ('raw W0 W1...') and continue"
        except EmulationError as e:
            current = running.name
            reason = (f"error: {e.message}" + ("" if e.message.startswith(running.name) else
                                                f" (at {running.name} pc {running.pc:#06x})"))
        finally:
            self.dispatched.clear()
        return reason, current


def bad_header(p: Any) -> str | None:
    """Why the header the next step of ``p`` would dispatch is bad; checked before the step,
    so the firmware state stays as it was (the emulator reports it only after the delay slot
    has run)."""
    if not p.waitin_pending:
        return None
    hdr = p.queue().peek()
    if hdr is None or hdr in HEADERS:  # (a header dispatched before is good)
        return None
    try:
        parse_header(hdr)
    except BadPacketError as e:
        return (f"error: {p.name}: {e.message}; not executed ('drop' discards it from "
                "the queue)" + p.alone_hint())
    return None


def _is_waitin(p: Any) -> bool:
    try:
        return p.decode(p.pc)[0] == "waitin"
    except EmulationError:
        return False
