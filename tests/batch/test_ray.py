"""``isaforge batch --ray``: one local Ray instance for the module (it takes seconds to start).

The engine ships every input with its job and each actor runs its jobs in a directory it makes
itself, whatever the address, so the local instance exercises the path a cluster without a
shared file system takes.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from isaforge.batch import load_manifest, run_batch
from isaforge.batch.manifest import command_checker
from isaforge.batch.ray_engine import RayEngine
from isaforge.cli import main
from tests.refdata import requires

from .helpers import (
    BATCH_EXAMPLE,
    comparable,
    processes_where,
    results,
    run_batch_cli,
    same_tree,
    spin_inputs,
    spin_job,
    sum_loop_jobs,
    wait_for,
    write,
)

# a local Ray talks to itself over loopback only (read when Ray is first imported), and
# reports no usage statistics
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
ray = requires("ray", "the Ray engine")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    assert {n["NodeManagerAddress"] for n in ray.nodes()} == {"127.0.0.1"}
    yield
    ray.shutdown()


def test_example_manifest_runs_identically_on_the_process_pool_and_on_ray(
        tmp_path: Path, local_ray) -> None:
    """examples/batch/sweep.toml: Tensix FPU over fidelities x formats, the THEIA regressions
    (designed and with the RTL's defects), the afuc sessions; one worker process vs two Ray
    workers."""
    from tests.refdata import refdata, refdata_root

    refdata("theia", "regressions")
    var = f"refdata={refdata_root()}"
    manifest = str(BATCH_EXAMPLE / "sweep.toml")
    pool = tmp_path / "pool"
    r = run_batch_cli(manifest, "-o", str(pool), "--workers", "1", "--var", var, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    on_ray = tmp_path / "ray"
    r2 = CliRunner().invoke(main, ["batch", manifest, "-o", str(on_ray), "--ray", "local",
                                   "--workers", "2", "--var", var])
    assert r2.exit_code == 0, r2.output
    assert "on ray (local), 2 workers" in r2.output
    assert comparable(pool) == comparable(on_ray)
    assert same_tree(pool / "jobs", on_ray / "jobs")
    recs = {r["id"]: r for r in results(pool)}
    assert len(recs) == 41 and {r["status"] for r in recs.values()} == {"ok"}
    # the sweep is not twelve copies of one result: each fidelity and format differs
    fpu = {i: r["outputs"]["c.npy"] for i, r in recs.items() if i.startswith("tensix-fpu-")}
    assert len(fpu) == 12 and len(set(fpu.values())) == 12
    # the regressions passed their criteria; the RTL's TMREAD defect changes test1_IO's OMEM
    check = (pool / "jobs" / "theia-test1_IO" / "stdout.txt").read_text()
    assert "9 criteria judged, 0 failed" in check
    assert (recs["theia-test1_IO"]["outputs"]["out/OMEM.vp.2.log"]
            != recs["theia-rtl-test1_IO"]["outputs"]["out/OMEM.vp.2.log"])
    # the afuc sessions ran the scripts given on standard input
    trace = (pool / "jobs" / "afuc-a630-A_nop_memwrite" / "stdout.txt").read_text()
    assert "CP_MEM_WRITE" in trace and trace.count("(afuc)") > 2
    # the Ray workers ran each job in a directory of their own, since removed
    log = (on_ray / "batch.log").read_text()
    dirs = re.findall(r"^\S+ \S+ (\S+): ran on \S+ in (\S+)$", log, re.M)
    assert sorted(i for i, _ in dirs) == sorted(recs)
    for job_id, d in dirs:
        assert Path(d).name == job_id and str(on_ray) not in d and not Path(d).exists()


def _ray_job_processes(job_id: str) -> list[int]:
    """Ray workers running ``job_id`` (their working directory is their job's)."""
    return processes_where(lambda cwd: Path(cwd).name == job_id
                           and Path(cwd).parent.name.startswith("isaforge-batch-"))


def test_ray_timeouts_crashes_and_retries(tmp_path: Path, local_ray) -> None:
    spin_inputs(tmp_path)
    m = write(tmp_path / "m.toml", spin_job("ray-hang", 2) + spin_job("ray-victim", 120)
              + sum_loop_jobs("fine", 2))
    plan = load_manifest(m, command_checker(main))
    out = tmp_path / "out"
    box: dict = {}

    def go() -> None:
        try:
            box["report"] = run_batch(plan, out, lambda: RayEngine(out, "local", 2),
                                      retries=1)
        except BaseException as e:  # noqa: BLE001 - shown by the assertion below
            box["error"] = e

    thread = threading.Thread(target=go)
    thread.start()
    try:
        pid = wait_for(lambda: _ray_job_processes("ray-victim"), timeout=120)[0]
        time.sleep(0.5)
        os.kill(pid, signal.SIGKILL)
        # its retry runs in a new worker: kill that one too
        pid2 = wait_for(lambda: [p for p in _ray_job_processes("ray-victim") if p != pid],
                        timeout=120)[0]
        time.sleep(0.5)
        os.kill(pid2, signal.SIGKILL)
    finally:
        thread.join(300)
    assert not thread.is_alive() and "error" not in box, box.get("error")
    hang, victim, *fine = results(out)
    assert hang["status"] == "timeout" and hang["attempts"] == 2
    assert hang["error"] == "timed out after 2 s" and hang["exit_code"] is None
    assert victim["status"] == "crashed" and victim["attempts"] == 2
    assert victim["exit_code"] is None and victim["error"].startswith("worker died")
    assert [r["status"] for r in fine] == ["ok", "ok"]
    log = (out / "batch.log").read_text()
    assert "ray-victim: attempt 1: crashed (worker died" in log
    assert "ray-hang: attempt 1: timeout (timed out after 2 s); retrying" in log
