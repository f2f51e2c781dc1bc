r"""The numbers of ``docs/experiments.md``, generated from the saved experiment runs.

Renders, without running anything, one markdown block per name in :data:`BLOCKS` from the JSON
files under ``benchmarks/results/experiments_*`` (the full runs in ``experiments_NAME/NAME.json``,
the ``--quick`` runs in ``experiments_quick/NAME.json``, the kappa-against-n runs of
``benchmarks/kappa_n.py`` in ``experiments_kappa_n/``).  Each block of ``docs/experiments.md`` sits
between ``<!-- generated: NAME ... -->`` and ``<!-- end generated: NAME -->``;
``tests/test_docs_tables.py`` checks that they match this script's output.

Usage::

    python benchmarks/experiments_doc.py                              # print every block
    python benchmarks/experiments_doc.py --write docs/experiments.md  # replace the blocks in place

Re-running the experiments (each records its commit, command, load and date)::

    python -m relu_gating experiment NAME --out benchmarks/results/experiments_NAME
    python -m relu_gating experiment NAME --quick --out benchmarks/results/experiments_quick
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
NAMES = ("greedy-rate", "certification", "clusters", "depth", "graph-choice", "alpha")


def begin(name: str) -> str:
    return f"<!-- generated: {name} (benchmarks/experiments_doc.py from benchmarks/results/; do not edit by hand) -->"


def end(name: str) -> str:
    return f"<!-- end generated: {name} -->"


def load(name: str, quick: bool = False) -> dict | None:
    """The saved run of experiment ``name`` (full or quick), or None when there is none."""
    path = RESULTS / ("experiments_quick" if quick else f"experiments_{name}") / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _f(x: Any, digits: int = 4) -> str:
    """A number with ``digits`` significant digits ("-" for None, "inf" for non-finite)."""
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float) and not math.isfinite(x):
        return "inf"
    return f"{x:.{digits}g}" if isinstance(x, float) else str(x)


def _table(head: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    lines += ["| " + " | ".join(_f(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def _checks_cell(d: dict) -> str:
    cs = d["checks"]
    hold = sum(c["holds"] for c in cs)
    fin = sum(1 for c in cs if c.get("kind", "finding") == "finding" and c["informative"])
    code = sum(1 for c in cs if c.get("kind") == "code test")
    return f"{hold}/{len(cs)} hold ({fin} informative findings, {code} code tests)"


def _run_label(d: dict, quick: bool) -> str:
    """"quick", "full", or "full, reduced (KEY=VALUE, ...)" for a run of ``benchmarks/experiment_reduced.py``."""
    if quick:
        return "quick"
    red = d["params"].get("reduced")
    return "full" if not red else "full, reduced (" + ", ".join(f"{k} = {d['params'][k]}" for k in red) + ")"



_MAIN = re.compile(r"^\S*relu_gating/__main__\.py(?= )")


def _command(cmd: str) -> str:
    """A recorded command as a reader runs it: a checkout's ``.../relu_gating/__main__.py`` is
    ``python -m relu_gating`` (the runs of a clean clone record the clone's path)."""
    return _MAIN.sub("python -m relu_gating", cmd)

def runs() -> str:
    """Every saved run: where, when, on which commit, under what load, how long, its checks."""
    rows = []
    for name in NAMES:
        for quick in (True, False):
            d = load(name, quick)
            if d is None:
                rows.append([name, "quick" if quick else "full", "not saved", "-", "-", "-", "-", "-", "-", "-"])
                continue
            pv = d.get("provenance") or {}
            commit = (pv.get("commit") or "")[:9] or "not recorded"
            load_ = pv.get("load_start"), pv.get("load_end")
            ld = "-" if None in load_ else f"{load_[0][0]:.1f} -> {load_[1][0]:.1f}"
            rows.append([name, _run_label(d, quick), commit + (" (dirty)" if pv.get("dirty") else ""),
                         (pv.get("date") or "-")[:16], ld, f"{d['seconds']:.1f}",
                         f"{pv['cpu_seconds']:.1f}" if "cpu_seconds" in pv else "not recorded", _checks_cell(d),
                         d["version"], "`" + _command(pv["command"]) + "`" if pv.get("command") else "-"])
    return _table(["experiment", "run", "commit", "date (UTC)", "load (1 min, start -> end)", "seconds (wall)",
                   "CPU seconds", "checks", "version", "command"], rows)


def checks() -> str:
    """Every check of every saved full run (else quick run): kind, holds, informative, the numbers."""
    rows = []
    for name in NAMES:
        d = load(name) or load(name, True)
        if d is None:
            continue
        run = "quick" if d["params"].get("quick") else "full"
        for c in d["checks"]:
            rows.append([f"{name} ({run})", c["name"], c.get("kind", "finding"), c["holds"], c["informative"],
                         c["detail"].replace("|", "/")[:220]])
    return _table(["experiment", "check", "kind", "holds", "informative", "numbers"], rows)


def greedy_rate() -> str:
    """kappa intervals and certified steps of greedy-rate's runs."""
    rows = []
    for quick in (False, True):
        d = load("greedy-rate", quick)
        if d is None:
            continue
        steps = [r for r in d["tables"]["steps"] if r["t"]]
        imp = {s: max(r["kappa_implied"] for r in steps if r["seed"] == s) for s in {r["seed"] for r in steps}}
        for k in d["tables"]["kappa"]:
            gap = (f"{k['lambda_K']:.4g} / {k['lambda_K1']:.4g} ({k['rel_gap']:.0%})" if "rel_gap" in k else "-")
            rows.append(["quick" if quick else "full", k["seed"], k["n"], k["K"],
                         d["params"].get("n_neighbors") or 10, gap,
                         f"[{k['kappa_lower']:.4g}, {k['kappa_upper']:.4g}]", f"{k['rel_width']:.1%}",
                         k["closed_5pct"], k["why_open"] or "-", f"{imp[k['seed']]:.3g}",
                         f"{k['informative_4K2kappa2_over_n']:.3g}", k["spectral_ties"] or "-"])
    return _table(["run", "seed", "n", "K", "kNN neighbours", "lambda_K / lambda_(K+1) (relative gap)",
                   "kappa(U_K) interval", "relative width", "closed to 5%",
                   "why open", "Lemma 5.9 lower end", "4 K^2 kappa^2 / n", "spectral tie"], rows)


def clusters() -> str:
    """Clusters' configurations (neurons to reach s, the rate's slope, the floor) and the kappa table."""
    out = []
    for quick in (False, True):
        d = load("clusters", quick)
        if d is None:
            continue
        tg = d["params"]["targets"]
        rows = [[r["n"], r["rho"], r["sigma"], f"{r['epsilon']:.2g}", f"{r['lambda_K1']:.4g}",
                 f"{r['omega_max']:.3g}", f"{r['kappa_chi_upper']:.3g}", f"{r['kappa_UK_lower_lemma59']:.3g}",
                 " / ".join("-" if r[f"t_at_s{s:g}"] is None else str(r[f"t_at_s{s:g}"]) for s in tg),
                 f"{r['theory_slope']:,.0f}", f"{r['t_pred_example_s0.1']:.3g}", f"{r['s_final2']:.2g}",
                 f"{r['floor_4eps2']:.2g}", f"{r['alpha_eff']:.7f}"] for r in d["tables"]["configs"]]
        cfg = d["tables"]["configs"]
        ratio = [r[f"chi{c}_upper"] / r[f"omega_{c}"] for r in cfg for c in range(1, 4)]
        out += [f"Example 5.12's two-atom decomposition with exact atom norms costs {min(ratio):.3g}-{max(ratio):.3g} "
                f"omega_c at n = {cfg[0]['n']} (the example's bound: 2 omega_c).", ""]
        out += [f"{_run_label(d, quick)} run (seed {d['params']['seed']}, {d['params']['T']} steps); "
                f"targets s = {' / '.join(f'{s:g}' for s in tg)}:", "",
                _table(["n", "rho", "sigma", "eps", "lambda_(K+1)", "max omega_c", "kappa(chi) <=",
                        "kappa(U_K) >= (Lemma 5.9)", "neurons to reach each s", "Thm 5.10 slope 4K^2 kappa^2/alpha",
                        "Example 5.12 count for s = 0.1", "s_T^2", "4 eps^2", "alpha_eff"], rows), ""]
        krows = [[k["n"], f"{k['epsilon']:.2g}", f"[{k['kappa_UK_lower']:.3g}, {k['kappa_UK_upper']:.3g}]",
                  f"{k['kappa_UK_rel_width']:.0%}", f"[{k['kappa_chi_lower']:.3g}, {k['kappa_chi_upper']:.3g}]",
                  f"{k['kappa_chi_rel_width']:.0%}", f"{k['kappa_chi_explicit']:.3g}"] for k in d["tables"]["kappa"]]
        out += [_table(["n (kappa table)", "eps", "kappa(U_K)", "width", "kappa(chi)", "width",
                        "kappa(chi) explicit"], krows), ""]
    return "\n".join(out).strip()


def graph_choice() -> str:
    """The ranking summary and the Lemma 2.1 ratios of graph-choice's run."""
    d = load("graph-choice") or load("graph-choice", True)
    if d is None:
        return "(no saved run)"
    rows = [[s["target"], f"{s['spearman_median']:.2f} [{s['spearman_min']:.2f}, {s['spearman_max']:.2f}]",
             f"{s['kendall_median']:.2f} [{s['kendall_min']:.2f}, {s['kendall_max']:.2f}]",
             s["argmin_agrees"], f"{s['median_error_L']:.3g} / {s['median_error_L_sym']:.3g}"]
            for s in d["tables"]["summary"]]
    cf = d["tables"]["configurations"]
    ratio = [r["perp_norm"] / r["energy_term"] for r in cf if r["energy_term"] > 0]
    share = [r["energy_term"] / r["cor31_bound"] for r in cf if r["cor31_bound"] > 0]
    certified = sum(1 for r in cf if r["certified"])
    layers: dict = {}  # a layer is fixed by (seed, graph, operator, K): U_K, not the target, decides it
    for r in cf:
        key = (r["seed"], r["graph"], r["operator"], r["K"])
        layers[key] = layers.get(key, True) and bool(r["certified"])
    per_target = "; ".join(
        f"{t} {statistics.median(x['perp_norm'] / x['energy_term'] for x in cf if x['target'] == t and x['energy_term'] > 0):.3g}"
        for t in dict.fromkeys(r["target"] for r in cf))
    return "\n".join([
        _table(["target", "Spearman (median [range])", "Kendall (median [range])", "bound's best = error's best",
                "median error, L / L_sym"], rows), "",
        f"Lemma 2.1's ratio `||P_K^perp f|| / (E(f)/sqrt(lambda_(K+1)))` over the {len(ratio)} rows (graph, operator, "
        f"target, seed; the ratio depends on the graph and the target, not on the layer): largest {max(ratio):.3g}, "
        f"median {statistics.median(ratio):.3g} (per target: {per_target}), smallest {min(ratio):.3g}. Share of "
        f"Lemma 2.1's term in the Cor 3.1 bound: median {statistics.median(share):.0%} (range "
        f"{min(share):.0%}-{max(share):.0%}). Layers certified at alpha = 1: {sum(layers.values())} of the "
        f"{len(layers)} layers (one per graph, operator and seed, in one row per target: {certified}/{len(cf)} rows)."])


def certification() -> str:
    """Per method: the largest gap to the certified G* and where; the layers' N_K after T neurons."""
    d = load("certification") or load("certification", True)
    if d is None:
        return "(no saved run)"
    steps, layers = d["tables"]["steps"], d["tables"]["layers"]
    T = max(r["t"] for r in layers)
    rows = []
    for m in dict.fromkeys(r["method"] for r in steps):
        rs = [r for r in steps if r["method"] == m]
        w = max(rs, key=lambda r: r["gap"])
        fin = next(r["N_K"] for r in layers if r["method"] == m and r["t"] == T)
        rows.append([m, f"{w['gap']:.3g}", w["t"], f"{w['gap'] / w['upper_bound']:.2%}",
                     f"{statistics.median(r['gap'] for r in rs):.2g}", f"{fin:.4f}"])
    p = d["params"]
    methods = list(dict.fromkeys(r["method"] for r in layers))
    nk = {(r["method"], r["t"]): r["N_K"] for r in layers}
    beat = [[t] + [f"**{nk[m, t]:.5f}**" if m != "certified" and nk[m, t] > nk["certified", t] + 1e-9
                   else f"{nk[m, t]:.5f}" for m in methods] for t in range(1, T + 1)]
    where = [f"t = {t}: {', '.join(m for m in methods if nk[m, t] > nk['certified', t] + 1e-9)}"
             for t in range(1, T + 1) if any(nk[m, t] > nk["certified", t] + 1e-9 for m in methods)]
    return (f"Two moons n = {p['n']}, K = {p['K']}, {p['T']} steps, seed {p['seed']}:\n\n"
            + _table(["method", "largest gap to G*", "at step", "of that step's G*", "median gap",
                      f"N_K after {T} neurons"], rows)
            + "\n\nN_K of each method's own layer of t neurons (bold: above the certified greedy layer):\n\n"
            + _table(["t", *methods], beat)
            + "\n\nLayers that beat the certified greedy layer: " + ("; ".join(where) or "none") + ".")


def alpha() -> str:
    """alpha's summary table (exact solves, seconds, final deficit) and the steps that stopped early."""
    out = []
    for quick in (False, True):
        d = load("alpha", quick)
        if d is None:
            continue
        st = d["tables"]["steps"]
        rows = [[s["alpha"], s["exact_solves"], f"{s['total_seconds']:.2f}", f"{s['final_deficit']:.4f}",
                 sum(1 for r in st if r["alpha"] == s["alpha"] and r["upper_bound"] > r["gain"] * (1 + 1e-6)),
                 f"{min(r['gain'] / r['exact_value'] for r in st if r['alpha'] == s['alpha']):.4f}"]
                for s in d["tables"]["summary"]]
        p = d["params"]
        out += [f"{'quick' if quick else 'full'} run: two moons n = {p['n']}, K = {p['K']}, {p['T']} neurons:", "",
                _table(["alpha", "exact solves", "search seconds", "final deficit", "steps stopped with bound > gain",
                        "smallest gain / exact optimum"], rows), ""]
    return "\n".join(out).strip()


def depth() -> str:
    """Depth's certified layers against one layer of the same width, and the variation norms."""
    out = []
    for quick in (False, True):
        d = load("depth", quick)
        if d is None:
            continue
        pv = (d.get("provenance") or {}).get("commit") or "no commit recorded"
        p = d["params"]
        rows = [[r["arch"], r["layer"], r["width"], f"{r['N_K']:.4f}", f"{r['s_K']:.3g}"]
                for r in d["tables"]["certified_layers"] if r["seed"] == p["seed"]]
        out += [f"{_run_label(d, quick)} run ({pv[:9]}): two moons n = {p['n']}, K = {p['K']}, "
                f"N_K([X, 1]) = {d['tables']['certified_layers'][0]['N_K_Phi1']:.4f}:", "",
                _table(["architecture", "layer", "width", "N_K", "s_K"], rows), ""]
        nrows = [[r["arch"], r["layer"], r["rank_Phi"]] + [
            f"[{r[f'u{k}_lower']:.3g}, {r[f'u{k}_upper']:.3g}]" if r.get(f"u{k}_lower") is not None else "inf"
            for k in range(1, p["K"] + 1)] + [f"{r['kappa_upper_CS']:.3g}" if r["kappa_upper_CS"] else "inf"]
            for r in d["tables"]["variation_norms"]]
        out += [_table(["input of", "layer", "rank", *[f"||u_{k}||_A" for k in range(1, p["K"] + 1)],
                        "kappa <= (Cauchy-Schwarz)"], nrows), ""]
        vn = d["tables"]["variation_norms"]
        one = next((r for r in vn if r["layer"] == 1), None)
        two = next((r for r in vn if r["layer"] == 2 and "skip" in r["arch"]), None)
        if one and two:
            ratios = [(k, one[f"u{k}_lower"] / two[f"u{k}_upper"], one[f"u{k}_upper"] / two[f"u{k}_lower"])
                      for k in range(1, p["K"] + 1) if two.get(f"u{k}_upper") and two.get(f"u{k}_lower")]
            out += ["Skip input's effect on `||u_k||_A`, certified (layer-1 lower end / layer-2 upper end, and "
                    "upper / lower): " + "; ".join(f"u_{k}: {lo:.3g}x to {hi:.3g}x" for k, lo, hi in ratios) + ".", ""]
    return "\n".join(out).strip()


def _cases(sub: str, pattern: str) -> list[dict]:
    """The saved per-case files of ``benchmarks/results/SUB`` (each: provenance, args, rows or row)."""
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted((RESULTS / sub).glob(pattern))]


