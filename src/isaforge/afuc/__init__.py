"""Adreno afuc: the CP/SQE microcontroller of Adreno a5xx/a6xx/a7xx GPUs.

Python API (Capstone/Keystone/Unicorn style)::

    from isaforge import afuc
    fw = afuc.assemble(text)                   # bytes, Mesa afuc-asm compatible
    for ins in afuc.disassemble(fw):           # an iterator of isaforge.core.insn.Instruction
        print(ins.address, ins.mnemonic, ins.op_str)
    print(afuc.listing(fw))                    # Mesa afuc-disasm compatible text
    emu = afuc.Emulator(fw_bytes)
    h = emu.hook_add("reg_write", lambda emu, reg, value, info: print(info.name, value))
    emu.feed("CP_ME_INIT 0"); emu.run(); emu.effects; emu.hook_del(h)

The names are imported when first used (PEP 562), so that a command that only assembles
does not pay for the emulator's imports (numpy) or the disassembler's at start-up.
``listing`` is also the name of the submodule that defines it: importing that submodule binds
it as the package's attribute, so the package's module object binds the function instead
(:func:`~isaforge.core.lazy.functions_over_modules`), whichever import comes first.
"""

from __future__ import annotations

from ..core.lazy import functions_over_modules, lazy_names

TYPE_CHECKING = False  # (typing imports re: a few ms of every afuc command's start-up)
if TYPE_CHECKING:
    from ..core.insn import Instruction
    from .asm import assemble
    from .decode import disassemble
    from .image import Firmware, load_firmware, parse_gpu
    from .isa import isa_for
    from .listing import listing
    from .machine import Effect, Emulator, RegWrite


_WHERE = {
    "Effect": ".machine",
    "Emulator": ".machine",
    "Firmware": ".image",
    "Instruction": "..core.insn",
    "RegWrite": ".machine",
    "assemble": ".asm",
    "disassemble": ".decode",
    "isa_for": ".isa",
    "listing": ".listing",
    "load_firmware": ".image",
    "parse_gpu": ".image",
}

__all__ = [
    "Effect",
    "Emulator",
    "Firmware",
    "Instruction",
    "RegWrite",
    "assemble",
    "disassemble",
    "isa_for",
    "listing",
    "load_firmware",
    "parse_gpu",
]


__getattr__, __dir__ = lazy_names(__name__, globals(), _WHERE)
functions_over_modules(__name__, ("listing",))
