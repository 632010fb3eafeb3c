"""The start-up cost of ``isaforge theia``: what a command imports, checked without timing.

``run --rtl`` / ``trace --rtl`` on ``.mem`` images run the cycle model only: they must not
import numpy, the compilers, the assembler or the instruction-level simulator (together
more than the RTL loop's whole run: see benchmarks/theia_cycle.py). A fresh interpreter
runs the command and reports ``sys.modules``; the command must also have done its job.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import isaforge
from tests.refdata import refdata

SRC = str(Path(isaforge.__file__).resolve().parent.parent)
#: what the cycle model's run of .mem images must never import
HEAVY = ("numpy", "isaforge.theia.compiler", "isaforge.theia.asm", "isaforge.theia.fastasm",
         "isaforge.theia.decode", "isaforge.theia.machine.gpu", "isaforge.theia.machine.vp",
         "isaforge.core.asm")

_REPORT = """
import json, runpy, sys
sys.argv = ["isaforge", *json.loads(sys.argv[1])]
try:
    runpy.run_module("isaforge", run_name="__main__")
except SystemExit as e:
    code = e.code
else:
    code = 0
print("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _modules(*code: str, args: list[str] | None = None) -> tuple[int, set[str]]:
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    script = "\n".join(code) if args is None else _REPORT
    cmd = [sys.executable, "-c", script]
    if args is not None:
        cmd.append(json.dumps(args))
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout.strip().splitlines()[-1])
    return report["code"], set(report["modules"])


def _images(tmp_path: Path) -> Path:
    d = refdata("theia", "regressions", "test_arrays_1", "vp.2.log").parent
    inputs = tmp_path / "in"
    inputs.mkdir()
    for name in ("code.mem", "control_code.mem", "tmem.mem"):
        if (d / name).exists():
            shutil.copy(d / name, inputs / name)
    return inputs


@pytest.mark.parametrize("verb", ["run", "trace"])
def test_rtl_run_of_images_imports_no_numpy_compiler_or_simulator(tmp_path: Path,
                                                                   verb: str) -> None:
    inputs, out = _images(tmp_path), tmp_path / "out"
    code, modules = _modules(args=["theia", verb, "--rtl", str(inputs / "code.mem"),
                                   "-o", str(out)])
    assert code == 0
    assert (out / "rf.vp.2.log").read_text().startswith("r0\t")  # it did run
    assert (verb == "trace") == (out / "vp.2.log").exists()
    assert "isaforge.theia.cycle.model" in modules
    assert sorted(m for m in modules if m.split(".")[0] == "numpy" or m in HEAVY) == []


def test_designed_run_still_gets_its_engine(tmp_path: Path) -> None:
    # the other side of the lazy imports: the instruction-level run imports the simulator
    inputs, out = _images(tmp_path), tmp_path / "out"
    code, modules = _modules(args=["theia", "run", str(inputs / "code.mem"), "-o", str(out)])
    assert code == 0 and (out / "rf.vp.2.log").exists()
    assert {"isaforge.theia.machine.gpu", "numpy"} <= modules


def test_package_binds_its_names_lazily() -> None:
    code = ["import json, sys", "import isaforge.theia as t", "before = sorted(sys.modules)",
            "names = {n: getattr(t, n).__module__ for n in t.__all__}",
            "from isaforge.theia import Gpu, compile_vp, listing",
            "assert set(t.__all__) <= set(dir(t)) and callable(listing)",
            "print(json.dumps({'code': 0, 'modules': before}))"]
    _, before = _modules(*code)
    assert sorted(m for m in before if m.split(".")[0] == "numpy" or m in HEAVY) == []


def test_every_public_name_resolves() -> None:
    import isaforge.theia as t
    from isaforge.theia import listing  # the function, not the submodule of that name

    assert callable(listing) and listing is t.listing
    for name in t.__all__:
        assert getattr(t, name) is not None
    with pytest.raises(AttributeError):
        t.no_such_name  # noqa: B018
