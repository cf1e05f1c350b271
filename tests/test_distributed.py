"""Batch jobs on Ray (``solitaire_gym.distributed``): the same results as the process pool,
worker processes killed mid-run, a stopped driver, corrupt resume files."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the ray extra: pip install -e '.[ray]'")

from scripts import experiment  # noqa: E402

from solitaire_gym.distributed import (  # noqa: E402
    RayError,
    check_address,
    chunk_size,
    chunks,
    run_deals,
)
from solitaire_gym.solver.batch import (  # noqa: E402
    ResultsFileError,
    parse_variant,
    read_results,
    solve_many,
)

TOKEN = f"solitaire-gym-test-{uuid.uuid4().hex}"
ROOT = Path(__file__).resolve().parents[1]
# A node budget (not seconds) makes every verdict reproducible; a few of these deals take
# the whole budget, so a task runs long enough to be killed.
BUDGET = {"max_seconds": None, "max_nodes": 20_000}
GAME = "TF1-D1N"
DEALS = list(range(1, 41))


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray for this module, whose processes carry TOKEN in their environment (so the
    test kills only its own workers)."""
    os.environ["SOLITAIRE_GYM_TEST_TOKEN"] = TOKEN
    # a test file run before this one in the same process (pytest-xdist runs several in each
    # worker) may have left its local Ray connected (solitaire_gym.distributed.connect keeps it)
    ray.shutdown()
    try:
        ray.init(num_cpus=2, include_dashboard=False, object_store_memory=128 << 20)
        yield ray
    finally:
        ray.shutdown()
        os.environ.pop("SOLITAIRE_GYM_TEST_TOKEN", None)


@pytest.fixture(scope="module")
def reference():
    """The records of DEALS solved here, one by one (the --jobs 1 path)."""
    v = parse_variant(GAME)
    return {r["deal"]: r for r in solve_many(v, DEALS, jobs=1, progress=False, **BUDGET)}


def _same(rec: dict) -> dict:
    """A record without what may differ between two runs: the time taken, and the time budget
    (the command line always has one; with it, these deals still end on the node budget)."""
    return {k: v for k, v in rec.items() if k not in ("seconds", "max_seconds")}


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_addresses_and_chunks():
    assert check_address(None) == "local" and check_address("auto") == "auto"
    assert check_address("ray://head:10001") == "ray://head:10001"
    for bad in ["", "ray://", "ray://head", "head:port", "héad:1", 5]:
        with pytest.raises(RayError):
            check_address(bad)
    assert chunk_size(100_000, 2) == 1000
    assert chunk_size(100, 2) == 7
    assert chunk_size(10_000, 2, seconds_per_deal=10.0) == 30
    parts = chunks(list(range(10)), 3, align=2)
    assert parts == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    with pytest.raises(ValueError):
        chunks([1], 0)


@pytest.mark.slow  # a local Ray
def test_ray_gives_the_records_of_the_process_pool(local_ray, reference, tmp_path):
    v = parse_variant(GAME)
    pool, on_ray = tmp_path / "pool.jsonl", tmp_path / "ray.jsonl"
    list(solve_many(v, DEALS, jobs=2, out=pool, progress=False, **BUDGET))
    got = list(solve_many(v, DEALS, ray="local", chunk=3, out=on_ray, progress=False, **BUDGET))
    assert sorted(r["deal"] for r in got) == DEALS
    for path in (pool, on_ray):
        recs = _lines(path)
        assert sorted(r["deal"] for r in recs) == DEALS  # each deal once
        assert {r["deal"]: _same(r) for r in recs} == {d: _same(r) for d, r in reference.items()}
    # resumed: nothing to do, nothing written
    assert list(solve_many(v, DEALS, ray="local", out=on_ray, progress=False, **BUDGET)) == []
    assert len(_lines(on_ray)) == len(DEALS)


