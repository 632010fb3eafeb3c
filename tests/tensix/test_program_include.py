"""``.include "FILE"`` in a PROG.s: the included statements count as if written in place
(threads continue across the boundary), files are found next to the includer and then among
the bundled kernels, and mistakes name the file and line."""

from importlib import resources

import pytest

from isaforge.core.errors import AsmError
from isaforge.tensix.program import load_file, parse_program

KERNEL = resources.files("isaforge.tensix") / "data" / "matmul_kernel.s"


def test_include_equals_the_text_written_in_place(tmp_path):
    inner = ".thread 2\nttnop\nTTI_SEMPOST(2)\n"
    (tmp_path / "inner.s").write_text(inner)
    outer = "ttnop\n.include \"inner.s\"\nTTI_SEMGET(2)\n.thread 0\nttnop\n"
    (tmp_path / "outer.s").write_text(outer)
    included = load_file(str(tmp_path / "outer.s"))
    flat = parse_program(outer.replace('.include "inner.s"\n', inner))
    assert included.streams == flat.streams
    # the SEMGET after the include went to thread 2, where the included file left off
    assert len(included.streams[2]) == 3 and len(included.streams[0]) == 2


def test_bundled_kernel_is_found_without_a_directory():
    prog = parse_program('.include "matmul_kernel.s"\n')
    assert prog.streams == parse_program(KERNEL.read_text("utf-8")).streams
    assert prog.mopcfg and prog.streams[1]


def test_the_bundled_example_includes_the_kernel():
    example = resources.files("isaforge") / "examples" / "tensix" / "programs" / "matmul_l1.s"
    text = example.read_text("utf-8")
    assert '.include "matmul_kernel.s"' in text
    kernel_words = parse_program(KERNEL.read_text("utf-8")).streams[1]
    assert load_file(str(example)).streams[1][:len(kernel_words)] == kernel_words


@pytest.mark.parametrize("line, message", [
    ('.include "nowhere.s"', "no file 'nowhere.s'"),
    (".include nowhere.s", "one quoted file name"),
    (".include", "one quoted file name"),
])
def test_bad_include_names_file_and_line(tmp_path, line, message):
    src = tmp_path / "p.s"
    src.write_text("ttnop\n" + line + "\n")
    with pytest.raises(AsmError, match=message) as e:
        load_file(str(src))
    assert e.value.loc.file == str(src) and e.value.loc.line == 2


def test_errors_inside_an_included_file_name_that_file(tmp_path):
    (tmp_path / "bad.s").write_text("ttnop\nttbogus 1\n")
    (tmp_path / "p.s").write_text('.include "bad.s"\n')
    with pytest.raises(AsmError) as e:
        load_file(str(tmp_path / "p.s"))
    assert e.value.loc.file == str(tmp_path / "bad.s") and e.value.loc.line == 2


def test_include_cycle_is_an_error_not_a_hang(tmp_path):
    (tmp_path / "a.s").write_text('.include "b.s"\n')
    (tmp_path / "b.s").write_text('ttnop\n.include "a.s"\n')
    with pytest.raises(AsmError, match="includes itself") as e:
        load_file(str(tmp_path / "a.s"))
    assert e.value.loc.file == str(tmp_path / "b.s")