def _provenance_line(cases: list[dict]) -> str:
    """Commits, commands, dates and loads of a set of per-case files."""
    pv = [c["provenance"] for c in cases]
    commits = sorted({(p.get("commit") or "-")[:9] + (" (dirty)" if p.get("dirty") else "") for p in pv})
    cmds = sorted({p.get("command", "-") for p in pv})
    loads = [x for p in pv for x in (p.get("load_start") or [None])[:1] + (p.get("load_end") or [None])[:1] if x]
    dates = sorted(p.get("date") or "-" for p in pv)
    return (f"{len(cases)} cases saved at commit(s) {', '.join(commits)}, {dates[0][:16]} to {dates[-1][:16]} UTC, "
            f"load (1 min) {min(loads):.1f}-{max(loads):.1f}; command(s): " + "; ".join(f"`{c}`" for c in cmds))


def kappa_n(sub: str = "experiments_kappa_n") -> str:
    """kappa against n (``benchmarks/kappa_n.py``): certified intervals per family, d and n, over seeds."""
    cases = _cases(sub, "*_d*_n*_s*.json")
    if not cases:
        return "(no saved run)"
    allr = [r for c in cases for r in c["rows"]]
    rows = []
    for fam, d, what in sorted(dict.fromkeys((r["family"], r["d"], r["what"]) for r in allr)):
        for n in sorted({r["n"] for r in allr if (r["family"], r["d"], r["what"]) == (fam, d, what)}):
            sel = sorted((r for r in allr if (r["family"], r["d"], r["what"], r["n"]) == (fam, d, what, n)),
                         key=lambda r: r["seed"])
            ex = [r["explicit_upper"] for r in sel if r.get("explicit_upper")]
            rows.append([fam, d, what, n, ", ".join(str(r["seed"]) for r in sel),
                         "; ".join(f"[{r['lower']:.3g}, {_end(r['upper'])}]" + _partial(r) for r in sel),
                         f"{min(r['lower'] for r in sel):.3g}", _end(max(r["upper"] for r in sel)),
                         _widest(sel), "; ".join(_end(r["upper_parts"]["basis"]) for r in sel),
                         f"{min(ex):.3g}-{max(ex):.3g}" if ex else "-", all(r["norms_closed"] for r in sel)])
    return (_provenance_line(cases) + ":\n\n"
            + _table(["family", "d", "quantity", "n", "seeds", "certified interval per seed", "smallest lower end",
                      "largest upper end", "widest (upper - lower) / upper", "Cauchy-Schwarz upper end per seed",
                      "Example 5.12 explicit upper end", "every norm closed to tol"], rows))