def _own_solver_workers() -> list[int]:
    """Ray worker processes of this test that are running a solve task."""
    pids = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            cmd = (p / "cmdline").read_bytes()
            if not cmd.startswith(b"ray::solve_deals"):
                continue
            if TOKEN.encode() in (p / "environ").read_bytes():
                pids.append(int(p.name))
        except OSError:
            continue
    return pids


@pytest.mark.slow  # a local Ray
def test_killed_worker_loses_and_repeats_no_deal(local_ray, reference, tmp_path):
    v = parse_variant(GAME)
    out = tmp_path / "killed.jsonl"
    killed: list[int] = []
    stop = threading.Event()

    def killer():
        while not stop.is_set() and not killed:
            pids = _own_solver_workers()
            if pids:
                time.sleep(0.2)  # let it get into the task
                try:
                    os.kill(pids[0], signal.SIGKILL)
                    killed.append(pids[0])
                except ProcessLookupError:
                    continue
            time.sleep(0.05)

    t = threading.Thread(target=killer, daemon=True)
    t.start()
    try:
        recs = list(solve_many(v, DEALS, ray="local", chunk=4, out=out, progress=False, **BUDGET))
    finally:
        stop.set()
        t.join()
    assert killed, "no solver worker was found to kill"
    assert sorted(r["deal"] for r in recs) == DEALS
    lines = _lines(out)
    assert sorted(r["deal"] for r in lines) == DEALS  # none lost, none twice
    assert {r["deal"]: _same(r) for r in lines} == {d: _same(r) for d, r in reference.items()}


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow  # a local Ray
def test_stopped_driver_resumes(tmp_path):
    # 200 deals, so that on a fast idle machine the stop still lands while deals are left
    deals = list(range(1, 201))
    reference = {r["deal"]: r for r in solve_many(parse_variant(GAME), deals, jobs=1,
                                                  progress=False, **BUDGET)}  # fmt: skip
    out = tmp_path / "stopped.jsonl"
    cmd = [sys.executable, "-m", "solitaire_gym.cli", "solve", "--deals", "1..200", "--game", GAME,
           "--max-nodes", str(BUDGET["max_nodes"]), "--ray", "--jobs", "2", "--chunk", "2",
           "--out", str(out), "--quiet"]  # fmt: skip
    env = dict(os.environ, SOLITAIRE_GYM_TEST_TOKEN=TOKEN)
    # Ctrl-C as in a terminal: the child starts with SIGINT's default action, whatever this
    # process has (a Ray started in it by an earlier test may leave SIGINT ignored, and a child
    # inherits an ignored signal: it would then never stop)
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_sigint)  # fmt: skip
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        if out.exists() and len(out.read_text().splitlines()) >= 6:
            break
        time.sleep(0.1)
    assert proc.poll() is None, f"the run ended before it was stopped: {proc.stderr.read()}"
    proc.send_signal(signal.SIGINT)
    code = proc.wait(timeout=120)
    assert code == 130, f"exit {code} after Ctrl-C: {proc.stderr.read()[-3000:]}"
    first = len(_lines(out))
    assert 6 <= first < len(deals)
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert f"{len(deals) - first} deals solved now" in done.stdout
    lines = _lines(out)
    assert sorted(r["deal"] for r in lines) == deals
    assert {r["deal"]: _same(r) for r in lines} == {d: _same(r) for d, r in reference.items()}


STOP_WHILE_A_TASK_RUNS = """
import sys, time
from solitaire_gym.distributed import map_chunks
def nap(seconds):
    time.sleep(seconds)
    return seconds
try:
    for part, _ in map_chunks(nap, [0.01, 600], address="local", jobs=2):
        print("done", part, flush=True)
except KeyboardInterrupt:
    print("stopped", flush=True)
    sys.exit(130)
"""


