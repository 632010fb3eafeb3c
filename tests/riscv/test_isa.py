"""The RV32 description against Tenstorrent's objdump, the real firmware, and itself."""

from __future__ import annotations

import random

import pytest
from elftools.elf.elffile import ELFFile

from isaforge.core.isa import bits_unaccounted
from isaforge.riscv import assemble, decode, disassemble, listing
from isaforge.riscv.isa import EXTENSION, rotl2, rotr2, rv32_isa
from tests.refdata import refdata
from tests.riscv.listings import (
    HEX_LISTINGS,
    TEXT_LISTINGS,
    is_tensix,
    lines,
    listing_files,
    normalise,
)

FIRMWARE = ("brisc", "ncrisc", "trisc0", "trisc1", "trisc2")


def test_every_bit_is_a_field_or_fixed_and_words_are_unambiguous() -> None:
    isa = rv32_isa()
    for ins in isa.instrs:
        assert bits_unaccounted(ins) == 0, ins.name
        assert isa.match(ins.match) is ins, ins.name  # its own fixed bits select it alone
    assert {EXTENSION[i.name] for i in isa.instrs} == {
        "I", "Zicsr", "M", "Zaamo", "Zalrsc", "Zba", "Zbb", "xttzbkb", "xtttensixbh",
        "machine"}


@pytest.mark.parametrize("folder", HEX_LISTINGS)
def test_objdump_listings_decode_to_the_same_text(folder: str) -> None:
    """Every RISC-V word in Tenstorrent's objdump listings decodes to what objdump printed
    (branch targets compared as addresses); every Tensix word is a .ttinsn holding it."""
    checked = tensix = 0
    for path in listing_files((folder,)):
        for address, word, text in lines(path):
            assert word is not None
            ins = decode(word, address)
            if is_tensix(text.split()[0]):
                assert ins.mnemonic == ".ttinsn" and ins.fields["VALUE"] == rotr2(word), text
                assert rotl2(rotr2(word)) == word
                tensix += 1
                continue
            where = f"{path.name}:{address:#x}: {word:08x}"
            assert normalise(ins.text) == normalise(text), where
            checked += 1
    assert checked > 1000 and (tensix > 10 or folder == "blackhole-py-p100a")  # firmware only


def test_tensix_words_through_a_coprocessor_formatter() -> None:
    """A coprocessor formatter names .ttinsn words (the Tensix package supplies one)."""
    seen = []

    def fake(value: int) -> tuple[str, str]:
        seen.append(value)
        return "ttfake", f"{value >> 24}"

    ins = decode(rotl2(0xB2050004), 0x100, coprocessor=fake)
    assert (ins.mnemonic, ins.op_str, ins.text) == ("ttfake", "178", "ttfake\t178")
    assert seen == [0xB2050004] and ins.size == 4 and ins.word == 0xC8140012
    assert decode(0xC8140012).text == ".ttinsn\t0xb2050004"


@pytest.mark.parametrize("core", FIRMWARE)
def test_firmware_text_decodes_completely(core: str) -> None:
    path = refdata("tensix", "firmware", "bh-10503743232459396191", f"{core}.elf")
    with path.open("rb") as fh:
        elf = ELFFile(fh)
        text = elf.get_section_by_name(".text")
        instrs = list(disassemble(text.data(), text["sh_addr"]))
    assert len(instrs) == text["sh_size"] // 4 > 100
    assert [i.text for i in instrs if i.name is None] == []
    assert instrs[0].address == elf["e_entry"]


def test_firmware_uses_the_extensions() -> None:
    names: set[str] = set()
    for core in FIRMWARE:
        path = refdata("tensix", "firmware", "bh-10503743232459396191", f"{core}.elf")
        with path.open("rb") as fh:
            text = ELFFile(fh).get_section_by_name(".text")
            names |= {i.name or "" for i in disassemble(text.data(), text["sh_addr"])}
    assert {"sh2add", "sh3add", "pack", "sext.b", "mul", "remu", "csrrs", "csrrc"} <= names


@pytest.mark.parametrize("kind", [HEX_LISTINGS, TEXT_LISTINGS], ids=["hex", "text"])
def test_listing_text_assembles_back(kind: tuple[str, ...]) -> None:
    """The assembler reads objdump's text: each RISC-V line of the listings assembles, at its
    address, to a word that prints the same (and is the listed word, where there is one)."""
    n = 0
    for path in listing_files(kind):
        for address, word, text in lines(path):
            if is_tensix(text.split()[0]):
                continue
            got = int.from_bytes(assemble(text, address, path.name), "little")
            if word is not None:
                assert got == word, f"{path.name}:{address:#x}: {text}"
            else:
                assert normalise(decode(got, address).text) == normalise(text), text
            n += 1
    assert n > 10000


