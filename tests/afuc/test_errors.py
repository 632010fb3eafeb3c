"""Malformed input: one clear line on stderr and a non-zero exit from the real CLI, and an
:class:`AsmError` with its location from the Python API.

``python -m isaforge.cli`` does nothing (the module has no ``__main__`` guard), so the CLI is
driven in-process through click's ``CliRunner`` on ``isaforge.cli.main``; cases that could hang
(boot code that never reaches waitin) run ``isaforge.cli.main`` in a child process instead, so
that a timeout can kill it.
"""

from __future__ import annotations

import random
import re
import signal
import struct
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from isaforge.afuc import assemble, listing
from isaforge.afuc.image import FIRMWARE_IDS, fwid_of
from isaforge.cli import main
from isaforge.core.errors import AsmError, FirmwareError, IsaforgeError

TIMEOUT = 20  # seconds; the boot-code executor gives up after 200000 steps, well within

A6XX_VERSION = "016ee001"
A7XX_VERSION = "00730000"


def _runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        return CliRunner()  # click >= 8.2 keeps stderr apart by itself


def _invoke(*args: str) -> Result:
    return _runner().invoke(main, ["afuc", *args])


@dataclass
class Outcome:
    exit_code: int | None
    stdout: str
    stderr: str
    escaped: BaseException | None = None  # an exception that got past the command


def _outcome(res: Result) -> Outcome:
    escaped = None if isinstance(res.exception, SystemExit | None) else res.exception
    return Outcome(res.exit_code, res.stdout, res.stderr, escaped)


def _run_cli(*args: str, timeout: float = TIMEOUT) -> Outcome:
    """The real CLI entry point in a child process, killed if it runs past ``timeout``."""
    cmd = [sys.executable, "-c", "from isaforge.cli import main; main()", "afuc", *args]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"isaforge afuc {' '.join(args)} did not finish within {timeout} s")
    return Outcome(p.returncode, p.stdout, p.stderr)


def _one_line_error(res: Result | Outcome, *phrases: str, loc: str | None = None) -> str:
    """Check the error contract; return the message line."""
    if isinstance(res, Result):
        res = _outcome(res)
    stderr = res.stderr
    assert "Traceback" not in stderr and "Traceback" not in res.stdout
    # an exception escaping the command would also give exit status 1 under CliRunner
    assert res.escaped is None, repr(res.escaped)
    assert res.exit_code == 1, (res.exit_code, stderr)  # 2 would be an internal error
    line = stderr.strip()
    assert line, "no message on stderr"
    assert "\n" not in line, f"more than one line on stderr: {stderr!r}"
    assert line.startswith("isaforge:"), line
    assert "internal error" not in line
    assert res.stdout == "", "nothing may be written to stdout on error"
    for phrase in phrases:
        assert phrase.lower() in line.lower(), f"{phrase!r} not in {line!r}"
    if loc is not None:
        assert f"isaforge: {loc}: error: " in line, f"{loc!r} not in {line!r}"
    return line


def _garbage(seed: int = 7, size: int = 64) -> bytes:
    """Random bytes whose version dword carries no known firmware id."""
    rng = random.Random(seed)
    while True:
        data = rng.randbytes(size)
        if fwid_of(struct.unpack_from("<I", data, 4)[0]) not in FIRMWARE_IDS:
            return data


def _hanging_firmware(version: str) -> bytes:
    """Boot code that spins forever and never reaches waitin."""
    return assemble(
        f"[{version}]\n[#jumptbl]\nloop:\njump #loop\nnop\njumptbl:\n.jumptbl\n",
        filename="hang.asm",
    )


# --------------------------------------------------------------------------------------------
# disasm
# --------------------------------------------------------------------------------------------

DISASM_CASES = {
    "truncated-6-bytes": (bytes(6), ["firmware size 6", "multiple of 4"]),
    "odd-length": (bytes(4) + bytes.fromhex("01e06e01") + b"\x00\x01\x02\x03\x04", [
        "firmware size 13", "multiple of 4"]),
    "no-header": (bytes(4) + bytes.fromhex("01e06e01"), ["too short"]),
    "empty": (b"", ["empty"]),
    "garbage-unknown-id": (_garbage(), ["unknown firmware id", "--gpu"]),
}


@pytest.mark.parametrize("case", DISASM_CASES)
def test_disasm_malformed_file(tmp_path: Path, case: str) -> None:
    data, phrases = DISASM_CASES[case]
    fw = tmp_path / f"{case}.fw"
    fw.write_bytes(data)
    _one_line_error(_invoke("disasm", str(fw)), *phrases)
    # the Python API raises our own error for the same bytes
    with pytest.raises(FirmwareError):
        listing(data)


def test_disasm_garbage_with_forced_gpu(tmp_path: Path) -> None:
    fw = tmp_path / "garbage.fw"
    fw.write_bytes(_garbage())
    _one_line_error(_invoke("disasm", str(fw), "--gpu", "a630"), "--gpu")


def test_disasm_unknown_gpu_option(tmp_path: Path) -> None:
    fw = tmp_path / "garbage.fw"
    fw.write_bytes(_garbage())
    _one_line_error(_invoke("disasm", str(fw), "--gpu", "zz9"), "unknown GPU", "--gpu")