@pytest.mark.slow  # a local Ray
def test_ctrl_c_lands_while_a_long_task_runs():
    """Ctrl-C stops a Ray run at once, not when the task in flight ends (here a 10-minute
    sleep, which costs no CPU)."""
    proc = subprocess.Popen([sys.executable, "-c", STOP_WHILE_A_TASK_RUNS], cwd=ROOT,
                            env=dict(os.environ, SOLITAIRE_GYM_TEST_TOKEN=TOKEN),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_sigint)  # fmt: skip
    try:
        first = proc.stdout.readline()  # the short task's result: the long one is running
        assert first.startswith("done"), proc.stderr.read() if proc.poll() is not None else first
        time.sleep(1)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
        assert "stopped" in proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_corrupt_resume_file_is_refused(tmp_path, capsys):
    from solitaire_gym.cli import main as cli_main

    out = tmp_path / "corrupt.jsonl"
    good = '{"code":"SH1-C4-AAAAAAB","verdict":"solvable","deal":1,"solution":["t1>c"]}\n'
    out.write_text(good + "{not json\n" + good.replace("AAB", "AAC").replace(":1,", ":2,"))
    before = out.read_bytes()
    v = parse_variant("SH1-C4")
    with pytest.raises(ResultsFileError, match="line 2"):
        list(solve_many(v, [1, 2, 3], max_seconds=1.0, ray="local", out=out, progress=False))
    args = ["solve", "--deals", "1..3", "--game", "SH1-C4", "--ray", "--out", str(out), "--quiet"]
    assert cli_main(args) == 2
    assert "line 2" in capsys.readouterr().err
    assert out.read_bytes() == before  # refused, unchanged


def test_bad_ray_arguments(tmp_path, capsys):
    from solitaire_gym.cli import main as cli_main

    out = tmp_path / "x.jsonl"
    assert cli_main(["solve", "--deals", "1", "--game", "SH1-C4", "--out", str(out),
                     "--ray", "nowhere"]) == 2  # fmt: skip
    assert "Ray address 'nowhere'" in capsys.readouterr().err
    assert cli_main(["solve", "--deals", "1", "--game", "SH1-C4", "--out", str(out),
                     "--chunk", "3"]) == 2  # fmt: skip
    assert cli_main(["solve", "SH1-C4-AAAAAAB", "--ray"]) == 2
    assert not out.exists()


def test_run_deals_without_ray_is_the_pool(tmp_path):
    from solitaire_gym.solver.batch import solve_deals

    recs = list(run_deals(solve_deals, [1, 2], args=("SH1-C4", 1.0, None), jobs=1))
    assert [r["deal"] for r in recs] == [1, 2]
    assert read_results(tmp_path / "none.jsonl") == {}


def _evaluate_module():
    return experiment("evaluate")


@pytest.mark.slow  # a local Ray
def test_evaluate_on_ray_plays_the_same_games(local_ray, tmp_path):
    evaluate = _evaluate_module()
    common = ["--policies", "random,solver", "--variants", "SH1-C4", "--deals", "300",
              "--solver-nodes", "3000", "--no-plots"]  # fmt: skip
    here, there = tmp_path / "here", tmp_path / "ray"
    assert evaluate.main([*common, "--out", str(here)]) == 0
    # 300 deals in two tasks (256 + 44): a sampling policy restarts its generator each batch
    assert evaluate.main([*common, "--out", str(there), "--ray", "--chunk", "1", "--quiet"]) == 0
    assert (here / "episodes.csv").read_text() == (there / "episodes.csv").read_text()
    assert (here / "verdicts.json").read_text() == (there / "verdicts.json").read_text()
    a = json.loads((here / "results.json").read_text())["summaries"]
    b = json.loads((there / "results.json").read_text())["summaries"]
    for s in (*a["SH1-C4"].values(), *b["SH1-C4"].values()):
        s.pop("seconds")
    assert a == b


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _processes_with(marker: str) -> list[int]:
    """The processes whose environment carries ``marker`` (every process of a `ray start`
    cluster inherits it: the test stops its own cluster, never another Ray on the machine)."""
    pids = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) == os.getpid():
            continue
        try:
            if marker.encode() in (p / "environ").read_bytes():
                pids.append(int(p.name))
        except OSError:
            continue
    return pids


