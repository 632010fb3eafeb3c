"""Replays the commands typed at Mesa's emulator prompt on our Emulator, and reads Mesa's trace.

Used by test_emu_mesa.py: ``run_script`` gives our trace text and our effects in the same
instruction blocks as Mesa's trace, ``mesa_blocks`` parses Mesa's printed trace.
"""

from __future__ import annotations

import re

from isaforge.afuc.boot import jumptable_offset
from isaforge.afuc.isa import parse_reg_name
from isaforge.afuc.machine import Emulator, Idle, TraceState

EFFECT_LINE = re.compile(r"^ {14}(GPU|PIPE|CTRL|MEM): +(\S+): (?:0x)?([0-9a-f]{8})$")
KIND = {"GPU": "reg", "PIPE": "pipe", "CTRL": "ctrl", "MEM": "mem"}


def run_script(fw: bytes, script: str, max_steps: int = 200_000):
    """(trace lines, effect blocks, emulator): one block per executed instruction line, each
    a list of (kind, addr, value) in the order our machine wrote them."""
    emu = Emulator(fw)
    lines: list[str] = []
    blocks: list[list[tuple[str, int, int]]] = [[]]

    def out(text: str) -> None:
        if text.startswith("\t"):
            blocks.append([])
        lines.append(text)

    emu.set_tracer(TraceState(out, jumptable_offset(emu.fw)))
    kinds = {"gpu": "reg", "pipe": "pipe", "ctrl": "ctrl"}  # RegWrite.space -> Effect.kind
    emu.hook_add("reg_write", lambda e, reg, value, info:
                 blocks[-1].append((kinds[info.space], reg, value)))
    emu.hook_add("mem_write", lambda e, addr, size, value:
                 blocks[-1].append(("mem", addr, value)))
    p = emu.main
    p.limit = max_steps
    for cmd in script.splitlines():
        toks = cmd.split()
        if not toks:
            continue
        c = toks[0]
        try:
            if c == "p":
                emu.packet(toks[1], *(int(t, 0) for t in toks[2:]))
            elif c == "s":
                p.step()
            elif c == "r":
                while True:
                    p.step()
                    if p.waitin_pending:
                        break
            elif c == "w":
                space, name, value = toks[1], toks[2], int(toks[3], 0)
                if space == "r":
                    p.gpr[parse_reg_name(name)] = value
                elif space == "m":
                    emu.mem[int(name, 0)] = value
                else:
                    emu.write_reg({"g": "gpu", "c": "control", "s": "sqe"}[space], name, value)
            elif c == "q":
                break
        except Idle:
            pass
    return lines, blocks[1:], emu


def mesa_lines(text: str) -> list[str]:
    """Mesa's trace without prompts and dump-command output; every pc shown as 0000."""
    cleaned, after_prompt = [], False
    for line in text.splitlines():
        if "(s)tep, (r)un" in line:
            after_prompt = line.rstrip().endswith("d")
            continue
        if line.startswith("\t"):
            after_prompt = False
            cleaned.append(line)
        elif line.startswith(" " * 14) and line[14] != " " and not after_prompt:
            cleaned.append(line)
    return cleaned


def normalize_pc(line: str) -> str:
    return re.sub(r"^\t[0-9a-f]{4}:", "\t0000:", line)


def effect_blocks(lines: list[str], db) -> list[set[tuple[str, int, int]]]:
    """Per instruction line, the set of (kind, addr, value) its dumps show."""
    blocks: list[set] = []
    for line in lines:
        if line.startswith("\t"):
            blocks.append(set())
            continue
        m = EFFECT_LINE.match(line)
        if not m or not blocks:
            continue
        kind, name, value = KIND[m[1]], m[2], int(m[3], 16)
        blocks[-1].add((kind, _addr(kind, name, db), value))
    return blocks


def _addr(kind: str, name: str, db) -> int:
    if kind == "mem":
        return int(name, 16)
    if name.startswith("0x"):
        return int(name, 16)
    bare = name.lstrip("@|")
    base, _, plus = bare.partition("+")
    lookup = {"reg": db.gpu_reg, "pipe": db.pipe_reg, "ctrl": db.control_reg}[kind]
    off = lookup(base)
    if off is None:
        raise ValueError(f"unknown {kind} name {name}")
    return off + (int(plus, 16) if plus else 0)
