"""Rater quality in the study database: settings, gold scores, training ratings, the
qualification state, and attention checks with their results.

Nothing here writes to ``rating``: training, attention and norming scores are kept apart so the
main analysis never sees them. The numbers behind a qualification decision (within-one share,
QWK) are computed by the caller (``annotate/services/training.py``) and stored here.

Gold CSV: ``item_id, dimension, score, rationale`` — one expert score per item and dimension.
Attention-check CSV: ``item_id, kind, dimension, score[, tolerance]`` — ``kind`` is
``instructed`` or ``known_answer``; one row per checked dimension.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from messages import Msg, message_of

from ._files import decode, read_csv, read_text
from .engine import read_session, write_session
from .errors import H2HError, Problem, reject
from .models import (
    QUALIFICATION_STATUSES,
    AttentionCheck,
    AttentionResult,
    GoldScore,
    Item,
    Qualification,
    QualitySettings,
    Rater,
    TrainingRating,
    utcnow,
)
from .rating_service import (
    NO_SESSION,
    retrying,  # a concurrent first save: run once more, update
)
from .sessions import check_in
from .study import current_rubric_in

__all__ = ["get_settings", "save_settings", "GoldRecord", "parse_gold", "read_gold",
           "parse_gold_bytes", "import_gold", "set_gold", "gold_scores", "gold_item_ids",
           "training_set", "save_training", "training_scores", "qualification_of",
           "record_qualification", "result_pending", "acknowledge_result", "release",
           "retrain", "qualified_rater_ids", "awaiting_decision",
           "qualification_required", "AttentionRecord", "parse_attention",
           "read_attention", "import_attention", "add_instructed_checks", "attention_checks",
           "save_attention", "attention_item_ids", "attention_summary_rows",
           "INSTRUCTION", "SETTINGS_FIELDS"]

GOLD_COLUMNS = ("item_id", "dimension", "score", "rationale")
ATTENTION_COLUMNS = ("item_id", "kind", "dimension", "score", "tolerance")
ATTENTION_KINDS = ("instructed", "known_answer")
INSTRUCTION = "[Note for raters: for this reply, please choose {score} on every dimension.]"
SETTINGS_FIELDS = ("training_count", "training_order", "min_within1", "min_qwk",
                   "attention_rate", "min_seconds", "drift_window", "drift_threshold")


# --- settings -------------------------------------------------------------------------------

def _settings_in(s: Session) -> QualitySettings:
    row = s.exec(select(QualitySettings)).first()
    return row if row is not None else QualitySettings()


def get_settings(engine: Engine) -> QualitySettings:
    """The study's settings (the documented defaults until an admin saves some)."""
    with read_session(engine) as s:
        return _settings_in(s)


def save_settings(engine: Engine, **changes: float | int | str) -> QualitySettings:
    """Change some settings; every value is checked before anything is stored."""
    bad = set(changes) - set(SETTINGS_FIELDS)
    if bad:
        raise H2HError(Msg("unknown setting(s): {names} (known: {known})",
                           names=", ".join(sorted(bad)), known=", ".join(SETTINGS_FIELDS)))
    checks = {"training_count": lambda v: int(v) >= 1,
              "training_order": lambda v: v in ("fixed", "random"),
              "min_within1": lambda v: 0 <= float(v) <= 1,
              "min_qwk": lambda v: -1 <= float(v) <= 1,
              "attention_rate": lambda v: 0 <= float(v) <= 0.5,
              "min_seconds": lambda v: float(v) >= 0,
              "drift_window": lambda v: int(v) >= 2,
              "drift_threshold": lambda v: float(v) > 0}
    hints = {"training_count": Msg("an integer ≥ 1"), "training_order": Msg("fixed or random"),
             "min_within1": Msg("a share between 0 and 1"), "min_qwk": Msg("between -1 and 1"),
             "attention_rate": Msg("a share between 0 and 0.5"),
             "min_seconds": Msg("seconds ≥ 0"), "drift_window": Msg("an integer ≥ 2"),
             "drift_threshold": Msg("points > 0")}
    for k, v in changes.items():
        try:
            ok = checks[k](v)
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise H2HError(Msg("{setting}: '{value}' is not {wanted}", setting=k, value=v,
                               wanted=hints[k]))
    with write_session(engine) as s:
        row = _settings_in(s)
        for k, v in changes.items():
            cur = getattr(row, k)
            setattr(row, k, type(cur)(v) if not isinstance(cur, str) else str(v))
        row.updated_at = utcnow()
        s.add(row)
    return row


