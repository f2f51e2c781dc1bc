"""Benchmark: hostile certificate and input files (issue 37), replayed against the command line.

Each file is built here (seeded, in a temporary directory) from an honest certificate of a small
problem, then the command a user would run on it (``relu-gating verify CERT INPUT [--exact]``,
``relu-gating best-neuron INPUT``, ``relu-gating report INPUT``) runs in a fresh process with
``OPENBLAS_NUM_THREADS=1``, a wall-clock limit (``--timeout``, default 60 s) and an address-space
limit (``--max-memory``, default 3 GB, so a hostile file cannot take the machine).  Printed per
file: its size on disk, the exit code and verdict (the first line of the output), the wall time and
the child's CPU time and peak resident memory (``os.wait4``'s ``ru_utime + ru_stime`` and ``ru_maxrss``);
the last line says whether every file was refused or verified in under 2 s of CPU and 200 MB (CPU,
not wall time: on a shared machine the wall time measures the neighbours).

The files (the hostile classes of issue 37):

* ``pq-json``: 4,000-digit ``"p/q"`` multipliers in a JSON certificate's pattern evidence;
  ``pq-json-at-limit``: 2,700 digits, just under that problem's limit (2,716): checked, the cost
  of the largest numbers the limit lets through;
* ``pq-binary``: the same in a binary certificate's ``evidence_exact``;
* ``tree-b-1024`` (and ``tree-b-65536`` unless ``--quick``): a tree split blindly into ``b`` leaves,
  verified ``--exact``; ``tree-b-1024-float`` the same in floats;
* ``d-dense``: a ``d`` leaf whose ``dec`` repeats a row (dense ``N`` allocated quadratically);
* ``d-sparse``: a ``d`` leaf whose ``dec`` repeats a row, its sparse ``N`` declaring a huge size;
* ``inf-bound``: a tree leaf bound ``1e999`` (JSON infinity), float and ``--exact``;
* ``meta-padded``: a binary certificate whose meta member is padded with deflated whitespace;
  ``meta-padded-at-limit``: padded to 1 MiB under the limit of the command line's first read of
  the meta (before the problem is known: the digit limit of the whole float64 range), refused
  only once the problem is stated;
* ``witness-lenient``: exact witnesses written ``" 7"``, ``"1_0"``, Arabic-Indic digits;
* ``npz-rows``: an input ``.npz`` whose deflated ``X`` declares 8.4M rows honestly
  (``best-neuron`` and ``report``).

* ``tree-true-4096``: the blind tree of depth 12 (8,191 nodes, within the problem's 16,044) with every
  leaf claiming its own float node bound (true claims, 3,169 of 4,096 below the cap), ``--exact``
  (1,110,016 units of exact leaf work, over ``EXACT_LEAF_WORK``: refused before the work) and in
  floats; ``tree-true-2048`` the same at depth 11 (602,112 units), verified ``--exact`` (each leaf
  decided on its integer pencil);
* ``tree-npz-padded``: a binary tree certificate whose ``tree.npy`` is padded with 300 MiB of deflated
  whitespace;
* ``d-dense-exact``: a ``d`` leaf with a dense ``2n x 2n`` ``N``, verified ``--exact``;
* ``implied-repeated``: an implied node repeating its two Farkas rows 100,000 times, ``--exact``.

Run::

    python benchmarks/hostile_files.py [--quick] [--timeout 60] [--out benchmarks/results/hostile_files.txt]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
import zipfile

import numpy as np

LIMIT_SECONDS, LIMIT_MB = 2.0, 200.0


def _run(args: list[str], timeout: float, max_memory: int) -> tuple[int | None, str, float, float, float]:
    """``(exit code or None on timeout, first output line, wall seconds, CPU seconds, peak MB)`` of one CLI run."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (max_memory, max_memory))

    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    t0 = time.perf_counter()
    err = tempfile.TemporaryFile()
    p = subprocess.Popen([sys.executable, "-m", "relu_gating", *args], stdout=subprocess.PIPE,
                         stderr=err, env=env, preexec_fn=limit)
    code = None
    while time.perf_counter() - t0 < timeout:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            code = os.waitstatus_to_exitcode(status)
            break
        time.sleep(0.01)
    else:
        p.kill()
        _, _, ru = os.wait4(p.pid, 0)
    sec = time.perf_counter() - t0
    out = p.stdout.read().decode(errors="replace").strip().splitlines() if p.stdout else []
    err.seek(0)
    msg = err.read().decode(errors="replace").strip().splitlines()
    first = next((ln for ln in out if ln.strip()), "")
    if (code not in (0, 1, 3) or not first) and msg:  # an error: stderr's last line (a traceback ends with it)
        first = ("Traceback: " if any("Traceback" in ln for ln in msg) else "") + msg[-1]
    return code, first[:100], sec, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0


