"""Boot-code runs: what a6xx/a7xx firmware sets up before its first ``waitin``.

The packet table of a6xx/a7xx firmware is not data in the file: the boot code writes it, one
entry at a time, through @PACKET_TABLE_WRITE; on a7xx it also says where the BV and LPAC
images start (@BV_INSTR_BASE, @LPAC_INSTR_BASE; a6xx LPAC: CP_LPAC_SQE_INSTR_BASE). As Mesa's
disassembler does, we run it to learn them: :func:`run_boot_code` runs one image on the
emulator's processor (:mod:`isaforge.afuc.machine`, the one executor of afuc instructions in
the project), :func:`boot_images` gives the images and their tables, which the listing
(:mod:`isaforge.afuc.listing`) and the trace (:func:`jumptable_offset`) use.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import EmulationError, FirmwareError
from .image import Firmware
from .machine.emulator import Emulator
from .machine.processor import M32, Processor
from .machine.queues import BootQueue

BOOT_KINDS = ("SQE", "BV", "LPAC")  # the images boot code is run for ("SQE": the main one)
BOOT_MAX_STEPS = 200_000


def run_boot_code(fw: Firmware, kind: str = "SQE", offset: int = 0,
                  max_steps: int = BOOT_MAX_STEPS) -> Processor:
    """Run one image's boot code the way the disassembler needs it (Mesa's disassembler-side
    emulation): the ``kind`` image ("SQE" is the main one, also for a7xx BR; "BV"/"LPAC" start
    ``offset`` dwords into the image) runs on a :class:`Processor` until it executes
    ``waitin`` or reads (or peeks) ``$data``, which gives 0 and ends the run; writing
    @BV_CNTL/@LPAC_CNTL only acknowledges in @THREAD_SYNC, starting nothing. The processor
    is returned (its packet table ``jmptbl``, control and GPU registers are what the boot code
    set up). A run longer than ``max_steps`` raises :class:`StepLimitError`."""
    if fw.gen < 6:
        raise EmulationError("a5xx firmware has no boot code to run (its packet table is data)")
    if kind not in BOOT_KINDS:
        raise EmulationError(f"unknown processor {kind!r}; one of: " + ", ".join(BOOT_KINDS))
    emu = Emulator(fw, record=False)
    emu.bootstrap = True
    p = emu.main
    if kind != "SQE":
        base = p.base + 4 * offset
        p = Processor(emu, kind, p.image[offset:], base)
        if kind == "BV" or fw.gen >= 7:
            reg = p.c[f"{kind}_INSTR_BASE"]
            if reg is None:
                raise EmulationError(f"control register {kind}_INSTR_BASE is unknown on "
                                     f"{fw.variant}")
            p.control[reg], p.control[reg + 1] = base & M32, base >> 32
        else:
            emu.set_gpu64("CP_LPAC_SQE_INSTR_BASE", base)
        emu.reset_values(p)
        if fw.gen == 6 and kind == "LPAC" and p.c["THREAD_SYNC"] is not None:
            p.control[p.c["THREAD_SYNC"]] = 1
        emu.procs, emu.main = [p], p
    p.rb = p.bootq = BootQueue()  # type: ignore[assignment]
    p.limit = max_steps
    while not p.bootq.finished and not p.waitin_pending:
        if p.steps >= max_steps:
            p.limit_hit()
        p.step()
    return p


def boot(fw: Firmware, kind: str = "SQE", offset: int = 0) -> Processor:
    """:func:`run_boot_code` for the disassembler: a run that does not reach ``waitin`` is a
    :class:`FirmwareError` that suggests another firmware id."""
    try:
        return run_boot_code(fw, kind, offset)
    except EmulationError as e:
        name, _, rest = e.message.partition(": ")
        msg = rest if name in ("SQE", "BR", "BV", "LPAC") else e.message
        raise FirmwareError(
            f"cannot find the packet table: the {kind} boot code did not reach waitin: "
            f"{msg}. The firmware id "
            f"{fw.fwid:03x} ({fw.gpu_name}) may be wrong for this file; try another with --gpu"
        ) from None


def find_table(words: list[int], size: int, table: list[int]) -> int | None:
    """Where ``table`` sits in ``words[:size]`` (its first occurrence), or None."""
    n = len(table)
    for i in range(0, size - n + 1):
        if words[i] == table[0] and words[i : i + n] == table:
            return i
    return None


@dataclass(frozen=True)
class BootImage:
    """One image of a6xx/a7xx firmware, as its boot code describes it."""

    name: str  # "SQE" (the main image, also a7xx BR's), "BV" or "LPAC"
    start: int  # its first word, counted from the version dword
    size: int  # words
    table: list[int]  # the 128-entry packet table its boot code wrote (handler offsets)


def _gpu64(core: Processor, name: str) -> int:
    off = core.db.gpu_reg(name)
    return 0 if off is None else int(core.gpu[off]) | int(core.gpu[off + 1]) << 32


def boot_images(fw: Firmware) -> list[BootImage]:
    """The images of a6xx/a7xx firmware (main, then BV and LPAC if the boot code places
    them), each with its packet table. :class:`FirmwareError` if a boot run fails or an image
    lies outside the file."""
    size = len(fw.words) - 1
    core = boot(fw, "SQE", 0)
    bv = lpac = 0
    base = _gpu64(core, "CP_SQE_INSTR_BASE")
    if fw.gen >= 7:
        bv = ((core.ctrl64("BV_INSTR_BASE") - base) & 0xFFFFFFFFFFFFFFFF) // 4
        lpac = ((core.ctrl64("LPAC_INSTR_BASE") - base) & 0xFFFFFFFFFFFFFFFF) // 4
        main_size = min(bv, lpac)
    else:
        lpac_base = _gpu64(core, "CP_LPAC_SQE_INSTR_BASE")
        if lpac_base:
            lpac = ((lpac_base - base) & 0xFFFFFFFFFFFFFFFF) // 4
        main_size = lpac if lpac else size
    for name, off in (("BV", bv), ("LPAC", lpac)):
        if off and not 0 < off < size:
            raise FirmwareError(f"the boot code places the {name} image at dword {off}, outside "
                                f"the {size}-dword firmware; is the firmware id right (--gpu)?")
    images = [BootImage("SQE", 0, main_size, core.jmptbl)]
    if bv:
        images.append(BootImage("BV", bv, lpac - bv, boot(fw, "BV", bv).jmptbl))
    if lpac:
        images.append(BootImage("LPAC", lpac, size - lpac, boot(fw, "LPAC", lpac).jmptbl))
    return images


def jumptable_offset(fw: Firmware) -> int | None:
    """Where the packet table sits in the main image (what Mesa prints as ``[#jumptbl]``);
    None for a5xx or when the boot code cannot be run."""
    if fw.gen < 6:
        return None
    try:
        core = boot(fw, "SQE", 0)
    except FirmwareError:
        return None
    words = fw.words[1:]
    return find_table(words, len(words), core.jmptbl)


__all__ = ["BOOT_KINDS", "BootImage", "boot", "boot_images", "find_table", "jumptable_offset",
           "run_boot_code"]