# --- gold scores ----------------------------------------------------------------------------

@dataclass(frozen=True)
class GoldRecord:
    line: int
    item_id: str
    dimension: str
    score: int
    rationale: str


def _rows(text: str, file: str, required: tuple[str, ...], allowed: tuple[str, ...]
          ) -> tuple[list[tuple[int, dict[str, str]]], list[Problem]]:
    """The file's rows (cells stripped) and its structural problems, read by
    :func:`data._files.read_csv`: a short row or a stray quote is one problem on its line and
    the rows after it are still read, so the caller adds every field problem to the same list.
    A header without a required column stops here (its rows cannot be read)."""
    header, rows, problems = read_csv(text, file)
    problems += [Problem(file, 1, h, Msg("unknown column (allowed: {columns})",
                                         columns=", ".join(allowed)))
                 for h in header if h not in allowed]
    missing = [Problem(file, 1, h, Msg("required column is missing (header must have "
                                       "{columns})", columns=", ".join(required)))
               for h in required if h not in header]
    if missing:
        reject(problems + missing)
    out = [(n, {k: v.strip() for k, v in row.items()}) for n, row in rows]
    if not out and not problems:
        problems.append(Problem(file, None, None, Msg("the file has a header but no rows")))
    return out, problems


def _check_item_dim(file: str, n: int, vals: dict[str, str], rubric, tasks: dict[str, str],
                    problems: list[Problem]):
    """The dimension of a row whose item and dimension are valid, else None (problem noted)."""
    for col in ("item_id", "dimension"):
        if not vals.get(col):
            problems.append(Problem(file, n, col, Msg("must not be empty")))
            return None
    if vals["item_id"] not in tasks:
        problems.append(Problem(file, n, "item_id", Msg("unknown item '{item_id}' (import the "
                                                        "items first)", item_id=vals['item_id'])))
        return None
    try:
        dim = rubric.dimension(vals["dimension"])
    except KeyError as exc:
        problems.append(Problem(file, n, "dimension", exc.args[0]))
        return None
    if not dim.applies_to(tasks[vals["item_id"]]):
        problems.append(Problem(file, n, "dimension", Msg(
            "'{key}' does not apply to task '{task}' of item '{item_id}'", key=dim.key,
            task=tasks[vals["item_id"]], item_id=vals["item_id"])))
        return None
    return dim


def _score(file: str, n: int, dim, raw: str, problems: list[Problem]) -> int | None:
    try:
        score = dim.parse_score(raw)
    except ValueError as exc:
        problems.append(Problem(file, n, "score", message_of(exc)))
        return None
    if score is None:
        problems.append(Problem(file, n, "score", Msg(
            "a gold or expected score is needed here ({scale})", scale=dim.describe_scale())))
    return score


def parse_gold(text: str, file: str, rubric, tasks: dict[str, str]) -> list[GoldRecord]:
    """Validate a gold CSV whole; any bad row rejects the file with every problem listed."""
    rows, problems = _rows(text, file, GOLD_COLUMNS[:3], GOLD_COLUMNS)
    out, seen = [], {}
    for n, vals in rows:
        dim = _check_item_dim(file, n, vals, rubric, tasks, problems)
        if dim is None:
            continue
        score = _score(file, n, dim, vals.get("score", ""), problems)
        if score is None:
            continue
        key = (vals["item_id"], dim.key)
        if key in seen:
            problems.append(Problem(file, n, None, Msg(
                "second gold score for item '{item_id}' on '{dimension}' (first on line "
                "{line})", item_id=key[0], dimension=key[1], line=seen[key])))
            continue
        seen[key] = n
        out.append(GoldRecord(n, key[0], key[1], score, vals.get("rationale", "")))
    reject(problems)  # every problem of the file at once
    return out