def _end(x: float) -> str:
    """An upper end for the text: "no upper end yet" for a partial bracket's inf."""
    return "no upper end yet" if math.isinf(x) else f"{x:.3g}"


def _partial(row: dict) -> str:
    """A partial bracket's note: how many norms were evaluated and how many closed."""
    if row.get("final", True):
        return ""
    closed = row.get("closed")
    done = f"{sum(closed)} of {len(closed)} norms closed" if closed is not None else f"{len(row['rounds'])} norms"
    return f" (partial: {done})"


def _widest(sel: list[dict]) -> str:
    """The widest ``(upper - lower) / upper`` of ``sel``, "no upper end yet" where a partial row has none."""
    if any(math.isinf(r["upper"]) for r in sel):
        return "no upper end yet"
    return f"{max((r['upper'] - r['lower']) / r['upper'] for r in sel):.0%}"


def _kappa_trend(rows: list[dict]) -> str:
    """One family's and quantity's brackets against n, in words: each n's range, and whether the growth
    is certified (every lower end at a larger n above every upper end at the smallest)."""
    ns = sorted({r["n"] for r in rows})
    lo = {n: min(r["lower"] for r in rows if r["n"] == n) for n in ns}
    hi = {n: max(r["upper"] for r in rows if r["n"] == n) for n in ns}
    seeds = {n: len({r["seed"] for r in rows if r["n"] == n}) for n in ns}
    part = {n: sum(not r.get("final", True) for r in rows if r["n"] == n) for n in ns}
    ranges = ", ".join(f"[{lo[n]:.3g}, {_end(hi[n])}] at n = {n} ({seeds[n]} seed{'s' * (seeds[n] > 1)}"
                       + (f", {part[n]} partial" if part[n] else "") + ")" for n in ns)
    grown = [n for n in ns[1:] if lo[n] > hi[ns[0]]]
    fin = [n for n in ns if math.isfinite(hi[n])]
    open_ = [n for n in ns if n not in fin]
    if open_:  # no upper end yet at these n: only their lower ends say anything
        ranges += (f" (no upper end at n = {', '.join(map(str, open_))}: partial, before the basis norms "
                   "closed; the lower end is certified)")
    if min(lo.values()) < 1:  # ||u||_A >= ||u|| = 1 for every unit u: such lower ends say nothing
        ranges += " (lower ends below the trivial 1: only the upper ends are informative)"
    if len(ns) == 1:
        return f"{ranges}: one n only, no trend"
    if grown:  # by how much: a lower end just above the first n's upper ends is growth, but little
        return (f"{ranges}: it grows with n (every lower end at n = {', '.join(map(str, grown))} lies above every "
                f"upper end at n = {ns[0]}; at n = {grown[-1]} by a certified factor of at least "
                f"{math.floor(lo[grown[-1]] / hi[ns[0]] * 1000) / 1000:.3f}; every bracket with an upper end lies within "
                f"[{min(lo[n] for n in fin):.3g}, {max(hi[n] for n in fin):.3g}])")
    if len(fin) < 2:
        return f"{ranges}: no trend (upper ends at one n only)"
    return (f"{ranges}: every bracket with an upper end lies within [{min(lo[n] for n in fin):.3g}, "
            f"{max(hi[n] for n in fin):.3g}] (no certified growth between n = {fin[0]} and {fin[-1]}"
            + (f"; at n = {', '.join(map(str, open_))} only lower ends, up to {max(lo[n] for n in open_):.3g}"
               if open_ else "") + ")")


