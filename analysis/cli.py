"""`h2h analyze`: agreement statistics from plain CSVs or from the study database."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from data.errors import H2HError

# The statistics (numpy, pandas, scipy) are imported inside the commands that use them, so
# that `h2h --help` and every other command start fast (issue 16).
if TYPE_CHECKING:
    from .analyze import Scale

__all__ = ["analyze_cmd", "report_cmd", "register", "parse_scale"]

# Tables stay readable when piped to a file (rich would otherwise assume 80 columns).
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 120)


def parse_scale(spec: str, level: str) -> tuple[str, Scale]:
    """``dim=1..5``, ``dim=binary`` or ``dim=a,b,c`` (values) into a Scale."""
    from .analyze import Scale

    dim, sep, rest = spec.partition("=")
    if not sep or not dim.strip():
        raise H2HError(f"--scale: '{spec}' should look like empathy=1..5 or red_flag=binary")
    rest = rest.strip()
    if rest == "binary":
        return dim.strip(), Scale("nominal", (0.0, 1.0), binary=True)
    if m := re.fullmatch(r"(-?\d+)\.\.(-?\d+)", rest):
        lo, hi = int(m.group(1)), int(m.group(2))
        if hi <= lo:
            raise H2HError(f"--scale: range '{rest}' must go from low to high")
        return dim.strip(), Scale(level, tuple(float(v) for v in range(lo, hi + 1)))
    try:
        vals = tuple(sorted(float(v) for v in rest.split(",")))
    except ValueError:
        raise H2HError(f"--scale: '{rest}' is not a range, 'binary' or a list of numbers") \
            from None
    return dim.strip(), Scale(level, vals)


def analyze_cmd(
    ratings: Annotated[Path | None, typer.Option(help="Long CSV item_id,rater,dimension,score. "
                                                      "Without it, the study database is read.")]
    = None,
    judges: Annotated[Path | None, typer.Option(help="Long CSV item_id,judge,dimension,score"
                                                     "[,sample]. From the study database, the "
                                                     "stored LLM judgments are always "
                                                     "included.")] = None,
    db: Annotated[str | None, typer.Option("--db", help="Study database (when no --ratings).")]
    = None,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="Bootstrap resamples B.")] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    alpha_min: Annotated[float, typer.Option("--alpha-min", help="Report q = P(alpha < this) "
                                             "over the resamples.")] = 0.667,
    ci_method: Annotated[str, typer.Option("--ci-method", help="unit (items) or hk (Hayes & "
                                           "Krippendorff).")] = "unit",
    alt_epsilon: Annotated[float, typer.Option("--alt-epsilon", help="Alternative annotator "
                                               "test margin epsilon.")] = 0.2,
    alt_scoring: Annotated[str | None, typer.Option("--alt-scoring", help="accuracy or "
                                                    "neg_rmse (default: by level).")] = None,
    level: Annotated[str, typer.Option(help="Measurement level for CSV dimensions without a "
                                       "rubric.")] = "ordinal",
    scale: Annotated[list[str] | None, typer.Option(help="Full scale of a CSV dimension, e.g. "
                                                    "empathy=1..5 (repeatable).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full result as JSON.")]
    = False,
    out_file: Annotated[Path | None, typer.Option("--out", help="Write the JSON here.")] = None,
) -> None:
    """Agreement per dimension (humans), per judge (against humans) and the human ceiling.

    Example: h2h analyze --ratings ratings.csv --judges judges.csv --bootstrap 1000 --seed 1 --json
    """
    from .analyze import AnalysisOptions, analyze, infer_scales
    from .io import JUDGES_REQUIRED, RATINGS_REQUIRED, read_long_csv

    if ci_method not in ("unit", "hk"):
        raise H2HError(f"--ci-method: '{ci_method}' is not unit or hk")
    if alt_scoring not in (None, "accuracy", "neg_rmse"):
        raise H2HError(f"--alt-scoring: '{alt_scoring}' is not accuracy or neg_rmse")
    if level not in ("nominal", "ordinal", "interval", "ratio"):
        raise H2HError(f"--level: '{level}' is not nominal, ordinal, interval or ratio")
    if bootstrap < 1:
        raise H2HError("--bootstrap must be at least 1")
    context: dict = {}
    stored_judges = None
    repeats = None
    if ratings is not None:
        df = read_long_csv(ratings, RATINGS_REQUIRED, ("comment",))
        scales, notes = infer_scales(df, level)  # type: ignore[arg-type]
        for spec in scale or []:
            dim, sc = parse_scale(spec, level)
            scales[dim] = sc
            notes = [n for n in notes if not n.startswith(f"{dim}:")]
        context = {"source": {"ratings": ratings.name}, "scale_notes": notes}
    else:
        from data.engine import get_engine

        from .study import study_frames, study_judges, study_repeats
        engine = get_engine(db)
        df, scales, context = study_frames(engine)
        if df.empty:
            raise H2HError("the study has no ratings yet")
        stored_judges = study_judges(engine)  # the study's own LLM judges join in by name
        repeats = study_repeats(engine)  # hidden repeats give each dimension a retest block
    jdf = stored_judges if stored_judges is not None and not stored_judges.empty else None
    if judges is not None:
        from_csv = read_long_csv(judges, JUDGES_REQUIRED, ("sample",))
        context.setdefault("source", {})["judges"] = judges.name
        jdf = from_csv if jdf is None else _merge_judges(jdf, from_csv)
    opts = AnalysisOptions(B=bootstrap, seed=seed, alpha_min=alpha_min,
                           ci_method=ci_method, alt_epsilon=alt_epsilon,  # type: ignore[arg-type]
                           alt_scoring=alt_scoring)  # type: ignore[arg-type]
    try:
        res = analyze(df, scales, judges=jdf, options=opts, context=context, repeats=repeats)
    except ValueError as exc:
        raise H2HError(str(exc)) from None
    text = json.dumps(res, indent=2, ensure_ascii=False, allow_nan=False)
    if out_file is not None:
        out_file.write_text(text + "\n", encoding="utf-8")
    if as_json:
        sys.stdout.write(text + "\n")
    elif out_file is None or not as_json:
        print_tables(res)


def _merge_judges(stored, from_csv):
    """Stored judgments plus a judges CSV; one judge name may come from only one of them."""
    import pandas as pd

    clash = sorted(set(stored["judge"].astype(str)) & set(from_csv["judge"].astype(str)))
    if clash:
        raise H2HError(f"--judges: judge '{clash[0]}' is both in the CSV and stored in the "
                       "study; rename it in the CSV")
    return pd.concat([stored, from_csv], ignore_index=True)


def _f(x, nd: int = 3) -> str:
    return "—" if x is None else f"{x:.{nd}f}"


def _ci(lo, hi) -> str:
    return "" if lo is None and hi is None else f"[{_f(lo)}, {_f(hi)}]"


def print_tables(res: dict) -> None:
    """Readable tables: one per dimension, then the judges beside the human ceiling."""
    from .bands import koo_li_band, krippendorff_band, landis_koch_band

    boot = res["meta"]["bootstrap"]
    for dim, d in res["dimensions"].items():
        if "alpha" not in d:
            continue
        lv = d["level"]
        ci = d["alpha_ci"]
        t = Table(title=f"{dim}: {d['n_items']} items, {d['n_raters']} raters, "
                        f"{d['n_ratings']} ratings", title_justify="left")
        for col in ("coefficient", "value", f"{boot['level']:.0%} CI", "reading"):
            t.add_column(col)
        a = d["alpha"][lv]
        t.add_row(f"Krippendorff α ({lv})", _f(a), _ci(ci["low"], ci["high"]),
                  krippendorff_band(a))
        t.add_row(f"  P(α < {ci['alpha_min']:g}) over resamples", _f(ci["q_below_min"]), "", "")
        for other in ("nominal", "ordinal", "interval", "ratio"):
            if other != lv and d["alpha"].get(other) is not None:
                t.add_row(f"Krippendorff α ({other})", _f(d["alpha"][other]), "", "")
        t.add_row("Fleiss κ", _f(d["fleiss_kappa"]), "", landis_koch_band(d["fleiss_kappa"]))
        for kind in ("unweighted", "linear", "quadratic"):
            k = d["cohen_kappa"][kind]
            t.add_row(f"Cohen κ {kind} (pair mean)", _f(k), "", landis_koch_band(k))
        for form, v in d["icc"].items():
            if v is not None:
                label = f"ICC({form[3]},{'k' if form.endswith('k') else 1})"
                t.add_row(label,
                          _f(v["value"]), _ci(v["low"], v["high"]), koo_li_band(v["value"]))
        t.add_row("Gwet AC1", _f(d["gwet"]["ac1"]), "", landis_koch_band(d["gwet"]["ac1"]))
        t.add_row("Gwet AC2 linear / quadratic",
                  f"{_f(d['gwet']['ac2_linear'])} / {_f(d['gwet']['ac2_quadratic'])}", "", "")
        t.add_row("Brennan–Prediger", _f(d["brennan_prediger"]), "", "")
        t.add_row("Exact / within one", f"{_f(d['percent_exact'])} / "
                                        f"{_f(d['percent_within1'])}", "", "")
        out.print(t)
        for n in d.get("notes", []):
            out.print(f"  [dim]note: {n}[/dim]")
        out.print()
    out.print(f"[dim]CIs for α: {boot['method']} bootstrap, percentile, B={boot['B']}, "
              f"seed={boot['seed']}; ICC CIs are F-based.[/dim]")
    if not res["judges"]:
        return
    j = Table(title="Judges against humans [human ceiling]", title_justify="left")
    for col in ("judge / dimension", "QWK", "MAE", "α +judge", "alt-test"):
        j.add_column(col)
    for name, dims in res["judges"].items():
        for dim, m in dims.items():
            if "qwk" not in m:
                continue
            c = res["human_ceiling"].get(dim, {})
            alt = m.get("alt_test") or {}
            verdict = {True: "pass", False: "fail"}.get(alt.get("passed"), "n/a")
            j.add_row(f"{name} / {dim}", f"{_f(m['qwk'])} [{_f(c.get('qwk'))}]",
                      f"{_f(m['mae'])} [{_f(c.get('mae'))}]",
                      f"{_f(m['alpha_with_judge'])} ({_f(m['alpha_humans'])})",
                      f"{verdict} ω={_f(alt.get('winning_rate'), 2)} "
                      f"ρ={_f(alt.get('advantage_prob'), 2)}")
    out.print(j)


def report_cmd(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the report files.")],
    db: Annotated[str | None, typer.Option("--db", help="Study database.")] = None,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="Bootstrap resamples B.")] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of every bootstrap.")] = 0,
    alpha_min: Annotated[float, typer.Option("--alpha-min")] = 0.667,
    ci_method: Annotated[str, typer.Option("--ci-method", help="unit or hk.")] = "unit",
    alt_epsilon: Annotated[float, typer.Option("--alt-epsilon")] = 0.2,
    figures: Annotated[bool, typer.Option("--figures/--no-figures", help="Export every figure "
                                          "as PNG and SVG (needs Chromium).")] = True,
    adjusted: Annotated[bool, typer.Option("--severity-adjusted", help="Add the leaderboard "
                                           "column adjusted for rater severity (many-facet "
                                           "Rasch fair scores).")] = False,
) -> None:
    """Write the paper-ready report: report.html (self-contained), report.md, tables.tex,
    a CSV per table, every figure as PNG and SVG, manifest.json and analysis.json.

    Its numbers are the ones `h2h analyze --json` gives with the same options.

    Example: h2h report --db pilot.db --out report/ --bootstrap 2000 --seed 1
    """
    import time

    from data.engine import get_engine

    from .analyze import AnalysisOptions
    from .report import build_bundle, write_report

    if ci_method not in ("unit", "hk"):
        raise H2HError(f"--ci-method: '{ci_method}' is not unit or hk")
    if out_dir.exists() and not out_dir.is_dir():
        raise H2HError(f"--out: {out_dir} exists and is not a folder")
    t0 = time.perf_counter()
    opts = AnalysisOptions(B=bootstrap, seed=seed, alpha_min=alpha_min,
                           ci_method=ci_method, alt_epsilon=alt_epsilon)  # type: ignore[arg-type]
    bundle = build_bundle(get_engine(db), opts, adjusted=adjusted)
    t_bundle = time.perf_counter() - t0
    timing = write_report(bundle, out_dir, figures=figures)
    total = time.perf_counter() - t0
    steps = ", ".join(f"{k} {v:.1f} s" for k, v in timing.items())
    out.print(f"Report written to {out_dir}/ in {total:.1f} s (statistics {t_bundle:.1f} s, "
              f"{steps})")
    for res in bundle["calibration"].values():
        out.print(res["verdict"]["text"])


def register(app: typer.Typer) -> None:
    app.command("analyze")(analyze_cmd)
    app.command("report")(report_cmd)