def _problem(d: str, n: int, seed: int) -> str:
    path = os.path.join(d, f"in{n}.npz")
    np.savez(path, X=np.random.default_rng(seed).normal(size=(n, 2)))
    return path


def _honest(d: str, inp: str, name: str, *extra: str) -> str:
    out = os.path.join(d, name)
    subprocess.run([sys.executable, "-m", "relu_gating", "best-neuron", inp, "--out", out, "--quiet", *extra],
                   check=True, stdout=subprocess.DEVNULL)
    return out


def _big(digits: int, rng: np.random.Generator, small: int = 0) -> str:
    """A positive ``"p/q"`` with ``digits``-digit parts, about ``10^-small``."""
    def num(k: int) -> str:
        return str(rng.integers(1, 10)) + "".join(map(str, rng.integers(0, 10, k - 1)))
    from fractions import Fraction

    v = Fraction(int(num(digits - small)), int(num(digits)))  # lowest terms (the canonical form)
    return f"{v.numerator}/{v.denominator}"


def pq_json(d: str, inp: str, digits: int = 4000, patterns: int = 17, name: str = "pq.json") -> str:
    c = json.load(open(_honest(d, inp, "pq_base.json")))
    rng = np.random.default_rng(1)
    for i in range(patterns):  # a claim just below the honest bound: floats fail, the evidence is tried exactly
        c["patterns"]["bounds"][i] *= 1 - 1e-6
        c["evidence"][str(i)] = {"rows": [0, 1], "N": [[_big(digits, rng, 9), _big(digits, rng, 9)]] * 2}
    path = os.path.join(d, name)
    json.dump(c, open(path, "w"))
    return path


def _rewrite_meta(src: str, dst: str, chunks, total: int, member: str = "meta.npy") -> None:
    """Copy a binary certificate with another ``member`` (``meta.npy``): ``total`` bytes from the iterable
    ``chunks``, streamed and deflated (never held whole)."""
    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zo:
        for info in zi.infolist():
            if info.filename != member:
                zo.writestr(info.filename, zi.read(info))
                continue
            hdr = {"descr": "|u1", "fortran_order": False, "shape": (total,)}
            with zo.open(member, "w", force_zip64=True) as fh:
                np.lib.format.write_array_header_1_0(fh, hdr)
                for b in chunks:
                    fh.write(b)


def pq_binary(d: str, inp: str, digits: int = 4000, patterns: int = 8) -> str:
    src = _honest(d, inp, "pq_base.npz")
    with np.load(src) as z:
        meta = json.loads(z["meta"].tobytes())
        rows = {int(i) for i in z["evidence_index"]}
    rng = np.random.default_rng(2)
    meta["evidence_exact"] = {str(i): [[_big(digits, rng, 9)] * 2] * 2 for i in sorted(rows)[:patterns]}
    with np.load(src) as z:
        arrs = {k: z[k] for k in z.files}
    for i in sorted(rows)[:patterns]:  # claims just below the honest bounds: the exact evidence is tried
        arrs["bounds"][i] *= 1 - 1e-6
    np.savez(src, **arrs)
    dst = os.path.join(d, "pq.npz")
    body = json.dumps(meta).encode()
    _rewrite_meta(src, dst, [body], len(body))
    return dst