def kappa_claim() -> str:
    """The sentence on which family's kappa is bounded, stated only as far as the saved brackets go."""
    cases = _cases("experiments_kappa_n", "*_d*_n*_s*.json")
    if not cases:
        return "(no saved run)"
    allr = [r for c in cases for r in c["rows"]]
    out = []
    for d in sorted({r["d"] for r in allr}):
        for fam, what in sorted(dict.fromkeys((r["family"], r["what"]) for r in allr if r["d"] == d)):
            sel = [r for r in allr if (r["d"], r["family"], r["what"]) == (d, fam, what)]
            out.append(f"- d = {d}, {fam}, {what}: " + _kappa_trend(sel) + ".")
    top = max(r["n"] for r in allr if math.isfinite(r["upper"]))
    low_only = sorted({r["n"] for r in allr if r["n"] > top})
    beyond = (f" (at n = {', '.join(map(str, low_only))} only partial brackets with certified lower ends and no "
              "upper end)") if low_only else ""
    return ("Certified brackets (partial ones included: valid, only wider) per family and quantity, the range "
            f"over seeds at each n; no n above {top} has an upper end{beyond}, so \"bounded\" below means bounded "
            "up to that n, no further:\n\n" + "\n".join(out))


def _code(row: dict) -> str:
    """Which variation-norm code computed a kappa_n row: rows written since 2ab1190 carry ``final``, and
    since issue 40's pricing work the pricing (``early``: uncertified columns first, no dense seed pool);
    every d = 3 row in the folder has the exact bounds on singular chambers (8258c55 on)."""
    if row.get("pricing") == "early":  # no early row predates 1798cc7: each bracket is one master (the carry)
        # rows record the seed loop's cosine cap since it exists; cfc191c's runs predate the field
        distinct = row.get("seed_distinct") is not None or row.get("_commit", "").startswith("cfc191c")
        later = " + distinct seed witnesses, 256 columns a round (cfc191c)" if distinct else ""
        # rows record the facet-row pricing since 0.11.5's runs; 214b8fb's and 0f2e866's ran before the field
        facets = row.get("facets") or (row.get("commit") or row.get("_commit", ""))[:7] in ("214b8fb", "0f2e866")
        commit = (row.get("commit") or row.get("_commit", ""))[:7]
        per_row = row.get("seed_per_row") is not None or commit == "0f2e866"  # (0f2e866's rows predate the field)
        return ("warm, pricing early, one master per case (carry)" + later + (" + facet rows (214b8fb)" if facets else "")
                + (" + seed witnesses per row (0f2e866)" if per_row else ""))
    if row.get("pricing") == "batched":
        return f"warm, pricing {row['pricing']}"
    if row.get("d") == 3 and row.get("n", 0) >= 100:  # every d = 3, n >= 100 row in the folder: f9201c1 on
        return "warm, exact singular chambers, float-filtered exact maximum (f9201c1)"
    if row.get("d") == 3:  # the open d = 3 cases (c7b6d80) were moved to superseded_d3/: these are 8258c55's
        return "warm, exact singular chambers (8258c55)"
    return "warm, seeded (2ab1190)" if "final" in row else "cold (fc7fa07-003479b)"


