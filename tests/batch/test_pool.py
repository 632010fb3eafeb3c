"""``isaforge batch`` on the local process pool: results, determinism, faults, --resume."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from click.testing import CliRunner

from isaforge.batch import load_manifest, run_batch
from isaforge.batch.execute import run_job, run_shipped
from isaforge.batch.manifest import command_checker
from isaforge.batch.pool import ProcessPool
from isaforge.cli import main

from .helpers import (
    EXAMPLES,
    PROGRAMS,
    batch_process,
    comparable,
    mixed_manifest,
    processes_in,
    results,
    run_batch_cli,
    same_tree,
    spin_inputs,
    spin_job,
    sum_loop_jobs,
    wait_for,
    write,
)


def run(manifest: Path, outdir: Path, workers: int = 2, **kw):
    plan = load_manifest(manifest, command_checker(main))
    return run_batch(plan, outdir, lambda: ProcessPool(outdir, workers), **kw)


def test_mixed_manifest_same_results_with_one_or_two_workers(tmp_path: Path) -> None:
    m = mixed_manifest(tmp_path)
    one, two = tmp_path / "one", tmp_path / "two"
    run(m, one, workers=1)
    run(m, two, workers=2)
    recs = {r["id"]: r for r in results(one)}
    assert list(recs) == ["theia-sum_loop-3", "theia-sum_loop-4", "theia-cross_product-3",
                          "theia-cross_product-4", "theia-bad", "tensix-matmul-bf16",
                          "tensix-matmul-fp16", "afuc-roundtrip", "tensix-asm-isolated"]
    assert comparable(one) == comparable(two)
    assert same_tree(one / "jobs", two / "jobs")
    # what the records say is what the jobs did
    assert recs["theia-bad"]["status"] == "failed" and recs["theia-bad"]["exit_code"] == 1
    assert recs["theia-bad"]["error"].startswith("isaforge: bad.vp:2:")
    for job_id, rec in recs.items():
        if job_id != "theia-bad":
            assert rec["status"] == "ok" and rec["exit_code"] == 0 and rec["error"] is None
    omem = (one / "jobs" / "theia-sum_loop-4" / "out" / "OMEM.vp.2.log").read_text()
    assert [int(line.split()[1], 16) for line in omem.splitlines()[:3]] == [55, 110, 165]
    assert set(recs["tensix-matmul-fp16"]["outputs"]) == {"c.npy"}
    assert recs["tensix-matmul-fp16"]["outputs"] != recs["tensix-matmul-bf16"]["outputs"]
    assert set(recs["afuc-roundtrip"]["outputs"]) == {"demo.fw"}
    # the staged inputs are gone; the outputs, stdout.txt and stderr.txt stay
    assert sorted(p.name for p in (one / "jobs" / "tensix-asm-isolated").iterdir()) == [
        "setup.bin", "stderr.txt", "stdout.txt"]
    import hashlib

    listing = (one / "jobs" / "afuc-roundtrip" / "stdout.txt").read_bytes()
    assert hashlib.sha256(listing).hexdigest() == recs["afuc-roundtrip"]["stdout_sha256"]
    assert b"demo_a6xx" not in listing and len(listing.splitlines()) > 10


def test_in_process_and_subprocess_runs_give_the_same_files(tmp_path: Path) -> None:
    """The two ways a command line runs see the same world (streams, terminal, directory)."""
    write(tmp_path / "bad.vp", "vector v = (1,2,3);\nv = v +;\n")
    m = write(tmp_path / "m.toml", f"""
        [[sweep]]
        id = "j-{{isolate}}"
        args = [["theia", "run", "sum_loop.vp", "-o", "out"], ["theia", "disasm", "--help"],
                ["tensix", "asm", "-", "-o", "setup.bin"], ["theia", "compile", "bad.vp"]]
        inputs = ["{PROGRAMS}/sum_loop.vp", "{PROGRAMS}/sum_loop.cp", "bad.vp"]
        stdin = "{EXAMPLES}/tensix/matmul_setup.s"
        [sweep.over]
        isolate = [false, true]
        """)
    plan = load_manifest(m, command_checker(main))
    plan = type(plan)(plan.path, tuple(
        type(j)(**{**j.__dict__, "isolate": j.id.endswith("true")}) for j in plan.jobs))
    out = tmp_path / "out"
    run_batch(plan, out, lambda: ProcessPool(out, 1))
    a, b = results(out)
    assert a["status"] == b["status"] == "failed" and a["exit_code"] == b["exit_code"] == 1
    for key in ("stdout_sha256", "stderr_sha256", "outputs", "error"):
        assert a[key] == b[key], key
    assert same_tree(out / "jobs" / "j-false", out / "jobs" / "j-true")
    stdout = (out / "jobs" / "j-true" / "stdout.txt").read_text()
    assert "Usage: isaforge theia disasm" in stdout
    assert (out / "jobs" / "j-true" / "setup.bin").stat().st_size > 0


def test_stdin_and_shipping_give_the_same_outcome(tmp_path: Path) -> None:
    """A job's stdin file reaches the command; run_shipped (a worker without the runner's
    file system) returns what run_job writes."""
    setup = EXAMPLES / "tensix" / "matmul_setup.s"
    m = write(tmp_path / "m.toml", f"""
        [[job]]
        id = "stdin"
        args = [["tensix", "asm", "-", "-o", "from_stdin.bin"],
                ["tensix", "asm", "matmul_setup.s", "-o", "from_file.bin"]]
        inputs = ["{setup}"]
        stdin = "{setup}"
        """)
    job = load_manifest(m, command_checker(main)).jobs[0]
    local = run_job(job, tmp_path / "local", [("matmul_setup.s", str(setup))])
    assert local["status"] == "ok"
    binary = (tmp_path / "local" / "from_stdin.bin").read_bytes()
    assert binary and binary == (tmp_path / "local" / "from_file.bin").read_bytes()
    shipped = run_shipped(job, [("matmul_setup.s", setup.read_bytes())])
    assert not Path(shipped.pop("workdir")).exists()
    shipped.pop("host")
    assert shipped.pop("files") == {"from_file.bin": binary, "from_stdin.bin": binary}
    assert shipped.pop("stdout") == (tmp_path / "local" / "stdout.txt").read_bytes()
    assert shipped.pop("stderr") == (tmp_path / "local" / "stderr.txt").read_bytes()
    assert shipped.pop("dirs") == []
    for outcome in (local, shipped):
        outcome.pop("seconds")
    assert local == shipped


def test_cli_exit_status_summary_and_progress_without_a_terminal(tmp_path: Path) -> None:
    m = mixed_manifest(tmp_path)
    r = run_batch_cli(str(m), "-o", str(tmp_path / "out"), "--workers", "2")
    assert r.returncode == 1, r.stderr  # theia-bad failed
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout
    # the progress bar went to stderr (a pipe here) once, finished
    assert "batch" in r.stderr and "9/9" in r.stderr
    assert "isaforge batch: 9 jobs" in r.stdout
    assert "slowest jobs" in r.stdout
    assert "theia-bad" in r.stdout and "bad.vp:2:" in r.stdout
    # every job ok: status 0
    good = write(tmp_path / "good.toml", f"""
        [[job]]
        id = "ok"
        args = ["theia", "run", "sum_loop.vp", "-o", "out"]
        inputs = ["{PROGRAMS}/sum_loop.vp", "{PROGRAMS}/sum_loop.cp"]
        """)
    r = CliRunner().invoke(main, ["batch", str(good), "-o", str(tmp_path / "good")])
    assert r.exit_code == 0, r.output
    # an output directory holding a run is not overwritten
    r = CliRunner().invoke(main, ["batch", str(good), "-o", str(tmp_path / "good")])
    assert r.exit_code == 1
    assert "already holds a batch run: add --resume" in r.output


def test_timeouts_are_retried_then_recorded_and_the_rest_runs(tmp_path: Path) -> None:
    spin_inputs(tmp_path)
    m = write(tmp_path / "m.toml", spin_job("hang", 1.5) + sum_loop_jobs("fine", 3))
    out = tmp_path / "out"
    start = time.monotonic()
    report = run(m, out, workers=2, retries=1)
    assert time.monotonic() - start < 60
    hang, *fine = results(out)
    assert hang["status"] == "timeout" and hang["attempts"] == 2
    assert hang["exit_code"] is None and hang["error"] == "timed out after 1.5 s"
    assert hang["outputs"] == {} and hang["stdout_sha256"] is None
    assert hang["seconds"] >= 1.5
    assert [r["status"] for r in fine] == ["ok"] * 3
    assert report.retries == [("hang", 1, "timeout")]
    log = (out / "batch.log").read_text()
    assert "hang: attempt 1: timeout (timed out after 1.5 s); retrying" in log
    assert "hang: timeout after 2 attempt(s)" in log
    assert not processes_in(out)  # the killed workers are gone


def _crash_run(tmp_path: Path, isolate: bool) -> tuple[dict, list[dict]]:
    """A runner (its own process) whose job is killed by a signal from outside."""
    spin_inputs(tmp_path)
    m = write(tmp_path / "m.toml", spin_job("victim", 120, isolate) + sum_loop_jobs("after"))
    out = tmp_path / "out"
    runner = batch_process(str(m), "-o", str(out), "--workers", "1", "--retries", "1")
    try:
        victim = out / "jobs" / "victim"
        # the process running the job: the worker itself (in-process), or its python -m
        # isaforge child (isolate); its working directory is the job's
        pid = wait_for(lambda: processes_in(victim), timeout=60)[0]
        time.sleep(0.5)
        os.kill(pid, signal.SIGSEGV)
        # the retry runs the job again: kill that attempt too
        wait_for(lambda: [p for p in processes_in(victim) if p != pid], timeout=60)
        pid2 = [p for p in processes_in(victim) if p != pid][0]
        time.sleep(0.5)
        os.kill(pid2, signal.SIGKILL)
        stdout, stderr = runner.communicate(timeout=120)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert runner.returncode == 1, stderr
    victim_rec, after = results(out)
    return victim_rec, [after, {"stdout": stdout, "stderr": stderr,
                                "log": (out / "batch.log").read_text()}]


def test_a_job_killed_by_a_signal_is_crashed_retried_and_the_rest_runs(tmp_path: Path) -> None:
    victim, (after, info) = _crash_run(tmp_path, isolate=False)
    assert victim["status"] == "crashed" and victim["attempts"] == 2
    assert victim["exit_code"] == -signal.SIGKILL
    assert victim["error"] == "worker killed by SIGKILL"
    assert "victim: attempt 1: crashed (worker killed by SIGSEGV); retrying" in info["log"]
    assert after["status"] == "ok"
    assert "victim" in info["stdout"] and "crashed" in info["stdout"]


def test_a_subprocess_job_killed_by_a_signal_is_crashed(tmp_path: Path) -> None:
    victim, (after, info) = _crash_run(tmp_path, isolate=True)
    assert victim["status"] == "crashed" and victim["attempts"] == 2
    assert victim["exit_code"] == -signal.SIGKILL and victim["error"] == "killed by SIGKILL"
    assert "victim: attempt 1: crashed (killed by SIGSEGV); retrying" in info["log"]
    assert after["status"] == "ok"


def _slow_manifest(tmp_path: Path) -> Path:
    """Eight jobs of about a second each (a subprocess each), on bundled inputs."""
    return write(tmp_path / "slow.toml", f"""
        [[sweep]]
        id = "job-{{prog}}-{{verb}}"
        args = [["theia", "{{verb}}", "{{prog}}.vp", "-o", "out"]]
        inputs = ["{PROGRAMS}/{{prog}}.vp", "{PROGRAMS}/{{prog}}.cp"]
        isolate = true
        [sweep.over]
        prog = ["sum_loop", "cross_product", "two_threads", "manual_tour"]
        verb = ["compile", "run"]
        """)


def test_resume_after_killing_the_runner_loses_nothing(tmp_path: Path) -> None:
    m = _slow_manifest(tmp_path)
    reference = tmp_path / "reference"
    run(m, reference, workers=2)
    out = tmp_path / "out"
    runner = batch_process(str(m), "-o", str(out), "--workers", "1")
    try:
        def finished() -> list[str]:
            path = out / "results.jsonl"
            lines = path.read_text().splitlines() if path.exists() else []
            return lines if len(lines) >= 2 else []

        wait_for(finished, timeout=120)
        runner.send_signal(signal.SIGKILL)
        runner.wait(30)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    # the workers died with the runner
    wait_for(lambda: not processes_in(out), timeout=10)
    done_before = {json.loads(line)["id"] for line in finished()}
    assert 2 <= len(done_before) < 8
    stamps = {i: (out / "jobs" / i / "stdout.txt").stat().st_mtime_ns for i in done_before}
    # without --resume the directory is refused; with it, only the rest runs
    r = CliRunner().invoke(main, ["batch", str(m), "-o", str(out)])
    assert r.exit_code == 1 and "--resume" in r.output
    report = run(m, out, workers=2, resume=True)
    assert report.skipped == len(done_before) and report.ran == 8 - len(done_before)
    assert comparable(out) == comparable(reference)
    assert same_tree(out / "jobs", reference / "jobs")
    for i, stamp in stamps.items():
        assert (out / "jobs" / i / "stdout.txt").stat().st_mtime_ns == stamp


def test_resume_reruns_jobs_whose_inputs_or_outputs_changed(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        write(tmp_path / f"{name}.s", "ttnop\nttsetc16 5,4\n")
    m = write(tmp_path / "m.toml", """
        [[sweep]]
        id = "asm"
        args = ["tensix", "asm", "{n}.s", "-o", "{n}.bin"]
        inputs = ["{n}.s"]
        [sweep.over]
        n = ["a", "b", "c"]
        """)
    out = tmp_path / "out"
    run(m, out, workers=1)
    first = comparable(out)
    write(tmp_path / "b.s", "ttnop\n")  # new input for asm-b
    (out / "jobs" / "asm-c" / "c.bin").write_bytes(b"tampered")  # a damaged output
    report = run(m, out, workers=1, resume=True)
    assert report.skipped == 1 and report.ran == 2
    after = comparable(out)
    assert after[0] == first[0] and after[2] == first[2]
    assert after[1]["inputs_sha256"] != first[1]["inputs_sha256"]
    assert after[1]["outputs"] != first[1]["outputs"]
    assert (out / "jobs" / "asm-c" / "c.bin").read_bytes() != b"tampered"


def test_a_directory_input_is_staged_whole_and_shipped_whole(tmp_path: Path) -> None:
    """``theia run DIR`` reads code.mem and control_code.mem from a directory input."""
    compiled = tmp_path / "compiled"
    r = CliRunner().invoke(main, ["theia", "compile", str(PROGRAMS / "sum_loop.vp"), "-q",
                                  "-o", str(compiled)])
    assert r.exit_code == 0, r.output
    m = write(tmp_path / "m.toml", """
        [[job]]
        id = "dir"
        args = ["theia", "run", "compiled", "-o", "out"]
        inputs = ["compiled"]
        """)
    out = tmp_path / "out"
    run(m, out, workers=1)
    (rec,) = results(out)
    assert rec["status"] == "ok", rec
    assert sorted(rec["outputs"]) == ["out/OMEM.vp.2.log", "out/rf.vp.2.log"]
    assert not (out / "jobs" / "dir" / "compiled").exists()  # staged, then removed
    job = load_manifest(m, command_checker(main)).jobs[0]
    files = [(rel, (compiled / rel.split("/", 1)[1]).read_bytes())
             for rel in sorted("compiled/" + p.name for p in compiled.iterdir())]
    shipped = run_shipped(job, files)
    assert {k: shipped["files"][k] for k in rec["outputs"]} == {
        k: (out / "jobs" / "dir" / k).read_bytes() for k in rec["outputs"]}
