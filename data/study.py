"""Creating a study, and reading and changing its rubric."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from messages import Msg

from .engine import read_session, write_session
from .errors import H2HError
from .migrate import ensure_current, upgrade
from .models import DimensionRow, RubricRow, Study, utcnow
from .rubric import Rubric, load_default_rubric, load_rubric, rubric_from_definition

__all__ = ["InitResult", "init_study", "get_study", "current_rubric", "set_rubric",
           "rubric_by_version"]


@dataclass(frozen=True)
class InitResult:
    created: bool
    revision_before: str | None
    revision_after: str
    study: str
    rubric: str
    rubric_version: str


def init_study(engine: Engine, *, name: str | None = None, description: str = "",
               rubric_path: str | Path | None = None) -> InitResult:
    """Create the study (schema at head, study row, rubric) or upgrade an existing one.

    On an existing study nothing but the schema changes; a ``rubric_path`` there is an error
    (use ``h2h import rubric`` to add a new rubric version).
    """
    rubric = load_rubric(rubric_path) if rubric_path else None
    before, after = upgrade(engine)
    with write_session(engine) as s:
        study = s.exec(select(Study)).first()
        if study is not None:
            if rubric is not None:
                raise H2HError(Msg("this database already holds a study; add a new rubric "
                                   "version with `h2h import rubric FILE`"))
            cur = current_rubric_in(s)
            return InitResult(False, before, after, study.name, cur.name, cur.version)
        rubric = rubric or load_default_rubric()
        row = _store_rubric(s, rubric, source=Path(rubric_path).read_text("utf-8-sig")
                            if rubric_path else "")
        study = Study(name=name or "h2htalk study", description=description, rubric_id=row.id)
        s.add(study)
        return InitResult(True, before, after, study.name, rubric.name, rubric.version)


def _store_rubric(s: Session, rubric: Rubric, source: str) -> RubricRow:
    row = s.exec(select(RubricRow).where(RubricRow.version == rubric.version)).first()
    if row is not None:
        return row
    row = RubricRow(name=rubric.name, version=rubric.version, definition=rubric.definition(),
                    source=source, created_at=utcnow())
    s.add(row)
    s.flush()
    for pos, d in enumerate(rubric.dimensions):
        s.add(DimensionRow(rubric_id=row.id, key=d.key, label=d.label,
                           description=d.description, kind=d.kind, level=d.level,
                           levels=[{"value": lv.value, "label": lv.label, "anchor": lv.anchor}
                                   for lv in d.levels],
                           tasks=list(d.tasks) if d.tasks is not None else None,
                           position=pos))
    s.flush()
    return row


def get_study(engine: Engine) -> Study:
    ensure_current(engine)
    with read_session(engine) as s:
        study = s.exec(select(Study)).first()
    if study is None:
        raise H2HError(Msg("no study here yet; create one with `h2h init`"))
    return study


def current_rubric_in(s: Session) -> Rubric:
    # Only the version is read (every save asks): the definition, a JSON document, is
    # loaded and parsed once per version and process.
    found = s.exec(select(RubricRow.id, RubricRow.version)
                   .join(Study, Study.rubric_id == RubricRow.id)).first()
    if found is None:
        raise H2HError(Msg("no study here yet; create one with `h2h init`"))
    rubric_id, version = found
    rub = _RUBRICS.get(version)
    if rub is None:
        definition = s.exec(select(RubricRow.definition).where(RubricRow.id == rubric_id)
                            ).one()
        rub = _RUBRICS[version] = rubric_from_definition(definition)
    return rub


# Rebuilding a Rubric re-hashes its definition (milliseconds); every save reads the current
# rubric, so parsed rubrics are kept by their version, which is the hash of their content.
_RUBRICS: dict[str, Rubric] = {}


def _parsed(version: str, row: RubricRow) -> Rubric:
    rub = _RUBRICS.get(version)
    if rub is None:
        rub = _RUBRICS[version] = rubric_from_definition(row.definition)
    return rub


def current_rubric(engine: Engine) -> Rubric:
    """The rubric raters see now (the study's current version)."""
    ensure_current(engine)
    with read_session(engine) as s:
        return current_rubric_in(s)


def rubric_by_version(engine: Engine, version: str) -> Rubric:
    with read_session(engine) as s:
        row = s.exec(select(RubricRow).where(RubricRow.version == version)).first()
    if row is None:
        raise H2HError(Msg("no rubric version '{version}' in this study", version=version))
    return _parsed(row.version, row)


def set_rubric(engine: Engine, rubric: Rubric, source: str = "") -> tuple[str, bool]:
    """Make ``rubric`` the study's current version; returns (version, changed).

    Ratings keep the rubric version they were made under, so nothing earlier is reinterpreted.
    """
    ensure_current(engine)
    with write_session(engine) as s:
        study = s.exec(select(Study)).first()
        if study is None:
            raise H2HError(Msg("no study here yet; create one with `h2h init`"))
        row = _store_rubric(s, rubric, source)
        changed = study.rubric_id != row.id
        study.rubric_id = row.id
        s.add(study)
    return rubric.version, changed