@pytest.mark.manual  # a minute idle, four under load: Ray's cluster start, connects and stop
def test_a_ray_start_cluster_by_its_addresses(reference):
    """A real cluster (`ray start --head`, token authentication as Ray sets it up by default)
    joined by address: `auto` (through RAY_ADDRESS), HOST:PORT and a Ray client (ray://): the
    same records as the process pool."""
    ray_cli = Path(sys.executable).with_name("ray")
    if not ray_cli.exists():
        pytest.skip("no `ray` command next to this Python")
    marker = f"solitaire-gym-test-head-{uuid.uuid4().hex}"
    temp = tempfile.mkdtemp(prefix="sgray", dir="/tmp")  # short: Ray's socket paths are limited
    gcs, client = _free_port(), _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(SOLITAIRE_GYM_TEST_HEAD=marker, RAY_AUTH_MODE="token",
               RAY_AUTH_TOKEN=secrets.token_hex(32))  # fmt: skip
    deals = DEALS[:12]
    try:
        subprocess.run([str(ray_cli), "start", "--head", "--num-cpus", "1",
                        "--node-ip-address", "127.0.0.1", "--port", str(gcs),
                        "--ray-client-server-port", str(client), "--temp-dir", temp,
                        "--include-dashboard=false", "--disable-usage-stats"],
                       env=env, check=True, capture_output=True, timeout=120)  # fmt: skip
        for address, extra in (("auto", {"RAY_ADDRESS": f"127.0.0.1:{gcs}"}),
                               (f"127.0.0.1:{gcs}", {}),
                               (f"ray://127.0.0.1:{client}", {})):  # fmt: skip
            out = Path(temp) / f"{len(extra)}-{address.replace(':', '_').replace('/', '')}.jsonl"
            cmd = [sys.executable, "-m", "solitaire_gym.cli", "solve", "--deals", "1..12",
                   "--game", GAME, "--max-nodes", str(BUDGET["max_nodes"]), "--ray", address,
                   "--out", str(out), "--quiet"]  # fmt: skip
            for _attempt in range(2):
                done = subprocess.run(cmd, cwd=ROOT, env=dict(env, **extra), capture_output=True,
                                      text=True, timeout=300)  # fmt: skip
                # Ray's client proxy has twice failed on this busy shared machine, inside Ray
                # (gone when run again): once starting its per-client server, once in psutil on
                # a worker it had just reaped ("ZombieProcess"). One more try, then fail
                hiccups = ("Starting Ray client server failed", "psutil.ZombieProcess")
                if not any(h in done.stderr for h in hiccups):
                    break
            logs = sorted(Path(temp).glob("session_latest/logs/ray_client_server*.err"))
            assert done.returncode == 0, (address, done.stderr[-2000:],
                                          [p.read_text()[-1000:] for p in logs])  # fmt: skip
            lines = _lines(out)
            assert sorted(r["deal"] for r in lines) == deals, address
            assert {r["deal"]: _same(r) for r in lines} == {
                d: _same(reference[d]) for d in deals
            }, address
        # without the token settings, an explicit address fails with a hint, not a hang
        bare = {k: v for k, v in env.items() if k not in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")}
        cmd[cmd.index("--ray") + 1] = f"127.0.0.1:{gcs}"
        failed = subprocess.run(cmd, cwd=ROOT, env=dict(bare, HOME=temp), capture_output=True,
                                text=True, timeout=300)  # fmt: skip
        assert failed.returncode == 2
        assert "RAY_AUTH_MODE=token" in failed.stderr
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in _processes_with(marker):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + 15
            while _processes_with(marker) and time.monotonic() < deadline:
                time.sleep(0.2)
        shutil.rmtree(temp, ignore_errors=True)
