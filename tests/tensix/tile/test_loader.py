"""Loading firmware ELFs as tt-metal's host does, and refusing what it would refuse."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from isaforge.tensix.tile.errors import BadFirmware
from isaforge.tensix.tile.loader import jal_to, load_elf, load_firmware_dir
from isaforge.tensix.tile.memmap import CORE_NAMES, memory_map
from tests.refdata import refdata

BUILD = ("tensix", "firmware", "bh-10503743232459396191")


def build_dir() -> Path:
    return refdata(*BUILD, "brisc.elf").parent


def segments(path: Path) -> list[tuple[int, bytes, int]]:
    with path.open("rb") as f:
        elf = ELFFile(f)
        return [(s["p_vaddr"], s.data(), s["p_memsz"]) for s in elf.iter_segments()
                if s["p_type"] == "PT_LOAD"]


@pytest.mark.parametrize("core", CORE_NAMES)
def test_spans_are_the_segments_relocated_to_the_staging_area(core: str) -> None:
    fw = load_firmware_dir(build_dir())[core]
    info = memory_map().core(core)
    local = memory_map().local_base
    expected = []
    for vaddr, data, _ in segments(build_dir() / f"{core}.elf"):
        if not data:
            continue  # a segment of .bss only: nothing is written
        addr = vaddr - local + info.local_init if vaddr >= local else vaddr
        expected.append((addr, data.ljust((len(data) + 3) & ~3, b"\0")))
    assert fw.spans() == sorted(expected)
    assert fw.spans()[0][0] == info.fw_base


def test_brisc_data_goes_where_its_crt_copies_it_from() -> None:
    fw = load_firmware_dir(build_dir())["brisc"]
    spans = dict(fw.spans())
    scratch = memory_map().mem("BRISC_INIT_LOCAL_L1_BASE_SCRATCH")
    assert scratch in spans and len(spans[scratch]) == 4
    assert fw.symbols.addr("__ldm_data_start") == memory_map().local_base


def test_symbols_name_pcs() -> None:
    fw = load_firmware_dir(build_dir())["brisc"]
    main = fw.symbols.addr("main")
    assert fw.symbols.lookup(main) == "main"
    assert fw.symbols.lookup(main + 0x10) == "main+0x10"
    assert fw.symbols.lookup(fw.entry) == "_start"
    assert fw.symbols.lookup(4) is None  # below every symbol


def test_jal_at_the_reset_address_reaches_the_firmware() -> None:
    word = jal_to(0x3AE0, 0)
    # J-type: imm[20|10:1|11|19:12], rd = x0, opcode 0x6f
    imm = ((word >> 31) << 20 | ((word >> 21) & 0x3FF) << 1 | ((word >> 20) & 1) << 11
           | ((word >> 12) & 0xFF) << 12)
    assert word & 0xFFF == 0x06F and imm == 0x3AE0
    assert jal_to(0x100, 0x200) & 0x80000000  # backwards: negative offset


def copy_build(tmp_path: Path) -> Path:
    d = tmp_path / "fw"
    shutil.copytree(build_dir(), d)
    for f in d.iterdir():
        f.chmod(0o644)
    return d


def test_truncated_elf_is_one_line(tmp_path: Path) -> None:
    d = copy_build(tmp_path)
    elf = d / "ncrisc.elf"
    elf.write_bytes(elf.read_bytes()[:600])
    with pytest.raises(BadFirmware) as e:
        load_firmware_dir(d)
    msg = str(e.value)
    assert "ncrisc.elf" in msg and "truncated" in msg and "\n" not in msg


def test_non_elf_is_refused(tmp_path: Path) -> None:
    d = copy_build(tmp_path)
    (d / "trisc1.elf").write_text("not an elf\n")
    with pytest.raises(BadFirmware, match="trisc1.elf: not an ELF file"):
        load_firmware_dir(d)


def test_wormhole_isa_is_refused(tmp_path: Path) -> None:
    d = copy_build(tmp_path)
    elf = d / "trisc2.elf"
    raw = elf.read_bytes()
    assert b"xtttensixbh" in raw
    elf.write_bytes(raw.replace(b"xtttensixbh", b"xtttensixwh"))
    with pytest.raises(BadFirmware, match="trisc2.elf: Wormhole firmware"):
        load_firmware_dir(d)


def test_firmware_for_another_base_is_refused() -> None:
    with pytest.raises(BadFirmware, match="linked at 0x70e0.*base is 0x66e0"):
        load_elf(build_dir() / "trisc1.elf", "trisc0")


def test_missing_core_is_named(tmp_path: Path) -> None:
    d = copy_build(tmp_path)
    (d / "trisc0.elf").unlink()
    with pytest.raises(BadFirmware, match="no trisc0.elf"):
        load_firmware_dir(d)


def test_tt_metal_layout_is_accepted(tmp_path: Path) -> None:
    d = tmp_path / "pre"
    for core in CORE_NAMES:
        (d / core).mkdir(parents=True)
        shutil.copy(build_dir() / f"{core}.elf", d / core / f"{core}.elf")
    assert set(load_firmware_dir(d)) == set(CORE_NAMES)
