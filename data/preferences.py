"""Preferences files: CSV ``item_a, item_b, rater, dimension, winner[, strength]``.

One row per (pair, rater, dimension). ``winner`` is ``a`` (item_a's reply is better), ``b``
or ``tie``; empty or ``NA`` means "cannot compare". ``strength`` is optional: ``2`` for "much
better", ``1`` for "better" (only with ``a`` or ``b``; a tie has none). The two items must
answer the same scenario. Optional ``comment`` and ``shown_left`` (``a`` or ``b``: the reply
the rater saw on the left, when known) are kept; the other columns ``h2h export preferences``
writes are informational and ignored, so an export re-imports unchanged.

A pair is a comparison of two replies whichever way round it is written: a row for (y, x)
where the study holds the pair (x, y) is stored turned round (``a`` ↔ ``b``). A pair not in
the study yet is added, as the row writes it. The file is validated whole before anything is
written; re-importing it changes nothing; a different preference for a stored one is an
error unless ``update``.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import select

from messages import Msg

from ._files import read_csv, read_text, short
from .engine import read_session, write_session
from .errors import FormatError, Problem
from .exports import _Writer
from .importing import ImportResult, _unknown_raters
from .migrate import ensure_current
from .models import Item, Pair, Preference, PreferenceRevision, Rater, utcnow
from .raters import name_problem
from .rubric import CANNOT_RATE, Rubric
from .study import current_rubric_in

__all__ = ["PreferenceRecord", "PREFERENCE_COLUMNS", "PREFERENCE_EXPORT_COLUMNS",
           "parse_preferences", "read_preferences", "import_preference_records",
           "export_preferences_csv", "flip", "STRENGTHS"]

PREFERENCE_COLUMNS = ("item_a", "item_b", "rater", "dimension", "winner")
PREFERENCE_EXPORT_COLUMNS = ("pair_id", "scenario", "item_a", "item_b", "model_a", "model_b",
                             "condition_a", "condition_b", "rater", "rater_simulated",
                             "dimension", "winner", "strength", "shown_left", "comment",
                             "rubric_version", "created_at", "updated_at")
_OPTIONAL = ("strength", "comment", "shown_left")
STRENGTHS = (1, 2)
_FLIP = {"a": "b", "b": "a", "tie": "tie", None: None}


def flip(winner: str | None) -> str | None:
    """The same preference with the two replies' roles swapped."""
    return _FLIP[winner]


@dataclass(frozen=True)
class PreferenceRecord:
    line: int
    item_a: str
    item_b: str
    rater: str
    dimension: str
    winner: str | None  # None: cannot compare
    strength: int | None
    comment: str
    shown_left: str | None


def parse_preferences(text: str, file: str, rubric: Rubric,
                      items: dict[str, tuple[str, str]]) -> list[PreferenceRecord]:
    """Validate every row against the rubric and the study's items (``id -> (task,
    scenario)``); the whole file is rejected on any problem, each one located."""
    header, rows, problems = read_csv(text, file)
    problems += _header_problems(header, file)
    if problems:
        raise FormatError(problems)
    out: list[PreferenceRecord] = []
    seen: dict[tuple[frozenset[str], str, str], int] = {}
    for n, row in rows:
        v = {k: val.strip() for k, val in row.items()}
        found, rec = _parse_row(v, file, n, rubric, items)
        problems += found
        if rec is None:
            continue
        key = (frozenset((rec.item_a, rec.item_b)), rec.rater, rec.dimension)
        if key in seen:
            problems.append(Problem(file, n, None, Msg(
                "duplicate preference of '{rater}' between '{a}' and '{b}' on '{dim_key}' "
                "(first on line {line})", rater=rec.rater, a=rec.item_a, b=rec.item_b,
                dim_key=rec.dimension, line=seen[key])))
            continue
        seen[key] = n
        out.append(rec)
    if not problems and not out:
        problems.append(Problem(file, None, None, Msg("the file has a header but no "
                                                      "preference rows")))
    if problems:
        raise FormatError(problems)
    return out


def study_items(engine: Engine) -> dict[str, tuple[str, str]]:
    """Every item's (task, scenario), by id."""
    with read_session(engine) as s:
        return {i: (t, sc) for i, t, sc in s.exec(select(Item.id, Item.task, Item.scenario))}


def read_preferences(engine: Engine, path: str | Path) -> list[PreferenceRecord]:
    ensure_current(engine)
    name, text = read_text(path, what=Msg("preferences"))
    with read_session(engine) as s:
        rubric = current_rubric_in(s)
    return parse_preferences(text, name, rubric, study_items(engine))


