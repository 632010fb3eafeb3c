"""The decoder's API: ``disassemble()`` is an iterator of the core instruction record, each word
decoded and formatted once; the listing is built on the same records."""

from __future__ import annotations

import inspect

import pytest

from isaforge import afuc
from isaforge.afuc import assemble, disassemble, listing
from isaforge.afuc.decode import LITERAL, Decoder, Detail, LabelContext
from isaforge.afuc.regdb import RegDB
from isaforge.core import insn
from isaforge.core.errors import FirmwareError
from tests.refdata import refdata

V6 = "[016ee001]\n"


def a630() -> bytes:
    return refdata("afuc", "firmware", "a630_sqe.fw").read_bytes()


def test_disassemble_is_a_generator_of_the_core_record() -> None:
    assert afuc.Instruction is insn.Instruction
    fw = assemble(V6 + "mov $03, 0x8c1\n(rep)(xmov1)mov $data, $data\nwaitin\nnop\n")
    it = disassemble(fw)
    assert inspect.isgenerator(it)
    records = list(it)
    assert all(type(r) is insn.Instruction for r in records)
    # numbered from the version dword, 4 bytes a word, as Mesa's listing numbers them
    assert [r.address for r in records] == [0, 4, 8, 12, 16]
    assert [r.size for r in records] == [4] * 5
    assert records[1].bytes == fw[8:12]
    assert records[1].endian == "little"
    # the address argument is the byte address of the first word
    assert [r.address for r in disassemble(fw, address=0x1000)][:2] == [0x1000, 0x1004]


def test_mnemonic_and_operands_come_from_the_formatter() -> None:
    fw = assemble(V6 + "mov $03, 0x8c1\n(rep)(xmov1)mov $data, $data\nwaitin\n"
                  "cwrite $02, [$00 + @REG_READ_DWORDS]\n")
    mov, rep, waitin, cwrite = list(disassemble(fw))[1:]
    assert (mov.mnemonic, mov.op_str, mov.text) == ("mov", "$03, 0x8c1", "mov $03, 0x8c1")
    assert isinstance(mov.detail, Detail) and mov.detail.comment == "\t; CP_ROQ_THRESHOLDS_1"
    # modifiers belong to the mnemonic, as the formatter splits the text
    assert (rep.mnemonic, rep.op_str) == ("(rep)(xmov1)mov", "$data, $data")
    assert rep.fields["REP"] == 1 and rep.fields["XMOV"] == 1 and rep.name == "or"
    assert (waitin.mnemonic, waitin.op_str) == ("waitin", "")
    assert (cwrite.mnemonic, cwrite.op_str) == ("cwrite", "$02, [$00 + @REG_READ_DWORDS]")


def test_every_word_of_real_firmware_splits_into_mnemonic_and_operands() -> None:
    for r in disassemble(a630()):
        if r.name is None:
            assert (r.mnemonic, r.op_str, r.text) == (LITERAL, f"[{r.word:08x}]",
                                                      f"[{r.word:08x}]")
        else:
            assert r.text == (f"{r.mnemonic} {r.op_str}" if r.op_str else r.mnemonic), r


def test_branch_targets_in_detail() -> None:
    src = V6 + "l1:\nbrne $02, 0x1, #l1\nnop\ncall #f\nnop\nf:\nret\nnop\njump #99\nnop\n"
    recs = list(disassemble(assemble(src)))
    brne, call, jump = recs[1], recs[3], recs[7]
    assert brne.op_str == "$02, 0x1, #l1"
    assert (brne.detail.target, brne.detail.call) == (1, False)
    assert call.op_str == "#fxn5" and (call.detail.target, call.detail.call) == (5, True)
    # a target outside the words prints as its raw value, and is still in detail
    assert jump.op_str == "#99" and jump.detail.target == 7 + 99
    assert recs[2].detail.target is None


def test_bad_input_raises_at_the_call() -> None:
    with pytest.raises(FirmwareError, match="needs gpu="):
        disassemble([0x12345678])
    with pytest.raises(FirmwareError, match="multiple of 4"):
        disassemble(b"\x00" * 13)


def test_listing_decodes_each_word_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The label pass and the listing pass are one: every listed word is formatted at most
    once, a word that repeats only once unless its text depends on its pc (a branch) (a raw
    listing, so that no boot code runs meanwhile)."""
    data = a630()
    formatted: list[int] = []
    line = Decoder._line

    def counting_line(self: Decoder, word: int, ctx: LabelContext) -> str:
        formatted.append(word)
        return line(self, word, ctx)

    monkeypatch.setattr(Decoder, "_line", counting_line)
    text = listing(data, verbose=True, raw=True)
    listed = [int(line[7:15], 16) for line in text.splitlines()
              if line.startswith("\t") and line[17:] and not line[17:].endswith(":")]
    isa = Decoder(6, RegDB.for_variant("A6XX")).isa
    decodable = [w for w in listed if isa.match(w) is not None]
    assert len(listed) == len(data) // 4 and len(decodable) > 7000
    seen = [w for w in formatted if isa.match(w) is not None]
    assert set(seen) == set(decodable)
    assert all(seen.count(w) <= decodable.count(w) for w in set(seen))
    assert len(seen) < len(decodable) * 2 // 3  # repeated words are reused
    dec = Decoder(6, RegDB.for_variant("A6XX"))
    branches = set()
    for w in set(seen):
        ctx = LabelContext(dec.db, len(listed))
        dec.decode(w, ctx)
        if ctx.target is not None:
            branches.add(w)
    assert branches and all(seen.count(w) == 1 for w in set(seen) - branches)


def test_one_word_context_prints_raw_targets() -> None:
    dec = Decoder(6, RegDB.for_variant("A6XX"))
    w = int.from_bytes(assemble(V6 + "l1:\njump #l1\n")[8:12], "little")
    ctx = LabelContext(dec.db, 10)
    ctx.pc = 1
    assert dec.text(w, ctx) == "jump #l1" and ctx.branch_targets == {1}
    ctx = LabelContext(dec.db, 10, labels=False)
    ctx.pc = 1
    assert dec.text(w, ctx) == "jump #0" and not ctx.branch_targets
