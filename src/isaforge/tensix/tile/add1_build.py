"""The tt-metal build of the add1 listings: its images and the layout its firmware expects.

``data/add1/add1.json`` (``tools/gen_tensix_add1.py``) holds the firmware of the five cores and
the five kernels of tt-metal's ``add1_sfpu_single_file`` example, rebuilt from objdump
listings. That firmware is from an older tt-metal than the ``ttnn`` 0.81.1 headers our generated
tables come from (its BRISC text starts at 0x3840, not 0x3ae0), so its memory map and message
layout differ. What differs is read off the listings' own code, and every value is below with
the instruction that shows it:

* firmware bases: each listing's first address (BRISC 0x3840, NCRISC 0x5440, TRISC0..2
  0x5a40, 0x6040, 0x6640);
* where the host stages local data (``MEM_<CORE>_INIT_LOCAL_L1_BASE_SCRATCH``): the source
  address of each firmware's first ``l1_to_local_mem_copy`` (``lui a1,0x8; addi a1,a1,688``:
  0x82b0 for BRISC; 0xa2b0, 0xc2b0, 0xd2b0, 0xe2b0);
* the bank tables (``MEM_BANK_TO_NOC_SCRATCH`` 0x112b0: DRAM bank -> NOC xy, 2 x 7 ``u16``;
  L1 bank -> NOC xy, 2 x 110 ``u16``; 7 DRAM and 110 L1 bank offsets, ``u32``) and the
  logical -> virtual tables (0x11ab0: 20 columns, 12 rows), from BRISC's copies of 7, 110, 7,
  110, 5 and 3 words;
* the mailboxes at 0x60 (as in the new layout): ``subordinate_sync`` 0x68 (the bytes
  ``105(zero)``.. the TRISCs poll), ``launch_msg_rd_ptr`` 0x6c (``lw 108(zero)``), eight
  96-byte launch messages from 0x70 (``mul`` by 96), nine go messages at 0x370 (``sb
  zero,883(zero)`` is ``go_messages[0].signal``), ``go_message_index`` 0x3a0 (``lw
  928(zero)``), ``core_info.absolute_logical_x/y`` 0x9a0/0x9a1 (``lbu -1632(s0)``, s0 =
  0x1000);
* the launch message (``kernel_config``): ``kernel_config_base[3]`` 0, ``sem_offset[3]`` 12,
  ``local_cb_offset`` 18, ``remote_cb_offset`` 20, ``rta_offset[5]`` 22 (BRISC reads
  ``rta_l1_base`` at 22, NCRISC at 26, TRISC1 at 34), ``mode`` 42, ``kernel_text_offset[5]``
  44 (BRISC ``jalr`` to base + ``lw 44(s1)``; TRISC1 ``lw`` 56), ``local_cb_mask`` 64 (32
  bits), ``brisc_noc_id`` 68, ``brisc_noc_mode`` 69, ``min_remote_cb_start_index`` 70,
  ``enables`` 76 (bit 0 BRISC, bit 1 NCRISC, bit 2 the TRISCs), ``sub_device_origin_x/y``
  92/93, ``preload`` 95. ``mode`` must be non-zero for the host's dispatch mode (BRISC then
  only writes ``RUN_MSG_DONE``);
* the reader and writer divide page ids by 7 (``0x92492493``): 7 DRAM banks.

The kernel-config area (where the host puts kernels, arguments and CB configuration) starts
after those tables, at :data:`KERNEL_CONFIG_BASE`.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources

from .devmsgs import DevMsgs, dev_msgs
from .loader import Firmware, Segment, Symbols
from .memmap import CORE_NAMES, MemoryMap, memory_map
from .program import Kernel

FW_BASE = {"brisc": 0x3840, "ncrisc": 0x5440, "trisc0": 0x5A40, "trisc1": 0x6040,
           "trisc2": 0x6640}
FW_SIZE = {"brisc": 0x1C00, "ncrisc": 0x600, "trisc0": 0x600, "trisc1": 0x600, "trisc2": 0x600}
LOCAL_INIT = {"brisc": 0x82B0, "ncrisc": 0xA2B0, "trisc0": 0xC2B0, "trisc1": 0xD2B0,
              "trisc2": 0xE2B0}
BANK_TO_NOC_SCRATCH = 0x112B0
LOGICAL_TO_VIRTUAL_SCRATCH = 0x11AB0
NUM_DRAM_BANKS = 7
NUM_L1_BANKS = 110
LOGICAL_COLS, LOGICAL_ROWS = 20, 12
#: where this model's host puts the kernel-config area (after the tables above)
KERNEL_CONFIG_BASE = 0x11AE0
#: the kernel images, by name, and the listing's kernel for each core
KERNELS = {"writer": "brisc", "reader": "ncrisc", "compute_trisc0": "trisc0",
           "compute_trisc1": "trisc1", "compute_trisc2": "trisc2"}


@cache
def table() -> dict:
    text = (resources.files(__package__) / "data" / "add1" / "add1.json").read_text("utf-8")
    return json.loads(text)


@cache
def _words(hexstr: str) -> bytes:
    """The little-endian bytes of ``hexstr``'s 32-bit words (the same each time: a kernel
    image is made again at every add1 call)."""
    return b"".join(int(hexstr[i:i + 8], 16).to_bytes(4, "little")
                    for i in range(0, len(hexstr), 8))


@cache
def build_memory_map() -> MemoryMap:
    t = copy.deepcopy(memory_map().table)
    mem = t["dev_mem_map"]
    for core in CORE_NAMES:
        up = core.upper()
        mem[f"MEM_{up}_FIRMWARE_BASE"] = FW_BASE[core]
        mem[f"MEM_{up}_FIRMWARE_SIZE"] = FW_SIZE[core]
        mem[f"MEM_{up}_INIT_LOCAL_L1_BASE_SCRATCH"] = LOCAL_INIT[core]
    mem["MEM_MAP_END"] = LOCAL_INIT["brisc"]
    mem["MEM_BANK_TO_NOC_SCRATCH"] = BANK_TO_NOC_SCRATCH
    mem["MEM_LOGICAL_TO_VIRTUAL_SCRATCH"] = LOGICAL_TO_VIRTUAL_SCRATCH
    t["source"] = "add1 listings' tt-metal build (see isaforge.tensix.tile.add1_build)"
    return MemoryMap(t)


def _f(offset: int, size: int, count: int, typ: str) -> dict:
    return {"offset": offset, "size": size, "count": count, "type": typ}


@cache
def build_dev_msgs() -> DevMsgs:
    t = copy.deepcopy(dev_msgs().table)
    s = t["structs"]
    kc = {
        "kernel_config_base": _f(0, 12, 3, "uint32_t"),
        "sem_offset": _f(12, 6, 3, "uint16_t"),
        "local_cb_offset": _f(18, 2, 1, "uint16_t"),
        "remote_cb_offset": _f(20, 2, 1, "uint16_t"),
        "rta_offset": _f(22, 20, 5, "rta_offset_t"),
        "mode": _f(42, 1, 1, "uint8_t"),
        "kernel_text_offset": _f(44, 20, 5, "uint32_t"),
        "local_cb_mask": _f(64, 4, 1, "uint32_t"),
        "brisc_noc_id": _f(68, 1, 1, "uint8_t"),
        "brisc_noc_mode": _f(69, 1, 1, "uint8_t"),
        "min_remote_cb_start_index": _f(70, 1, 1, "uint8_t"),
        "enables": _f(76, 4, 1, "uint32_t"),
        "sub_device_origin_x": _f(92, 1, 1, "uint8_t"),
        "sub_device_origin_y": _f(93, 1, 1, "uint8_t"),
        "preload": _f(95, 1, 1, "uint8_t"),
    }
    s["kernel_config_msg_t"] = {"size": 96, "fields": kc}
    s["launch_msg_t"] = {"size": 96, "fields": {"kernel_config": _f(0, 96, 1,
                                                                    "kernel_config_msg_t")}}
    s["core_info_msg_t"] = {"size": 2, "fields": {
        "absolute_logical_x": _f(0, 1, 1, "uint8_t"),
        "absolute_logical_y": _f(1, 1, 1, "uint8_t")}}
    mb = s["mailboxes_t"]["fields"]
    keep = {k: mb[k] for k in ("ncrisc_halt", "subordinate_sync", "launch_msg_rd_ptr")}
    keep["launch"] = _f(0x10, 96 * 8, 8, "launch_msg_t")
    keep["go_messages"] = _f(0x310, 36, 9, "go_msg_t")
    keep["go_message_index"] = _f(0x340, 4, 1, "uint32_t")
    keep["core_info"] = _f(0x940, 2, 1, "core_info_msg_t")
    s["mailboxes_t"] = {"size": 0x942, "fields": keep}
    t["source"] = "add1 listings' tt-metal build (see isaforge.tensix.tile.add1_build)"
    return DevMsgs(t)


def _symbols(entries: list) -> Symbols:
    return Symbols([(a, 0, n) for a, n in entries])


def firmware() -> dict[str, Firmware]:
    """The five firmware images, as :meth:`~.host.Host.load_firmware` takes them."""
    mm = build_memory_map()
    out = {}
    for core in CORE_NAMES:
        img = table()["images"][f"firmware_{core}"]
        segs = [Segment(img["base"], _words(img["words"]), len(img["words"]) // 2)]
        if "data" in img:
            d = _words(img["data"]["words"])
            segs.append(Segment(img["data"]["vaddr"], d, len(d)))
        out[core] = Firmware(core, f"add1 listing {img['listing']}", img["base"], segs,
                             _symbols(img["symbols"]), "rv32im_zba_zbb_xtttensixbh",
                             mm.core(core))
    return out


def kernels() -> dict[str, Kernel]:
    """The five kernels of the listings, by image name (no runtime arguments yet)."""
    out = {}
    for name, core in KERNELS.items():
        img = table()["images"][name]
        out[name] = Kernel(core, _words(img["words"]), img["base"],
                           [(a, n) for a, n in img["symbols"]], name=name)
    return out


__all__ = ["KERNEL_CONFIG_BASE", "NUM_DRAM_BANKS", "build_dev_msgs", "build_memory_map",
           "firmware", "kernels", "table"]