def import_preference_records(engine: Engine, records: list[PreferenceRecord], *, file: str,
                              update: bool = False, add_raters: bool = False) -> ImportResult:
    """Store validated rows in one transaction; unknown pairs are added (``source``
    "import"). A rater name the study does not have is an error naming its line, as in a
    ratings import (a typo must not become a new rater), unless ``add_raters``: then each
    becomes a rater without a code (named in the result's ``raters_added``)."""
    ensure_current(engine)
    added = unchanged = updated = 0
    with write_session(engine) as s:
        version = current_rubric_in(s).version
        raters = {r.name: r for r in s.exec(select(Rater)).all()}
        new_names = sorted({r.rater for r in records} - set(raters))
        if new_names and not add_raters:
            raise FormatError(_unknown_raters(file, records, set(raters)))
        for name in new_names:
            raters[name] = Rater(name=name, role="rater", code_hash=None, active=True)
            s.add(raters[name])
        pairs = {frozenset((a, b)): (pid, a) for pid, a, b in
                 s.exec(select(Pair.id, Pair.item_a, Pair.item_b)).all()}
        scen = dict(s.exec(select(Item.id, Item.scenario)).all())
        pos = (s.exec(select(func.max(Pair.position))).one() or 0) + 1
        now = utcnow()
        new_pairs: dict[frozenset, Pair] = {}
        for rec in records:  # a pair named for the first time: stored as the row writes it
            key = frozenset((rec.item_a, rec.item_b))
            if key not in pairs and key not in new_pairs:
                new_pairs[key] = Pair(item_a=rec.item_a, item_b=rec.item_b,
                                      scenario=scen[rec.item_a], source="import",
                                      position=pos, created_at=now)
                pos += 1
        s.add_all(new_pairs.values())
        s.flush()  # one flush: the new pairs' ids come back from batched INSERTs
        pairs.update({key: (p.id, p.item_a) for key, p in new_pairs.items()})
        stored = {}
        for name in sorted({r.rater for r in records}):
            for p in s.exec(select(Preference).where(Preference.rater_id == raters[name].id,
                                                     Preference.kind == "primary")
                            .order_by(Preference.pair_id, Preference.dimension)
                            .with_for_update()).all():
                stored[(p.rater_id, p.pair_id, p.dimension)] = p

        def canonical(rec: PreferenceRecord) -> tuple[int, str | None, str | None]:
            pid, first = pairs[frozenset((rec.item_a, rec.item_b))]
            turned = first != rec.item_a
            return (pid, flip(rec.winner) if turned else rec.winner,
                    flip(rec.shown_left) if turned else rec.shown_left)

        conflicts = []
        for rec in records:
            pid, winner, _left = canonical(rec)
            old = stored.get((raters[rec.rater].id, pid, rec.dimension))
            if old is not None and not _same(old, winner, rec) and not update:
                conflicts.append(Problem(file, rec.line, "winner", Msg(
                    "'{rater}' already compared '{a}' and '{b}' on '{dimension}' differently; "
                    "re-import with --update to replace it", rater=rec.rater, a=rec.item_a,
                    b=rec.item_b, dimension=rec.dimension)))
        if conflicts:
            raise FormatError(conflicts)
        changed: list[Preference] = []
        for rec in records:
            pid, winner, left = canonical(rec)
            rid = raters[rec.rater].id
            old = stored.get((rid, pid, rec.dimension))
            if old is not None and _same(old, winner, rec):
                unchanged += 1
                continue
            if old is None:
                pref = Preference(pair_id=pid, rater_id=rid, dimension=rec.dimension,
                                  winner=winner, strength=rec.strength, kind="primary",
                                  shown_left=left, comment=rec.comment, rubric_version=version,
                                  source="import", created_at=now, updated_at=now)
                added += 1
            else:
                pref = old
                pref.winner, pref.strength, pref.comment = winner, rec.strength, rec.comment
                if left is not None:
                    pref.shown_left = left
                pref.rubric_version, pref.updated_at = version, now
                updated += 1
            s.add(pref)
            changed.append(pref)
        s.flush()  # once for all, then the revisions (a flush per row is slow at scale)
        s.add_all([PreferenceRevision(preference_id=p.id, winner=p.winner,
                                      strength=p.strength, comment=p.comment,
                                      rubric_version=version, changed_at=now)
                   for p in changed])
    return ImportResult(added, unchanged, updated, raters_added=tuple(new_names))


def _same(old: Preference, winner: str | None, rec: PreferenceRecord) -> bool:
    return (old.winner == winner and old.strength == rec.strength
            and (old.comment or "") == rec.comment)