def kappa_speed() -> str:
    """The variation norm's rounds and CPU seconds to close against n, from the kappa-against-n cases."""
    cases = _cases("experiments_kappa_n", "*_d*_n*_s*.json")
    if not cases:
        return "(no saved run)"
    allr = [{**r, "_commit": c["provenance"].get("commit") or ""} for c in cases for r in c["rows"]]
    rows = []
    def code(r: dict) -> str:  # a partial row: its CPU seconds include an unfinished norm
        return _code(r) + ("" if r.get("final", True) else ", partial (the last norm unfinished)")

    for d, n, c in sorted({(r["d"], r["n"], code(r)) for r in allr}):
        sel = [r for r in allr if (r["d"], r["n"], code(r)) == (d, n, c)]
        rounds = [x for r in sel for x in r["rounds"]]
        cpu = [r["cpu_seconds"] / len(r["rounds"]) for r in sel]
        rows.append([d, n, c, f"{statistics.median(r['patterns'] for r in sel):,.0f}", len(rounds),
                     f"{statistics.median(rounds):g}", max(rounds), f"{statistics.median(cpu):.3g}",
                     f"{max(cpu):.3g}", f"{statistics.median(r['seconds'] / len(r['rounds']) for r in sel):.0f}",
                     sum(not r["norms_closed"] for r in sel)])
    return _table(["d", "n", "master LP", "chambers", "norms computed", "median master LPs", "most LPs",
                   "median CPU seconds per norm", "most CPU seconds per norm", "median wall seconds per norm",
                   "brackets with a norm left open"], rows)


def _per_seed(sel: list[dict], s: float, key: str = "t_needed") -> str:
    """``key`` at target ``s`` for each case of ``sel`` ("-": not reached, or ``s`` below ``2 eps``)."""
    return " / ".join("-" if s not in r["targets"] or r[key][r["targets"].index(s)] is None
                      else f"{r[key][r['targets'].index(s)]:.3g}" for r in sel)


def example512() -> str:
    """Example 5.12 across n (``benchmarks/example512_n.py``): neurons to reach s against the predictions."""
    saved = _cases("experiments_example512", "n*_s*.json")
    cases = [c for c in saved if c.get("complete", True) and c.get("row") is not None]
    started = [c for c in saved if c not in cases]
    if not cases:
        return "(no saved run)"
    allr = [c["row"] for c in cases]
    show = (0.3, 0.2, 0.1, 0.05)
    rows = []
    for n in sorted({r["n"] for r in allr}):
        sel = sorted((r for r in allr if r["n"] == n), key=lambda r: r["seed"])
        rows.append([n, ", ".join(str(r["seed"]) for r in sel),
                     f"{min(r['epsilon'] for r in sel):.2g}-{max(r['epsilon'] for r in sel):.2g}",
                     f"{min(r['omega_max'] for r in sel):.3g}-{max(r['omega_max'] for r in sel):.3g}",
                     *[_per_seed(sel, s) for s in show], _per_seed(sel, 0.1, "t_pred_example"),
                     _per_seed(sel, 0.1, "t_pred_kappa_chi"),
                     f"{min(r['alpha_eff'] for r in sel):.7f}", all(r["certified"] for r in sel)])
    return (_provenance_line(cases) + ":\n\n"
            + _table(["n", "seeds", "eps", "max omega_c", *[f"neurons to s = {s:g} (per seed)" for s in show],
                      "Example 5.12's count at s = 0.1 (16 K^3 max omega^2 / (alpha s^2))",
                      "Thm 5.10's count at s = 0.1 with the explicit kappa(chi)", "smallest alpha_eff",
                      "every step certified"], rows) + _unfinished(started))


def _unfinished(started: list[dict]) -> str:
    """The cases started and not finished (their files record the commit, the start and the load)."""
    if not started:
        return ""
    return ("\n\nStarted and not finished (no result saved): "
            + "; ".join(f"n = {c['case']['n']}, seed {c['case']['seed']} (started {(c['provenance'].get('date') or '-')[:16]}"
                        f" UTC at {(c['provenance'].get('commit') or '-')[:9]})" for c in started) + ".")


def variation_speed() -> str:
    """``benchmarks/variation_speed.py``: rounds and seconds to close, cone pricing beside search pricing."""
    path = RESULTS / "variation_speed.json"
    if not path.exists():
        return "(no saved run)"
    d = json.loads(path.read_text(encoding="utf-8"))
    pv = d.get("provenance") or {}
    rows = [[r["n"], r["patterns"], r["pricing"], r["rounds"], f"[{r['lower']:.4g}, {r['upper']:.4g}]",
             r["closed"], f"{r['seconds']:.1f}", f"{r['cpu_seconds']:.1f}", f"{r['load'][0]:.1f}"] for r in d["rows"]]
    return (f"`{pv.get('command', '-')}` at {(pv.get('commit') or '-')[:9]}, {(pv.get('date') or '-')[:16]}:\n\n"
            + _table(["n", "chambers", "pricing", "master rounds", "interval of ||u_2||_A", "closed to 1e-3",
                      "seconds", "CPU seconds", "load (1 min)"], rows))


def variation_against(name: str = "variation_against_20261205.json") -> str:
    """``benchmarks/variation_against.py``: one norm's LPs and CPU seconds, this code beside the one before."""
    path = RESULTS / name
    if not path.exists():
        return "(no saved run)"
    d = json.loads(path.read_text(encoding="utf-8"))
    rows = [[r["n"], r["patterns"], r["checkout"], r["rounds"], f"[{r['lower']:.4g}, {r['upper']:.4g}]", r["closed"],
             f"{r['cpu']:.1f}", f"{r['wall']:.0f}"] for r in d["rows"]]
    col = d["args"].get("col", 1) + 1
    return (_prov_line(d.get("provenance") or {}) + f" (baseline {d['args']['against']}):\n\n"
            + _table(["n", "chambers", "code", "master LPs", f"interval of ||u_{col}||_A", "closed to 1e-2",
                      "CPU seconds", "wall seconds"], rows))


def variation_against_d3_pricing() -> str:
    """Issue 40's d = 3 pricing costs (the float-filtered exact maximum, the cold pass) against 4907134."""
    names = ["variation_against_d3_n50_moons.json", "variation_against_d3_n50_clusters.json",
             "variation_against_d3_n100_moons.json"]
    return "\n\n".join(variation_against(nm) for nm in names if (RESULTS / nm).exists()) or "(no saved run)"


def variation_against_d3() -> str:
    """The d = 3 pricing (8258c55 on) against the code before, at d = 3 and (no slower) at d = 2."""
    names = ["variation_against_d3_moons_20261206.json", "variation_against_d3_clusters_20261206.json",
             "variation_against_d2_20261206.json"]
    return "\n\n".join(variation_against(nm) for nm in names if (RESULTS / nm).exists()) or "(no saved run)"


def variation_against_const() -> str:
    """The constant atom and the trivial lower end ``||v||_A >= ||v||`` against main: a bracket's first norm
    (the constant vector) alone, and the first basis norms of one carry (``--norms``)."""
    return _against_norms(["variation_against_const_clusters_d3_n50.json", "variation_against_const_moons_n200.json",
                           "variation_against_const_clusters_n400.json"])


