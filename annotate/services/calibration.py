"""Calibration from the study database: the human-rated items, the stored judge
configurations' judgments on them, and the comparison (analysis.calibration)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd
from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import select

from analysis.calibration import DimensionCalibration, JudgeRun, calibrate, compare_dimension
from analysis.contamination import exemplar_note, held_against
from analysis.judge_agreement import aggregate_samples
from analysis.layout import as_ratings
from analysis.options import AnalysisOptions
from analysis.refmetrics.results import MetricComparison
from analysis.report.bundle import study_items
from analysis.serialize import Interval
from analysis.study import study_frames, study_judges, study_metrics
from annotate.services.admin import item_of
from annotate.services.i18n import N_
from data.engine import read_session
from data.errors import H2HError
from data.models import PAIRWISE_MODES, JudgeConfigRow, Judgment
from messages import Msg

__all__ = ["calibration_items", "compare_configs", "CalibrationInputs", "calibration_inputs",
           "compare_inputs", "compare_metrics", "split_names",
           "verdict_rows", "VERDICT_COLUMNS", "Disagreement",
           "largest_disagreements",
           "config_names", "template_of", "write_template", "start_prompt_version",
           "judgments_stored", "item_of", "pairwise_summary", "pairwise_rows",
           "PAIRWISE_COLUMNS", "HeldOutView", "held_out_view", "HELD_OUT_COLUMNS"]


def config_names(engine: Engine, *, candidates: bool = True) -> list[str]:
    """The single-item judge configurations (pairwise ones: :func:`pairwise_summary`); the
    ones that were only candidates of an `h2h calibrate auto` search too unless
    ``candidates`` is false."""
    from data.calibration import search_candidates

    skip = set() if candidates else search_candidates(engine)
    with read_session(engine) as s:
        rows = s.exec(select(JudgeConfigRow.name, JudgeConfigRow.hash)
                      .where(JudgeConfigRow.mode.notin_(PAIRWISE_MODES))
                      .order_by(JudgeConfigRow.name)).all()
    return [n for n, h in rows if h not in skip]


PAIRWISE_COLUMNS = {"dimension": (N_("Dimension"), "text"), "pairs": (N_("Pairs"), "count"),
                    "judge_kappa": (N_("κ judge–human"), "coef"),
                    "judge_ci": (N_("95% CI, judge–human"), "text"),
                    "human_kappa": (N_("κ human–human"), "coef"),
                    "human_ci": (N_("95% CI, human–human"), "text"),
                    "tau": (N_("Kendall τ-b of the rankings"), "coef"),
                    "tau_ci": (N_("95% CI, τ-b"), "text"), "note": (N_("Note"), "text")}


def pairwise_summary(engine: Engine, *, B: int = 500, seed: int = 0,
                     inconsistent: str = "tie"):
    """The side-by-side rankings of the humans and every pairwise judge, with the judges'
    position bias and agreement with the humans (None: no pairwise judge has answers)."""
    from analysis.arena_study import pairwise_configs, pairwise_study

    if not pairwise_configs(engine):
        return None
    return pairwise_study(engine, B=B, seed=seed, inconsistent=inconsistent)  # type: ignore


def _ci_text(lo: float | None, hi: float | None) -> str:
    return "" if lo is None or hi is None else f"[{lo:.3f}, {hi:.3f}]"


def pairwise_rows(judge, labels: dict[str, str] | None = None) -> list[dict]:
    """A pairwise judge against the humans per dimension: κ on a/b/tie beside the humans'
    own κ on the same pairs, and τ-b between the rankings, each with its CI."""
    labels = labels or {}
    taus = {t.dimension: t for t in judge.taus}
    rows = []
    for k in judge.kappas:
        t = taus.get(k.dimension)
        why = [x for x in (k.reason, t.reason if t else None) if x]
        rows.append({"dimension": labels.get(k.dimension, k.dimension), "pairs": k.n_pairs,
                     "judge_kappa": k.judge_kappa, "judge_ci": _ci_text(k.judge_low,
                                                                       k.judge_high),
                     "human_kappa": k.human_kappa, "human_ci": _ci_text(k.human_low,
                                                                       k.human_high),
                     "tau": t.tau if t else None,
                     "tau_ci": _ci_text(t.low, t.high) if t else "",
                     "note": why[0] if why else ""})
    return rows


def calibration_items(engine: Engine, sample: int | None = None, seed: int = 0) -> list[str]:
    """Items rated by at least two humans (on any dimension); a seeded sample if asked."""
    ratings, _, _ = study_frames(engine)
    per_item = ratings.dropna(subset=["score"]).groupby("item_id")["rater"].nunique()
    items = sorted(per_item[per_item >= 2].index)
    if not items:
        raise H2HError(Msg("no item has ratings from two or more humans yet: calibration needs "
                           "human ratings to compare with"))
    if sample is not None:
        if sample < 1:
            raise H2HError(Msg("--sample must be at least 1, got {sample}", sample=sample))
        items = sorted(random.Random(seed).sample(items, min(sample, len(items))))
    return items


@dataclass(frozen=True, eq=False)
class CalibrationInputs:
    """What the calibration is computed from: the ratings (long) and scales, every stored
    judgment (without each judge's own exemplar items), how many exemplar items were left out
    per (judge, dimension), and each item's reply length."""
    ratings: pd.DataFrame
    scales: dict
    judges: pd.DataFrame
    exemplars: dict[tuple[str, str], int]
    lengths: pd.Series


def calibration_inputs(engine: Engine) -> CalibrationInputs:
    """The study's ratings and stored judgments as :func:`compare_inputs` reads them."""
    ratings, scales, _ = study_frames(engine)
    judges, exemplars = held_against(study_judges(engine, candidates=True))
    lengths = study_items(engine).set_index("item_id")["length"]
    return CalibrationInputs(ratings, scales, judges, exemplars, lengths)


def compare_configs(engine: Engine, configs: list[str], *, items: list[str] | None = None,
                    options: AnalysisOptions = AnalysisOptions()
                    ) -> dict[str, DimensionCalibration]:
    """Per dimension, every named configuration against the humans and each other."""
    return compare_inputs(calibration_inputs(engine), configs, items=items, options=options)


def compare_inputs(inputs: CalibrationInputs, configs: list[str], *,
                   items: list[str] | None = None,
                   options: AnalysisOptions = AnalysisOptions()
                   ) -> dict[str, DimensionCalibration]:
    """:func:`compare_configs` on inputs read already (the costly part: the bootstraps)."""
    ratings, scales, judges = inputs.ratings, inputs.scales, inputs.judges
    exemplars, lengths = inputs.exemplars, inputs.lengths
    known = set(judges["judge"].unique())
    missing = [c for c in configs if c not in known]
    if missing:
        raise H2HError(Msg("no judgments stored for {names}; run them first (`h2h judge run "
                           "--config NAME` or `h2h calibrate --run`)", names=", ".join(missing)))
    if len(configs) < 1:
        raise H2HError(Msg("name at least one configuration with --configs"))
    if items is not None:
        ratings = ratings[ratings["item_id"].isin(items)]
        judges = judges[judges["item_id"].isin(items)]
    judges = judges[judges["judge"].isin(configs)]
    per_dim: dict[str, DimensionCalibration] = {}
    for dim, sc in scales.items():
        sub = ratings[ratings["dimension"] == dim].dropna(subset=["score"])
        if sub.empty or sub["rater"].nunique() < 2:
            continue
        humans = as_ratings(sub.rename(columns={"item_id": "item"}))
        runs = {}
        for name in configs:
            js = judges[(judges["judge"] == name) & (judges["dimension"] == dim)]
            js = js.rename(columns={"item_id": "item"})
            # a configuration with nothing scored here is listed as such, not skipped
            per_item, samples = aggregate_samples(js, sc.level, humans.items)
            runs[name] = JudgeRun(per_item, samples, int(js["score"].isna().sum()), len(js))
        if not (judges["dimension"] == dim).any():
            continue
        res = compare_dimension(
            dim, humans, runs, sc.level, sc.values,
            lengths=lengths.reindex(list(humans.items)).to_numpy(float), binary=sc.binary,
            options=options)
        left = [Msg("{name}: {note}", name=n, note=exemplar_note(exemplars[(n, dim)]))
                for n in configs if exemplars.get((n, dim))]
        per_dim[dim] = replace(res, notes=(*left, *res.notes)) if left else res
    return calibrate(per_dim)


def split_names(engine: Engine, names: list[str]) -> tuple[list[str], list[str]]:
    """Names given to `h2h calibrate --configs` as (judge configurations, metric
    configurations); an unknown or ambiguous name is an error naming what exists."""
    from data.metrics import list_metric_configs

    judges = set(config_names(engine))
    metrics = {r["row"].name for r in list_metric_configs(engine)}
    both = [n for n in names if n in judges and n in metrics]
    if both:
        raise H2HError(Msg("--configs: '{name}' names both a judge configuration and a metric "
                           "configuration; rename one", name=both[0]))
    unknown = [n for n in names if n not in judges and n not in metrics]
    if unknown:
        raise H2HError(Msg("--configs: no judge or metric configuration '{name}' (judges: "
                           "{judges}; metrics: {metrics})", name=unknown[0],
                           judges=", ".join(sorted(judges)) or Msg("none"),
                           metrics=", ".join(sorted(metrics))
                           or Msg("none, see h2h metrics run")))
    return [n for n in names if n in judges], [n for n in names if n in metrics]


def compare_metrics(engine: Engine, metrics: list[str], judges: list[str] = (), *,
                    items: list[str] | None = None,
                    options: AnalysisOptions = AnalysisOptions()) -> MetricComparison:
    """The named reference-based metrics beside the named judge configurations and the human
    ceiling, per dimension: correlations with the leave-one-out consensus and model rankings
    (kappa-type statistics do not apply to continuous metric scores)."""
    from analysis.refmetrics.compare import metric_comparison
    from analysis.scales import encode_scores
    from analysis.study import study_systems

    ratings, scales, _ = study_frames(engine)
    mdf, configs = study_metrics(engine)
    jdf = held_against(study_judges(engine, candidates=True))[0]
    mdf = mdf[mdf["metric"].isin(metrics)]
    jdf = jdf[jdf["judge"].isin(list(judges))]
    if items is not None:
        ratings = ratings[ratings["item_id"].isin(items)]
        mdf = mdf[mdf["item_id"].isin(items)]
        jdf = jdf[jdf["item_id"].isin(items)]
    ratings, _ = encode_scores(ratings, scales)
    jdf, _ = encode_scores(jdf, scales)
    res = metric_comparison(ratings, scales, mdf, judges=jdf, items=study_systems(engine),
                            options=options)
    return replace(res, configurations=tuple(c for c in configs if c["name"] in metrics)
                   ).settled()


# column -> (header, kind) for annotate.components.tables.show_table
VERDICT_COLUMNS = {
    "dimension": (N_("Dimension"), "text"), "configuration": (N_("Configuration"), "text"),
    "items": (N_("Items compared"), "count"), "QWK": ("QWK", "coef"),
    "QWK low": (N_("CI low"), "coef"), "QWK high": (N_("CI high"), "coef"),
    "ceiling QWK": (N_("Human ceiling QWK"), "coef"),
    "ceiling low": (N_("CI low"), "coef"), "ceiling high": (N_("CI high"), "coef"),
    "α with judge": (N_("α with the judge"), "coef"), "MAE": (N_("MAE (points)"), "points"),
    "bias": (N_("Bias (points)"), "points"),
    # the verdict: on all the items the configuration scored (its own, as in h2h analyze)
    "verdict items": (N_("Items of the verdict"), "count"),
    "judge − ceiling": (N_("Judge − ceiling"), "coef"), "diff low": (N_("CI low"), "coef"),
    "diff high": (N_("CI high"), "coef"),
    "alt-test": (N_("Alternative annotator test passed"), "bool"),
    "verdict": (N_("Verdict"), "text"),
    "unscored": (N_("Unscored"), "text")}


def verdict_rows(res: dict[str, DimensionCalibration], labels: dict[str, str] | None = None
                 ) -> list[dict]:
    """One row per dimension and configuration for the Calibration page: n, QWK with CI, the
    human ceiling with CI on the same items, the paired difference with CI, the verdict;
    ``labels`` gives the rubric's label of each dimension key."""
    labels = labels or {}
    rows = []
    for dim, r in res.items():
        hc = r.human_ceiling.qwk
        for name, x in r.configs.items():
            d = x.vs_ceiling.diff if x.vs_ceiling is not None else Interval(None)
            rows.append({"dimension": labels.get(dim, dim), "configuration": name,
                         "items": x.n_items, "QWK": x.qwk.value, "QWK low": x.qwk.low,
                         "QWK high": x.qwk.high, "ceiling QWK": hc.value,
                         "ceiling low": hc.low, "ceiling high": hc.high,
                         "judge − ceiling": d.value, "diff low": d.low, "diff high": d.high,
                         "verdict": x.verdict.phrase, "verdict items": x.verdict_n_items,
                         "α with judge": x.alpha_with_judge.value, "MAE": x.mae.value,
                         "bias": x.bias,
                         "alt-test": x.alt_test.passed if x.alt_test is not None else None,
                         "unscored": Msg("{n} of {total}", n=x.n_unscored,
                                         total=x.n_judgments)})
    return rows


@dataclass(frozen=True)
class Disagreement:
    item_id: str
    dimension: str
    judge_score: float | None
    human_scores: dict[str, float | None]
    gap: float
    reasoning: str
    raw_reply: str


def largest_disagreements(engine: Engine, config: str, dimension: str, n: int = 20
                          ) -> list[Disagreement]:
    """Items where the configuration's score is furthest from the human mean (admins only)."""
    ratings, _, _ = study_frames(engine)
    r = ratings[(ratings["dimension"] == dimension)].dropna(subset=["score"])
    hm = r.groupby("item_id")["score"].mean()
    with read_session(engine) as s:
        row = s.exec(select(JudgeConfigRow).where(JudgeConfigRow.name == config)).first()
        if row is None:
            raise H2HError(Msg("no judge configuration '{config}'", config=config))
        js = s.exec(select(Judgment).where(Judgment.config_hash == row.hash,
                                           Judgment.dimension == dimension,
                                           Judgment.sample == 0)).all()
    rows = []
    for j in js:
        if j.item_id not in hm.index or j.score is None:
            continue
        rows.append((abs(j.score - hm[j.item_id]), j))
    rows.sort(key=lambda t: -t[0])
    out = []
    for gap, j in rows[:n]:
        hs = r[r["item_id"] == j.item_id]
        out.append(Disagreement(j.item_id, dimension, j.score,
                                dict(zip(hs["rater"], hs["score"], strict=True)), float(gap),
                                j.reasoning, j.raw_reply))
    return out


def template_of(engine: Engine, config: str) -> tuple[JudgeConfigRow, dict]:
    with read_session(engine) as s:
        row = s.exec(select(JudgeConfigRow).where(JudgeConfigRow.name == config)).first()
    if row is None:
        raise H2HError(Msg("no judge configuration '{config}'", config=config))
    return row, dict(row.template)


def _toml_text(key: str, text: str) -> str:
    if "'''" in text:
        raise H2HError(Msg("the {key} text may not contain three single quotes in a row",
                           key=key))
    return f"{key} = '''\n{text.strip()}\n'''\n"


def write_template(folder: Path, name: str, description: str, system: str, user: str,
                   user_all: str) -> Path:
    """Save a prompt version as a template file (TOML literal strings: nothing is escaped)."""
    import re

    from judge.prompts import load_judge_template

    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "judge"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{slug}.toml"
    body = (f"name = {json.dumps(name)}\ndescription = {json.dumps(description)}\n\n"
            + _toml_text("system", system) + _toml_text("user", user)
            + (_toml_text("user_all", user_all) if user_all.strip() else ""))
    path.write_text(body, encoding="utf-8")
    load_judge_template(path)  # validated like any user template (placeholders, fields)
    return path


def start_prompt_version(engine: Engine, base: JudgeConfigRow, name: str, template: Path,
                         items: list[str], log: Path, base_url: str | None = None
                         ) -> subprocess.Popen:
    """Run the new prompt version on the calibration items in the background (`h2h judge
    run`), with the base configuration's provider, model and parameters."""
    if base.provider not in ("anthropic", "openai", "local"):
        raise H2HError(Msg("'{name}' is a {provider} configuration and cannot be run; start from "
                           "a configuration of a real provider", name=base.name,
                           provider=base.provider))
    url = engine.url.render_as_string(hide_password=False)
    cmd = [sys.executable, "-m", "annotate.cli", "judge", "run", "--db", url,
           "--provider", base.provider, "--model", base.model, "--template", str(template),
           "--name", name, "--mode", base.mode, "--max-tokens", str(base.max_tokens),
           "--samples", str(base.samples), "--items", ",".join(items), "--quiet"]
    if base.reason_first:
        cmd.append("--reason-first")
    if base.temperature is not None:
        cmd += ["--temperature", str(base.temperature)]
    if not base.structured:
        cmd.append("--no-structured")
    if base_url and base.provider != "local":
        cmd += ["--base-url", base_url]
    if base.provider == "local" and base.model_file:
        cmd += ["--model-file", base.model_file]
    if base.rubric_language:  # the new prompt shows the rubric as the base configuration did
        cmd += ["--rubric-language", base.rubric_language]
    fh = open(log, "w", encoding="utf-8")  # noqa: SIM115 (the child process owns it)
    return subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)


