"""Reading objdump listings (refdata) for the RISC-V tests."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from tests.refdata import refdata

HEX_LISTINGS = ("add1_sfpu_single_file", "blackhole-py-p100a")  # with instruction words
TEXT_LISTINGS = ("nohex",)  # mnemonics and operands only

_LINE = re.compile(r"^\s*([0-9a-f]+):\t(?:([0-9a-f]{8})\s+\t)?(\S.*)$")


def listing_files(kind: tuple[str, ...]) -> list[Path]:
    root = refdata("tensix", "tenstorrent-docs")
    files = sorted(p for d in kind for p in (root / d).iterdir() if p.suffix in (".txt", ".s"))
    assert files, f"no listings under {root}"
    return files


def lines(path: Path) -> Iterator[tuple[int, int | None, str]]:
    """(address, word or None, instruction text without objdump's '# ...' comment)."""
    for line in path.read_text().splitlines():
        m = _LINE.match(line)
        if m:
            text = re.split(r"\s+#\s", m.group(3))[0].rstrip()
            yield int(m.group(1), 16), int(m.group(2), 16) if m.group(2) else None, text


def normalise(text: str) -> str:
    """objdump's ``3914 <main+0x9c>`` -> ``0x3914`` (symbol names are not compared);
    whitespace runs -> one blank."""
    text = re.sub(r"\b([0-9a-f]+) <[^>]*>", lambda m: "0x" + m.group(1), text)
    return re.sub(r"\s+", " ", text).strip()


def is_tensix(mnemonic: str) -> bool:
    return mnemonic.startswith(("tt", "sfp"))