def variation_seed() -> str:
    """Issue 40's fifth round: the seed loop's distinct, dropped witnesses and 256 columns a priced round,
    against 0.11.3 (the first basis norms of one carry)."""
    return _against_norms(["variation_seed_clusters_n200.json", "variation_seed_moons_n200.json",
                           "variation_seed_clusters_n400.json", "variation_seed_d2_clusters_small.json",
                           "variation_seed_d3_moons_n50.json"])


def _against_norms(names: list[str]) -> str:
    """``benchmarks/variation_against.py`` runs with each norm's LPs and CPU seconds (``--norms``)."""
    out = []
    for nm in names:
        path = RESULTS / nm
        if not path.exists():
            continue
        d = json.loads(path.read_text(encoding="utf-8"))
        a = d["args"]
        what = (f"first {a['norms']} basis norms on one carry" if a.get("norms") else f"||u_{a.get('col', 1) + 1}||_A")
        rows = [[r["n"], a["d"], a["family"], r["checkout"], r["pricing"], r["rounds"],
                 "; ".join(f"{q['lps']} LPs, {q['cpu']:.1f} s" for q in r["norms"]) if r.get("norms") else "-",
                 f"[{r['lower']:.4g}, {r['upper']:.4g}]", r["closed"], f"{r['cpu']:.1f}"] for r in d["rows"]]
        pv = d.get("provenance") or {}
        out += [_prov_line(pv) + f" (baseline {a['against']}; {what})" + (f". {pv['note']}" if pv.get("note") else "")
                + ":", "", _table(["n", "d", "family", "code", "pricing", "master LPs", "each norm: LPs, CPU s",
                                   "interval (last norm)", "closed to 1e-2", "CPU seconds"], rows), ""]
    return "\n".join(out).rstrip() or "(no saved run)"


def variation_facets() -> str:
    """Issue 40's ninth round: the certified pricing on each chamber's facet rows and its products in one float
    BLAS product (against f204118, 0.11.4's library), then a seed LP's witnesses per row (against 80a3e43)."""
    return _against_norms(["variation_facets_moons_n200.json", "variation_facets_clusters_n200.json",
                           "variation_facets_clusters_n400.json", "variation_facets_d3_moons_n50.json",
                           "variation_seedn_clusters_n400.json", "variation_seedn_moons_n400.json",
                           "variation_seedn_clusters_n200.json"])


def pricing_replay() -> str:
    """``benchmarks/pricing_replay.py``: a bracket's recorded duals through two checkouts' certified pricing."""
    out = []
    for path in sorted(RESULTS.glob("pricing_replay_*.json")):
        d = json.loads(path.read_text(encoding="utf-8"))
        rows = [[r["n"], r["family"], r["calls"], f"{r['base']['cpu']:.1f}", f"{r['this']['cpu']:.1f}",
                 f"{r['ratio']:.2f}", f"{r['this']['build_cpu']:.1f} / {r['base']['build_cpu']:.1f}",
                 f"{r['bound_difference']:.1e}"] for r in d["rows"]]
        out += [_prov_line(d.get("provenance") or {}) + f" (baseline {d['args']['against']}):", "",
                _table(["n", "family", "certified pricings", "base CPU s", "this CPU s", "this / base",
                        "pricer build CPU s (this / base)", "largest relative bound difference"], rows), ""]
    return "\n".join(out).rstrip() or "(no saved run)"


def pricer_memory() -> str:
    """``benchmarks/pricer_memory.py``: the cone pricer's peak memory and CPU seconds per call at large n."""
    path = RESULTS / "pricer_memory.json"
    if not path.exists():
        return "(no saved run)"
    d = json.loads(path.read_text(encoding="utf-8"))
    rows = [[r["n"], f"{r['chambers']:,}", r["checkout"], f"{r['peak_mb_enumerate']:.0f}", f"{r['peak_mb_pricer']:.0f}",
             f"{r['peak_mb']:.0f}", f"{r['pricer_cpu']:.1f}", f"{r['columns_cpu']:.2f}", f"{r['bound_cold_cpu']:.1f}",
             f"{r['bound_warm_cpu']:.2f}"] for r in d["rows"]]
    return (_prov_line(d["provenance"]) + f" (baseline {d['args']['against']}):\n\n"
            + _table(["n", "chambers", "code", "peak MB after enumeration", "peak MB after the pricer",
                      "peak MB (end)", "pricer build CPU s", "uncertified round (columns) CPU s",
                      "first certified bound CPU s", "warm certified bound CPU s"], rows))


def kappa_carry() -> str:
    """``benchmarks/kappa_carry.py``: one kappa bracket with the carry beside every norm from scratch, and the
    pruned carry beside the unpruned one (``kappa_prune_n*.json``)."""
    paths = sorted(RESULTS.glob("kappa_carry_n*.json")) + sorted(RESULTS.glob("kappa_prune_n*.json"))
    if not paths:
        return "(no saved run)"
    out = []
    for path in paths:
        d = json.loads(path.read_text(encoding="utf-8"))
        rows = [[r["n"], f"{r['chambers']:,}", r["mode"], len(r["norms"]), sum(x["lps"] for x in r["norms"]),
                 " / ".join(f"{x['cpu']:.1f}" for x in r["norms"]), f"{r['cpu_seconds']:.1f}",
                 "-" if r["lower"] is None else f"[{r['lower']:.4g}, {r['upper']:.4g}]",
                 " / ".join("-" if x.get("master_atoms") is None else f"{x['master_atoms']:,}" for x in r["norms"]),
                 " / ".join(f"[{x['lower']:.4g}, {x['upper']:.4g}]" for x in r["norms"]), r["closed"]]
                for r in d["rows"]]
        out += [_prov_line(d.get("provenance") or {}) + ":", "",
                _table(["n", "chambers", "each norm starts", "norms evaluated", "master LPs (all norms)", "CPU seconds per norm",
                        "CPU seconds (all norms)", "kappa interval (- : basis norms only)",
                        "master atoms after each norm", "each norm's interval", "every norm closed"], rows), ""]
    return "\n".join(out).rstrip()


def _prov_line(pv: dict) -> str:
    ld = pv.get("load_start"), pv.get("load_end")
    load_ = (f"{ld[0][0]:.1f} -> {ld[1][0]:.1f}" if None not in ld else f"{ld[1][0]:.1f}" if ld[1] else "-")
    return (f"`{pv.get('command', '-')}` at {(pv.get('commit') or '-')[:9]}"
            f"{' (dirty)' if pv.get('dirty') else ''}, {(pv.get('date') or '-')[:16]}, load {load_}")


