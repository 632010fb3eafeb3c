"""The generated memory-map and dev_msgs.h tables, checked against a real firmware build:
its ELF program headers and the DWARF layout the firmware's compiler recorded."""

from __future__ import annotations

from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from isaforge.tensix.tile.devmsgs import dev_msgs
from isaforge.tensix.tile.memmap import CORE_NAMES, memory_map
from tests.refdata import refdata

BUILD = ("tensix", "firmware", "bh-10503743232459396191")


def elf_path(core: str) -> Path:
    return refdata(*BUILD, f"{core}.elf")


@pytest.mark.parametrize("core", CORE_NAMES)
def test_firmware_bases_are_where_the_elfs_are_linked(core: str) -> None:
    info = memory_map().core(core)
    with elf_path(core).open("rb") as f:
        elf = ELFFile(f)
        loads = [s for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"]
        assert loads[0]["p_vaddr"] == info.fw_base == elf.header["e_entry"]
        data = loads[1]
        assert data["p_vaddr"] == memory_map().local_base
        assert data["p_memsz"] <= info.local_size


def test_local_staging_areas_follow_the_map_end_in_core_order() -> None:
    mm = memory_map()
    prev_end = mm.mem("MAP_END")
    for core in CORE_NAMES:
        info = mm.core(core)
        assert info.local_init == prev_end
        prev_end = info.local_init + info.local_size
    assert mm.mem("NCRISC_INIT_IRAM_L1_BASE_SCRATCH") == prev_end


def test_soft_reset_bits_are_distinct_and_cover_the_power_on_value() -> None:
    mm = memory_map()
    bits = [mm.core(c).reset_bit for c in CORE_NAMES]
    assert len(set(bits)) == 5 and all(b & (b - 1) == 0 for b in bits)
    assert sum(bits) == (mm.tensix("RISCV_SOFT_RESET_0_BRISC") | mm.tensix(
        "RISCV_SOFT_RESET_0_NCRISC") | mm.tensix("RISCV_SOFT_RESET_0_TRISCS"))


def _members(die, base: int, fields: dict[str, int]) -> None:  # noqa: ANN001 - a DIE
    """Member offsets of a struct DIE; an anonymous union/struct's members are its own."""
    for ch in die.iter_children():
        if ch.tag != "DW_TAG_member":
            continue
        loc = ch.attributes.get("DW_AT_data_member_location")
        off = base + (loc.value if loc is not None else 0)
        n = ch.attributes.get("DW_AT_name")
        if n is not None:
            fields[n.value.decode()] = off
        else:
            _members(ch.get_DIE_from_attribute("DW_AT_type"), off, fields)


def _dwarf_structs(path: Path, names: set[str]) -> dict[str, tuple[int, dict[str, int]]]:
    out: dict[str, tuple[int, dict[str, int]]] = {}
    with path.open("rb") as f:
        dwarf = ELFFile(f).get_dwarf_info()
        for cu in dwarf.iter_CUs():
            for die in cu.iter_DIEs():
                if die.tag not in ("DW_TAG_structure_type", "DW_TAG_union_type"):
                    continue
                name = die.attributes.get("DW_AT_name")
                size = die.attributes.get("DW_AT_byte_size")
                if name is None or size is None or name.value.decode() not in names:
                    continue
                fields: dict[str, int] = {}
                _members(die, 0, fields)
                out.setdefault(name.value.decode(), (size.value, fields))
    return out


def test_dev_msgs_layout_equals_the_firmware_dwarf() -> None:
    msgs = dev_msgs()
    wanted = {"mailboxes_t", "launch_msg_t", "kernel_config_msg_t", "go_msg_t",
              "core_info_msg_t", "ncrisc_halt_msg_t", "watcher_msg_t", "rta_offset_t"}
    dwarf = _dwarf_structs(elf_path("brisc"), wanted)
    assert set(dwarf) == wanted
    for name, (size, fields) in dwarf.items():
        assert msgs.size(name) == size, name
        ours = {f: msgs.field(name, f).offset for f in fields}
        assert ours == fields, name


def test_paths_locate_and_name_each_other() -> None:
    msgs = dev_msgs()
    go = msgs.field("mailboxes_t", "go_messages")
    off, size = msgs.locate("go_messages[2].signal")
    assert (off, size) == (go.offset + 2 * 4 + msgs.field("go_msg_t", "signal").offset, 1)
    assert msgs.name_of(off) == "go_messages[2].signal"
    off, size = msgs.locate("launch[1].kernel_config.enables")
    assert size == 4 and msgs.name_of(off) == "launch[1].kernel_config.enables"
    assert msgs.addr("go_messages[0]") == memory_map().mem("MAILBOX_BASE") + go.offset


def test_bad_paths_are_errors() -> None:
    from isaforge.tensix.tile.errors import TileError
    msgs = dev_msgs()
    with pytest.raises(TileError, match="beyond"):
        msgs.locate(f"go_messages[{msgs.const('go_message_num_entries')}]")
    with pytest.raises(TileError, match="no field"):
        msgs.locate("go_messages[0].nosuch")


def test_constants_match_the_go_protocol() -> None:
    c = dev_msgs().const
    assert c("RUN_MSG_DONE") == 0 and c("RUN_MSG_GO") == 0x80 and c("RUN_MSG_INIT") == 0x40
    assert c("RUN_SYNC_MSG_ALL_INIT") == c("RUN_SYNC_MSG_INIT") * 0x01010101