def _tasks(s: Session) -> dict[str, str]:
    return dict(s.exec(select(Item.id, Item.task)).all())


def read_gold(engine: Engine, path: str | Path) -> list[GoldRecord]:
    name, text = read_text(path, what=Msg("gold"))
    with read_session(engine) as s:
        return parse_gold(text, name, current_rubric_in(s), _tasks(s))


def parse_gold_bytes(engine: Engine, data: bytes, name: str) -> list[GoldRecord]:
    with read_session(engine) as s:
        return parse_gold(decode(data, name, what=Msg("gold")), name, current_rubric_in(s),
                          _tasks(s))


def import_gold(engine: Engine, records: list[GoldRecord], admin_id: int | None = None) -> int:
    """Store (or replace) gold scores in one transaction; returns how many rows changed."""
    changed = 0
    with write_session(engine) as s:
        for r in records:
            changed += _put_gold(s, r.item_id, r.dimension, r.score, r.rationale, "import",
                                 admin_id)
    return changed


def _put_gold(s: Session, item_id: str, dimension: str, score: int, rationale: str,
              source: str, admin_id: int | None) -> int:
    row = s.exec(select(GoldScore).where(GoldScore.item_id == item_id,
                                         GoldScore.dimension == dimension)).first()
    now = utcnow()
    if row is not None and (row.score, row.rationale) == (float(score), rationale):
        return 0
    if row is None:
        row = GoldScore(item_id=item_id, dimension=dimension, created_at=now, score=score)
    row.score, row.rationale, row.source = float(score), rationale, source
    row.admin_id, row.updated_at = admin_id, now
    s.add(row)
    return 1


def set_gold(engine: Engine, item_id: str, dimension: str, score: int | None, rationale: str,
             admin_id: int | None = None, source: str = "adjudication") -> None:
    """One gold score (e.g. an adjudicated score promoted on the Adjudication page)."""
    with write_session(engine) as s:
        rubric = current_rubric_in(s)
        item = s.get(Item, item_id)
        if item is None:
            raise H2HError(Msg("no item '{item_id}'", item_id=item_id))
        dim = rubric.dimension(dimension)
        if score is None:
            raise H2HError(Msg("a gold score needs a score, not 'cannot rate'"))
        _put_gold(s, item_id, dim.key, dim.parse_score(score), rationale.strip(), source,
                  admin_id)


def gold_scores(engine: Engine) -> list[GoldScore]:
    with read_session(engine) as s:
        return list(s.exec(select(GoldScore).order_by(GoldScore.id)).all())


def gold_item_ids(engine: Engine) -> list[str]:
    """Gold items in the order they were first marked (the "fixed" training order)."""
    with read_session(engine) as s:
        rows = s.exec(select(GoldScore.item_id, GoldScore.id).order_by(GoldScore.id)).all()
    out: list[str] = []
    for item_id, _ in rows:
        if item_id not in out:
            out.append(item_id)
    return out


# --- training and qualification -------------------------------------------------------------

def qualification_required(engine: Engine) -> bool:
    """Training comes first whenever the study has gold items."""
    with read_session(engine) as s:
        return s.exec(select(GoldScore.id).limit(1)).first() is not None


def qualification_of(engine: Engine, rater_id: int) -> Qualification:
    """The rater's state (round 1, "training" before they start)."""
    with read_session(engine) as s:
        row = s.exec(select(Qualification).where(Qualification.rater_id == rater_id)).first()
    return row if row is not None else Qualification(rater_id=rater_id)