def rates() -> str:
    """``benchmarks/greedy_rates.py``: deficit exponents with t-intervals; Thm 5.13 and Thm 5.10 beside."""
    sys.path.insert(0, str(HERE))
    from greedy_rates import bound_violations, t_interval

    path = RESULTS / "experiments_rates" / "rates.json"
    if not path.exists():
        return "(no saved run)"
    d = json.loads(path.read_text(encoding="utf-8"))
    groups: dict = {}
    for r in d["runs"]:
        groups.setdefault((r["family"], r["n"], r["K"], r["T"]), []).append(r)
    rows, steps = [], []
    for (fam, n, K, T), rs in groups.items():
        sl = [r["slope_delta"] for r in rs if r["slope_delta"] is not None]
        m, lo, hi = t_interval(sl) if sl else (math.nan, math.nan, math.nan)
        s2 = [r["slope_s2"] for r in rs if r["slope_s2"] is not None]
        m2, lo2, hi2 = t_interval(s2) if s2 else (math.nan, math.nan, math.nan)
        cert = sum(r["steps_certified"] for r in rs), sum(len(r["steps"]) - 1 for r in rs)
        pair = [r["pair"]["chosen"] for r in rs if r.get("pair")]
        C = f"{max(p['C'] for p in pair):.3g} ({max(p['C'] for p in pair) / n:.2f} n)" if pair else "not computed"
        eps = f"{max(p['eps'] for p in pair):.2g}" if pair else "-"
        viol = sum(len(bound_violations(r)) for r in rs) if pair else "-"
        st = [x for r in rs for x in r["steps"] if "s_fell" in x]
        rem = (f"{sum(x['s_fell'] for x in st)} falls, {sum(x['s_fell'] and x['eta1_multiplicity_prev'] == 1 for x in st)}"
               f" after a simple eta_1; {sum(x['eta1_multiplicity_prev'] > 1 for x in st)} steps after a multiple one, "
               f"{sum(x['eta1_multiplicity_prev'] > 1 and not x['s_fell'] for x in st)} of them flat" if st else "not recorded")
        rows.append([fam, n, K, T, ", ".join(str(r["seed"]) for r in rs), f"{m:.2f} [{lo:.2f}, {hi:.2f}]",
                     f"{m2:.2f} [{lo2:.2f}, {hi2:.2f}]", f"{cert[0]}/{cert[1]}", C, eps, viol, rem])
        for t in range(T + 1):
            at = [r["steps"][t] for r in rs if t < len(r["steps"])]
            if not at:
                continue
            dl = [a["delta"] for a in at]
            rb = [a["rate_bound"] for a in at if "rate_bound" in a]
            steps.append([fam, t, f"{statistics.median(dl):.3g} [{min(dl):.2g}, {max(dl):.2g}]",
                          f"{statistics.median(a['kyfan_delta'] for a in at):.3g}",
                          f"{statistics.median(a['eta_next2'] for a in at):.3g}",
                          f"{statistics.median(rb):.3g} (applies in {sum(a['applies'] for a in at)}/{len(at)})"
                          if rb else "-"])
    cmds = "; ".join(_prov_line(c) for c in d["commands"])
    return (cmds + "\n\n" + _table(["family", "n", "K", "T", "seeds", "exponent of delta_t (mean [95% t-interval])",
                                     "exponent of s_t^2", "steps certified", "Thm 5.10 constant 4K^2kappa^2 (largest)",
                                     "eps (largest)", "Thm 5.10 violations", "Rem 5.14: s_t fell only after a simple eta_1"], rows)
            + "\n\n" + _table(["family", "t", "delta_t median [range]", "Thm 5.13: sum_(i>t) eta_i^2",
                                "Thm 5.13: eta_(t+1)^2", "Thm 5.10 bound on delta_t (median; seeds with s_0..s_t >= 2 eps)"], steps))


def best_layer() -> str:
    """``benchmarks/best_layer.py``: best pair / triple found against greedy layers and Thm 5.13."""
    out = []
    for inst in ("moons", "line"):
        path = RESULTS / "experiments_best_layer" / f"{inst}.json"
        if not path.exists():
            continue
        d = json.loads(path.read_text(encoding="utf-8"))
        rows = []
        for r in d["rows"]:
            g1 = r["greedy_alpha_1.0"]
            rows.append([r["t"], f"{r['kyfan_upper']:.5f}", f"{r['best_found']:.5f}", f"{g1:.5f}",
                         f"{r['greedy_alpha_0.9']:.5f}", f"{r['greedy_alpha_0.5']:.5f}",
                         f"{r['best_found'] - g1:.2e}", f"{(d['K'] - g1) / (d['K'] - r['best_found']):.3f}"])
        cert = ", ".join(f"alpha {k}: {'yes' if v['certified'] else 'no'}" for k, v in d["greedy"].items())
        out.append(f"{d['data']}, n = {d['n']}, K = {d['K']}, from the bias (N_K = {d['N_K_H0']:.5f}); pool of "
                   f"{d['pool']:,} neurons, beam {d['beam']}; greedy certified: {cert}; "
                   + _prov_line(d["provenance"]) + ":\n\n"
                   + _table(["t", "Thm 5.13 upper bound", "best layer found", "greedy alpha = 1 (certified)",
                             "greedy alpha = 0.9", "greedy alpha = 0.5", "best found - greedy",
                             "greedy deficit / best-found deficit"], rows))
    return "\n\n".join(out) or "(no saved run)"