def export_preferences_csv(engine: Engine) -> str:
    """Every preference (not hidden repeats or attention checks), ``PREFERENCE_EXPORT_COLUMNS``,
    in the pairs' order, then rater, then the rubric's dimension order. Re-imports unchanged."""
    ensure_current(engine)
    with read_session(engine) as s:
        rubric = current_rubric_in(s)
        rows = s.exec(select(Preference, Pair, Rater)
                      .join(Pair, Pair.id == Preference.pair_id)
                      .join(Rater, Rater.id == Preference.rater_id)
                      .where(Preference.kind == "primary")).all()
        items = {it.id: it for it in s.exec(select(Item)).all()}
    order = {d.key: i for i, d in enumerate(rubric.dimensions)}
    rows = sorted(rows, key=lambda r: (r[1].position, r[1].id, r[2].name,
                                       order.get(r[0].dimension, len(order)), r[0].dimension))
    buf = io.StringIO()
    w = _Writer(buf)
    w.writerow(PREFERENCE_EXPORT_COLUMNS)
    for p, pair, rater in rows:
        a, b = items[pair.item_a], items[pair.item_b]
        w.writerow([pair.id, pair.scenario, a.id, b.id, a.model, b.model, a.condition or "",
                    b.condition or "", rater.name, "true" if rater.simulated else "false",
                    p.dimension, p.winner or "", "" if p.strength is None else str(p.strength),
                    p.shown_left or "", p.comment, p.rubric_version, p.created_at.isoformat(),
                    p.updated_at.isoformat()])
    return buf.getvalue()


def _header_problems(header: list[str], file: str) -> list[Problem]:
    problems = [Problem(file, 1, h, Msg("unknown column (allowed: {columns})",
                                        columns=", ".join(PREFERENCE_EXPORT_COLUMNS)))
                for h in header if h not in PREFERENCE_EXPORT_COLUMNS]
    problems += [Problem(file, 1, h, Msg("required column is missing (header must have "
                                         "{columns})", columns=", ".join(PREFERENCE_COLUMNS)))
                 for h in PREFERENCE_COLUMNS if h not in header]
    return problems


def _parse_row(v: dict[str, str], file: str, n: int, rubric: Rubric,
               items: dict[str, tuple[str, str]]
               ) -> tuple[list[Problem], PreferenceRecord | None]:
    """One row's problems (several only for empty or unknown fields), or its record."""
    missing = [c for c in ("item_a", "item_b", "rater", "dimension") if not v[c]]
    if missing:
        return [Problem(file, n, c, Msg("must not be empty")) for c in missing], None
    a, b = v["item_a"], v["item_b"]
    unknown = [Problem(file, n, col, Msg("unknown item {item_id} (import the items first)",
                                         item_id=short(it)))
               for col, it in (("item_a", a), ("item_b", b)) if it not in items]
    if unknown:
        return unknown, None
    problem = _pair_problem(a, b, items) or (
        ("rater", why) if (why := name_problem(v["rater"])) is not None else None)
    if problem is not None:
        return [Problem(file, n, *problem)], None
    try:
        dim = rubric.dimension(v["dimension"])
    except KeyError as exc:
        return [Problem(file, n, "dimension", exc.args[0])], None
    off = next((t for t in (items[a][0], items[b][0]) if not dim.applies_to(t)), None)
    if off is not None:
        return [Problem(file, n, "dimension", Msg(
            "'{dim_key}' does not apply to task '{task}'", dim_key=dim.key, task=off))], None
    got = _choice(v)
    if len(got) == 2:
        return [Problem(file, n, *got)], None
    winner, strength, left = got
    return [], PreferenceRecord(n, a, b, v["rater"], dim.key, winner, strength,
                                v.get("comment", ""), left)


def _pair_problem(a: str, b: str, items: dict[str, tuple[str, str]]
                  ) -> tuple[str, str] | None:
    """(field, message) when the two items cannot be a pair."""
    if a == b:
        return "item_b", Msg("the same item as item_a: a pair compares two different replies")
    (_, scen_a), (_, scen_b) = items[a], items[b]
    if scen_a != scen_b:
        return "item_b", Msg("'{b}' answers scenario '{sb}' and item_a '{a}' answers '{sa}': "
                             "a pair compares two replies to the same scenario", a=a, b=b,
                             sa=scen_a, sb=scen_b)
    return None


def _choice(v: dict[str, str]):
    """(winner, strength, shown_left), or (field, message) for the first that is wrong."""
    raw = v["winner"]
    if raw in ("", CANNOT_RATE):
        winner = None
    elif raw in ("a", "b", "tie"):
        winner = raw
    else:
        return "winner", Msg("{value} is not a, b or tie (leave it empty or write {cannot} for "
                             "\"cannot compare\")", value=short(raw), cannot=CANNOT_RATE)
    strength = None
    rs = v.get("strength", "")
    if rs:
        if rs not in ("1", "2"):
            return "strength", Msg("{value} is not a strength: 2 (much better), 1 (better) or "
                                   "empty", value=short(rs))
        if winner not in ("a", "b"):
            return "strength", Msg("only a preference for a or b has a strength (this row's "
                                   "winner is '{winner}')", winner=raw)
        strength = int(rs)
    left = v.get("shown_left", "") or None
    if left not in (None, "a", "b"):
        return "shown_left", Msg("{value} is not a or b (the reply shown on the left), or "
                                 "empty", value=short(left))
    return winner, strength, left