def training_set(engine: Engine, rater_id: int, round_: int) -> list[str]:
    """The gold items this rater trains on in this round, in order.

    "fixed": the first ``training_count`` gold items as marked; "random": a sample of that
    size in random order, seeded by rater and round (the same on every reload).
    """
    st = get_settings(engine)
    gold = gold_item_ids(engine)
    if st.training_order == "random":
        seed = int(hashlib.sha256(f"{rater_id}:{round_}".encode()).hexdigest()[:12], 16)
        rng = random.Random(seed)
        return rng.sample(gold, min(st.training_count, len(gold)))
    return gold[:st.training_count]


def save_training(engine: Engine, rater_id: int, item_id: str, round_: int,
                  scores: dict[str, int | None], seconds: float | None = None,
                  session_token: str | None | object = NO_SESSION) -> None:
    """Store one training item's scores (replacing an earlier answer in the same round).
    From the browser, ``session_token`` is checked in the same transaction (see
    :func:`data.rating_service.save_item_ratings`)."""
    retrying(lambda: _save_training(engine, rater_id, item_id, round_, scores, seconds,
                                     session_token))


def _save_training(engine: Engine, rater_id: int, item_id: str, round_: int,
                   scores: dict[str, int | None], seconds: float | None,
                   session_token: str | None | object) -> None:
    with write_session(engine) as s:
        if session_token is not NO_SESSION:
            check_in(s, session_token, rater_id)
        rubric = current_rubric_in(s)
        item = s.get(Item, item_id)
        if item is None:
            raise H2HError(Msg("no item '{item_id}'", item_id=item_id))
        dims = rubric.dimensions_for(item.task)
        missing = [d.label for d in dims if d.key not in scores]
        if missing:
            raise H2HError("score every dimension or mark it 'cannot rate': "
                           + ", ".join(missing))
        old = {r.dimension: r for r in s.exec(select(TrainingRating).where(
            TrainingRating.rater_id == rater_id, TrainingRating.item_id == item_id,
            TrainingRating.round == round_)).all()}
        now = utcnow()
        for d in dims:
            v = scores[d.key]
            row = old.get(d.key) or TrainingRating(rater_id=rater_id, item_id=item_id,
                                                   dimension=d.key, round=round_,
                                                   created_at=now)
            row.score = None if v is None else float(d.parse_score(v))
            row.seconds_spent = seconds / len(dims) if seconds is not None else None
            s.add(row)


def training_scores(engine: Engine, rater_id: int | None = None,
                    round_: int | None = None) -> list[tuple[str, int, str, str, int,
                                                             float | None, float]]:
    """(rater, rater_id, item, dimension, round, rater's score, gold score) for training
    answers on items that (still) have a gold score on that dimension."""
    q = (select(Rater.name, TrainingRating.rater_id, TrainingRating.item_id,
                TrainingRating.dimension, TrainingRating.round, TrainingRating.score,
                GoldScore.score)
         .join(Rater, Rater.id == TrainingRating.rater_id)
         .join(GoldScore, (GoldScore.item_id == TrainingRating.item_id)
               & (GoldScore.dimension == TrainingRating.dimension)))
    if rater_id is not None:
        q = q.where(TrainingRating.rater_id == rater_id)
    if round_ is not None:
        q = q.where(TrainingRating.round == round_)
    with read_session(engine) as s:
        return [tuple(r) for r in s.exec(q).all()]


def _qual_row(s: Session, rater_id: int) -> Qualification:
    row = s.exec(select(Qualification).where(Qualification.rater_id == rater_id)).first()
    return row if row is not None else Qualification(rater_id=rater_id)


