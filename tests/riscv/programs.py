"""Random straight-line-ish RV32 programs for differential tests (exact vs fast vs unicorn).

A program is a list of (op, rd, rs1, rs2, imm) tuples rendered to assembly. ``s0`` holds the
data base and is never written, so loads, stores and AMOs stay in the data window; branches
and jumps only go forward, to a later instruction, so every program ends.
"""

from __future__ import annotations

import random

import numpy as np

from isaforge.riscv import AddressSpace, Hart

CODE, DATA, SIZE = 0x1000, 0x8000, 0x10000
BASE_REG = 8  # s0

R_BASE = ["add", "sub", "sll", "slt", "sltu", "xor", "srl", "sra", "or", "and"]
R_M = ["mul", "mulh", "mulhsu", "mulhu", "div", "divu", "rem", "remu"]
I_BASE = ["addi", "slti", "sltiu", "xori", "ori", "andi"]
SHIFTS = ["slli", "srli", "srai"]
LOADS = {"lb": 1, "lh": 2, "lw": 4, "lbu": 1, "lhu": 2}
STORES = {"sb": 1, "sh": 2, "sw": 4}
BRANCHES = ["beq", "bne", "blt", "bge", "bltu", "bgeu"]
R_BITS = ["sh1add", "sh2add", "sh3add", "andn", "orn", "xnor", "min", "minu", "max", "maxu",
          "rol", "ror", "pack"]
UNARY_BITS = ["clz", "ctz", "cpop", "sext.b", "sext.h", "zext.h", "orc.b", "rev8", "brev8"]
AMOS = ["amoswap.w", "amoadd.w", "amoxor.w", "amoand.w", "amoor.w", "amomin.w", "amomax.w",
        "amominu.w", "amomaxu.w"]

BASE_OPS = R_BASE + R_M + I_BASE + SHIFTS + list(LOADS) + list(STORES) + BRANCHES + [
    "lui", "auipc", "jal"]
ALL_OPS = BASE_OPS + R_BITS + UNARY_BITS + AMOS + ["rori"]

INTERESTING = [0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 0x8000, 0xFFFF, 0x80]


def render(prog: list[tuple[str, int, int, int, int]]) -> str:
    lines = []
    for i, (op, rd, rs1, rs2, imm) in enumerate(prog):
        if rd == BASE_REG:
            rd = 0
        d, s1, s2 = f"x{rd}", f"x{rs1}", f"x{rs2}"
        if op in LOADS or op in STORES:
            size = LOADS.get(op) or STORES[op]
            off = (imm % 4096 - 2048) // size * size
            lines.append(f"{op} {s2 if op in STORES else d}, {off}(s0)")
        elif op in AMOS:
            lines.append(f"{op} {d}, {s2}, (s0)")
        elif op in BRANCHES or op == "jal":
            skip = 1 + imm % 4
            target = f"L{min(i + skip, len(prog))}"
            lines.append(f"{op} {s1}, {s2}, {target}" if op != "jal" else f"jal {d}, {target}")
        elif op in ("lui", "auipc"):
            lines.append(f"{op} {d}, {imm & 0xFFFFF:#x}")
        elif op in SHIFTS or op == "rori":
            lines.append(f"{op} {d}, {s1}, {imm & 31}")
        elif op in I_BASE:
            lines.append(f"{op} {d}, {s1}, {imm % 4096 - 2048}")
        elif op in UNARY_BITS:
            lines.append(f"{op} {d}, {s1}")
        else:
            lines.append(f"{op} {d}, {s1}, {s2}")
    return "\n".join(f"L{i}: {text}" for i, text in enumerate(lines)) + f"\nL{len(lines)}: ebreak\n"


Insn = tuple[str, int, int, int, int]


def random_program(rng: random.Random, n: int, ops: list[str]) -> list[Insn]:
    return [(rng.choice(ops), rng.randrange(32), rng.randrange(32), rng.randrange(32),
             rng.getrandbits(32)) for _ in range(n)]


def initial_state(rng: random.Random) -> tuple[list[int], bytes]:
    regs = [0] + [rng.choice(INTERESTING) if rng.random() < 0.3 else rng.getrandbits(32)
                  for _ in range(31)]
    regs[BASE_REG] = DATA
    return regs, bytes(rng.getrandbits(8) for _ in range(0x1000))


def make_hart(code: bytes, regs: list[int], data: bytes, fast: bool) -> tuple[Hart, np.ndarray]:
    mem = np.zeros(SIZE, np.uint8)
    mem[CODE:CODE + len(code)] = np.frombuffer(code, np.uint8)
    mem[DATA - 0x800:DATA + 0x800] = np.frombuffer(data, np.uint8)
    space = AddressSpace("diff")
    space.map_ram(0, mem)
    h = Hart("diff", space, CODE)
    h.fast = fast
    for i, v in enumerate(regs):
        h.reg_write(i, v)
    return h, mem
