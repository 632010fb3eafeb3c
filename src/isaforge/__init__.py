"""isaforge: assemblers, disassemblers and emulators for accelerator instruction sets."""

__version__ = "0.1.0"