def record_qualification(engine: Engine, rater_id: int, round_: int, passed: bool,
                         n_pairs: int, within1: float | None, qwk: float | None) -> None:
    """The outcome of a finished training round."""
    with write_session(engine) as s:
        row = _qual_row(s, rater_id)
        if row.round != round_ or row.status != "training":
            return  # an admin moved the rater on meanwhile; their decision stands
        row.status = "passed" if passed else "failed"
        row.n_pairs, row.within1, row.qwk, row.updated_at = n_pairs, within1, qwk, utcnow()
        row.acknowledged_at = None  # the rater is shown the outcome until they acknowledge it
        s.add(row)


def result_pending(engine: Engine, rater_id: int) -> bool:
    """The rater passed or was released and has not yet seen that and pressed "Start
    rating" (the result screen comes before the study's items until they do)."""
    row = qualification_of(engine, rater_id)
    return row.status in ("passed", "released") and row.acknowledged_at is None


def acknowledge_result(engine: Engine, rater_id: int,
                       session_token: str | None | object = NO_SESSION) -> None:
    """The rater saw their passed or released result and starts rating. From the browser,
    ``session_token`` is checked like every save (:class:`~data.sessions.SessionEnded`)."""
    with write_session(engine) as s:
        if session_token is not NO_SESSION:
            check_in(s, session_token, rater_id)
        row = s.exec(select(Qualification).where(Qualification.rater_id == rater_id)).first()
        if row is not None and row.status in ("passed", "released") \
                and row.acknowledged_at is None:
            row.acknowledged_at = utcnow()
            s.add(row)


def _decide(engine: Engine, rater_name: str, admin_id: int | None, note: str, *,
            status: str, next_round: bool) -> Qualification:
    if status not in QUALIFICATION_STATUSES:
        raise ValueError(status)
    with write_session(engine) as s:
        rater = s.exec(select(Rater).where(Rater.name == rater_name)).first()
        if rater is None:
            raise H2HError(Msg("no rater named '{name}'", name=rater_name))
        row = _qual_row(s, rater.id)
        if next_round and (row.status != "training" or row.id is not None):
            row.round += 1
        row.status, row.note, row.decided_by = status, note.strip(), admin_id
        row.updated_at = utcnow()
        # released after a training round: the rater is told on their next page; released
        # before training anything there is no result to show
        row.acknowledged_at = None if row.n_pairs else utcnow()
        s.add(row)
        s.flush()
        return row


def release(engine: Engine, rater_name: str, admin_id: int | None = None,
            note: str = "") -> Qualification:
    """Let a rater rate real items without (or despite) passing training."""
    return _decide(engine, rater_name, admin_id, note, status="released", next_round=False)


def retrain(engine: Engine, rater_name: str, admin_id: int | None = None,
            note: str = "") -> Qualification:
    """Send a rater through a new training round (their earlier rounds are kept)."""
    return _decide(engine, rater_name, admin_id, note, status="training", next_round=True)


def awaiting_decision(engine: Engine) -> list[str]:
    """Active raters who failed their training round and wait for an admin's decision
    (another round, or release), by name: nothing moves for them until someone decides."""
    with read_session(engine) as s:
        return list(s.exec(select(Rater.name).join(Qualification, Qualification.rater_id
                                                   == Rater.id)
                           .where(Qualification.status == "failed",
                                  Rater.active == True)  # noqa: E712
                           .order_by(Rater.name)).all())


def qualified_rater_ids(engine: Engine) -> set[int]:
    """Raters who passed or were released (everyone, when the study has no gold items)."""
    with read_session(engine) as s:
        if s.exec(select(GoldScore.id).limit(1)).first() is None:
            return set(s.exec(select(Rater.id)).all())
        return set(s.exec(select(Qualification.rater_id).where(
            Qualification.status.in_(("passed", "released")))).all())


# --- attention checks -----------------------------------------------------------------------

@dataclass(frozen=True)
class AttentionRecord:
    item_id: str
    kind: str
    expected: dict[str, int]
    tolerance: int
    line: int


