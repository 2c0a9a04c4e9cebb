"""`h2h calibrate auto`: a judge configuration improved from the study's own human ratings,
and a number about items it never saw.

The steps (each a function, so the command and the tests drive them alike):

1. :func:`prepare` - the study's frozen split (made once, by scenario, seeded:
   :func:`analysis.heldout.split_scenarios`, stored by :mod:`data.calibration`), the human
   ratings, and the candidates: the base configuration and its variants with k exemplars from
   the **train** part (:mod:`judge.exemplars`), reason-first on and off, and self-consistency
   with n samples (their median).
2. :func:`dev_plans` / :func:`test_plans` - what is left to judge: every candidate on the dev
   part; the base and the selected one on the test part. Judgments are ordinary stored
   judgments of ordinary configurations: a second run with the same seed asks nothing, and a
   killed run continues without paying twice.
3. :func:`dev_comparison` and :func:`choose` - the candidates on dev, paired, and the one with
   the highest mean QWK against the leave-one-out consensus (:mod:`analysis.heldout`).
4. :func:`conclude` - the selected configuration against the base on test, once; the
   configuration named and its provenance stored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy.engine import Engine
from sqlmodel import select

from analysis.heldout import (
    MIN_SCENARIOS,
    HeldOut,
    PartComparison,
    held_out,
    split_scenarios,
)
from analysis.heldout import (
    select as select_best,
)
from analysis.layout import Ratings, as_ratings
from analysis.options import AnalysisOptions
from analysis.study import study_frames
from data.calibration import (
    StoredSplit,
    rated_items,
    record_search,
    save_split,
    searches,
    stored_split,
)
from data.engine import read_session, write_session
from data.errors import H2HError
from data.models import Item, JudgeConfigRow, Judgment
from judge.config import JudgeSpec
from judge.exemplars import Exemplar, ExemplarSet, choose_covering, consensus
from judge.judging import Filters, JudgePlan, plan_judging

__all__ = ["SearchOptions", "Candidate", "Search", "prepare", "dev_plans", "test_plans",
           "dev_comparison", "choose", "conclude", "Outcome", "scores_of"]


@dataclass(frozen=True)
class SearchOptions:
    """The search: its seed (split, exemplars, bootstrap), the candidates' settings, the
    dimensions judged (all: empty), the bootstrap's B, and the result's name."""

    seed: int = 0
    shots: tuple[int, ...] = (0, 2, 4, 8)
    reason_first: tuple[bool, ...] = (False, True)
    samples: tuple[int, ...] = (1, 3)
    rules: tuple[str, ...] = ("cover",)
    sampling_temperature: float = 0.7
    dimensions: tuple[str, ...] = ()
    B: int = 1000
    name: str | None = None

    def __post_init__(self) -> None:
        if not self.shots or any(k < 0 for k in self.shots):
            raise H2HError(f"--shots: give numbers of exemplars of 0 or more, got "
                           f"{list(self.shots)}")
        if not self.samples or any(n < 1 for n in self.samples):
            raise H2HError(f"--samples: give sample counts of 1 or more, got "
                           f"{list(self.samples)}")
        if not self.reason_first:
            raise H2HError("--reason-first: give off, on or both")
        bad = [r for r in self.rules if r not in ("cover", "similar")]
        if bad or not self.rules:
            raise H2HError(f"--exemplars: '{','.join(bad or self.rules)}' is not cover, "
                           "similar or both")
        if not 0 < self.sampling_temperature <= 2:
            raise H2HError("--sampling-temperature must be above 0 and at most 2")

    def settings(self) -> dict[str, Any]:
        """What shapes the search (stored with it; a search with other settings is another)."""
        return {"shots": list(self.shots), "reason_first": list(self.reason_first),
                "samples": list(self.samples), "exemplars": list(self.rules),
                "sampling_temperature": self.sampling_temperature,
                "dimensions": list(self.dimensions), "B": self.B}


@dataclass(frozen=True)
class Candidate:
    """One configuration the search tries: ``k`` exemplars chosen by ``rule``, reason-first
    or not, and ``samples`` answers per item (their median)."""

    name: str
    spec: JudgeSpec
    k: int
    rule: str | None
    reason_first: bool
    samples: int

    @property
    def cost(self) -> float:
        """A rough relative price per item, for ties: samples × longer prompts × reasoning."""
        return self.samples * (1 + self.k / 4) * (1.5 if self.reason_first else 1.0)

    def settings(self) -> dict[str, Any]:
        return {"shots": self.k, "exemplars": self.rule, "reason_first": self.reason_first,
                "samples": self.samples, "temperature": self.spec.temperature}


@dataclass
class Search:
    """Everything a search works with (see :func:`prepare`)."""

    engine: Engine
    base: JudgeSpec
    options: SearchOptions
    split: StoredSplit
    parts: dict[str, list[str]]
    candidates: list[Candidate]
    humans: dict[str, Ratings]
    nominal: dict[str, bool]
    dims: tuple[str, ...]
    result_name: str
    notes: list[str] = field(default_factory=list)

    def candidate(self, name: str) -> Candidate:
        return next(c for c in self.candidates if c.name == name)

    @property
    def exemplar_ids(self) -> frozenset[str]:
        return frozenset(i for c in self.candidates if c.spec.exemplars
                         for i in c.spec.exemplars.item_ids)


# --- 1. the split, the humans, the candidates ------------------------------------------------

def _split(engine: Engine, seed: int, rated: Mapping[str, tuple[str, str]],
           notes: list[str], dry: bool) -> StoredSplit:
    split = stored_split(engine)
    if split is None:
        tasks = {sc: t for sc, t in rated.values()}
        if len(tasks) < MIN_SCENARIOS:
            raise H2HError(
                f"a held-out calibration needs at least {MIN_SCENARIOS} scenarios whose items "
                f"two or more humans rated; this study has {len(tasks)}. Have two or more "
                f"humans rate items of {MIN_SCENARIOS - len(tasks)} more scenarios, then run "
                "again.")
        parts = split_scenarios(tasks, seed)
        if dry:
            notes.append(f"The split of {len(parts)} scenarios (seed {seed}) would be made and "
                         "stored by the run (a dry run stores nothing).")
            return StoredSplit(seed, parts)
        split = save_split(engine, seed, parts)
        notes.append(f"New split of {len(split.parts)} scenarios (seed {seed}), stored in the "
                     "study: every later search, the Calibration page and the report use it.")
    elif split.seed != seed:
        raise H2HError(f"--seed {seed}: this study's split was made with seed {split.seed} "
                       "and is frozen, so that its test part stays unseen by any choice; run "
                       f"with --seed {split.seed}")
    late = split.unplaced(rated)
    if late:
        notes.append(f"{len(late)} scenarios were rated after the split was made and are in "
                     "no part (the test part stays as it was).")
    return split


def _humans(ratings: pd.DataFrame, dims: Sequence[str]) -> dict[str, Ratings]:
    out = {}
    for dim in dims:
        sub = ratings[ratings["dimension"] == dim].dropna(subset=["score"])
        if sub.empty or sub["rater"].nunique() < 2:
            continue
        out[dim] = as_ratings(sub.rename(columns={"item_id": "item"}))
    return out


def _exemplar_pool(engine: Engine, ratings: pd.DataFrame, train: Sequence[str],
                   nominal: Mapping[str, bool]) -> dict[str, Exemplar]:
    """Every train item with the humans' score on each dimension two or more of them
    rated, as an exemplar would show it."""
    sub = ratings[ratings["item_id"].isin(set(train))].dropna(subset=["score"])
    scores: dict[str, dict[str, tuple[float, int]]] = {}
    for (iid, dim), g in sub.groupby(["item_id", "dimension"]):
        if dim in nominal and len(g) >= 2:
            scores.setdefault(str(iid), {})[str(dim)] = (
                consensus(g["score"].astype(float).tolist(), nominal[dim]), len(g))
    with read_session(engine) as s:
        rows = s.exec(select(Item.id, Item.task, Item.context, Item.response)
                      .where(Item.id.in_(list(scores)))).all()
    return {i: Exemplar.of(i, t, c or {}, r, scores[i]) for i, t, c, r in rows}


def _exemplar_set(pool: Mapping[str, Exemplar], dims: Sequence[str], k: int, rule: str,
                  seed: int) -> ExemplarSet:
    by_dim = []
    for dim in dims:
        cands = [(e.item_id, e.task, e.score(dim)[0]) for e in pool.values() if e.score(dim)]
        chosen = choose_covering(cands, k, seed) if rule == "cover" else \
            tuple(sorted(c[0] for c in cands))
        by_dim.append((dim, chosen))
    used = {i for _, ids in by_dim for i in ids}
    return ExemplarSet(rule, k, tuple(pool[i] for i in sorted(used)),  # type: ignore[arg-type]
                       tuple(by_dim), seed)


def _stored_names(engine: Engine) -> dict[str, str]:
    with read_session(engine) as s:
        return dict(s.exec(select(JudgeConfigRow.hash, JudgeConfigRow.name)).all())


def _candidates(search: Search, pool: Mapping[str, Exemplar]) -> list[Candidate]:
    o, base = search.options, search.base
    names = _stored_names(search.engine)
    out = [Candidate("base", base, 0, None, base.reason_first, base.samples)]
    seen = {(base.hash, base.samples)}
    for k in o.shots:
        for rule in (o.rules if k else (None,)):
            ex = _exemplar_set(pool, search.dims, k, rule, o.seed) if k else None
            for rf in o.reason_first:
                for n in o.samples:
                    temp = base.temperature if n == 1 else (base.temperature or
                                                            o.sampling_temperature)
                    spec = replace(base, exemplars=ex, reason_first=rf, samples=n,
                                   temperature=temp, name=None)
                    if (spec.hash, n) in seen:
                        continue
                    seen.add((spec.hash, n))
                    label = f"k{k}" + ("-similar" if rule == "similar" else "") + \
                        ("-reason" if rf else "") + (f"-sc{n}" if n > 1 else "")
                    spec = replace(spec, name=base.name if spec.hash == base.hash else
                                   names.get(spec.hash, f"{search.result_name}~{label}"))
                    out.append(Candidate(label, spec, k, rule, rf, n))
    return out


def prepare(engine: Engine, base: JudgeSpec, options: SearchOptions, *,
            dry: bool = False) -> Search:
    """The split (made now, or the stored one; ``dry``: made but not stored), the humans'
    ratings and the candidates."""
    from data.study import rubric_by_version

    if base.pairwise:
        raise H2HError(f"--base: '{base.display_name}' is a pairwise judge; the search "
                       "improves a judge that scores single replies")
    if base.exemplars is not None:
        raise H2HError(f"--base: '{base.display_name}' already shows exemplars; start from "
                       "the configuration it was made from")
    notes: list[str] = []
    rated = rated_items(engine)
    split = _split(engine, options.seed, rated, notes, dry)
    parts = split.items(rated)
    rubric = rubric_by_version(engine, base.rubric_version)
    keys = [d.key for d in rubric.dimensions]
    unknown = [d for d in options.dimensions if d not in keys]
    if unknown:
        raise H2HError(f"--dimensions: '{unknown[0]}' is not a dimension of the rubric "
                       f"({', '.join(keys)})")
    ratings, scales, _ = study_frames(engine)
    dims = tuple(d for d in keys if not options.dimensions or d in options.dimensions)
    humans = _humans(ratings, dims)
    nominal = {d: scales[d].level == "nominal" for d in dims if d in scales}
    name = options.name or f"{base.display_name}-auto"
    search = Search(engine, base, options, split, parts, [], humans, nominal,
                    tuple(d for d in dims if d in humans), name, notes)
    pool = _exemplar_pool(engine, ratings, parts["train"], nominal)
    search.candidates = _candidates(search, pool)
    leaked = search.exemplar_ids - set(parts["train"])
    if leaked:  # the rule of the whole design: never a dev or test item as an exemplar
        raise H2HError(f"internal error: exemplars outside the train part: {sorted(leaked)}")
    _check_name(search)
    return search


def _check_name(search: Search) -> None:
    hashes = {c.spec.hash for c in search.candidates}
    names = _stored_names(search.engine)
    owner = next((h for h, n in names.items() if n == search.result_name), None)
    if search.result_name == search.base.display_name:
        raise H2HError(f"--name: '{search.result_name}' is the base configuration's name; the "
                       "improved configuration needs a name of its own")
    if owner is not None and owner not in hashes:
        raise H2HError(f"--name: '{search.result_name}' already names another configuration "
                       f"({owner[:8]}); choose another --name")


# --- 2. what is left to judge -----------------------------------------------------------------

def _filters(search: Search, part: str) -> Filters:
    return Filters(items=tuple(search.parts[part]), dimensions=search.dims)


def dev_plans(search: Search) -> list[tuple[Candidate, JudgePlan]]:
    """Each candidate (each configuration once) on the dev part."""
    done: set[str] = set()
    out = []
    for c in sorted(search.candidates, key=lambda c: -c.samples):  # the most samples first
        if c.spec.hash in done:
            continue
        done.add(c.spec.hash)
        out.append((c, plan_judging(search.engine, c.spec, _filters(search, "dev"))))
    return out


def test_plans(search: Search, selected: str | None) -> list[tuple[Candidate, JudgePlan]]:
    """The base and the selected candidate on the test part (``selected`` None: every
    candidate, for the worst-case estimate before the selection is known)."""
    chosen = [search.candidate("base")] + [
        c for c in search.candidates if c.name != "base" and (selected is None or
                                                              c.name == selected)]
    return [(c, plan_judging(search.engine, c.spec, _filters(search, "test")))
            for c in chosen]


# --- 3. scores, the dev comparison and the choice ---------------------------------------------

def scores_of(engine: Engine, spec: JudgeSpec, items: Sequence[str], samples: int,
              humans: Mapping[str, Ratings], nominal: Mapping[str, bool]
              ) -> dict[str, np.ndarray]:
    """A configuration's score per item on each dimension, aligned to the humans' items:
    its samples 0 … ``samples``-1 aggregated (median; mode on a scale of categories), NaN
    where it has none (not judged, unscored, or not among ``items``)."""
    wanted = set(items)
    with read_session(engine) as s:
        rows = s.exec(select(Judgment.item_id, Judgment.dimension, Judgment.score)
                      .where(Judgment.config_hash == spec.hash, Judgment.sample < samples,
                             Judgment.score.is_not(None))).all()
    got: dict[tuple[str, str], list[float]] = {}
    for iid, dim, score in rows:
        if iid in wanted:
            got.setdefault((iid, dim), []).append(float(score))
    out = {}
    for dim, h in humans.items():
        out[dim] = np.array([consensus(got[(i, dim)], nominal.get(dim, False))
                             if (i, dim) in got else np.nan for i in h.items], float)
    return out


def _analysis_options(search: Search) -> AnalysisOptions:
    return AnalysisOptions(B=search.options.B, seed=search.options.seed)


def dev_comparison(search: Search) -> PartComparison:
    """Every candidate on the dev part, paired."""
    runs = {c.name: scores_of(search.engine, c.spec, search.parts["dev"], c.samples,
                              search.humans, search.nominal) for c in search.candidates}
    return PartComparison(search.humans, runs, _analysis_options(search))


def choose(search: Search, cmp: PartComparison) -> str:
    """The candidate with the highest mean QWK on dev (ties: the cheaper one); the base
    when nothing can be compared."""
    return select_best(cmp, {c.name: c.cost for c in search.candidates}) or "base"


# --- 4. the test, once; the configuration ------------------------------------------------------

@dataclass(frozen=True)
class Outcome:
    """What the search found: the selected candidate and configuration, the held-out result,
    and the search's stored id."""

    selected: str
    config: str
    config_hash: str
    test: HeldOut
    search_id: int
    earlier_looks: int
    candidates: list[dict[str, Any]]


