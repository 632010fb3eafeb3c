"""The Scalar Unit's memory instructions against a memory, results computed by hand."""

from __future__ import annotations

import pytest

from isaforge import tensix
from isaforge.tensix import Coprocessor
from isaforge.tensix.machine import DeadlockError, NotImplementedInstruction


class Mem:
    """A small L1 (bytes) and a register file at 0xFFB1xxxx."""

    def __init__(self, size: int = 1 << 16) -> None:
        self.l1_size = size
        self.data = bytearray(size)
        self.mmio: dict[int, int] = {}
        self.mmio_log: list[tuple[str, int, int, int]] = []

    def read(self, addr: int, size: int) -> int:
        return int.from_bytes(self.data[addr:addr + size], "little")

    def write(self, addr: int, size: int, value: int) -> None:
        self.data[addr:addr + size] = value.to_bytes(size, "little")

    def mmio_read(self, thread: int, addr: int) -> int:
        self.mmio_log.append(("r", thread, addr, self.mmio.get(addr, 0)))
        return self.mmio.get(addr, 0)

    def mmio_write(self, thread: int, addr: int, value: int) -> None:
        self.mmio_log.append(("w", thread, addr, value))
        self.mmio[addr] = value


def run(cp: Coprocessor, text: str, thread: int = 0) -> None:
    cp.load_program({thread: tensix.assemble(text)})
    cp.run(max_steps=1000)


def test_loadind_32_bits_and_offset_increment() -> None:
    mem = Mem()
    mem.write(0x230 + 0x14, 4, 0xCAFEBABE)
    cp = Coprocessor(memory=mem)
    cp.gpr.set(0, 3, 0x23)          # base: 0x23 * 16 = 0x230
    cp.gpr.set(0, 2, 0x0014)        # half-register 4 (GPR 2 low half) holds the offset 0x14
    cp.gpr.set(0, 5, 0x11111111)
    run(cp, "TTI_LOADIND(1, 4, 2, 5, 3)")  # 32 bits, offset += 4
    assert cp.gpr.get(0, 5) == 0xCAFEBABE
    assert cp.gpr.get(0, 2) == 0x0018


def test_loadind_narrow_keeps_high_bits_and_16_bytes_fill_four_gprs() -> None:
    mem = Mem()
    mem.data[0x100:0x110] = bytes(range(16))
    cp = Coprocessor(memory=mem)
    cp.gpr.set(0, 1, 0x10)          # base 0x100, offset half 0 (GPR 0 low) = 0 + ...
    cp.gpr.set(0, 7, 0xAABBCCDD)
    cp.gpr.set(0, 0, 0x0003)        # offset 3
    run(cp, "TTI_LOADIND(3, 0, 0, 7, 1)")  # 8 bits at 0x103
    assert cp.gpr.get(0, 7) == 0xAABBCC03
    cp.gpr.set(0, 0, 0)
    run(cp, "TTI_LOADIND(0, 0, 3, 9, 1)")  # 16 bytes to GPRs 8..11 (9 & 0x3C), offset += 16
    assert [cp.gpr.get(0, 8 + k) for k in range(4)] == [0x03020100, 0x07060504,
                                                         0x0B0A0908, 0x0F0E0D0C]
    assert cp.gpr.get(0, 0) == 16


def test_storeind_l1_sizes() -> None:
    mem = Mem()
    cp = Coprocessor(memory=mem)
    cp.gpr.set(0, 3, 0x40)          # base 0x400
    cp.gpr.set(0, 2, 8)             # half 4: offset 8
    cp.gpr.set(0, 6, 0x12345678)
    run(cp, "TTI_STOREIND(1, 0, 1, 4, 1, 6, 3)")  # size code 1 = 32 bits, offset += 2
    assert mem.read(0x408, 4) == 0x12345678 and cp.gpr.get(0, 2) == 10
    run(cp, "TTI_STOREIND(1, 1, 1, 4, 0, 6, 3)")  # size code 3 = 8 bits at 0x40A
    assert mem.read(0x408, 4) == 0x12785678