def best_pair() -> str:
    """``benchmarks/best_pair.py``: the best pair bracketed over every pattern pair, against greedy layers."""
    out = []
    for path in sorted((RESULTS / "experiments_best_layer").glob("best_pair_*.json")):
        d = json.loads(path.read_text(encoding="utf-8"))
        r = d["result"]
        g = d["greedy"]
        proven = r.get("upper_proven", False)
        how = "upper end proven in exact integers" if proven else "float bounds over every pattern pair, not proven"
        rows = [[f"best pair, bracket ({how}; rounded outward)",
                 f"[{math.floor(r['best_found'] * 1e5) / 1e5:.5f}, {math.ceil(r['certified_upper'] * 1e5) / 1e5:.5f}]",
                 "optimum" if r["optimum"] else f"bracket, width {r['gap']:.4f}"],
                ["best pair found (local solves in the open pattern pairs; value in exact rationals)",
                 f"{r['best_found']:.5f}", f"{r['best_found'] - g['1.0']['N_K'][-1]:+.5f} against greedy"],
                ["best pair of the pool (every pair scored exactly)", f"{r['best_found_pool']:.5f}",
                 f"{r['best_found_pool'] - g['1.0']['N_K'][-1]:+.5f} against greedy"]]
        rows += [[f"greedy alpha = {k} (every step certified: {'yes' if v['certified'] else 'no'})",
                  f"{v['N_K'][-1]:.5f}", "gain / bound per step: " + ", ".join(f"{x:.4f}" for x in v["gain_over_bound"])]
                 for k, v in g.items()]
        rows.append(["Thm 5.13 (no ReLU constraint)", f"{r['kyfan_upper_t2']:.5f}", "-"])
        if proven:
            pr = r["proven"]
            proof = (f"every pair's bound proven in exact integers ({r['cpu_seconds_proof']:.0f} CPU seconds; the pattern "
                     f"list proven complete; {pr['proposals_rejected']} float proposals rejected; the proven bounds exceed "
                     f"the float eigenvalues by at most {pr['max_excess_over_float']:.1e}; the float bounds' largest: "
                     f"{r['float_upper']:.7f})")
        else:
            proof = (f"the bounds at 50 digits differ by at most {r['mp_check']['max_abs_diff']:.1e} "
                     f"({r['mp_check']['pairs']} pairs); smallest kept relative singular value "
                     f"{r['rank_gap']['pair_kept_min']:.1e}, largest dropped {r['rank_gap']['pair_dropped_max']:.1e}")
        out.append(f"{d['data']}, n = {d['n']}, K = {d['K']}, seed {d['seed']}, from the bias (N_K = {r['N_K_H0']:.5f}): "
                   f"{r['n_patterns']:,} patterns, {r['n_pairs']:,} pattern pairs; {r['pairs_pruned']:,} pruned by their "
                   f"bound, {r['pairs_open']:,} open ({r['pairs_solved_locally']:,} solved locally); largest pair bound "
                   f"{r['largest_pair_bound']:.7f} (Ky Fan alone: {r['largest_pair_kyfan']:.5f}); {proof}; "
                   f"{r['cpu_seconds']:.0f} CPU seconds; " + _prov_line(d["provenance"]) + ":\n\n"
                   + _table(["layer of 2 neurons", "N_K", "note"], rows))
    return "\n\n".join(out) or "(no saved run)"


def real_gap() -> str:
    """``benchmarks/real_greedy_gap.py``: the best of N random neurons against the certified optimum."""
    out = []
    for path in sorted((RESULTS / "experiments_real").glob("*.json")):
        d = json.loads(path.read_text(encoding="utf-8"))
        Ns = sorted({int(k.split("_")[1]) for r in d["steps"] for k in r if k.endswith("_shortfall")})
        rows = [[r["t"], f"{r['gain']:.4g}", f"{r['bound_G']:.4g}", r["certified"],
                 *[f"{r[f'random_{N}_shortfall']:.1%}" for N in Ns]] for r in d["steps"]]
        lay = [[f"best of {int(N):,} each step", f"{v[-1]:.4g}", f"{v[-1] / d['deficit'][-1]:.2f}"]
               for N, v in d["sampled_layers"].items()]
        out.append(f"{d['name']} PCA {d['dims']}, n = {d['n']}, K = {d['K']} (lambda_K / lambda_(K+1) = "
                   f"{d['lambda_K']:.4g} / {d['lambda_K1']:.4g}), {len(d['steps'])} certified greedy steps from the bias "
                   f"({d['greedy_cpu_seconds']:.0f} CPU seconds); " + _prov_line(d["provenance"]) + ":\n\n"
                   + _table(["t", "certified gain", "certified bound on G*", "certified",
                             *[f"best of {N:,} random: shortfall" for N in Ns]], rows)
                   + f"\n\nLayer of {d['T']} neurons, final deficit (certified greedy: {d['deficit'][-1]:.4g}):\n\n"
                   + _table(["layer", "final deficit", "/ certified greedy's"], lay))
    return "\n\n".join(out) or "(no saved run)"


def prop41() -> str:
    """``benchmarks/prop41.py``: Prop 4.1's active-set limits on the certified greedy neurons."""
    path = RESULTS / "experiments_best_layer" / "prop41.json"
    if not path.exists():
        return "(no saved run)"
    d = json.loads(path.read_text(encoding="utf-8"))
    rows = [[r["instance"], r["t"], r["active"], f"{r['N_K']:.4f}", f"{r['spectral']:.4f}", f"{r['leverage']:.4f}",
             f"{r['tightness']:.3f}", f"{r['R']:.4g}", f"{r['lambda_min_AA']:.4g}", f"{r['lambda_B1']:.4g}",
             "; ".join(r["violations"]) or "none"] for r in d["rows"]]
    return (_prov_line(d["provenance"]) + ":\n\n"
            + _table(["instance", "neuron t", "active rows", "N_K(h)", "spectral norm^2 of U_K[A,:]", "min(1, sum_A l_i)",
                      "N_K(h) / spectral norm^2", "R(h)", "lambda_min(L_AA)", "lambda_(|B|+1)", "violations"], rows))


BLOCKS: dict[str, Callable[[], str]] = {
    "runs": runs, "checks": checks, "greedy-rate": greedy_rate, "clusters": clusters,
    "graph-choice": graph_choice, "certification": certification, "alpha": alpha, "depth": depth,
    "kappa-n": kappa_n, "kappa-claim": kappa_claim, "kappa-speed": kappa_speed, "example512": example512, "variation-speed": variation_speed,
    "variation-against": variation_against, "variation-against-d3": variation_against_d3,
    "variation-against-d3-pricing": variation_against_d3_pricing, "kappa-carry": kappa_carry,
    "variation-against-const": variation_against_const, "variation-seed": variation_seed,
    "variation-facets": variation_facets, "pricing-replay": pricing_replay,
    "pricer-memory": pricer_memory,
    "kappa-n400-run": lambda: kappa_n("kappa_n400_run"),
    "rates": rates, "best-layer": best_layer, "best-pair": best_pair, "real-gap": real_gap, "prop41": prop41,
}


def block(name: str) -> str:
    """The generated markdown of block ``name``, markers included."""
    return "\n".join([begin(name), "", BLOCKS[name](), "", end(name)])


def replace_blocks(text: str) -> str:
    """``text`` with each generated block it contains replaced by the current rendering."""
    for name in BLOCKS:
        if begin(name) in text:
            a, b = text.index(begin(name)), text.index(end(name)) + len(end(name))
            text = text[:a] + block(name) + text[b:]
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", metavar="FILE.md", help="replace the generated blocks of this file")
    args = ap.parse_args(argv)
    if args.write:
        path = Path(args.write)
        path.write_text(replace_blocks(path.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print("\n\n".join(block(n) for n in BLOCKS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
