"""The committed kernel ELFs and generated headers are what tools/build_tensix_kernels.py
builds (when riscv64-unknown-elf-gcc is installed, as .ci/run installs it)."""

from __future__ import annotations

import shutil
import subprocess
import sys

from isaforge.tensix.matmul import KERNELS, kernel_dir, load_kernels

from ...refdata import REPO, missing

CC = "riscv64-unknown-elf-gcc"


def test_committed_kernels_are_what_the_compiler_builds() -> None:
    if shutil.which(CC) is None:
        missing(f"COMPILER MISSING: {CC} is not installed (apt-get install "
                f"gcc-riscv64-unknown-elf); the committed kernel ELFs were not rebuilt")
    version = subprocess.run([CC, "--version"], capture_output=True, text=True,
                             check=True).stdout.splitlines()[0]
    manifest = (kernel_dir() / "MANIFEST").read_text()
    if f"compiler: {version}\n" not in manifest:
        missing(f"COMPILER VERSION DIFFERS: the kernels were built with "
                f"'{manifest.splitlines()[0]}', this is '{version}': bytes would differ")
    r = subprocess.run([sys.executable, str(REPO / "tools" / "build_tensix_kernels.py"),
                        "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_kernels_load_as_position_independent_images() -> None:
    ks = load_kernels()
    assert set(ks) == set(KERNELS)
    for core, k in ks.items():
        assert k.core == core and k.text and len(k.text) % 4 == 0
        assert any(name == "_start" and addr == k.link_base for addr, name in k.symbols)
