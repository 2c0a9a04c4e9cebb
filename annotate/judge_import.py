"""Judge scores from elsewhere (Inspect, a vLLM batch job, another lab's pipeline), stored as
named judge configurations (`h2h judge import judges.csv`).

The file is the judges CSV that `h2h analyze --judges` reads: ``item_id, judge, dimension,
score[, sample]``; an empty score is a judgment without a score (stored unscored, with the
reason). Each judge name becomes a configuration with provider ``imported`` whose hash is
made from the name alone, so re-importing the same file finds the same configuration and
changes nothing; a changed score is refused unless ``update``. Calibration, the leaderboard
and the report then treat it like a judge run here (it cannot be run again: no prompt or model
is known).

It lives in ``annotate`` because it reads the file and checks the scores with the analysis'
readers (``judge`` imports only ``data``). Validation is strict and whole-file: every problem
is named by file, line and field, and a file with any problem writes nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from sqlalchemy.engine import Engine
from sqlmodel import select

from data.engine import write_session
from data.errors import FormatError, Problem, reject
from data.models import Item, JudgeConfigRow, Judgment
from data.rubric import Rubric
from data.study import current_rubric
from judge.config import IMPORTED
from judge.prompts import text_hash

__all__ = ["ImportedJudge", "imported_hash", "import_judges_csv"]

_REASON = "imported without a score"
_REPLY = "(imported: scored outside h2htalk; no model was called here)"


@dataclass(frozen=True)
class ImportedJudge:
    """What one judge of the file did to the study: its configuration and the counts."""

    name: str
    config_hash: str
    added: int
    unchanged: int
    replaced: int
    unscored: int


def imported_hash(name: str) -> str:
    """The configuration hash of an imported judge: from its name alone (16 hex digits)."""
    return text_hash({"provider": IMPORTED, "name": name})


def _rows(path: Path, problems: list[Problem]) -> pd.DataFrame:
    """The file's good rows; its short rows, stray quotes, empty keys and repeated rows go
    to ``problems`` (rejected with the field problems at once)."""
    from analysis.io import JUDGES_REQUIRED, read_long_csv

    return read_long_csv(path, JUDGES_REQUIRED, ("sample",), problems)


def _validate(df: pd.DataFrame, file: str, rubric: Rubric, tasks: dict[str, str],
              taken: dict[str, str]) -> list[Problem]:
    """Every problem of the file, located (line numbers are the file's own)."""
    from analysis.analyze import scales_from_rubric
    from analysis.scales import encode_scores

    problems: list[Problem] = []
    dims = {d.key: d for d in rubric.dimensions}
    for _, r in df.iterrows():
        line = int(r["line"])
        if r["item_id"] not in tasks:
            problems.append(Problem(file, line, "item_id", f"no item '{r['item_id']}' in the "
                                                           "study"))
        elif r["dimension"] not in dims:
            problems.append(Problem(file, line, "dimension", f"'{r['dimension']}' is not a "
                                    f"dimension of the rubric ({', '.join(dims)})"))
        elif not dims[r["dimension"]].applies_to(tasks[r["item_id"]]):
            problems.append(Problem(file, line, "dimension", f"'{r['dimension']}' is not rated "
                                    f"on {tasks[r['item_id']]} items"))
        if r["judge"] in taken:
            problems.append(Problem(file, line, "judge", f"'{r['judge']}' already names a "
                                    f"judge configuration run here ({taken[r['judge']]}); "
                                    "rename the judge in the file"))
        if "sample" in df.columns:
            s = str(r["sample"]).strip()
            if s and not (s.isdigit() and int(s) < 1000):
                problems.append(Problem(file, line, "sample", f"'{s}' is not a sample number "
                                                              "(0, 1, 2, …)"))
    known = df[df["dimension"].isin(dims) & df["item_id"].isin(tasks)]
    if not known.empty:
        _, off = encode_scores(known, scales_from_rubric(rubric.dimensions))
        for o in off:
            problems.append(Problem(file, int(known.loc[o.index, "line"]), "score",
                                    f"{o.problem} for {o.dimension} (leave it empty for a "
                                    "judgment without a score)"))
    return sorted(problems, key=lambda p: (p.line or 0, p.field or ""))


def import_judges_csv(engine: Engine, path: str | Path, *, update: bool = False
                      ) -> list[ImportedJudge]:
    """Validate the whole file, then store each judge as a configuration (all or nothing)."""
    from analysis.analyze import scales_from_rubric
    from analysis.scales import encode_scores

    path = Path(path)
    found: list[Problem] = []
    df = _rows(path, found)
    if df.empty:
        reject(found)
    rubric = current_rubric(engine)
    with write_session(engine) as s:
        tasks = dict(s.exec(select(Item.id, Item.task)).all())
        hashes = dict(s.exec(select(Item.id, Item.content_hash)).all())
        taken = {name: f"{prov} {model}" for name, prov, model in s.exec(
            select(JudgeConfigRow.name, JudgeConfigRow.provider, JudgeConfigRow.model)).all()
            if prov != IMPORTED}
        reject(found + _validate(df, path.name, rubric, tasks, taken))  # all at once
        df["sample"] = (df["sample"].replace("", "0").astype(int) if "sample" in df.columns
                        else 0)
        enc, _ = encode_scores(df, scales_from_rubric(rubric.dimensions))
        results = []
        conflicts: list[Problem] = []
        plans = []
        for name, g in enc.groupby(enc["judge"].astype(str), sort=True):
            h = imported_hash(name)
            old = {(j.item_id, j.dimension, j.sample): j for j in s.exec(
                select(Judgment).where(Judgment.config_hash == h)).all()}
            for _, r in g.iterrows():
                score = None if _missing(r["score"]) else float(r["score"])
                prev = old.get((r["item_id"], r["dimension"], int(r["sample"])))
                if prev is not None and prev.score != score and not update:
                    conflicts.append(Problem(path.name, int(r["line"]), "score", (
                        f"judge '{name}' already has {_fmt(prev.score)} for item "
                        f"'{r['item_id']}' on {r['dimension']} (sample {int(r['sample'])}); "
                        "re-import with --update to replace it")))
            plans.append((name, h, g, old))
        if conflicts:
            raise FormatError(conflicts)
        for name, h, g, old in plans:
            row = s.get(JudgeConfigRow, h)
            samples = int(g["sample"].max()) + 1
            if row is None:
                row = JudgeConfigRow(
                    hash=h, name=name, provider=IMPORTED, model=name,
                    template_name=f"imported from {path.name}", template_hash=h,
                    template={"imported_from": path.name}, rubric_version=rubric.version,
                    mode="per-dimension", reason_first=False, structured=False,
                    temperature=None, max_tokens=0, samples=samples)
                s.add(row)
                s.flush()
            elif samples > row.samples:
                row.samples = samples
                s.add(row)
            added = unchanged = replaced = unscored = 0
            for _, r in g.iterrows():
                score = None if _missing(r["score"]) else float(r["score"])
                unscored += score is None
                key = (r["item_id"], r["dimension"], int(r["sample"]))
                prev = old.get(key)
                if prev is not None and prev.score == score:
                    unchanged += 1
                    continue
                j = prev or Judgment(config_hash=h, item_id=key[0], dimension=key[1],
                                     sample=key[2], item_hash=hashes[key[0]], outcome="scored")
                j.score = score
                j.item_hash = hashes[key[0]]
                j.outcome = "scored" if score is not None else "invalid_reply"
                j.unscored_reason = None if score is not None else _REASON
                j.raw_reply = _REPLY
                s.add(j)
                if prev is None:
                    added += 1
                else:
                    replaced += 1
            results.append(ImportedJudge(name, h, added, unchanged, replaced, unscored))
    return results


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _fmt(v) -> str:
    return "no score" if v is None else f"score {v:g}"

