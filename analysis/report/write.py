"""Writing the report: report.html (self-contained), report.md, tables.tex (booktabs), one
CSV per table, every figure as PNG and SVG, manifest.json and analysis.json."""

from __future__ import annotations

import html
import json
import math
import re
import time
from pathlib import Path

import pandas as pd

from .figures import report_figures
from .tables import Table, report_tables

__all__ = ["write_report"]

_CSS = """
body{font-family:Helvetica,Arial,sans-serif;max-width:1100px;margin:2rem auto;padding:0 1rem;
color:#202124;line-height:1.45}
h1{font-size:1.8rem}h2{margin-top:2.2rem;border-bottom:1px solid #dadce0;padding-bottom:.2rem}
table{border-collapse:collapse;font-size:.85rem;margin:.6rem 0 1.2rem 0}
th,td{border-bottom:1px solid #e8eaed;padding:.25rem .5rem;text-align:right}
th{background:#f8f9fa}td:first-child,th:first-child{text-align:left}
.caption{color:#5f6368;font-size:.85rem}.verdict{background:#f1f8e9;padding:.5rem .8rem;
border-radius:.4rem;margin:.3rem 0}.fig{margin:1rem 0}
"""


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def _display(t: Table) -> pd.DataFrame:
    """Table for reading: CI columns folded into 'value [low, high]'."""
    df = t.df.copy()
    for label, lo, hi in t.ci_pairs:
        if label in df.columns:
            df[label] = [f"{_fmt(v)} [{_fmt(a)}, {_fmt(b)}]"
                         for v, a, b in zip(df[label], df[lo], df[hi], strict=True)]
            df = df.drop(columns=[lo, hi])
    return df.map(_fmt) if not df.empty else df


_TEX_ESC = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
            "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
            "^": r"\textasciicircum{}", "—": "--", "–": "--", "≥": r"$\geq$", "≤": r"$\leq$",
            "<": r"$<$", ">": r"$>$", "α": r"$\alpha$", "ω": r"$\omega$", "ρ": r"$\rho$",
            "×": r"$\times$", "κ": r"$\kappa$", "−": r"$-$", "…": r"\ldots{}"}


def _tex(s: str) -> str:
    s = "".join(_TEX_ESC.get(ch, ch) for ch in str(s))
    return s.encode("ascii", "replace").decode("ascii").replace("?", "?")


def _tex_table(t: Table) -> str:
    df = _display(t)
    if df.empty:
        return ""
    cols = list(df.columns)
    spec = "l" * min(2, len(cols)) + "r" * max(0, len(cols) - 2)
    lines = [r"\begin{table}[htbp]", r"\centering", r"\small",
             rf"\caption{{{_tex(t.title)}. {_tex(t.caption)}}}", rf"\label{{tab:{t.key}}}",
             r"\resizebox{\textwidth}{!}{%", rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
             " & ".join(_tex(c.replace("_", " ")) for c in cols) + r" \\", r"\midrule"]
    for _, row in df.iterrows():
        lines.append(" & ".join(_tex(v) for v in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}}", r"\end{table}", ""]
    return "\n".join(lines)


def _md_table(t: Table) -> str:
    df = _display(t)
    if df.empty:
        return "_No data._\n"
    head = "| " + " | ".join(df.columns) + " |"
    sep = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |"
            for row in df.itertuples(index=False)]
    return "\n".join([head, sep, *body]) + "\n"