def test_storeind_mmio_and_loadreg_storereg() -> None:
    mem = Mem()
    cp = Coprocessor(memory=mem)
    cp.gpr.set(1, 3, 0x121B0)       # 0xFFB00000 + 0x121B0: SOFT_RESET_0
    cp.gpr.set(1, 6, 0x47000)
    run(cp, "TTI_STOREIND(0, 1, 0, 0, 0, 6, 3)", thread=1)
    assert mem.mmio_log == [("w", 1, 0xFFB121B0, 0x47000)]
    mem.mmio[0xFFB121F0] = 777
    run(cp, "TTI_LOADREG(9, 0x487C)\nTTI_STOREREG(9, 0x4880)", thread=1)  # 0x121F0 >> 2
    assert cp.gpr.get(1, 9) == 777
    assert mem.mmio[0xFFB12200] == 777


def test_storereg_below_the_mmio_window_is_undefined_behaviour() -> None:
    cp = Coprocessor(memory=Mem())
    with pytest.raises(Exception, match="below 0xffb11000"):
        run(cp, "TTI_STOREREG(9, 0x10)")


def test_atincget_wraps_within_its_width() -> None:
    mem = Mem()
    mem.write(0x204, 4, 0xABCD00FE)
    cp = Coprocessor(memory=mem)
    cp.gpr.set(0, 3, 0x20)
    cp.gpr.set(0, 4, 5)
    run(cp, "TTI_ATINCGET(0, 7, 1, 4, 3)")  # 8-bit integer (mask 0xFF) at word 1
    assert mem.read(0x204, 4) == 0xABCD0003   # 0xFE + 5 = 0x103 -> low 8 bits 0x03
    assert cp.gpr.get(0, 4) == 0xABCD00FE


def test_atincgetptr_pushes_and_waits_while_full() -> None:
    mem = Mem()
    mem.write(0x300, 4, 0)          # rd
    mem.write(0x304, 4, 3)          # wr: 3 of a capacity of 4 (IntWidth 3)
    cp = Coprocessor(memory=mem)
    cp.gpr.set(0, 3, 0x30)
    run(cp, "TTI_ATINCGETPTR(0, 0, 0, 3, 1, 4, 3)")  # push 1
    assert mem.read(0x304, 4) == 4 and cp.gpr.get(0, 4) == 3
    cp.load_program({0: tensix.assemble("TTI_ATINCGETPTR(0, 0, 0, 3, 1, 4, 3)")})
    with pytest.raises(DeadlockError, match="FIFO at L1\\[0x300\\] is full"):
        cp.run(max_steps=10)
    mem.write(0x300, 4, 1)          # a pop makes room
    cp.run(max_steps=10)
    assert mem.read(0x304, 4) == 5


def test_atswap_writes_masked_halfwords() -> None:
    mem = Mem()
    mem.data[0x500:0x510] = b"\xff" * 16
    cp = Coprocessor(memory=mem)
    cp.gpr.set(0, 1, 0x50)
    for k in range(4):
        cp.gpr.set(0, 8 + k, 0x11112222 * (k + 1) & 0xFFFFFFFF)
    run(cp, "TTI_ATSWAP(0, 0x81, 8, 1)")  # halfwords 0 and 7
    assert mem.read(0x500, 2) == 0x2222
    assert mem.read(0x50E, 2) == 0x4444
    assert mem.read(0x502, 12) == int.from_bytes(b"\xff" * 12, "little")


def test_atcas_waits_for_its_value_then_sets() -> None:
    mem = Mem()
    mem.write(0x604, 4, 1)
    cp = Coprocessor(memory=mem)
    cp.gpr.set(0, 3, 0x60)
    cp.load_program({0: tensix.assemble("TTI_ATCAS(0, 5, 2, 1, 0, 3)")})
    with pytest.raises(DeadlockError, match="waiting for 0x2"):
        cp.run(max_steps=10)
    mem.write(0x604, 4, 2)
    cp.run(max_steps=10)
    assert mem.read(0x604, 4) == 5


def test_without_a_tile_they_reach_the_coprocessors_own_l1_and_no_mmio() -> None:
    cp = Coprocessor()  # no tile: its own L1 (machine.l1.L1Memory), no MMIO registers
    cp.memory.write(0x230 + 0x14, 4, 0xCAFEBABE)
    cp.gpr.set(0, 3, 0x23)
    cp.gpr.set(0, 2, 0x0014)
    run(cp, "TTI_LOADIND(1, 4, 2, 5, 3)")
    assert cp.gpr.get(0, 5) == 0xCAFEBABE
    assert int.from_bytes(cp.memory.l1[0x244:0x248].tobytes(), "little") == 0xCAFEBABE
    with pytest.raises(NotImplementedInstruction, match="no tile"):
        run(cp, "TTI_STOREREG(0, 0x4400)")
