"""What a run of the GPU can be asked for before anything runs: the limits and the names of
the RTL's defects (``--rtl-quirk``). Kept apart, with no imports, so that the command line
can name them without importing the simulator (and numpy)."""

from __future__ import annotations

MAX_VPS = 16  # VPs a GPU (and the hooks' address map) can have
DEFAULT_MAX_STEPS = 50_000_000

QUIRKS: dict[str, str] = {
    "reissue-after-branch": "the RTL's IIU re-fetches after resuming through its commit FIFO: "
                            "the instruction after a branch is issued twice (what RUN.md saw "
                            "as 'MUL/TMREAD issued twice'); a timed run",
    "div-reissue": "the RTL's IIU re-issues an instruction that waited for a busy station "
                   "(some DIV loops livelock); a timed run",
    "mcu-lost": "the RTL's MCU re-loads its address counters from a request made during a "
                "copy, so back-to-back copies land shifted or elsewhere; a timed run",
    "tmem-row0": "the RTL's TMREAD returns row 0 of TMEM banks 0, 1, 2 whatever the address",
    "first-eof": "the RTL test bench ends the run at the first EOF of any VP (thread 0) and "
                 "dumps only that VP",
    "cp-exit-noop": "the RTL's CP EXIT does nothing: the 8-bit IP runs on through the "
                    "zero-filled RAM and the program starts again",
    "cp-not-noop": "the RTL's CP has no NOT: it writes nothing",
}

QUIRK_ALIASES = {"mul-twice": "reissue-after-branch"}

__all__ = ["DEFAULT_MAX_STEPS", "MAX_VPS", "QUIRKS", "QUIRK_ALIASES"]
