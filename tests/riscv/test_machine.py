"""The hart's interface: address space, errors, CSRs, hooks, stops, registers."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.core.errors import IsaforgeError
from isaforge.core.hooks import HookError
from isaforge.riscv import (
    AddressSpace,
    Hart,
    IllegalInstruction,
    MapError,
    MemoryAccessError,
    StopReason,
    assemble,
)

CODE = 0x100
PATHS = ["exact", "fast"]


def make(src: str, path: str = "exact", mmio: tuple | None = None) -> tuple[Hart, np.ndarray]:
    mem = np.zeros(0x1000, np.uint8)
    code = assemble(src, CODE)
    mem[CODE:CODE + len(code)] = np.frombuffer(code, np.uint8)
    space = AddressSpace("core")
    space.map_ram(0, mem)
    if mmio is not None:
        space.map_mmio(*mmio)
    h = Hart("brisc", space, CODE)
    h.fast = path == "fast"
    return h, mem


# -- address space -------------------------------------------------------------------------
def test_windows_must_not_overlap_and_must_be_byte_arrays() -> None:
    space = AddressSpace()
    space.map_ram(0, np.zeros(0x100, np.uint8))
    with pytest.raises(MapError, match="overlaps"):
        space.map_ram(0x80, np.zeros(0x100, np.uint8))
    with pytest.raises(MapError, match="overlaps"):
        space.map_mmio(0xFC, 8, None, None)
    with pytest.raises(MapError, match="uint8"):
        space.map_ram(0x1000, np.zeros(0x100, np.uint32))
    with pytest.raises(MapError, match="multiples of 4"):
        space.map_ram(0x1002, np.zeros(0x100, np.uint8))
    ro = np.zeros(0x100, np.uint8)
    ro.flags.writeable = False
    with pytest.raises(MapError):
        space.map_ram(0x2000, ro)
    assert issubclass(MapError, IsaforgeError)


def test_host_side_access() -> None:
    space = AddressSpace("l1")
    arr = np.zeros(0x100, np.uint8)
    space.map_ram(0x1000, arr)
    space.write(0x1004, 4, 0x11223344)
    assert arr[4:8].tolist() == [0x44, 0x33, 0x22, 0x11]
    assert space.read(0x1006, 2) == 0x1122
    space.write_bytes(0x10FE, b"\xaa\xbb")
    assert space.read_bytes(0x10FE, 2) == b"\xaa\xbb"
    with pytest.raises(MemoryAccessError, match="runs past the end"):
        space.read(0x10FE, 4)
    with pytest.raises(MemoryAccessError, match=r"0x00002000: the address is unmapped in l1"):
        space.write(0x2000, 4, 0)


@pytest.mark.parametrize("path", PATHS)
def test_unmapped_access_names_hart_pc_instruction_and_address(path: str) -> None:
    h, _ = make("li a0, 1\nlui a4, 0xffb20\nsw a0, 0x148(a4)\nebreak\n", path)
    with pytest.raises(MemoryAccessError) as e:
        h.run(100)
    msg = str(e.value)
    assert "brisc: pc 0x108 (sw\ta0,328(a4)): write of 4 byte(s) at 0xffb20148" in msg
    assert "unmapped" in msg
    assert (e.value.hart, e.value.pc, e.value.address, e.value.access) == (
        "brisc", 0x108, 0xFFB20148, "write")
    assert h.pc == 0x108 and h.instret == 2  # stopped at the faulting instruction


@pytest.mark.parametrize("path", PATHS)
def test_misaligned_accesses_are_errors(path: str) -> None:
    h, _ = make("li a0, 0x202\nlw a1, 0(a0)\n", path)
    with pytest.raises(MemoryAccessError, match=r"pc 0x104 \(lw\ta1,0\(a0\)\): read of 4 "
                       r"byte\(s\) at 0x00000202: misaligned"):
        h.run(10)


@pytest.mark.parametrize("path", PATHS)
def test_fetch_outside_ram_and_illegal_words(path: str) -> None:
    h, _ = make("li a0, 0x2000\njr a0\n", path)
    with pytest.raises(MemoryAccessError, match="pc 0x2000.*fetch"):
        h.run(10)
    h, _ = make(".word 0xffffffff\n", path)
    with pytest.raises(IllegalInstruction, match=r"brisc: pc 0x100: 0xffffffff"):
        h.run(10)
    h, _ = make("mret\n", path)
    with pytest.raises(IllegalInstruction, match="not modelled"):
        h.run(10)


def test_mmio_window_without_a_handler() -> None:
    h, _ = make("lui a0, 0xffe40\nlw a1, 0(a0)\n", mmio=(0xFFE40000, 0x1000, None,
                                                       lambda a, s, v: None))
    with pytest.raises(MemoryAccessError, match="has no read handler"):
        h.run(10)


# -- stops -----------------------------------------------------------------------------------
@pytest.mark.parametrize("path", PATHS)
def test_stop_reasons(path: str) -> None:
    h, _ = make("nop\necall\n", path)
    assert h.run(10) is StopReason.ECALL and h.pc == 0x104 and h.instret == 1
    h.pc += 4  # the caller steps past it
    h, _ = make("ebreak\n", path)
    assert h.run(10) is StopReason.EBREAK and h.pc == 0x100 and h.instret == 0
    h, _ = make("wfi\nnop\n", path)
    assert h.run(10) is StopReason.WFI and h.pc == 0x104 and h.instret == 1
    h, _ = make("loop: j loop\n", path)
    assert h.run(1000) is StopReason.LIMIT and h.instret == 1000
    assert h.run(0) is StopReason.LIMIT and h.instret == 1000


@pytest.mark.parametrize("path", PATHS)
def test_an_mmio_callback_can_stop_the_run(path: str) -> None:
    hart: list[Hart] = []

    def write(a: int, s: int, v: int) -> None:
        if v == 3:
            hart[0].request_stop()

    h, _ = make("lui t0, 0xffe40\nli a0, 0\nloop: addi a0, a0, 1\nsw a0, 0(t0)\nj loop\n",
                path, mmio=(0xFFE40000, 0x1000, None, write))
    hart.append(h)
    assert h.run(1000) is StopReason.REQUESTED
    assert h.reg_read("a0") == 3 and h.pc == 0x110  # after the store (at 0x10c) that asked


# -- registers -------------------------------------------------------------------------------
def test_registers_by_number_and_name() -> None:
    h, _ = make("nop\n")
    h.reg_write("a0", 0x1_2345_6789)  # wraps to 32 bits
    assert h.reg_read(10) == 0x23456789 and h.reg_read("x10") == 0x23456789
    h.reg_write("zero", 5)
    h.reg_write("fp", 9)
    assert h.reg_read(0) == 0 and h.reg_read("s0") == 9
    h.reg_write("pc", 0x104)
    assert h.pc == 0x104 == h.reg_read("pc")
    with pytest.raises(ValueError):
        h.reg_read("q7")


@pytest.mark.parametrize("path", PATHS)
def test_x0_stays_zero(path: str) -> None:
    h, _ = make("li zero, 5\nlui zero, 0x12\nlw zero, 0(zero)\nadd a0, zero, zero\nebreak\n",
                path)
    assert h.run(10) is StopReason.EBREAK and h.reg_read("a0") == 0 and h.x[0] == 0


# -- CSRs ------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", PATHS)
def test_blackhole_csrs(path: str) -> None:
    src = """
        li t1, 2
        csrs 0x7c0, t1          # cfg0 (DisBp), as the firmware does
        csrr a0, 0x7c0
        csrw mstatus, t1        # read-only: ignored
        csrr a1, mstatus
        csrr a2, misa
        csrr a3, minstret       # 6 instructions retired before this one
        csrrwi a4, 0x7c3, 17    # cfg1 scratch: old value 0
        csrr a5, 0x7c3
        csrr a6, mhartid
        ebreak
    """
    h, _ = make(src, path)
    assert h.run(100) is StopReason.EBREAK
    got = [h.reg_read(f"a{i}") for i in range(7)]
    assert got == [(16 << 13) | 2, 0x80006600, 0x40201123, 6, 0, 17, 0]
    assert h.csr_read(0x7C0) == (16 << 13) | 2


def test_counters_are_writable_and_count_retired_instructions() -> None:
    h, _ = make("nop\nnop\ncsrw instret, zero\nnop\ncsrr a0, instret\ncsrr a1, instreth\n"
                "li t0, 7\ncsrw mcycleh, t0\ncsrr a2, cycleh\nrdcycle a3\nebreak\n")
    assert h.run(100) is StopReason.EBREAK
    assert [h.reg_read(r) for r in ("a0", "a1", "a2")] == [2, 0, 7]
    assert h.reg_read("a3") == h.instret - 1


def test_unknown_csrs_are_errors_until_hooked() -> None:
    h, _ = make("csrr a0, 0x7ff\nebreak\n")
    with pytest.raises(IllegalInstruction, match=r"pc 0x100 \(csrr\ta0,0x7ff\): CSR 0x7ff"):
        h.run(10)
    h, _ = make("li t0, 5\ncsrw 0x7ff, t0\ncsrr a0, 0x7ff\ncsrr a1, 0xbc0\nebreak\n")
    writes: list[int] = []
    h.csr_hook(0x7FF, write=lambda hart, v: writes.append(v))
    h.csr_hook(0xBC0, read=lambda hart: 0x123)
    assert h.run(10) is StopReason.EBREAK
    assert writes == [5] and h.reg_read("a0") == 0 and h.reg_read("a1") == 0x123


def test_csr_instructions_read_and_write_only_when_the_spec_says() -> None:
    reads: list[int] = []
    h, _ = make("csrw 0x7c3, zero\ncsrs 0x7c3, zero\ncsrrsi a0, 0x7c3, 0\nebreak\n")
    h.csr_hook(0x7C3, read=lambda hart: reads.append(1) or 9)
    assert h.run(10) is StopReason.EBREAK
    assert len(reads) == 2  # csrw with rd=zero does not read; csrs/csrrsi read, do not write


# -- hooks -----------------------------------------------------------------------------------
@pytest.mark.parametrize("path", PATHS)
def test_hooks(path: str) -> None:
    h, _ = make("li a0, 0x200\nli a1, 7\nsw a1, 0(a0)\nlw a2, 0(a0)\nebreak\n", path)
    pcs: list[int] = []
    mem: list[tuple] = []
    h.hook_add("insn", lambda hart, pc, size, word: pcs.append(pc))
    h.hook_add("mem_write", lambda hart, a, s, v: mem.append(("w", a, s, v)))
    handle = h.hook_add("mem_read", lambda hart, a, s, v: mem.append(("r", a, s, v)),
                        begin=0x300)
    assert h.run(100) is StopReason.EBREAK
    assert pcs == [0x100, 0x104, 0x108, 0x10C, 0x110]
    assert mem == [("w", 0x200, 4, 7)]  # the read at 0x200 is outside the read hook's range
    h.hook_del(handle)
    with pytest.raises(HookError):
        h.hook_del(handle)
    with pytest.raises(HookError):
        h.hook_add("packet", print)


def test_hooks_see_the_instruction_word() -> None:
    h, _ = make("addi a0, a0, 1\nebreak\n")
    words: list[int] = []
    h.hook_add("insn", lambda hart, pc, size, word: words.append(word), begin=0x100, end=0x100)
    h.run(10)
    assert words == [int.from_bytes(assemble("addi a0, a0, 1"), "little")]