def test_disasm_nonexistent_file(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir" / "missing.fw"
    line = _one_line_error(_invoke("disasm", str(missing)), "No such file")
    assert str(missing) in line


@pytest.mark.parametrize("command", ["disasm", "run", "debug", "asm"])
def test_a_directory_is_bad_input_not_bad_usage(tmp_path: Path, command: str) -> None:
    """A directory where a file is expected is read like any file: one line, exit status 1
    (bad input), as a missing file is; bad usage (click's errors) is exit status 2."""
    args = {"disasm": [str(tmp_path)], "run": [str(tmp_path), str(tmp_path)],
            "debug": [str(tmp_path)], "asm": [str(tmp_path), "-o", str(tmp_path / "o.fw")]}
    line = _one_line_error(_invoke(command, *args[command]), "Is a directory")
    assert str(tmp_path) in line
    res = _outcome(_invoke(command, "--no-such-option"))
    assert res.exit_code == 2 and res.escaped is None
    assert res.stderr.strip().splitlines()[-1].startswith("isaforge: error: ")


@pytest.mark.parametrize("version", [A6XX_VERSION, A7XX_VERSION], ids=["a6xx", "a7xx"])
def test_disasm_boot_code_that_never_reaches_waitin(tmp_path: Path, version: str) -> None:
    fw = tmp_path / "hang.fw"
    fw.write_bytes(_hanging_firmware(version))
    _one_line_error(_run_cli("disasm", str(fw)), "waitin", "--gpu")
    # it terminated in the child, so it is safe to try the Python API in-process
    with pytest.raises(FirmwareError, match="waitin"):
        listing(fw.read_bytes())


def test_disasm_boot_code_with_huge_rep_count(tmp_path: Path) -> None:
    """A (rep) instruction with $rem = 0xffff0000 in the boot code: 4 billion repetitions.
    The executor's step limit must bound them too: a listing or a clean error, in time."""
    fw = tmp_path / "rep.fw"
    fw.write_bytes(assemble(
        f"[{A6XX_VERSION}]\n[#jumptbl]\nmov $rem, 0xffff << 16\n(rep)add $01, $01, $02\n"
        "waitin\nnop\njumptbl:\n.jumptbl\n"
    ))
    res = _run_cli("disasm", str(fw))
    if res.exit_code != 0:
        _one_line_error(res)


@pytest.mark.parametrize("version", [A6XX_VERSION], ids=["a6xx"])
def test_disasm_boot_code_with_setbit_immediate(tmp_path: Path, version: str) -> None:
    """Valid boot code using the immediate form of setbit is executed, and does not crash
    the boot-code executor (an internal error, exit status 2)."""
    data = assemble(
        f"[{version}]\n[#jumptbl]\nsetbit $02, $02, b3\nwaitin\nnop\njumptbl:\n.jumptbl\n"
    )
    fw = tmp_path / "setbit.fw"
    fw.write_bytes(data)
    res = _run_cli("disasm", str(fw))
    assert res.exit_code == 0, res.stderr
    assert "setbit $02, $02, b3" in res.stdout
    assert assemble(res.stdout) == data


# Runs in a child process: random images, each with its own time limit (SIGALRM), so that one
# hanging image is reported and the others still run.
FUZZ = textwrap.dedent("""
    import random, signal, sys
    from isaforge.afuc import listing
    from isaforge.core.errors import IsaforgeError

    class Hang(BaseException):
        pass

    def on_alarm(signum, frame):
        raise Hang()

    signal.signal(signal.SIGALRM, on_alarm)
    gpu, per_image = sys.argv[1], int(sys.argv[2])
    rng = random.Random("afuc-errors-" + gpu)
    for i in range(300):
        n = rng.choice([3, 4, 8, 40, 200])
        data = bytes(4) + rng.randbytes(4 * (n - 1))
        for raw in (False, True):
            signal.alarm(per_image)
            try:
                listing(data, gpu=gpu, raw=raw)
            except IsaforgeError:
                pass
            except Hang:
                print(f"BAD image {i} raw={raw}: no result within {per_image} s:", data.hex())
            except Exception as e:
                print(f"BAD image {i} raw={raw}: {type(e).__name__}: {e}:", data.hex())
            finally:
                signal.alarm(0)
    print("DONE", flush=True)
""")


@pytest.mark.skipif(not hasattr(signal, "SIGALRM"), reason="needs SIGALRM")
@pytest.mark.parametrize("gpu", ["a530", "a630", "a660", "a730"])
def test_disasm_random_images_give_listing_or_clean_error(gpu: str) -> None:
    """Random images forced to a known GPU: a listing or our own error, never anything else
    (the CLI would report anything else as an internal error), and never a hang."""
    per_image = 5
    try:
        p = subprocess.run([sys.executable, "-c", FUZZ, gpu, str(per_image)],
                           capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("the random-image run did not finish within 120 s")
    assert p.returncode == 0, p.stderr[-2000:]
    bad = [line[:400] for line in p.stdout.splitlines() if line.startswith("BAD")]
    assert not bad, "\n".join(bad)
    assert p.stdout.rstrip().endswith("DONE")


# --------------------------------------------------------------------------------------------
# asm
# --------------------------------------------------------------------------------------------

V6 = f"[{A6XX_VERSION}]\n"

# name -> (source, (line, col) of the error, phrases the message must contain)
ASM_CASES: dict[str, tuple[str, tuple[int, int], list[str]]] = {
    "unknown-mnemonic": (V6 + "nop\n  frob $01, $02\n", (3, 3), ["unknown instruction", "frob"]),
    "bad-register": (V6 + "add $01, $02, $zz\n", (2, 15), ["expected", "register", "$zz"]),
    "bad-first-operand": (V6 + "add 12, $02, $03\n", (2, 5), ["expected", "register", "12"]),
    "undefined-label": (V6 + "jump #nowhere\nnop\n", (2, 6), ["undefined label", "nowhere"]),
    "unknown-directive": (V6 + ".frob 3\n", (2, 1), ["unknown directive", ".frob"]),
    "garbage-character": (V6 + "add $01, $02, `$03\n", (2, 15), ["unexpected character", "`"]),
    "trailing-junk": (V6 + "nop $01\n", (2, 5), ["expected", "$01"]),
    "unknown-control-reg": (V6 + "cwrite $01, [$00 + @NO_SUCH_REG]\n", (2, 20),
                            ["unknown control register", "@NO_SUCH_REG"]),
    "duplicate-label": (V6 + "a:\nnop\na:\nnop\n", (4, 1), ["already defined", "a"]),
    "unknown-firmware-id": ("[deadbeef]\nnop\n", (1, 1), ["firmware id", "--gpu"]),
}


@pytest.mark.parametrize("case", ASM_CASES)
def test_asm_error_cli(tmp_path: Path, case: str) -> None:
    source, (line, col), phrases = ASM_CASES[case]
    src = tmp_path / f"{case}.asm"
    src.write_text(source)
    out = tmp_path / "out.fw"
    _one_line_error(_invoke("asm", str(src), "-o", str(out)), *phrases,
                    loc=f"{src}:{line}:{col}")
    assert not out.exists(), "no output file on error"


@pytest.mark.parametrize("case", ASM_CASES)
def test_asm_error_api(case: str) -> None:
    source, (line, col), phrases = ASM_CASES[case]
    with pytest.raises(AsmError) as info:
        assemble(source, filename="t.asm")
    e = info.value
    assert e.loc is not None
    assert (e.loc.file, e.loc.line, e.loc.col) == ("t.asm", line, col)
    assert str(e).startswith(f"t.asm:{line}:{col}: error: ")
    assert "\n" not in str(e)
    for phrase in phrases:
        assert phrase.lower() in e.message.lower()


def test_asm_value_out_of_range(tmp_path: Path) -> None:
    """An immediate too wide for its field: the statement's line, and what did not fit."""
    src = tmp_path / "range.asm"
    src.write_text(V6 + "nop\nmov $02, 0x12345\n")
    out = tmp_path / "out.fw"
    line = _one_line_error(_invoke("asm", str(src), "-o", str(out)), "0x12345", "does not fit",
                           "16-bit")
    # the column may be the statement's (1) or the operand's (10)
    assert re.search(rf"isaforge: {re.escape(str(src))}:3:(1|10): error: ", line), line
    assert not out.exists()
    with pytest.raises(AsmError) as info:
        assemble(V6 + "nop\nmov $02, 0x12345\n", filename="t.asm")
    assert info.value.loc is not None
    assert (info.value.loc.line, info.value.loc.col) in ((3, 1), (3, 10))


def test_asm_missing_version_and_no_gpu(tmp_path: Path) -> None:
    src = tmp_path / "nover.asm"
    src.write_text("add $01, $02, $03\nwaitin\n")
    out = tmp_path / "out.fw"
    _one_line_error(_invoke("asm", str(src), "-o", str(out)), "--gpu", "version")
    assert not out.exists()
    with pytest.raises(IsaforgeError) as info:
        assemble("add $01, $02, $03\nwaitin\n", filename="t.asm")
    assert "--gpu" in str(info.value)
    # naming the GPU is the cure
    res = _invoke("asm", str(src), "-o", str(out), "--gpu", "a630")
    assert res.exit_code == 0, res.stderr
    assert out.read_bytes() == assemble("add $01, $02, $03\nwaitin\n", gpu="a630")


def test_asm_nonexistent_source(tmp_path: Path) -> None:
    missing = tmp_path / "missing.asm"
    line = _one_line_error(_invoke("asm", str(missing), "-o", str(tmp_path / "o.fw")),
                           "No such file")
    assert str(missing) in line


def test_asm_binary_source(tmp_path: Path) -> None:
    """A source that is not UTF-8 text is an error like any other: one 'isaforge:' line."""
    src = tmp_path / "binary.asm"
    src.write_bytes(b"\xff\xfe\x00\x80garbage")
    _one_line_error(_invoke("asm", str(src), "-o", str(tmp_path / "o.fw")), "not a text file")