def parse_attention(text: str, file: str, rubric, tasks: dict[str, str]
                    ) -> list[AttentionRecord]:
    """Validate an attention-check CSV whole (one row per checked dimension)."""
    rows, problems = _rows(text, file, ATTENTION_COLUMNS[:4], ATTENTION_COLUMNS)
    by_item: dict[str, dict] = {}
    for n, vals in rows:
        dim = _check_item_dim(file, n, vals, rubric, tasks, problems)
        if dim is None:
            continue
        if vals.get("kind") not in ATTENTION_KINDS:
            problems.append(Problem(file, n, "kind", Msg("'{kind}' is not one of {kinds}",
                                                         kind=vals.get("kind"),
                                                         kinds=", ".join(ATTENTION_KINDS))))
            continue
        score = _score(file, n, dim, vals.get("score", ""), problems)
        if score is None:
            continue
        raw_tol = vals.get("tolerance") or "0"
        if not raw_tol.isdigit():
            problems.append(Problem(file, n, "tolerance", Msg("'{value}' is not a whole number "
                                                              "of points ≥ 0", value=raw_tol)))
            continue
        rec = by_item.setdefault(vals["item_id"], {"kind": vals["kind"], "expected": {},
                                                   "tolerance": int(raw_tol), "line": n})
        if rec["kind"] != vals["kind"] or rec["tolerance"] != int(raw_tol):
            problems.append(Problem(file, n, "kind", Msg("every row of one item needs the same "
                                                         "kind and tolerance (see line {line})",
                                                         line=rec['line'])))
        elif dim.key in rec["expected"]:
            problems.append(Problem(file, n, "dimension", Msg("'{key}' is given twice for item "
                                                              "'{item_id}'", key=dim.key,
                                                              item_id=vals['item_id'])))
        else:
            rec["expected"][dim.key] = score
    reject(problems)  # every problem of the file at once
    return [AttentionRecord(i, r["kind"], r["expected"], r["tolerance"], r["line"])
            for i, r in by_item.items()]


def read_attention(engine: Engine, path: str | Path) -> list[AttentionRecord]:
    name, text = read_text(path, what=Msg("attention checks"))
    with read_session(engine) as s:
        return parse_attention(text, name, current_rubric_in(s), _tasks(s))


def import_attention(engine: Engine, records: list[AttentionRecord]) -> int:
    with write_session(engine) as s:
        for r in records:
            row = s.get(AttentionCheck, r.item_id) or AttentionCheck(item_id=r.item_id,
                                                                     kind=r.kind,
                                                                     expected={})
            row.kind, row.expected, row.tolerance = r.kind, dict(r.expected), r.tolerance
            s.add(row)
    return len(records)


def add_instructed_checks(engine: Engine, n: int, score: int | None = None, seed: int = 0
                          ) -> list[str]:
    """Make ``n`` instructed-response checks from real items: a copy of the item whose reply
    ends with an instruction to choose ``score`` on every dimension (default: the scale's
    second level). The copies are items of their own (``attn-…``), never dealt as real ones.
    """
    if n < 1:
        raise H2HError(Msg("--n must be at least 1"))
    with write_session(engine) as s:
        rubric = current_rubric_in(s)
        taken = set(s.exec(select(AttentionCheck.item_id)).all())
        gold = set(s.exec(select(GoldScore.item_id)).all())
        pool = [it for it in s.exec(select(Item).order_by(Item.id)).all()
                if it.id not in taken and it.id not in gold and not it.id.startswith("attn-")]
        if not pool:
            raise H2HError(Msg("no items to build attention checks from; import items first"))
        rng = random.Random(seed)
        made = []
        for src in rng.sample(pool, min(n, len(pool))):
            dims = rubric.dimensions_for(src.task)
            want = score if score is not None else (dims[0].values[1] if dims else 2)
            expected = {}
            for d in dims:
                if want not in d.values:
                    raise H2HError(Msg("score {want} is not on the scale of '{key}' "
                                       "({scale})", want=want, key=d.key,
                                       scale=d.describe_scale()))
                expected[d.key] = want
            new_id = "attn-" + hashlib.sha256(f"{src.id}:{want}".encode()).hexdigest()[:10]
            if s.get(Item, new_id) is not None:
                continue
            text = src.response.rstrip() + "\n\n" + INSTRUCTION.format(score=want)
            s.add(Item(id=new_id, task=src.task, scenario=new_id, context=dict(src.context),
                       response=text, model="attention-check", condition=None,
                       meta={"attention_check_from": src.id},
                       content_hash=hashlib.sha256(text.encode()).hexdigest(),
                       position=src.position))
            s.flush()
            s.add(AttentionCheck(item_id=new_id, kind="instructed", expected=expected,
                                 tolerance=0, note=f"from {src.id}"))
            made.append(new_id)
    return made


