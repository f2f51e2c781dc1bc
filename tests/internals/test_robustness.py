"""Robustness: checkpoints, atomic output files, foreign pattern sets, extreme inputs.

Every failure must be a one-line error naming the argument (exit 2 on the command
line), never a traceback, a destroyed file or a false certified value.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from _clock import cpu_seconds

from relu_gating import best_neuron, enumerate_patterns, sample_graph, verify
from relu_gating._runtime.files import atomic_write
from relu_gating.search.state import SearchState, sign_arrays
from relu_gating.cli import main
from relu_gating.errors import CheckpointError, InputError
from relu_gating.search.objectives import make_objective, neuron_values


def _inst(seed=0, n=16, K=3):
    rng = np.random.default_rng(seed)
    Phi = np.c_[rng.normal(size=(n, 2)), np.ones(n)]
    U_K = np.linalg.qr(rng.normal(size=(n, K)))[0]
    return Phi, U_K


def _one_line_error(capsys, *words):
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, err
    return err


# -- checkpoints --------------------------------------------------------------

@pytest.fixture
def finished_checkpoint(tmp_path):
    Phi, U_K = _inst()
    ck = tmp_path / "state.npz"
    ref = best_neuron(Phi, U_K, features="bias", checkpoint=str(ck))
    return Phi, U_K, ck, ref


def test_checkpoint_of_another_query_is_refused_and_untouched(finished_checkpoint):
    Phi, U_K, ck, ref = finished_checkpoint
    before = ck.read_bytes()
    other_K = np.linalg.qr(np.random.default_rng(1).normal(size=(Phi.shape[0], 4)))[0]
    with pytest.raises(CheckpointError, match="another query") as info:
        best_neuron(Phi, other_K, features="bias", checkpoint=str(ck))  # same patterns, another K
    assert str(ck) in str(info.value)
    Phi2, U2 = _inst(seed=3, n=12)
    with pytest.raises(CheckpointError, match="patterns, this query has"):
        best_neuron(Phi2, U2, features="bias", checkpoint=str(ck))  # another pattern count
    assert ck.read_bytes() == before
    # the same query resumes from it
    res = best_neuron(Phi, U_K, features="bias", checkpoint=str(ck))
    assert "resumed from checkpoint" in res.notes and res.value == pytest.approx(ref.value, abs=1e-12)


def test_corrupt_or_foreign_checkpoint_is_a_one_line_error(finished_checkpoint, tmp_path, capsys):
    Phi, U_K, ck, _ = finished_checkpoint
    good = ck.read_bytes()
    data = tmp_path / "data.npz"
    np.savez(data, X=Phi[:, :2])
    for content, why in ((good[: len(good) // 2], "unreadable"), (b"not a zip file", "unreadable"),
                         (data.read_bytes(), "not a relu-gating checkpoint")):
        ck.write_bytes(content)
        with pytest.raises(CheckpointError, match=why) as info:
            best_neuron(Phi, U_K, features="bias", checkpoint=str(ck))
        assert str(ck) in str(info.value) and "\n" not in str(info.value)
        assert ck.read_bytes() == content
    # on the command line: exit 2 before any computation, one line, file untouched
    assert main(["best-neuron", str(data), "--K", "3", "--checkpoint", str(ck), "--quiet"]) == 2
    _one_line_error(capsys, "--checkpoint", str(ck))
    assert ck.read_bytes() == data.read_bytes()


def _tamper(ck, Phi, U_K, forge_tag=False):
    """Lower every bound, claim every pattern settled, make a poor neuron the incumbent with value 0.999."""
    ps = enumerate_patterns(Phi)
    vals = neuron_values(make_objective(Phi, U_K, "bias"), ps.witnesses)
    worst = int(np.nanargmin(vals))
    with np.load(ck) as z:
        a = {k: z[k] for k in z.files}
    a["upper"] = np.full_like(a["upper"], 1e-6)
    a["status"] = np.full_like(a["status"], 2)  # EXACT
    a["lower"] = np.full_like(a["lower"], 0.999)
    a["best_index"], a["best_theta"] = np.array(worst), ps.witnesses[worst]
    if forge_tag:  # signed with a key that is not the user's
        a["tag"] = np.array(sign_arrays(b"k" * 32, a))
    np.savez(ck, **a)
    return ps, vals[worst]


@pytest.mark.parametrize("forge_tag", [False, True])
def test_tampered_checkpoint_cannot_produce_a_false_certified_value(finished_checkpoint, forge_tag):
    Phi, U_K, ck, ref = finished_checkpoint
    _tamper(ck, Phi, U_K, forge_tag)
    res = best_neuron(Phi, U_K, features="bias", checkpoint=str(ck))
    assert res.value == pytest.approx(ref.value, abs=1e-12)
    assert res.upper_bound == pytest.approx(ref.upper_bound, abs=1e-9) and res.certified
    assert any("not signed" in n for n in res.notes)
    assert verify(res, Phi, U_K, "bias").valid


def test_loaded_incumbent_is_re_evaluated(finished_checkpoint):
    Phi, U_K, ck, ref = finished_checkpoint
    obj = make_objective(Phi, U_K, "bias")
    masks = enumerate_patterns(Phi).masks
    signed = SearchState.load(ck, ref.fingerprint, ref.n_patterns, obj=obj, masks=masks)
    assert signed.best_value == float(neuron_values(obj, signed.best_theta[None, :])[0])
    assert np.isfinite(signed.upper).all()  # a signed file keeps its bounds
    _, poor = _tamper(ck, Phi, U_K)
    st = SearchState.load(ck, ref.fingerprint, ref.n_patterns, obj=obj, masks=masks)
    assert not np.isfinite(st.upper).any() and not st.status.any()  # bounds and settlements recomputed
    assert st.best_value == pytest.approx(poor, abs=1e-15) and poor < ref.value  # 0.999 is not believed
    assert SearchState.load(ck, ref.fingerprint, ref.n_patterns).best_theta is None  # without obj: nothing


def test_interrupted_write_leaves_the_old_file(tmp_path):
    target = tmp_path / "c.json"
    target.write_text('{"old": true}')

    def partial(fh):
        fh.write('{"new": ')
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, partial)
    assert json.loads(target.read_text()) == {"old": True}
    assert os.listdir(tmp_path) == ["c.json"]  # no temporary file left behind


# -- output files on the command line ------------------------------------------

@pytest.fixture
def xfile(tmp_path):
    inp = tmp_path / "x.npy"
    np.save(inp, np.random.default_rng(7).normal(size=(14, 2)))
    return inp


def test_out_is_atomic_and_names_the_input_by_hash(xfile, tmp_path, monkeypatch, capsys):
    out = tmp_path / "cert.json"
    assert main(["best-neuron", str(xfile), "--K", "3", "--features", "bias", "--out", str(out), "--quiet"]) == 0
    cert = json.loads(out.read_text())
    import hashlib
    assert cert["input"]["input_name"] == "x.npy" and str(tmp_path) not in json.dumps(cert)
    assert cert["input"]["input_sha256"] == hashlib.sha256(xfile.read_bytes()).hexdigest()
    good = out.read_bytes()

    def interrupted_dump(obj, fh, *a, **k):
        fh.write(json.dumps(obj)[:100])
        raise KeyboardInterrupt

    monkeypatch.setattr(json, "dump", interrupted_dump)
    assert main(["best-neuron", str(xfile), "--K", "3", "--features", "bias", "--out", str(out), "--quiet"]) == 130
    assert out.read_bytes() == good  # never a partial file
    monkeypatch.undo()
    pat = tmp_path / "pat.npz"

    def interrupted_savez(fh, **arrays):
        fh.write(b"PK\x03\x04 partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez_compressed", interrupted_savez)
    assert main(["patterns", str(xfile), "--out", str(pat), "--quiet", "--no-check"]) == 130
    assert not pat.exists()
    assert sorted(os.listdir(tmp_path)) == ["cert.json", "x.npy"]
    capsys.readouterr()


@pytest.mark.parametrize("argv", [
    ["best-neuron", "{x}", "--out", "{missing}/c.json"],
    ["best-neuron", "{x}", "--checkpoint", "{missing}/ck.npz"],
    ["patterns", "{x}", "--out", "{missing}/p.npz"],
    ["best-neuron", "{x}", "--out", "{tmp}"],
])
def test_unwritable_output_exits_2_before_computing(argv, xfile, tmp_path, monkeypatch, capsys):
    def never(*a, **k):
        raise AssertionError("computation started")

    monkeypatch.setattr("relu_gating.search.strategy.run", never)  # what the command line runs
    monkeypatch.setattr("relu_gating.cli.patterns.enumerate_patterns", never)
    missing = tmp_path / "nonexistent"
    args = [a.format(x=xfile, missing=missing, tmp=tmp_path) for a in argv]
    c0 = cpu_seconds()
    assert main(args + ["--quiet"]) == 2
    assert cpu_seconds() - c0 < 2.0  # (the sentinels above are the check; CPU: the load does not change it)
    _one_line_error(capsys, args[2], "does not exist" if "missing" in argv[3] else "directory")


# -- pattern sets of another Phi ------------------------------------------------

def test_patterns_of_another_phi_are_rejected():
    Phi, _ = _inst(seed=4, n=10)
    ps = enumerate_patterns(Phi)
    ps.check_belongs_to(Phi)
    ps.check_belongs_to(np.where(Phi == 0, -0.0, Phi).tolist())  # same numbers, other container
    other = Phi.copy()
    other[0, 0] += 1e-3
    with pytest.raises(InputError, match="different Phi"):
        ps.check_belongs_to(other)
    with pytest.raises(InputError, match="shape"):
        ps.check_belongs_to(Phi[:, :2])
    assert all(c.phi_sha256 == ps.phi_sha256 for c in ps.iter_chunks(7))


def test_best_neuron_rejects_patterns_of_another_phi():
    Phi, U_K = _inst(seed=4, n=10)
    ps = enumerate_patterns(Phi)
    other = Phi + np.r_[1e-3, np.zeros(9)][:, None] * np.r_[1.0, 0.0, 0.0]
    try:
        best_neuron(other, U_K, features="bias", patterns=ps)
    except InputError as exc:
        assert "different Phi" in str(exc)
        return
    raise AssertionError("a PatternSet of another Phi was accepted")


# -- extreme inputs -------------------------------------------------------------

@pytest.mark.parametrize("kind", ["knn", "gaussian", "epsilon"])
@pytest.mark.parametrize("scale", [2.0**-1000, 1e-300, 1e-200, 1e200, 1e300])
def test_graph_does_not_depend_on_the_scale_of_X(kind, scale):
    X = np.random.default_rng(8).normal(size=(15, 2))
    W0, W = sample_graph(X, kind=kind), sample_graph(X * scale, kind=kind)
    assert W.nnz == W0.nnz and abs(W - W0).max() <= 1e-12


def test_graph_options_scale_with_X_and_out_of_range_is_one_line():
    X = np.random.default_rng(9).normal(size=(15, 2))
    s = 2.0**900
    W0 = sample_graph(X, kind="epsilon", epsilon=1.5, sigma=0.5)
    assert abs(sample_graph(X * s, kind="epsilon", epsilon=1.5 * s, sigma=0.5 * s) - W0).max() == 0
    with pytest.raises(InputError, match="sigma"):
        sample_graph(X * 1e300, kind="gaussian", sigma=1e-300)


@pytest.mark.parametrize("scale", [1e300, 1e-300, 2.0**-1000, 1e6, 1e-6])
@pytest.mark.slow  # several seconds: the slow tier (README: the default tier stays under 90 s)
def test_extreme_scale_of_X_end_to_end(scale, tmp_path, capsys):
    X = np.random.default_rng(10).normal(size=(12, 2))
    ref_in, big_in = tmp_path / "x.npy", tmp_path / "xs.npy"
    np.save(ref_in, X)
    np.save(big_in, X * scale)
    ref, big = ({"argv": ["best-neuron", str(inp), "--K", "3", "--features", "bias", "--json", "--quiet",
                          "--out", str(inp) + ".json"]} for inp in (ref_in, big_in))
    for r in (ref, big):
        assert main(r["argv"]) == 0
        r.update(json.loads(capsys.readouterr().out))
    assert big["certified"] and big["value"] == pytest.approx(ref["value"], abs=1e-9)
    assert main(["verify", str(big_in) + ".json", str(big_in), "--K", "3", "--features", "bias"]) == 0


def test_identical_rows_have_no_admissible_neuron_over_the_bias():
    Phi = np.array([[1.0, 2.0]] * 3)
    U_K = np.linalg.qr(np.random.default_rng(11).normal(size=(3, 2)))[0]
    res = best_neuron(Phi, U_K, features=None)  # N_K: h is a multiple of the ones vector
    assert res.certified and res.value == pytest.approx(float(np.sum(U_K.sum(axis=0) ** 2) / 3), abs=1e-12)
    res = best_neuron(Phi, U_K, features="bias")  # every neuron is constant: none is admissible
    assert res.value == 0.0 and res.certified and not res.pattern.any()
    assert any("no admissible neuron" in n for n in res.notes)
    assert verify(res, Phi, U_K, "bias").valid


def test_identical_rows_on_the_command_line(tmp_path, capsys):
    inp = tmp_path / "same.npy"
    np.save(inp, np.array([[1.0, 2.0]] * 4))
    assert main(["best-neuron", str(inp), "--features", "none", "--K", "2", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["best-neuron", str(inp), "--features", "bias", "--K", "2", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "no admissible neuron" in out and "Traceback" not in out


# ---------------------------------------------------------------- special files (issue 23)


def test_atomic_write_goes_through_a_symlink(tmp_path):
    """A symlink is written through: the link stays a link, its target gets the new content."""
    from relu_gating._runtime.files import check_writable

    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    os.symlink(target, link)
    check_writable(link, "--out")
    atomic_write(link, lambda fh: fh.write("new"))
    assert os.path.islink(link) and os.readlink(link) == str(target)
    assert target.read_text() == "new"
    dangling = tmp_path / "dangling.json"
    os.symlink(tmp_path / "later.json", dangling)
    atomic_write(dangling, lambda fh: fh.write("x"))
    assert os.path.islink(dangling) and (tmp_path / "later.json").read_text() == "x"


def test_atomic_write_refuses_a_fifo_and_a_device(tmp_path):
    """A FIFO or a device is refused (InputError naming it), never replaced by a regular file."""
    import stat

    from relu_gating._runtime.files import check_writable

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/null"):
        with pytest.raises(InputError, match="FIFO|device"):
            check_writable(path, "--out")
        with pytest.raises(InputError, match="FIFO|device"):
            atomic_write(path, lambda fh: fh.write("x"))
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    link = tmp_path / "to_fifo"
    os.symlink(fifo, link)  # a link to a FIFO: refused too
    with pytest.raises(InputError, match="FIFO"):
        atomic_write(link, lambda fh: fh.write("x"))


def test_absurd_declared_shape_is_refused_before_allocation(tmp_path):
    """A member declaring shape (1e12, 3) with 48 bytes of data: InputError naming the file and
    the member, before numpy allocates 24 TB (MemoryError before)."""
    import io
    import zipfile

    from relu_gating.data.io import load_input

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": (10**12, 3)})
    buf.write(np.zeros(6).tobytes())
    with zipfile.ZipFile(tmp_path / "a.npz", "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("X.npy", buf.getvalue())
    with pytest.raises(InputError, match=r"a\.npz.*'X'.*\(1000000000000, 3\)"):
        load_input(tmp_path / "a.npz")
    np.savez_compressed(tmp_path / "ok.npz", X=np.ones((5, 2)))
    assert load_input(tmp_path / "ok.npz").X.shape == (5, 2)


def test_binary_writer_writes_zero_padding_bits(tmp_path):
    """Masks whose packbits padding bits are set (n = 13: three of them) are written canonical."""
    import dataclasses
    import zipfile

    from relu_gating.certificate import save_binary

    rng = np.random.default_rng(2)
    Phi = np.c_[rng.normal(size=(13, 1)), np.ones(13)]
    U = np.linalg.qr(rng.normal(size=(13, 2)))[0]
    res = best_neuron(Phi, U)
    dirty = res.packed.copy()
    dirty[:, -1] |= 0x07
    save_binary(dataclasses.replace(res, certificate=dataclasses.replace(res.certificate, packed=dirty)), tmp_path / "c.npz")
    with zipfile.ZipFile(tmp_path / "c.npz") as z, z.open("masks.npy") as fh:
        masks = np.lib.format.read_array(fh)
    assert np.array_equal(masks, res.packed) and not np.any(masks[:, -1] & 0x07)
    assert verify(tmp_path / "c.npz", Phi, U).certified == res.certified