def meta_padded(d: str, inp: str, pad: int = 400 * 2**20, name: str = "padded.npz") -> str:
    src = _honest(d, inp, "pad_base.npz")
    if pad < 0:  # just under the limit of the command line's first read (the problem not yet known)
        from relu_gating.checker import BinaryReader

        with BinaryReader(src) as rd:
            pad = rd._meta_limit() - rd.zf.getinfo("meta.npy").file_size - 2**20
    with np.load(src) as z:
        body = z["meta"].tobytes()

    def gen():
        yield body[:-1]
        for _ in range(pad // 2**20):
            yield b" " * 2**20
        yield body[-1:]
    dst = os.path.join(d, name)
    _rewrite_meta(src, dst, gen(), len(body) + (pad // 2**20) * 2**20)
    return dst


def tree_padded(d: str, inp: str, pad: int = 300 * 2**20) -> str:
    """A binary tree certificate whose ``tree.npy`` (the tree's JSON) is padded with deflated whitespace."""
    src = _honest(d, inp, "tree_pad_base.npz", "--strategy", "branch-and-bound")
    with zipfile.ZipFile(src) as z:
        body = z.read("tree.npy")
    import io

    text = np.load(io.BytesIO(body)).tobytes()

    def gen():
        yield text[:-1]
        for _ in range(pad // 2**20):
            yield b" " * 2**20
        yield text[-1:]
    dst = os.path.join(d, "tree_padded.npz")
    _rewrite_meta(src, dst, gen(), len(text) + (pad // 2**20) * 2**20, "tree.npy")
    return dst


def d_dense(d: str, base: dict, n: int) -> str:
    """The root a ``d`` leaf with a dense ``N`` (``2n x 2n``, the undecided rows' constraints), checked ``--exact``."""
    N = np.random.default_rng(5).random((2 * n, 2 * n)).tolist()
    c = dict(base, tree={"nodes": [["d", 0.5, [], N, [0.0] * n]]})
    path = os.path.join(d, "dleaf_dense.json")
    json.dump(c, open(path, "w"))
    return path


def implied_repeated(d: str, base: dict, repeats: int = 100_000) -> str:
    """An implied node whose Farkas rows repeat two decided rows ``repeats`` times."""
    nodes = [["s", 0], ["s", 1], ["i", 5, 1, [0, 1] * repeats], ["b", 1.0], ["b", 1.0], ["b", 1.0]]
    c = dict(base, tree={"nodes": nodes}, upper_bound=1.0 + 1e-6, certified=False)
    path = os.path.join(d, "implied.json")
    json.dump(c, open(path, "w"))
    return path


def _tree_base(d: str, inp: str) -> dict:
    return json.load(open(_honest(d, inp, "tree_base.json", "--strategy", "branch-and-bound")))


def tree_blind(d: str, base: dict, depth: int) -> str:
    """Splits on rows 0..depth-1, every leaf ``["b", 1.0]`` (the cap: true, and slow to prove exactly)."""
    nodes: list = []

    def grow(k: int) -> None:
        if k == depth:
            nodes.append(["b", 1.0])
            return
        nodes.append(["s", k])
        grow(k + 1)
        grow(k + 1)
    grow(0)
    c = dict(base, tree={"nodes": nodes})
    path = os.path.join(d, f"tree{2 ** depth}.json")
    json.dump(c, open(path, "w"))
    return path


def tree_true_claims(d: str, base: dict, inp: str, depth: int) -> str:
    """:func:`tree_blind` with each leaf claiming its own float node bound (true claims, below the cap):
    exact mode must decide every leaf in rationals."""
    from relu_gating.checker import state_problem, walk_tree
    from relu_gating.data.io import load_input, resolve_problem

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob = resolve_problem(load_input(inp))
    c = json.load(open(tree_blind(d, base, depth)))
    leaves, _, _ = walk_tree(c["tree"]["nodes"], state_problem(prob.Phi, prob.U_K, "bias"))
    for i, _, proven in leaves:
        c["tree"]["nodes"][i][1] = float(proven)
    c["upper_bound"], c["certified"] = max(p for _, _, p in leaves), False
    path = os.path.join(d, f"tree{2 ** depth}_true.json")
    json.dump(c, open(path, "w"))
    return path


def d_leaf(d: str, base: dict, n_dec: int, n: int) -> str:
    """The root a ``d`` leaf: ``dec`` repeats row 0, its sparse ``N`` (no entries) sized to match."""
    N = {"p": n_dec + 2 * n, "entries": []}
    c = dict(base, tree={"nodes": [["d", 1.0, [0] * n_dec, N, [0.0] * n]]})
    path = os.path.join(d, f"dleaf_{n_dec}.json")
    json.dump(c, open(path, "w"), separators=(",", ":"))
    return path


def inf_bound(d: str, base: dict) -> str:
    """The honest tree with its first ``b`` or ``c`` leaf's bound written ``1e999``."""
    nodes = [list(v) for v in base["tree"]["nodes"]]
    k = next(i for i, v in enumerate(nodes) if v[0] in "bc")
    nodes[k][1] = "INF"
    text = json.dumps(dict(base, tree={"nodes": nodes})).replace('"INF"', "1e999")
    path = os.path.join(d, "inf.json")
    open(path, "w").write(text)
    return path


def lenient_witness(d: str, inp: str) -> str:
    c = json.load(open(_honest(d, inp, "w_base.json")))
    w = np.asarray(c["patterns"]["witnesses"][0])
    t = np.round(w / np.abs(w).max() * 2**40).astype(np.int64)  # realizes pattern 0, as integers
    digits = "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669"  # Arabic-Indic
    c["patterns"]["exact_witnesses"] = {"0": [" " + str(t[0]), str(t[1])[:-1] + "_" + str(t[1])[-1],
                                              "".join(digits[int(x)] if x.isdigit() else x for x in str(t[2]))]}
    path = os.path.join(d, "lenient.json")
    json.dump(c, open(path, "w"))
    return path


def npz_rows(d: str, rows: int = 8_400_000) -> str:
    path = os.path.join(d, "rows.npz")
    X = np.zeros((rows, 2))
    X[:, 0] = np.arange(rows) % 7
    np.savez_compressed(path, X=X)
    return path


def build(d: str, quick: bool) -> list[tuple[str, str, list[str]]]:
    inp12, inp20 = _problem(d, 12, 0), _problem(d, 20, 0)
    base = _tree_base(d, inp20)
    cases = [("pq-json", pq := pq_json(d, inp12), ["verify", pq, inp12]),
             ("pq-json-at-limit", pl := pq_json(d, inp12, digits=2700, patterns=20, name="pq_limit.json"),
              ["verify", pl, inp12]),
             ("pq-binary", pb := pq_binary(d, inp12), ["verify", pb, inp12]),
             ("tree-b-1024", t := tree_blind(d, base, 10), ["verify", t, inp20, "--exact"]),
             ("tree-b-1024-float", t, ["verify", t, inp20])]
    if not quick:
        cases.append(("tree-b-65536", t := tree_blind(d, base, 16), ["verify", t, inp20, "--exact"]))
    cases += [("tree-true-2048", t2 := tree_true_claims(d, base, inp20, 11), ["verify", t2, inp20, "--exact"]),
              ("tree-true-4096", tt := tree_true_claims(d, base, inp20, 12), ["verify", tt, inp20, "--exact"]),
              ("tree-true-4096-float", tt, ["verify", tt, inp20]),
              ("tree-npz-padded", tp := tree_padded(d, inp20), ["verify", tp, inp20]),
              ("d-dense-exact", dx := d_dense(d, base, 20), ["verify", dx, inp20, "--exact"]),
              ("implied-repeated", ir := implied_repeated(d, base), ["verify", ir, inp20, "--exact"])]
    extra: list = []
    cases += [("d-quadratic", dd := d_leaf(d, base, 12_000, 20), ["verify", dd, inp20]),
              ("d-huge", ds := d_leaf(d, base, 1_000_000, 20), ["verify", ds, inp20]),
              ("inf-bound", fi := inf_bound(d, base), ["verify", fi, inp20]),
              ("inf-bound-exact", fi, ["verify", fi, inp20, "--exact"]),
              ("meta-padded", mp := meta_padded(d, inp12), ["verify", mp, inp12]),
              ("meta-padded-at-limit", ml := meta_padded(d, inp12, -1, "padded_limit.npz"), ["verify", ml, inp12]),
              ("witness-lenient", lw := lenient_witness(d, inp12), ["verify", lw, inp12])]
    rows = npz_rows(d)
    cases += [("npz-rows best-neuron", rows, ["best-neuron", rows]), ("npz-rows report", rows, ["report", rows])]
    return cases, extra


def main(argv: list[str] | None = None) -> bool:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the 2^16-leaf tree")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--max-memory", type=float, default=3.0, help="GB of address space per child")
    ap.add_argument("--out", default=None, help="also write the table to this file")
    a = ap.parse_args(argv)
    lines, ok = [], True
    with tempfile.TemporaryDirectory() as d:
        cases, extra = build(d, a.quick)
        head = (f"{'file':22s} {'size':>10s} {'exit':>4s} {'wall s':>7s} {'CPU s':>6s} {'peak MB':>8s}  "
                "verdict / first line")
        print(head, flush=True)
        lines.append(head)
        for name, path, args in cases + extra:
            code, first, sec, cpu, mb = _run(args, a.timeout * (5 if (name, path, args) in extra else 1),
                                             int(a.max_memory * 2**30))
            good = code is not None and cpu < LIMIT_SECONDS and mb < LIMIT_MB and "Traceback" not in first
            ok &= good or (name, path, args) in extra
            ln = (f"{name:22s} {os.path.getsize(path) / 1e3:8.1f}KB {'-' if code is None else code:>4} "
                  f"{sec:7.2f} {cpu:6.2f} {mb:8.1f}  {'' if good else '[OVER] '}{'TIMEOUT' if code is None else first}")
            print(ln, flush=True)
            lines.append(ln)
    last = (f"all {len(cases)} files of the issue's classes refused or verified in under {LIMIT_SECONDS:g} s (CPU: the "
            f"machine may be shared) and {LIMIT_MB:g} MB: {'yes' if ok else 'NO'}")
    print(last)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write("\n".join(lines + [last]) + "\n")
    return ok


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