def judgments_stored(engine: Engine, config: str) -> int:
    with read_session(engine) as s:
        row = s.exec(select(JudgeConfigRow).where(JudgeConfigRow.name == config)).first()
        if row is None:
            return 0
        return s.exec(select(func.count()).select_from(Judgment)
                      .where(Judgment.config_hash == row.hash)).one()


# --- held-out calibration (h2h calibrate auto) -------------------------------------------------

HELD_OUT_COLUMNS = {"configuration": (N_("Configuration"), "text"),
                    "base": (N_("Made from"), "text"), "selected": (N_("Candidate"), "text"),
                    "items": (N_("Test items"), "count"),
                    "base_qwk": (N_("Base: mean QWK [95% CI]"), "text"),
                    "selected_qwk": (N_("Selected: mean QWK [95% CI]"), "text"),
                    "delta": (N_("Difference [95% CI]"), "text"),
                    "exemplars": (N_("Exemplar items"), "count")}


@dataclass(frozen=True)
class HeldOutView:
    """The study's frozen split (seed and items per part) and every auto-calibrated
    configuration with its held-out result and exemplar items."""

    seed: int
    parts: dict[str, int]
    rows: list[dict]
    exemplars: dict[str, list[str]]


def _ci(d: dict | None, key: str = "qwk", signed: bool = False) -> str:
    d = d or {}
    v = d.get(key)
    if v is None:
        return "—"
    f = (lambda x: f"{x:+.3f}") if signed else (lambda x: f"{x:.3f}")
    return f(v) + ("" if d.get("low") is None else f" [{f(d['low'])}, {f(d['high'])}]")


def held_out_view(engine: Engine) -> HeldOutView | None:
    """What the Calibration page shows of `h2h calibrate auto` (None: no split yet)."""
    from data.calibration import rated_items, searches, stored_split

    split = stored_split(engine)
    if split is None:
        return None
    parts = {p: len(v) for p, v in split.items(rated_items(engine)).items()}
    with read_session(engine) as s:
        names = dict(s.exec(select(JudgeConfigRow.hash, JudgeConfigRow.name)).all())
    latest = {r.config_hash: r for r in searches(engine)}
    rows, exemplars = [], {}
    for r in sorted(latest.values(), key=lambda r: r.id or 0):
        name = names.get(r.config_hash, r.config_hash[:8])
        ids = list(r.settings.get("exemplar_items") or [])
        exemplars[name] = ids
        rows.append({"configuration": name, "base": names.get(r.base_hash, r.base_hash[:8]),
                     "selected": r.selected, "items": r.test.get("n_items"),
                     "base_qwk": _ci(r.test.get("base")),
                     "selected_qwk": _ci(r.test.get("selected")),
                     "delta": _ci(r.test.get("delta"), "diff", signed=True),
                     "exemplars": len(ids)})
    return HeldOutView(split.seed, parts, rows, exemplars)