def _candidate_rows(search: Search, cmp: PartComparison, selected: str
                    ) -> list[dict[str, Any]]:
    rows = []
    for c in search.candidates:
        scores = cmp.scores(c.name)
        rows.append({"name": c.name, "config": c.spec.display_name, "hash": c.spec.hash,
                     "settings": c.settings(),
                     "dev": {**scores.to_dict(),
                             "vs_base": cmp.difference(c.name, "base").to_dict(),
                             "vs_selected": cmp.difference(c.name, selected).to_dict()}})
    return rows


def _name_selected(search: Search, cand: Candidate) -> JudgeSpec:
    """The selected candidate's configuration under the search's result name (the base keeps
    its own name when nothing beat it)."""
    if cand.name == "base":
        return search.base
    with write_session(search.engine) as s:
        row = s.get(JudgeConfigRow, cand.spec.hash)
        taken = s.exec(select(JudgeConfigRow).where(
            JudgeConfigRow.name == search.result_name)).first()
        if taken is not None and taken.hash != cand.spec.hash:
            raise H2HError(f"the search selected {cand.name}, but --name "
                           f"'{search.result_name}' already names {taken.hash[:8]}, chosen "
                           "by an earlier search; run again with --name NEW (nothing is asked "
                           "again)")
        if row is not None and row.name != search.result_name:
            row.name = search.result_name
            s.add(row)
    return replace(cand.spec, name=search.result_name)