def test_random_words_round_trip_through_text() -> None:
    """For every instruction: random operand bits -> decode -> text -> assemble -> same."""
    isa = rv32_isa()
    rng = random.Random(13)
    for ins in isa.instrs:
        free = ~ins.mask & 0xFFFFFFFF
        for _ in range(40):
            word = ins.match | (rng.getrandbits(32) & free)
            assert isa.match(word) is ins
            address = rng.randrange(0, 1 << 30) * 4
            rec = decode(word, address)
            back = int.from_bytes(assemble(rec.text, address), "little")
            assert back == word, f"{ins.name}: {word:08x} -> {rec.text!r} -> {back:08x}"


def test_undecodable_words_print_as_objdump_does() -> None:
    rec = decode(0xFFFFFFFF, 8)
    assert (rec.mnemonic, rec.op_str, rec.name) == (".insn", "4, 0xffffffff", None)
    assert assemble(rec.text) == b"\xff\xff\xff\xff"
    # a fence with a non-zero fm that is not fence.tso is no instruction
    assert decode(0x1FF0000F).name is None


@pytest.mark.parametrize(("text", "word"), [
    # xttzbkb (encodings from the Zbkb spec: brev8 = grevi 7, pack = 0000100.100.0110011)
    ("brev8\ta0,a1", 0x6875D513),
    ("pack\ta0,a1,a2", 0x08C5C533),
    ("zext.h\ta0,a1", 0x0805C533),  # = pack a0,a1,zero
    # Zba / Zbb
    ("sh1add\ta0,a1,a2", 0x20C5A533), ("sh3add\ta0,a1,a2", 0x20C5E533),
    ("andn\ta0,a1,a2", 0x40C5F533), ("orn\ta0,a1,a2", 0x40C5E533),
    ("xnor\ta0,a1,a2", 0x40C5C533), ("clz\ta0,a1", 0x60059513), ("ctz\ta0,a1", 0x60159513),
    ("cpop\ta0,a1", 0x60259513), ("sext.b\ta0,a1", 0x60459513),
    ("sext.h\ta0,a1", 0x60559513), ("orc.b\ta0,a1", 0x2875D513), ("rev8\ta0,a1", 0x6985D513),
    ("rol\ta0,a1,a2", 0x60C59533), ("ror\ta0,a1,a2", 0x60C5D533),
    ("rori\ta0,a1,0x3", 0x6035D513), ("max\ta0,a1,a2", 0x0AC5E533),
    ("maxu\ta0,a1,a2", 0x0AC5F533), ("min\ta0,a1,a2", 0x0AC5C533),
    # Zaamo / Zalrsc
    ("amoswap.w\ta0,a1,(a2)", 0x08B6252F), ("amoadd.w.aqrl\ta0,a1,(a2)", 0x06B6252F),
    ("amomaxu.w.rl\ta0,a1,(a2)", 0xE2B6252F), ("lr.w.aq\ta0,(a1)", 0x1405A52F),
    ("sc.w\ta0,a1,(a2)", 0x18B6252F),
    # Zicsr and system
    ("csrs\t0x7c0,t1", 0x7C032073), ("csrwi\tmstatus,8", 0x30045073),
    ("rdcycle\ta0", 0xC0002573), ("unimp", 0xC0001073), ("ecall", 0x00000073),
    ("ebreak", 0x00100073), ("wfi", 0x10500073), ("fence.tso", 0x8330000F),
    # .ttinsn: the Tensix word rotated left by two
    (".ttinsn\t0x700cc000", 0xC0330001),
])
def test_known_encodings(text: str, word: int) -> None:
    assert decode(word).text == text
    assert int.from_bytes(assemble(text), "little") == word


def test_tensix_words_with_the_tensix_packages_formatter() -> None:
    """With the Tensix disassembler as coprocessor formatter, the Tensix lines of the
    listings print as Tenstorrent's objdump printed them."""
    from isaforge.tensix import decode_word

    def tensix(value: int) -> tuple[str, str]:
        got = decode_word(value)
        return got.mnemonic, got.op_str

    n = 0
    for path in listing_files(("add1_sfpu_single_file",)):
        for address, word, text in lines(path):
            if word is not None and is_tensix(text.split()[0]):
                assert normalise(decode(word, address, coprocessor=tensix).text) == \
                    normalise(text), f"{path.name}:{address:#x}"
                n += 1
    assert n > 100


def test_listing_has_objdumps_layout() -> None:
    """Lines without symbols or comments come out exactly as in Tenstorrent's listing."""
    path = refdata("tensix", "tenstorrent-docs", "add1_sfpu_single_file",
                   "firmware_brisc.objdump.txt")
    raw = [ln for ln in path.read_text().splitlines()
           if ln.startswith("    ") and ":\t" in ln and "<" not in ln and "#" not in ln]
    assert len(raw) > 500
    for line in raw[:2000]:
        address, word = int(line.split(":")[0], 16), int(line.split("\t")[1], 16)
        if is_tensix(line.split("\t")[2].split()[0]):
            continue
        got = listing(disassemble(word.to_bytes(4, "little"), address)).rstrip("\n")
        assert got == line.rstrip()