def attention_checks(engine: Engine) -> dict[str, AttentionCheck]:
    with read_session(engine) as s:
        return {a.item_id: a for a in s.exec(select(AttentionCheck)).all()}


def attention_item_ids(engine: Engine) -> set[str]:
    with read_session(engine) as s:
        return set(s.exec(select(AttentionCheck.item_id)).all())


def save_attention(engine: Engine, rater_id: int, item_id: str,
                   scores: dict[str, int | None], seconds: float | None,
                   assignment_id: int | None = None,
                   session_token: str | None | object = NO_SESSION) -> bool:
    """Store a rater's answer to an attention check; returns whether it passed.

    Passes when every checked dimension's score is within the tolerance of the expected one
    ("cannot rate" fails). The assignment is marked complete in the same transaction. A save
    from the browser passes ``session_token``: an ended session or a deactivated rater
    raises :class:`~data.sessions.SessionEnded` and nothing is stored.
    """
    return retrying(lambda: _save_attention(engine, rater_id, item_id, scores, seconds,
                                             assignment_id, session_token))


def _save_attention(engine: Engine, rater_id: int, item_id: str,
                    scores: dict[str, int | None], seconds: float | None,
                    assignment_id: int | None, session_token: str | None | object) -> bool:
    from .models import Assignment

    with write_session(engine) as s:
        if session_token is not NO_SESSION:
            check_in(s, session_token, rater_id)
        check = s.get(AttentionCheck, item_id)
        if check is None:
            raise H2HError(Msg("'{item_id}' is not an attention check", item_id=item_id))
        passed = all(scores.get(d) is not None and abs(float(scores[d]) - float(v))
                     <= check.tolerance for d, v in check.expected.items())
        row = s.exec(select(AttentionResult).where(AttentionResult.rater_id == rater_id,
                                                   AttentionResult.item_id == item_id)).first()
        now = utcnow()
        if row is None:
            row = AttentionResult(rater_id=rater_id, item_id=item_id, scores={},
                                  passed=passed, created_at=now)
        row.scores, row.passed, row.updated_at = dict(scores), passed, now
        row.seconds_spent = seconds
        s.add(row)
        if assignment_id is not None:
            a = s.get(Assignment, assignment_id)
            if a is None or a.rater_id != rater_id or a.item_id != item_id:
                raise H2HError(Msg("this item is not in your queue"))
            if a.completed_at is None:
                a.completed_at = now
                s.add(a)
    return passed


def attention_summary_rows(engine: Engine) -> list[tuple[str, str, bool, object, dict, dict]]:
    """(rater, item, passed, answered at, scores, expected) for every attention answer."""
    with read_session(engine) as s:
        rows = s.exec(select(Rater.name, AttentionResult, AttentionCheck)
                      .join(AttentionResult, AttentionResult.rater_id == Rater.id)
                      .join(AttentionCheck, AttentionCheck.item_id == AttentionResult.item_id)
                      .order_by(AttentionResult.updated_at)).all()
    return [(n, r.item_id, r.passed, r.updated_at, r.scores, c.expected) for n, r, c in rows]