def write_report(bundle: dict, out: str | Path, *, figures: bool = True) -> dict[str, float]:
    """Write every output into ``out``; returns the time spent per step (seconds)."""
    out = Path(out)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    timing: dict[str, float] = {}
    t0 = time.perf_counter()
    tables = report_tables(bundle)
    for t in tables:
        t.df.to_csv(out / "tables" / f"{t.key}.csv", index=False)
    (out / "analysis.json").write_text(json.dumps(bundle["analysis"], indent=2,
                                                  ensure_ascii=False, allow_nan=False) + "\n",
                                       encoding="utf-8")
    (out / "manifest.json").write_text(json.dumps(bundle["manifest"], indent=2,
                                                  ensure_ascii=False) + "\n", encoding="utf-8")
    tex_head = ("% h2htalk report tables. Needs \\usepackage{booktabs} and "
                "\\usepackage{graphicx}.\n")
    (out / "tables.tex").write_text(tex_head + "\n".join(_tex_table(t) for t in tables),
                                    encoding="utf-8")
    timing["tables"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    figs = report_figures(bundle)
    timing["figures_build"] = time.perf_counter() - t0
    _write_md(bundle, tables, figs, out)
    t0 = time.perf_counter()
    _write_html(bundle, tables, figs, out)
    timing["html"] = time.perf_counter() - t0
    if figures:
        t0 = time.perf_counter()
        _export_images(figs, out / "figures")
        timing["figure_export"] = time.perf_counter() - t0
    return timing


def _export_images(figs, folder: Path) -> None:
    import warnings

    import kaleido

    kaleido.start_sync_server(silence_warnings=True)
    try:
        with warnings.catch_warnings():
            # plotly notes that its per-call options are unused with a running server
            warnings.filterwarnings("ignore", message="The kopts argument is ignored")
            _write_images(figs, folder)
    finally:
        kaleido.stop_sync_server(silence_warnings=True)


def _write_images(figs, folder: Path) -> None:
    for key, fig in figs:
        for ext in ("png", "svg"):
            fig.write_image(str(folder / f"{_slug(key)}.{ext}"), scale=2 if ext == "png" else 1)


def _slug(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", key)


def _verdicts(bundle: dict) -> list[str]:
    out = []
    for dim, res in bundle["calibration"].items():
        out.append(res["verdict"]["text"])
        out += [f"{dim}: {name}: {c['verdict']['text']}" for name, c in res["configs"].items()
                if name != res["verdict"].get("best")]
        out.extend(res["verdict"].get("caveats", []))
    return out


def _write_md(bundle, tables, figs, out: Path) -> None:
    m = bundle["manifest"]
    lines = [f"# {m['study']}: agreement and evaluation report", "",
             f"Rubric **{m['rubric']['name']}**, version `{m['rubric']['version']}`. "
             f"{m['counts']['items']} items, {m['counts']['raters']} raters, "
             f"{m['counts']['ratings']} ratings, {m['counts']['judgments']} judgments. "
             f"Generated {m['generated_at']}.", ""]
    if m["counts"]["simulated_raters"]:
        lines += [f"> Ratings from {len(m['counts']['simulated_raters'])} **simulated** raters "
                  "are included (demo data).", ""]
    if bundle["calibration"]:
        lines += ["## Verdicts", ""] + [f"* {v}" for v in _verdicts(bundle)] + [""]
    for t in tables:
        lines += [f"## {t.title}", "", f"_{t.caption}_", "", _md_table(t),
                  f"CSV: `tables/{t.key}.csv`", ""]
    lines += ["## Figures", ""] + [f"![{k}](figures/{_slug(k)}.png)" for k, _ in figs] + [""]
    (out / "report.md").write_text("\n".join(lines), encoding="utf-8")


def _write_html(bundle, tables, figs, out: Path) -> None:
    from plotly.offline import get_plotlyjs

    m = bundle["manifest"]
    e = html.escape
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             f"<title>{e(str(m['study']))} report</title><style>{_CSS}</style>",
             f"<script>{get_plotlyjs()}</script></head><body>",
             f"<h1>{e(str(m['study']))}: agreement and evaluation report</h1>",
             f"<p>Rubric <b>{e(m['rubric']['name'])}</b>, version <code>"
             f"{e(m['rubric']['version'])}</code> · {m['counts']['items']} items · "
             f"{m['counts']['raters']} raters · {m['counts']['ratings']} ratings · "
             f"{m['counts']['judgments']} judgments · generated {e(m['generated_at'])}</p>"]
    if m["counts"]["simulated_raters"]:
        parts.append(f"<p class='caption'>Includes ratings from "
                     f"{len(m['counts']['simulated_raters'])} <b>simulated</b> raters "
                     "(demo data).</p>")
    if bundle["calibration"]:
        parts.append("<h2>Verdicts</h2>")
        parts += [f"<div class='verdict'>{e(v)}</div>" for v in _verdicts(bundle)]
    for t in tables:
        parts.append(f"<h2 id='{t.key}'>{e(t.title)}</h2><p class='caption'>{e(t.caption)}</p>")
        df = _display(t)
        parts.append(df.to_html(index=False, escape=True, border=0) if not df.empty
                     else "<p>No data.</p>")
    parts.append("<h2>Figures</h2>")
    for k, fig in figs:
        parts.append(f"<div class='fig' id='fig-{_slug(k)}'>"
                     + fig.to_html(full_html=False, include_plotlyjs=False,
                                   config={"displaylogo": False, "responsive": True})
                     + "</div>")
    parts.append("<h2>Reproducibility</h2><pre>"
                 + e(json.dumps(m, indent=2, ensure_ascii=False)) + "</pre></body></html>")
    (out / "report.html").write_text("".join(parts), encoding="utf-8")
