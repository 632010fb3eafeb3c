"""RV32I + M against unicorn (QEMU's RISC-V) on random programs: registers and memory."""

from __future__ import annotations

import random

import pytest

from isaforge.riscv import StopReason, assemble
from tests.refdata import requires
from tests.riscv.programs import (
    BASE_OPS,
    CODE,
    DATA,
    SIZE,
    initial_state,
    make_hart,
    random_program,
    render,
)

unicorn = requires("unicorn", "RV32IM against unicorn")
from unicorn import riscv_const as uc_riscv  # noqa: E402


def run_unicorn(code: bytes, regs: list[int], data: bytes) -> tuple[list[int], bytes]:
    uc = unicorn.Uc(unicorn.UC_ARCH_RISCV, unicorn.UC_MODE_RISCV32)
    uc.mem_map(0, SIZE)
    uc.mem_write(CODE, code)
    uc.mem_write(DATA - 0x800, data)
    for i in range(1, 32):
        uc.reg_write(uc_riscv.UC_RISCV_REG_X0 + i, regs[i])
    uc.emu_start(CODE, CODE + len(code) - 4)  # up to the final ebreak
    out = [uc.reg_read(uc_riscv.UC_RISCV_REG_X0 + i) & 0xFFFFFFFF for i in range(32)]
    return out, bytes(uc.mem_read(DATA - 0x800, 0x1000))


@pytest.mark.parametrize("fast", [False, True], ids=["exact", "fast"])
@pytest.mark.parametrize("seed", range(12))
def test_random_programs_match_unicorn(seed: int, fast: bool) -> None:
    rng = random.Random(seed)
    prog = random_program(rng, 200, BASE_OPS)
    regs, data = initial_state(rng)
    code = assemble(render(prog), CODE)
    want_regs, want_data = run_unicorn(code, regs, data)
    h, mem = make_hart(code, regs, data, fast)
    assert h.run(10_000) is StopReason.EBREAK
    assert h.pc == CODE + len(code) - 4
    got = [h.reg_read(i) for i in range(32)]
    diff = {f"x{i}": (hex(g), hex(w)) for i, (g, w) in enumerate(zip(got, want_regs,
                                                                    strict=True)) if g != w}
    assert diff == {}
    assert mem[DATA - 0x800:DATA + 0x800].tobytes() == want_data


@pytest.mark.parametrize("seed", range(4))
def test_division_edge_cases_match_unicorn(seed: int) -> None:
    """Division and multiplication of the values where the spec has special cases."""
    rng = random.Random(100 + seed)
    vals = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 7, 0xFFFFFFF9]
    lines = []
    for op in ["div", "divu", "rem", "remu", "mulh", "mulhsu", "mulhu", "mul"]:
        for a in vals:
            for b in vals:
                lines += [f"li a1, {a:#x}", f"li a2, {b:#x}", f"{op} a0, a1, a2",
                          f"sw a0, {4 * (len(lines) // 4 % 500) - 1000}(s0)"]
    code = assemble("\n".join(lines) + "\nebreak\n", CODE)
    regs, data = initial_state(rng)
    want_regs, want_data = run_unicorn(code, regs, data)
    for fast in (False, True):
        h, mem = make_hart(code, regs, data, fast)
        assert h.run(100_000) is StopReason.EBREAK
        assert [h.reg_read(i) for i in range(32)] == want_regs
        assert mem[DATA - 0x800:DATA + 0x800].tobytes() == want_data
