"""`h2h analyze`: agreement statistics from plain CSVs or from the study database."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from data.cli import check_bootstrap, check_seed
from data.errors import H2HError

from .refmetrics.cli import metrics_app

# The statistics (numpy, pandas, scipy) are imported inside the commands that use them, so
# that `h2h --help` and every other command start fast (issue 16).
if TYPE_CHECKING:
    from .scales import Scale

__all__ = ["analyze_cmd", "report_cmd", "register", "parse_scale"]

LEVELS = ("nominal", "ordinal", "interval", "ratio")

# Tables stay readable when piped to a file (rich would otherwise assume 80 columns); the
# judge tables need about 150.
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, highlight=False, soft_wrap=True, markup=False)


def parse_scale(spec: str, level: str) -> tuple[str, Scale]:
    """``dim=1..5``, ``dim=binary``, ``dim=0,0.5,1`` (values) or ``dim=unsafe,borderline,safe``
    (category labels, coded 1..k in that order) into a Scale; an optional level prefix,
    ``dim=nominal:yes,no``, overrides ``--level`` for that dimension."""
    from .scales import Scale

    dim, sep, rest = spec.partition("=")
    dim, rest = dim.strip(), rest.strip()
    if not sep or not dim or not rest:
        raise H2HError(f"--scale: '{spec}' should look like empathy=1..5, red_flag=binary or "
                       "safety=unsafe,borderline,safe")
    head, colon, tail = rest.partition(":")
    if colon and head.strip() in LEVELS:
        level, rest = head.strip(), tail.strip()
    if rest == "binary":
        return dim, Scale("nominal", (0.0, 1.0), binary=True)
    if m := re.fullmatch(r"(-?\d+)\.\.(-?\d+)", rest):
        lo, hi = int(m.group(1)), int(m.group(2))
        if hi <= lo:
            raise H2HError(f"--scale: range '{rest}' must go from low to high")
        return dim, Scale(level, tuple(float(v) for v in range(lo, hi + 1)))  # type: ignore
    tokens = [t.strip() for t in rest.split(",")]
    if any(not t for t in tokens) or len(tokens) < 2:
        raise H2HError(f"--scale: '{rest}' needs two or more values or labels separated by "
                       "commas, none empty")
    if len(set(tokens)) != len(tokens):
        raise H2HError(f"--scale: '{rest}' names a value twice")
    try:
        vals = tuple(sorted(float(t) for t in tokens))
    except ValueError:
        return dim, Scale.of_labels(level, tuple(tokens))  # type: ignore[arg-type]
    return dim, Scale(level, vals)  # type: ignore[arg-type]


def _undeclared_text(df, scales, declared: set[str], file: str) -> list:
    """A dimension whose scores are text has no order the data can tell: its order comes
    from --scale, or --level nominal says it has none. Otherwise the file is rejected, each
    such dimension named at its first text score (a ``three`` among numbers is a problem of
    ``score_problems`` already): the problems, for the caller to reject the file with."""
    from data.errors import Problem

    problems = []
    for dim, sc in scales.items():
        if not sc.labels or dim in declared:
            continue
        rows = df[(df["dimension"] == dim) & df["score"].notna()]
        first = rows.iloc[0]
        shown = ",".join(sc.labels[:6]) + (",..." if len(sc.labels) > 6 else "")
        problems.append(Problem(
            file, int(first["line"]), "score",
            f"'{first['score']}' is text, and dimension '{dim}' has no declared scale: give "
            f"its labels in order with --scale {dim}={shown} (an ordinal scale), or "
            "--level nominal to take text scores as unordered categories"))
    return problems


def _inferred_line(scales, declared: set[str]) -> str:
    """One sentence naming every scale taken from the data (none declared)."""
    from .scales import label_of

    parts, numeric = [], []
    for dim, sc in sorted(scales.items()):
        if dim in declared:
            continue
        if sc.labels:
            parts.append(f"{dim} {', '.join(sc.labels)} (unordered categories)")
            continue
        numeric.append(dim)
        lo, hi = sc.values[0], sc.values[-1]
        if sc.values == tuple(float(v) for v in range(int(lo), int(hi) + 1)):
            parts.append(f"{dim} {label_of(sc, lo)}..{label_of(sc, hi)}")
        else:
            parts.append(f"{dim} {', '.join(label_of(sc, v) for v in sc.values)}")
    if not parts:
        return ""
    advice = (" A level nobody used (1 on a 1..5 scale) changes weighted kappa and alpha: "
              f"declare each scale with --scale, e.g. --scale {numeric[0]}=1..5."
              if numeric else "")
    return ("Scales inferred from the data (no rubric, no --scale): " + "; ".join(parts)
            + "." + advice)


def analyze_cmd(
    ratings: Annotated[Path | None, typer.Option(help="Long CSV item_id,rater,dimension,score "
                                                      "(numbers or category labels). Without "
                                                      "it, the study database is read.")]
    = None,
    judges: Annotated[Path | None, typer.Option(help="Long CSV item_id,judge,dimension,score"
                                                     "[,sample]. From the study database, the "
                                                     "stored LLM judgments are always "
                                                     "included.")] = None,
    metrics: Annotated[Path | None, typer.Option("--metrics", help="Long CSV item_id,metric,"
                                                 "score[,model,scenario] of reference-based "
                                                 "metrics (continuous). From the study "
                                                 "database, the stored metrics (h2h metrics "
                                                 "run) are always included.")] = None,
    db: Annotated[str | None, typer.Option("--db", help="Study database (when no --ratings).")]
    = None,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="Bootstrap resamples B; 0 = "
                                           "point estimates only (no CIs, no verdicts).",
                                           callback=check_bootstrap)]
    = 1000,
    seed: Annotated[int, typer.Option(callback=check_seed, help="Seed of the bootstrap.")] = 0,
    alpha_min: Annotated[float, typer.Option("--alpha-min", help="Report q = P(alpha < this) "
                                             "over the resamples.")] = 0.667,
    ci_method: Annotated[str, typer.Option("--ci-method", help="unit (items) or hk (Hayes & "
                                           "Krippendorff).")] = "unit",
    alt_epsilon: Annotated[float, typer.Option("--alt-epsilon", help="Alternative annotator "
                                               "test margin epsilon.")] = 0.2,
    alt_scoring: Annotated[str | None, typer.Option("--alt-scoring", help="accuracy or "
                                                    "neg_rmse (default: by level).")] = None,
    margin: Annotated[float, typer.Option("--margin", help="Non-inferiority margin on QWK: a "
                                          "judge may be this much below the human ceiling "
                                          "and still replace a human.")] = 0.05,
    min_items: Annotated[int, typer.Option("--min-items", help="Fewest items rated by two or "
                                           "more raters for alpha, kappa, AC1 and ICC.")] = 5,
    min_shared_items: Annotated[int, typer.Option("--min-shared-items", help="Fewest items a "
                                                  "rater pair must share to count in Cohen's "
                                                  "kappa, and a human must share with others "
                                                  "to count in the human ceiling.")] = 10,
    level: Annotated[str | None, typer.Option(help="Measurement level for CSV dimensions "
                                              "without a rubric (default: ordinal). Text "
                                              "scores need their order from --scale, or "
                                              "--level nominal to be taken as unordered "
                                              "categories.", show_default=False)] = None,
    scale: Annotated[list[str] | None, typer.Option(help="Full scale of a CSV dimension: "
                                                    "empathy=1..5, flag=binary, x=0,0.5,1 or "
                                                    "safety=unsafe,borderline,safe (labels in "
                                                    "order); prefix a level as in "
                                                    "flag=nominal:yes,no (repeatable).")]
    = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full result as JSON.")]
    = False,
    out_file: Annotated[Path | None, typer.Option("--out", help="Write the JSON here.")] = None,
) -> None:
    """Agreement per dimension (humans), per judge (against the human ceiling) and verdicts.

    Example: h2h analyze --ratings ratings.csv --judges judges.csv --scale safety=1..5 --json
    """
    from data.errors import reject

    from .analyze import analyze
    from .cli_tables import print_tables
    from .io import JUDGES_REQUIRED, RATINGS_REQUIRED, read_long_csv, score_problems
    from .options import AnalysisOptions
    from .scales import infer_scales

    if ci_method not in ("unit", "hk"):
        raise H2HError(f"--ci-method: '{ci_method}' is not unit or hk")
    if alt_scoring not in (None, "accuracy", "neg_rmse"):
        raise H2HError(f"--alt-scoring: '{alt_scoring}' is not accuracy or neg_rmse")
    explicit_level = level is not None
    level = level or "ordinal"
    if level not in LEVELS:
        raise H2HError(f"--level: '{level}' is not nominal, ordinal, interval or ratio")
    if bootstrap < 0:
        raise H2HError("--bootstrap must be 0 (point estimates only) or more")
    if margin < 0:
        raise H2HError("--margin must be 0 or more")
    if min_items < 2 or min_shared_items < 2:
        raise H2HError("--min-items and --min-shared-items must be at least 2")
    if out_file is not None:  # before the statistics: a typo costs no wait
        from data.outfiles import check_out_file

        check_out_file(out_file, example="analysis.json")
    context: dict = {}
    stored_judges = None
    repeats = None
    mdf = items = mconf = None
    if ratings is not None:
        declared = dict(parse_scale(spec, level) for spec in scale or [])
        problems: list = []  # the file's rows and scores, rejected once with every problem
        df = read_long_csv(ratings, RATINGS_REQUIRED, ("comment",), problems)
        if df.empty:
            reject(problems)
        scales, notes = infer_scales(df, level)  # type: ignore[arg-type]
        scales.update(declared)
        notes = [n for n in notes if n.partition(":")[0] not in declared]
        if not explicit_level:
            problems += _undeclared_text(df, scales, set(declared), ratings.name)
        reject(problems + score_problems(df, scales, ratings.name))
        inferred = _inferred_line(scales, set(declared))
        if inferred:  # said where it is seen: above the tables, or on stderr beside --json
            (err if as_json else out).print(inferred)
            notes = [inferred, *notes]
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
        from .study import study_metrics, study_systems
        mdf, mconf = study_metrics(engine)  # reference-based metrics (h2h metrics run)
        items = study_systems(engine)
        if mdf.empty:
            mdf = mconf = None
    jdf = stored_judges if stored_judges is not None and not stored_judges.empty else None
    if judges is not None:
        from_csv = read_long_csv(judges, JUDGES_REQUIRED, ("sample",))
        context.setdefault("source", {})["judges"] = judges.name
        jdf = from_csv if jdf is None else _merge_judges(jdf, from_csv)
    if metrics is not None:
        mdf, mconf, items = _metrics_csv(metrics, mdf, mconf, items)
        context.setdefault("source", {})["metrics"] = metrics.name
    opts = AnalysisOptions(B=bootstrap, seed=seed, alpha_min=alpha_min,
                           ci_method=ci_method, alt_epsilon=alt_epsilon,  # type: ignore[arg-type]
                           alt_scoring=alt_scoring, margin=margin,  # type: ignore[arg-type]
                           min_units=min_items, min_shared_items=min_shared_items)
    try:
        res = analyze(df, scales, judges=jdf, options=opts, context=context, repeats=repeats,
                      metrics=mdf, items=items, metric_configs=mconf)
    except ValueError as exc:
        raise H2HError(str(exc)) from None
    text = res.to_json()
    if out_file is not None:
        from data.outfiles import write_out_text

        write_out_text(out_file, text + "\n")
    if as_json:
        sys.stdout.write(text + "\n")
    else:
        print_tables(res, out)


def _merge_judges(stored, from_csv):
    """Stored judgments plus a judges CSV; one judge name may come from only one of them."""
    import pandas as pd

    clash = sorted(set(stored["judge"].astype(str)) & set(from_csv["judge"].astype(str)))
    if clash:
        raise H2HError(f"--judges: judge '{clash[0]}' is both in the CSV and stored in the "
                       "study; rename it in the CSV")
    return pd.concat([stored, from_csv], ignore_index=True)


def _metrics_csv(path: Path, stored, configs, items):
    """A metrics CSV, with the study's stored metrics when there are any (a metric name may
    come from only one of them); its model and scenario columns, when given, place the items
    for the system level (scenario defaults to the item)."""
    import pandas as pd

    from data.errors import Problem, reject

    from .io import read_long_csv

    found: list[Problem] = []  # the rows' problems and the scores', rejected at once
    df = read_long_csv(path, ("item_id", "metric", "score"), ("model", "scenario"), found)

    def problem(v) -> str | None:  # NaN is a pair that could not be scored; inf is no score
        if isinstance(v, str):
            return f"'{v}' is not a number"
        return None if math.isnan(v) or math.isfinite(v) else f"'{v}' is not a finite number"

    reject(found + [Problem(path.name, int(df.loc[i, "line"]), "score", why)
                    for i, v in df["score"].items() if (why := problem(v))])
    df["score"] = df["score"].astype(float)
    if stored is not None:
        clash = sorted(set(stored["metric"].astype(str)) & set(df["metric"].astype(str)))
        if clash:
            raise H2HError(f"--metrics: metric '{clash[0]}' is both in the CSV and stored in "
                           "the study; rename it in the CSV")
    if "model" in df.columns and items is None:
        items = df[["item_id", "model"]].assign(
            scenario=df["scenario"] if "scenario" in df.columns else df["item_id"])
        items = items.drop_duplicates("item_id")
    new = df[["item_id", "metric", "score"]]
    configs = (configs or []) + [{"name": n, "source": path.name}
                                 for n in sorted(new["metric"].unique())]
    merged = new if stored is None else pd.concat([stored, new], ignore_index=True)
    return merged, configs, items


def report_cmd(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the report files.")],
    db: Annotated[str | None, typer.Option("--db", help="Study database.")] = None,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="Bootstrap resamples B.",
                                           callback=check_bootstrap)] = 1000,
    seed: Annotated[int, typer.Option(callback=check_seed, help="Seed of every bootstrap.")] = 0,
    alpha_min: Annotated[float, typer.Option("--alpha-min")] = 0.667,
    ci_method: Annotated[str, typer.Option("--ci-method", help="unit or hk.")] = "unit",
    alt_epsilon: Annotated[float, typer.Option("--alt-epsilon")] = 0.2,
    margin: Annotated[float, typer.Option("--margin", help="Non-inferiority margin on QWK "
                                          "for the verdicts.")] = 0.05,
    figures: Annotated[bool, typer.Option("--figures/--no-figures", help="Export every figure "
                                          "as PDF, SVG and PNG (needs Chromium).")] = True,
    adjusted: Annotated[bool, typer.Option("--severity-adjusted", help="Add the leaderboard "
                                           "column adjusted for rater severity (many-facet "
                                           "Rasch fair scores).")] = False,
) -> None:
    """Write the paper-ready report: report.html (self-contained, findings first), report.md,
    LaTeX (tables/*.tex, tables.tex, preamble.tex, figures.tex), a CSV per table, every figure
    as PDF, SVG and PNG, manifest.json and analysis.json.

    Its numbers are the ones `h2h analyze --json` gives with the same options.

    Example: h2h report --db pilot.db --out report/ --bootstrap 2000 --seed 1
    """
    import time

    from .report.export import FigureExporter

    if ci_method not in ("unit", "hk"):
        raise H2HError(f"--ci-method: '{ci_method}' is not unit or hk")
    if bootstrap < 0 or margin < 0:
        raise H2HError("--bootstrap and --margin must be 0 or more")
    from data.outfiles import check_out_folder

    check_out_folder(out_dir)
    t0 = time.perf_counter()
    # Chromium starts in the background while the rest is imported and the statistics run
    # (see analysis.report.export); analysis.report.export itself imports nothing heavy
    exporter = FigureExporter() if figures else None
    try:
        from data.engine import get_engine

        from .options import AnalysisOptions
        from .report import write_report
        from .report.bundle import start_bundle

        opts = AnalysisOptions(B=bootstrap, seed=seed, alpha_min=alpha_min, margin=margin,
                               ci_method=ci_method,  # type: ignore[arg-type]
                               alt_epsilon=alt_epsilon)
        # the calibration and the leaderboards are computed while the browser draws the
        # first sections' figures (write_report calls finish when they are needed)
        bundle, finish = start_bundle(get_engine(db), opts, adjusted=adjusted)
        t_bundle = time.perf_counter() - t0
        try:
            timing = write_report(bundle, out_dir, figures=figures, exporter=exporter,
                                  finish=finish)
            t_bundle += timing.pop("statistics_after_first_sections", 0.0)
        except Exception as exc:  # the browser, not the data: everything else is written
            if figures and (out_dir / "report.html").exists():
                raise H2HError(f"the report is in {out_dir}/ but its figures could not be "
                               f"exported ({type(exc).__name__}: {exc}); figures need "
                               "Chromium (Debian: apt-get install chromium), or run with "
                               "--no-figures") from None
            raise
    finally:
        if exporter is not None:
            exporter.close()
    total = time.perf_counter() - t0
    steps = ", ".join(f"{k} {v:.1f} s" for k, v in timing.items())
    out.print(f"Report written to {out_dir}/ in {total:.1f} s (statistics {t_bundle:.1f} s, "
              f"{steps})")
    for res in (bundle.calibration or {}).values():
        out.print(res.verdict.text)


def register(app: typer.Typer) -> None:
    from .arena_cli import arena_cmd
    from .ppi_cli import leaderboard_cmd

    app.command("analyze")(analyze_cmd)
    app.command("report")(report_cmd)
    app.command("arena")(arena_cmd)
    app.command("leaderboard")(leaderboard_cmd)
    app.add_typer(metrics_app, name="metrics")
