"""Every user mistake on the command line: exit 2, one line naming the file or flag, no traceback, fast."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from _clock import cpu_seconds, slowdown

from relu_gating.cli import main


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(3)
    good = d / "x.npy"
    np.save(good, rng.normal(size=(14, 2)))
    np.savez(d / "ok.npz", X=rng.normal(size=(14, 2)))
    raw = (d / "ok.npz").read_bytes()
    (d / "trunc.npz").write_bytes(raw[:100])
    (d / "empty.npz").write_bytes(b"")
    (d / "trunc.npy").write_bytes(good.read_bytes()[:50])
    np.save(d / "rows0.npy", np.zeros((0, 2)))
    np.save(d / "complex.npy", np.ones((10, 2)) * (1 + 1j))
    (d / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (d / "nan.json").write_text('{"format": NaN}')
    (d / "half.json").write_text('{"format": "relu-gating-certificate/2", "problem": {')
    np.save(d / "ckpt.npz", np.zeros(3))
    np.save(d / "huge.npy", rng.normal(size=(1500, 4)))  # ~4e11 patterns: enumeration refused before any work
    _absurd(d)
    os.mkfifo(d / "fifo.json")
    return d


def _absurd(d):
    """``absurd.npz`` / ``absurd.npy``: a member declares shape (1e12, 3) but holds 48 bytes."""
    import io
    import zipfile

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": (10**12, 3)})
    buf.write(np.zeros(6).tobytes())
    (d / "absurd.npy").write_bytes(buf.getvalue())
    with zipfile.ZipFile(d / "absurd.npz", "w") as z:
        z.writestr("X.npy", buf.getvalue())


# (argv with {d} for the folder, a word the one-line message must contain)
CASES = [
    (["best-neuron", "{d}/missing.npy"], "missing.npy"),
    (["best-neuron", "{d}/trunc.npz"], "trunc.npz"),
    (["best-neuron", "{d}/empty.npz"], "empty.npz"),
    (["best-neuron", "{d}/trunc.npy"], "trunc.npy"),
    (["best-neuron", "{d}/rows0.npy"], "rows0.npy"),
    (["best-neuron", "{d}/complex.npy"], "real"),
    (["best-neuron", "{d}/x.npy", "--features", "{d}/trunc.npy"], "--features"),
    (["best-neuron", "{d}/x.npy", "--features", "{d}/nothing.npy"], "--features"),
    (["best-neuron", "{d}/x.npy", "--method", "bogus"], "--method"),
    (["best-neuron", "{d}/x.npy", "--K", "0"], "K"),
    (["best-neuron", "{d}/x.npy", "--out", "{d}/nope/c.json"], "--out"),
    (["best-neuron", "{d}/x.npy", "--out", "{d}"], "--out"),
    (["best-neuron", "{d}/x.npy", "--checkpoint", "{d}/nope/c.npz"], "--checkpoint"),
    (["best-neuron", "{d}/x.npy", "--checkpoint", "{d}/trunc.npz"], "trunc.npz"),
    (["best-neuron", "{d}/x.npy", "--alpha", "0"], "alpha"),
    (["best-neuron", "{d}/x.npy", "--scheduler", "tcp://127.0.0.1:9", "--scheduler-timeout", "0.5"],
     "within 0.5 s"),  # the timeout given is the one used
    (["patterns", "{d}/x.npy", "--out", "{d}/nope/p.npz"], "--out"),
    (["verify", "{d}/deep.json", "{d}/x.npy"], "certificate"),
    (["verify", "{d}/nan.json", "{d}/x.npy"], "certificate"),
    (["verify", "{d}/half.json", "{d}/x.npy"], "certificate"),
    (["verify", "{d}/missing.json", "{d}/x.npy"], "certificate"),
    (["verify", "{d}/deep.json", "{d}/x.npy", "--require-alpha", "2"], "--require-alpha"),
    (["best-neuron", "{d}/huge.npy", "--strategy", "enumerate"], "max_patterns"),  # auto: the anytime tree
    (["demo", "--plot", "{d}/nope/x.png"], "--plot"),
    (["demo", "--plot", "{d}"], "--plot"),
    (["report", "{d}/x.npy", "--laplacian", "normalized"], "--laplacian"),
    (["best-neuron", "{d}/x.npy", "--strategy", "enumerate", "--max-patterns", "10"], "max_patterns = 10"),
    (["best-neuron", "{d}/x.npy", "--max-patterns", "0"], "--max-patterns"),
    (["best-neuron", "{d}/absurd.npz"], "(1000000000000, 3)"),
    (["best-neuron", "{d}/absurd.npy"], "(1000000000000, 3)"),
    (["best-neuron", "{d}/x.npy", "--out", "{d}/fifo.json"], "FIFO"),
    (["best-neuron", "{d}/x.npy", "--checkpoint", "{d}/fifo.json"], "FIFO"),
    (["best-neuron", "{d}/x.npy", "--out", "/dev/null"], "device"),
    (["demo", "--plot", "{d}/fifo.json"], "FIFO"),
]


#: CPU seconds of this process a mistake may cost (imports included; 0.34 at most measured, under load 20 too):
#: refused before any heavy work, which costs CPU whatever the load; wall time is no measure on a busy machine.
CPU_LIMIT = 2.0
#: Wall seconds: only a hang guard (a connect attempt that ignores its timeout waits dask's 30 s).
WALL_LIMIT = 15.0


@pytest.mark.parametrize("argv,word", CASES, ids=[" ".join(a[:1] + a[2:3]) + f" [{w}]" for a, w in CASES])
def test_user_mistake_is_one_line_and_exit_2(files, capsys, argv, word):
    args = [a.format(d=files) for a in argv] + ["--quiet"] * (argv[0] != "verify")
    t0, c0 = time.perf_counter(), cpu_seconds()
    assert main(args) == 2
    cpu, wall = cpu_seconds() - c0, time.perf_counter() - t0
    assert cpu < CPU_LIMIT and wall < WALL_LIMIT, (cpu, wall)
    out = capsys.readouterr()
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.err, out.err
    assert word in lines[0], lines[0]


def test_closed_pipe_is_not_a_traceback(files):
    cmd = f"{sys.executable} -m relu_gating best-neuron {files}/x.npy --K 3 | head -1"
    proc = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr and proc.stdout.startswith("problem")


def test_debug_shows_the_traceback(files, capsys):
    with pytest.raises(Exception, match="does not exist"):
        main(["--debug", "best-neuron", f"{files}/missing.npy"])


def test_json_outputs_are_strict(files, capsys, tmp_path):
    assert main(["best-neuron", f"{files}/x.npy", "--K", "3", "--json", "--quiet", "--out",
                 str(tmp_path / "c.json")]) == 0
    summary = capsys.readouterr().out

    def strict(s):
        return json.loads(s, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))

    s = strict(summary)
    cert = strict((tmp_path / "c.json").read_text())
    assert s["certified"] is True and cert["format"] == "relu-gating-certificate/3"
    assert main(["verify", str(tmp_path / "c.json"), f"{files}/x.npy", "--K", "3", "--json"]) == 0
    rep = strict(capsys.readouterr().out)
    assert rep["valid"] and rep["exit_code"] == 0


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_ctrl_c_answers_within_a_second(tmp_path, sig):
    """SIGINT (or SIGTERM, a batch system's kill) during a long run: exit 130 within about a second,
    saying what was saved."""
    import signal

    from _terminal import TerminalRun

    np.save(tmp_path / "big.npy", np.random.default_rng(0).normal(size=(300, 3)))  # 8.9M patterns: minutes
    run = TerminalRun(["best-neuron", str(tmp_path / "big.npy"), "--K", "4", "--checkpoint", str(tmp_path / "ck.npz")])
    try:  # on a terminal: the predicted size is printed just before the work starts (a pipe silences it)
        run.wait_for("gating patterns")
        time.sleep(1.5)
        assert run.proc.poll() is None
        t0 = time.perf_counter()
        run.proc.send_signal(getattr(signal, sig))
        run.proc.wait(timeout=30)
        latency = time.perf_counter() - t0
        slow = slowdown()  # a loaded machine answers later: the margin scales (about 1 when quiet)
    finally:
        code, _, err = run.finish()
    assert code == 130 and latency < 1.5 * slow, (latency, slow, err)
    last = err.strip().splitlines()[-1]
    assert "interrupted" in last and ("saved" in last or "none saved" in last) and "Traceback" not in err