def _earlier_looks(search: Search, selected_hash: str) -> int:
    """Other selections already held against this split's test part."""
    return len({r.config_hash for r in searches(search.engine)
                if r.seed == search.split.seed and r.config_hash != selected_hash})


def conclude(search: Search, cmp: PartComparison, selected: str) -> Outcome:
    """The selected candidate against the base on the test part (their stored judgments),
    its configuration named, and the search stored with its provenance."""
    cand = search.candidate(selected)
    spec = _name_selected(search, cand)
    search.candidates = [replace(c, spec=spec) if c.name == selected else c
                         for c in search.candidates]
    base = search.candidate("base")
    test = held_out(search.humans,
                    scores_of(search.engine, base.spec, search.parts["test"], base.samples,
                              search.humans, search.nominal),
                    scores_of(search.engine, cand.spec, search.parts["test"], cand.samples,
                              search.humans, search.nominal), _analysis_options(search))
    rows = _candidate_rows(search, cmp, selected)
    looks = _earlier_looks(search, spec.hash)
    settings = {**search.options.settings(), "split_seed": search.split.seed,
                "selected_samples": cand.samples,
                "exemplar_items": sorted(cand.spec.exemplars.item_ids) if cand.spec.exemplars
                else []}
    sid = record_search(search.engine, config_hash=spec.hash, base_hash=search.base.hash,
                        seed=search.options.seed, settings=settings, candidates=rows,
                        selected=selected, test=test.to_dict())
    return Outcome(selected, spec.display_name, spec.hash, test, sid, looks, rows)
