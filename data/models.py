"""The study database: one file (or one PostgreSQL database) holds one study.

Tables are created and upgraded only by the Alembic migrations in ``data/migrations``; the
models here must match the head revision (a test compares them).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

__all__ = [
    "UTCDateTime",
    "utcnow",
    "Study",
    "RubricRow",
    "DimensionRow",
    "Item",
    "Rater",
    "Assignment",
    "Rating",
    "RatingRevision",
    "RepeatRating",
    "Adjudication",
    "ROLES",
    "JudgeConfigRow",
    "Judgment",
    "JudgeBatch",
    "CostEntry",
    "GenerationConfigRow",
    "Generation",
    "OUTCOMES",
    "QualitySettings",
    "GoldScore",
    "TrainingRating",
    "Qualification",
    "QUALIFICATION_STATUSES",
    "AttentionCheck",
    "AttentionResult",
    "NormingSession",
    "NormingItem",
    "NormingParticipant",
    "NormingRating",
    "AuthSession",
    "SigninThrottle",
    "METRIC_KINDS",
    "MetricConfigRow",
    "MetricScore",
    "PAIR_WINNERS",
    "PAIR_ORDERS",
    "PAIRWISE_MODES",
    "Pair",
    "PairAssignment",
    "Preference",
    "PreferenceRevision",
    "PairJudgment",
    "ActiveDraw",
    "ActiveDrawItem",


    "SPLIT_PARTS",
    "CalibrationSplit",
    "Autocalibration",
    "DriftCheck",
    "DriftJudgment",
]

ROLES = ("rater", "admin")


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(sa.types.TypeDecorator):
    """Timestamps are stored in UTC and always come back timezone-aware.

    SQLite has no time zone type, so values are normalised to UTC on the way in and tagged
    as UTC on the way out; PostgreSQL keeps them as ``timestamptz``.
    """

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given; use data.models.utcnow()")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _ts(**kw: Any) -> Any:
    return Field(default_factory=utcnow, sa_type=UTCDateTime, **kw)


class Study(SQLModel, table=True):
    __tablename__ = "study"
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=200)
    description: str = Field(default="")
    created_at: datetime = _ts(nullable=False)
    rubric_id: int | None = Field(default=None, foreign_key="rubric.id")


class RubricRow(SQLModel, table=True):
    """One version of a rubric. ``version`` is the content hash; ``definition`` the parsed form."""

    __tablename__ = "rubric"
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=200)
    version: str = Field(max_length=64, unique=True)
    definition: dict = Field(sa_type=sa.JSON, nullable=False)
    source: str = Field(default="")
    created_at: datetime = _ts(nullable=False)


class DimensionRow(SQLModel, table=True):
    __tablename__ = "dimension"
    __table_args__ = (sa.UniqueConstraint("rubric_id", "key", name="uq_dimension_rubric_key"),)
    id: int | None = Field(default=None, primary_key=True)
    rubric_id: int = Field(foreign_key="rubric.id", ondelete="CASCADE")
    key: str = Field(max_length=40)
    label: str = Field(max_length=200)
    description: str = Field(default="")
    kind: str = Field(max_length=20)
    level: str = Field(max_length=20)
    levels: list = Field(sa_type=sa.JSON, nullable=False)
    tasks: list | None = Field(default=None, sa_type=sa.JSON)
    position: int = Field(default=0)


class Item(SQLModel, table=True):
    """A response to rate, in its conversation context. ``id`` is the user's own id."""

    __tablename__ = "item"
    id: str = Field(primary_key=True, max_length=200)
    task: str = Field(max_length=40, index=True)
    scenario: str = Field(max_length=200, index=True)
    context: dict = Field(sa_type=sa.JSON, nullable=False)
    response: str
    model: str = Field(default="unknown", max_length=200)
    condition: str | None = Field(default=None, max_length=100)
    reference: str | None = Field(default=None)
    meta: dict = Field(default_factory=dict, sa_type=sa.JSON, sa_column_kwargs={"name": "metadata"})
    content_hash: str = Field(max_length=64)
    position: int = Field(default=0, index=True)
    created_at: datetime = _ts(nullable=False)
    updated_at: datetime = _ts(nullable=False)


class Rater(SQLModel, table=True):
    """A rater or admin. Only a hash of the access code is stored."""

    __tablename__ = "rater"
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=100, unique=True)
    role: str = Field(default="rater", max_length=10)
    code_hash: str | None = Field(default=None, max_length=128, unique=True)
    active: bool = Field(default=True)
    simulated: bool = Field(default=False)
    created_at: datetime = _ts(nullable=False)
    language: str | None = Field(default=None, max_length=8)  # the app's language for them


class Assignment(SQLModel, table=True):
    """An item in a rater's queue. ``kind`` is "primary", or "repeat" for a hidden second
    showing (test–retest) whose scores go to :class:`RepeatRating`."""

    __tablename__ = "assignment"
    __table_args__ = (sa.UniqueConstraint("rater_id", "position", name="uq_assignment_position"),
                      sa.UniqueConstraint("rater_id", "item_id", "kind",
                                          name="uq_assignment_rater_item_kind"))
    id: int | None = Field(default=None, primary_key=True)
    rater_id: int = Field(foreign_key="rater.id", ondelete="CASCADE")
    item_id: str = Field(foreign_key="item.id", ondelete="CASCADE", index=True)
    position: int
    kind: str = Field(default="primary", max_length=10)
    completed_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    created_at: datetime = _ts(nullable=False)


class Rating(SQLModel, table=True):
    """One rater's score for one item on one dimension; ``score`` None means "cannot rate"."""

    __tablename__ = "rating"
    __table_args__ = (
        sa.UniqueConstraint("rater_id", "item_id", "dimension", name="uq_rating_rater_item_dim"),
        sa.Index("ix_rating_item_dimension", "item_id", "dimension"),
    )
    id: int | None = Field(default=None, primary_key=True)
    rater_id: int = Field(foreign_key="rater.id", ondelete="CASCADE")
    item_id: str = Field(foreign_key="item.id", ondelete="CASCADE")
    dimension: str = Field(max_length=40)
    score: float | None = Field(default=None)
    comment: str = Field(default="")
    flags: list = Field(default_factory=list, sa_type=sa.JSON, nullable=False)
    rubric_version: str = Field(max_length=64)
    source: str = Field(default="app", max_length=20)
    seconds_spent: float | None = Field(default=None)
    created_at: datetime = _ts(nullable=False)
    updated_at: datetime = _ts(nullable=False)


class RepeatRating(SQLModel, table=True):
    """The score given to a hidden repeat of an item the rater already rated (test–retest).

    Kept apart from :class:`Rating` so the main analysis sees one rating per rater and item.
    """

    __tablename__ = "repeat_rating"
    __table_args__ = (
        sa.UniqueConstraint("rater_id", "item_id", "dimension", name="uq_repeat_rater_item_dim"),
    )
    id: int | None = Field(default=None, primary_key=True)
    rater_id: int = Field(foreign_key="rater.id", ondelete="CASCADE")
    item_id: str = Field(foreign_key="item.id", ondelete="CASCADE")
    dimension: str = Field(max_length=40)
    score: float | None = Field(default=None)
    comment: str = Field(default="")
    flags: list = Field(default_factory=list, sa_type=sa.JSON, nullable=False)
    rubric_version: str = Field(max_length=64)
    seconds_spent: float | None = Field(default=None)
    created_at: datetime = _ts(nullable=False)
    updated_at: datetime = _ts(nullable=False)


class Adjudication(SQLModel, table=True):
    """An admin's resolved score for an item and dimension, stored apart from the ratings."""

    __tablename__ = "adjudication"
    __table_args__ = (sa.UniqueConstraint("item_id", "dimension", name="uq_adjudication"),)
    id: int | None = Field(default=None, primary_key=True)
    item_id: str = Field(foreign_key="item.id", ondelete="CASCADE")
    dimension: str = Field(max_length=40)
    score: float | None = Field(default=None)
    note: str = Field(default="")
    admin_id: int | None = Field(default=None, foreign_key="rater.id", ondelete="SET NULL")
    created_at: datetime = _ts(nullable=False)
    updated_at: datetime = _ts(nullable=False)


class RatingRevision(SQLModel, table=True):
    """Every saved state of a rating, oldest first: nothing a rater entered is ever lost."""

    __tablename__ = "rating_revision"
    id: int | None = Field(default=None, primary_key=True)
    rating_id: int = Field(foreign_key="rating.id", ondelete="CASCADE", index=True)
    score: float | None = Field(default=None)
    comment: str = Field(default="")
    flags: list = Field(default_factory=list, sa_type=sa.JSON, nullable=False)
    rubric_version: str = Field(max_length=64)
    seconds_spent: float | None = Field(default=None)
    changed_at: datetime = _ts(nullable=False)


# --- LLM judges and response generation (migration 0004) -----------------------------------

OUTCOMES = ("scored", "invalid_reply", "request_failed")
"""How a judge call ended for one (item, dimension, sample): a score on the scale; a reply that
was received but is malformed, off the scale or missing the dimension (paid for, never asked
again); or no usable answer from the service (re-asked on the next run)."""


class JudgeConfigRow(SQLModel, table=True):
    """A judge configuration: provider + model + prompt template + parameters.

    ``hash`` is the content hash of everything that shapes the prompt and the reply
    (provider, model, template, rubric version and language, mode, reason-first, temperature,
    max tokens);
    every judgment stores it. ``samples`` is the largest number of samples per item asked for.
    """

    __tablename__ = "judge_config"
    hash: str = Field(primary_key=True, max_length=64)
    name: str = Field(max_length=200, unique=True)
    provider: str = Field(max_length=40)
    model: str = Field(max_length=200)
    template_name: str = Field(max_length=200)
    template_hash: str = Field(max_length=64)
    template: dict = Field(sa_type=sa.JSON, nullable=False)
    rubric_version: str = Field(max_length=64)
    mode: str = Field(max_length=20)
    reason_first: bool = Field(default=False)
    structured: bool = Field(default=True)
    temperature: float | None = Field(default=None)
    max_tokens: int
    samples: int = Field(default=1)
    created_at: datetime = _ts(nullable=False)
    # The structured-output form negotiated with the server (json_schema, json_object, tools,
    # grammar, text); None until a run settled it. The next run starts from it.
    output_form: str | None = Field(default=None, max_length=20)
    # A GGUF model run in-process: the file's SHA-256 (in ``hash``) and where it was read from.
    model_digest: str | None = Field(default=None, max_length=64)
    model_file: str | None = Field(default=None)
    # The language the rubric's texts are rendered in (migration 0010): "en", "zh", or "item"
    # (each item's own language); None: the rubric's own language, as before 0010.
    rubric_language: str | None = Field(default=None, max_length=8)
    # Human-scored examples shown in the prompt (migration 0014, `h2h calibrate auto`): the
    # exemplar items as the judge sees them (context, reply, the humans' median per dimension),
    # which ones each dimension shows, and the rule; part of ``hash``. None: no exemplars.
    exemplars: dict | None = Field(default=None, sa_type=sa.JSON)


class Judgment(SQLModel, table=True):
    """One judge score for one item, dimension and sample; ``score`` None means unscored, and
    ``unscored_reason`` says why. The raw reply is always kept."""

    __tablename__ = "judgment"
    __table_args__ = (
        sa.UniqueConstraint("config_hash", "item_id", "dimension", "sample",
                            name="uq_judgment_config_item_dim_sample"),
    )
    id: int | None = Field(default=None, primary_key=True)
    config_hash: str = Field(foreign_key="judge_config.hash", ondelete="CASCADE", max_length=64,
                             index=True)
    item_id: str = Field(foreign_key="item.id", ondelete="CASCADE", max_length=200, index=True)
    item_hash: str = Field(max_length=64)
    dimension: str = Field(max_length=40)
    sample: int = Field(default=0)
    score: float | None = Field(default=None)
    outcome: str = Field(max_length=20)
    unscored_reason: str | None = Field(default=None)
    raw_reply: str = Field(default="")
    reasoning: str = Field(default="")
    input_tokens: int = Field(default=0)
    output_tokens: int = Field(default=0)
    batch_id: str | None = Field(default=None, max_length=100)
    created_at: datetime = _ts(nullable=False)


class JudgeBatch(SQLModel, table=True):
    """An Anthropic Message Batch submitted for a judge configuration.

    ``requests`` maps each ``custom_id`` to ``[item_id, dimension or "*", sample]``;
    ``collected_at`` is set once every result is stored.
    """

    __tablename__ = "judge_batch"
    id: int | None = Field(default=None, primary_key=True)
    provider_batch_id: str = Field(max_length=100, unique=True)
    config_hash: str = Field(foreign_key="judge_config.hash", ondelete="CASCADE", max_length=64,
                             index=True)
    status: str = Field(max_length=20)
    request_count: int
    requests: dict = Field(sa_type=sa.JSON, nullable=False)
    submitted_at: datetime = _ts(nullable=False)
    ended_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    collected_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class CostEntry(SQLModel, table=True):
    """One attempt at a provider call and what it cost, priced when it was made.

    Failed attempts (rate limited, timed out, server error) are recorded with zero tokens so
    retries are visible. ``cost_usd`` is None when the model has no price in the table.
    """

    __tablename__ = "cost_ledger"
    id: int | None = Field(default=None, primary_key=True)
    config_hash: str = Field(max_length=64, index=True)
    item_id: str | None = Field(default=None, max_length=200)
    call_kind: str = Field(max_length=20)
    provider: str = Field(max_length=40)
    model: str = Field(max_length=200)
    status: str = Field(max_length=60)
    input_tokens: int = Field(default=0)
    output_tokens: int = Field(default=0)
    cache_write_tokens: int = Field(default=0)
    cache_read_tokens: int = Field(default=0)
    cost_usd: float | None = Field(default=None)
    batch: bool = Field(default=False)
    created_at: datetime = _ts(nullable=False)
    seconds: float | None = Field(default=None)  # wall time of the attempt


class GenerationConfigRow(SQLModel, table=True):
    """A response generator: provider + model + generation templates + SAP text + parameters."""

    __tablename__ = "generation_config"
    hash: str = Field(primary_key=True, max_length=64)
    name: str = Field(max_length=200, unique=True)
    provider: str = Field(max_length=40)
    model: str = Field(max_length=200)
    templates_hash: str = Field(max_length=64)
    sap_hash: str = Field(max_length=64)
    temperature: float | None = Field(default=None)
    max_tokens: int
    created_at: datetime = _ts(nullable=False)


class Generation(SQLModel, table=True):
    """One generated companion response for a scenario under a condition ("sap"/"baseline").

    ``item_id`` names the item it became; None when the call gave no usable reply (``reason``).
    """

    __tablename__ = "generation"
    __table_args__ = (
        sa.UniqueConstraint("config_hash", "scenario", "condition",
                            name="uq_generation_config_scenario_condition"),
    )
    id: int | None = Field(default=None, primary_key=True)
    config_hash: str = Field(foreign_key="generation_config.hash", ondelete="CASCADE",
                             max_length=64, index=True)
    scenario: str = Field(max_length=200)
    condition: str = Field(max_length=100)
    item_id: str | None = Field(default=None, foreign_key="item.id", ondelete="SET NULL",
                                max_length=200)
    outcome: str = Field(max_length=20)
    reason: str | None = Field(default=None)
    raw_reply: str = Field(default="")
    input_tokens: int = Field(default=0)
    output_tokens: int = Field(default=0)
    created_at: datetime = _ts(nullable=False)


# --- Rater quality: gold, training, qualification, attention checks, norming (migration 0005) --
# Everything here is stored apart from ``rating``: none of it enters the main analysis.

QUALIFICATION_STATUSES = ("training", "passed", "failed", "released")
"""A rater's qualification: still training (or retraining), passed the thresholds over the
training set, failed them (the admin decides), or released by an admin anyway."""


class QualitySettings(SQLModel, table=True):
    """The study's rater-quality settings (one row; defaults apply until an admin saves).

    ``training_order`` is "fixed" (gold items in the order they were marked) or "random"
    (seeded per rater and round).
    """

    __tablename__ = "quality_settings"
    id: int | None = Field(default=None, primary_key=True)
    training_count: int = Field(default=6)
    training_order: str = Field(default="fixed", max_length=10)
    min_within1: float = Field(default=0.8)
    min_qwk: float = Field(default=0.6)
    attention_rate: float = Field(default=0.05)
    min_seconds: float = Field(default=3.0)
    drift_window: int = Field(default=20)
    drift_threshold: float = Field(default=0.5)
    updated_at: datetime = _ts(nullable=False)


class GoldScore(SQLModel, table=True):
    """An expert's score for an item on a dimension, with the rationale raters see in training.

    ``source`` is "import" (gold CSV) or "adjudication" (promoted from the Adjudication page).
    """

    __tablename__ = "gold_score"
    __table_args__ = (sa.UniqueConstraint("item_id", "dimension", name="uq_gold_item_dim"),)
    id: int | None = Field(default=None, primary_key=True)
    item_id: str = Field(foreign_key="item.id", ondelete="CASCADE", max_length=200)
    dimension: str = Field(max_length=40)
    score: float
    rationale: str = Field(default="")
    source: str = Field(default="import", max_length=20)
    admin_id: int | None = Field(default=None, foreign_key="rater.id", ondelete="SET NULL")
    created_at: datetime = _ts(nullable=False)
    updated_at: datetime = _ts(nullable=False)


class TrainingRating(SQLModel, table=True):
    """A rater's score on a gold item during training round ``round`` (1, 2, … on retraining)."""

    __tablename__ = "training_rating"
    __table_args__ = (sa.UniqueConstraint("rater_id", "item_id", "dimension", "round",
                                          name="uq_training_rater_item_dim_round"),)
    id: int | None = Field(default=None, primary_key=True)
    rater_id: int = Field(foreign_key="rater.id", ondelete="CASCADE")
    item_id: str = Field(foreign_key="item.id", ondelete="CASCADE", max_length=200)
    dimension: str = Field(max_length=40)
    round: int = Field(default=1)
    score: float | None = Field(default=None)
    seconds_spent: float | None = Field(default=None)
    created_at: datetime = _ts(nullable=False)


class Qualification(SQLModel, table=True):
    """Where a rater stands: the current training round and its outcome against the study's
    thresholds (see :class:`QualitySettings`); ``decided_by`` is the admin who released or
    sent the rater back to training; ``acknowledged_at`` when the rater saw the outcome."""

    __tablename__ = "qualification"
    id: int | None = Field(default=None, primary_key=True)
    rater_id: int = Field(foreign_key="rater.id", ondelete="CASCADE", unique=True)
    round: int = Field(default=1)
    status: str = Field(default="training", max_length=20)
    n_pairs: int = Field(default=0)
    within1: float | None = Field(default=None)
    qwk: float | None = Field(default=None)
    note: str = Field(default="")
    decided_by: int | None = Field(default=None, foreign_key="rater.id", ondelete="SET NULL")
    updated_at: datetime = _ts(nullable=False)
    # when the rater saw their result and pressed "Start rating" (migration 0011); None while
    # a passed or released rater has not: the page shows the result until they do
    acknowledged_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class AttentionCheck(SQLModel, table=True):
    """An item used as an attention check: "instructed" (the item itself asks for a given
    score) or "known_answer" (an unmistakable reply with an agreed score). ``expected`` maps
    each checked dimension to its score; a response passes when every checked dimension is
    within ``tolerance`` points."""

    __tablename__ = "attention_check"
    item_id: str = Field(foreign_key="item.id", ondelete="CASCADE", primary_key=True,
                         max_length=200)
    kind: str = Field(max_length=20)
    expected: dict = Field(sa_type=sa.JSON, nullable=False)
    tolerance: int = Field(default=0)
    note: str = Field(default="")
    created_at: datetime = _ts(nullable=False)


class AttentionResult(SQLModel, table=True):
    """A rater's answer to an attention check, and whether it passed."""

    __tablename__ = "attention_result"
    __table_args__ = (sa.UniqueConstraint("rater_id", "item_id", name="uq_attention_rater_item"),)
    id: int | None = Field(default=None, primary_key=True)
    rater_id: int = Field(foreign_key="rater.id", ondelete="CASCADE")
    item_id: str = Field(foreign_key="item.id", ondelete="CASCADE", max_length=200)
    scores: dict = Field(sa_type=sa.JSON, nullable=False)
    passed: bool
    seconds_spent: float | None = Field(default=None)
    created_at: datetime = _ts(nullable=False)
    updated_at: datetime = _ts(nullable=False)


class NormingSession(SQLModel, table=True):
    """A norming session: raters score a few items blind ("blind"), the admin reveals every
    score ("discuss"; named or anonymised) and raters may re-score, then it is "closed"."""

    __tablename__ = "norming_session"
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=200)
    status: str = Field(default="blind", max_length=20)
    named: bool = Field(default=False)
    created_by: int | None = Field(default=None, foreign_key="rater.id", ondelete="SET NULL")
    created_at: datetime = _ts(nullable=False)
    revealed_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    closed_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class NormingItem(SQLModel, table=True):
    __tablename__ = "norming_item"
    __table_args__ = (sa.UniqueConstraint("session_id", "item_id", name="uq_norming_item"),)
    id: int | None = Field(default=None, primary_key=True)
    session_id: int = Field(foreign_key="norming_session.id", ondelete="CASCADE")
    item_id: str = Field(foreign_key="item.id", ondelete="CASCADE", max_length=200)
    position: int = Field(default=0)


class NormingParticipant(SQLModel, table=True):
    __tablename__ = "norming_participant"
    __table_args__ = (sa.UniqueConstraint("session_id", "rater_id",
                                          name="uq_norming_participant"),)
    id: int | None = Field(default=None, primary_key=True)
    session_id: int = Field(foreign_key="norming_session.id", ondelete="CASCADE")
    rater_id: int = Field(foreign_key="rater.id", ondelete="CASCADE")


class NormingRating(SQLModel, table=True):
    """A score given in a norming session, "before" the discussion or "after" it."""

    __tablename__ = "norming_rating"
    __table_args__ = (sa.UniqueConstraint("session_id", "rater_id", "item_id", "dimension",
                                          "phase", name="uq_norming_rating"),)
    id: int | None = Field(default=None, primary_key=True)
    session_id: int = Field(foreign_key="norming_session.id", ondelete="CASCADE")
    rater_id: int = Field(foreign_key="rater.id", ondelete="CASCADE")
    item_id: str = Field(foreign_key="item.id", ondelete="CASCADE", max_length=200)
    dimension: str = Field(max_length=40)
    phase: str = Field(max_length=10)
    score: float | None = Field(default=None)
    created_at: datetime = _ts(nullable=False)
    updated_at: datetime = _ts(nullable=False)


# --- Sign-in sessions and the sign-in throttle (migration 0007) ---------------------------


class AuthSession(SQLModel, table=True):
    """One signed-in browser. Kept in the study database, so every app server sharing the
    study sees the same sessions: a sign-in on one continues on another, and a revocation
    (sign-out, deactivation) or an idle timeout ends it on all of them at once.

    The browser holds a random token; only its SHA-256 is stored here.
    """

    __tablename__ = "auth_session"
    id: int | None = Field(default=None, primary_key=True)
    token_hash: str = Field(max_length=64, unique=True)
    rater_id: int = Field(foreign_key="rater.id", ondelete="CASCADE", index=True)
    created_at: datetime = _ts(nullable=False)
    last_seen_at: datetime = _ts(nullable=False)
    expires_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    revoked_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    revoked_reason: str | None = Field(default=None, max_length=40)
    client: str | None = Field(default=None, max_length=64)


class SigninThrottle(SQLModel, table=True):
    """Failed sign-in attempts per bucket ("prefix:H2H-7KQM", "client:203.0.113.9",
    "global"), shared by every app server of the study. ``pending`` counts attempts being
    checked right now, so parallel guesses wait their turn like sequential ones;
    ``next_slot_at`` is when the next attempt in a slowed bucket may be checked."""

    __tablename__ = "signin_throttle"
    bucket: str = Field(primary_key=True, max_length=100)
    failures: int = Field(default=0)
    pending: int = Field(default=0)
    next_slot_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    last_failure_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


# --- Reference-based automatic metrics (migration 0008) -----------------------------------------

METRIC_KINDS = ("bleu", "chrf", "rougeL", "embedding")
"""The reference-based metrics `h2h metrics run` computes (see ``analysis/refmetrics``)."""


class MetricConfigRow(SQLModel, table=True):
    """A reference-based metric configuration, stored like a judge configuration.

    ``hash`` covers everything that shapes a score: the metric, the library and its version,
    the tokenizer per language and the settings (smoothing, n-gram orders, Chinese segmenter,
    the embedding model's fingerprint). ``signature`` is the library's own description where it
    has one (sacrebleu's signature string).
    """

    __tablename__ = "metric_config"
    hash: str = Field(primary_key=True, max_length=64)
    name: str = Field(max_length=200, unique=True)
    metric: str = Field(max_length=40)
    library: str = Field(max_length=100)
    library_version: str = Field(max_length=40)
    tokenizer: dict = Field(sa_type=sa.JSON, nullable=False)
    settings: dict = Field(sa_type=sa.JSON, nullable=False)
    signature: str = Field(default="")
    created_at: datetime = _ts(nullable=False)


class MetricScore(SQLModel, table=True):
    """One metric's score of one item's response against the item's reference.

    ``item_hash`` is the item's content hash when scored (a changed response or reference is
    scored again); ``lang`` the language the text was treated as ("zh" or "en"), from
    ``cjk_share``, the larger share of Chinese characters of the two texts. ``score`` None
    means the pair could not be scored, and ``reason`` says why.
    """

    __tablename__ = "metric_score"
    __table_args__ = (sa.UniqueConstraint("config_hash", "item_id",
                                          name="uq_metric_score_config_item"),)
    id: int | None = Field(default=None, primary_key=True)
    config_hash: str = Field(foreign_key="metric_config.hash", ondelete="CASCADE",
                             max_length=64, index=True)
    item_id: str = Field(foreign_key="item.id", ondelete="CASCADE", max_length=200, index=True)
    item_hash: str = Field(max_length=64)
    score: float | None = Field(default=None)
    lang: str = Field(max_length=8)
    cjk_share: float
    reason: str | None = Field(default=None)
    created_at: datetime = _ts(nullable=False)


# --- Pairwise comparisons (migration 0012) -----------------------------------------------------

PAIR_WINNERS = ("a", "b", "tie")
"""A preference between the two replies of a pair, in the pair's own order (``item_a``,
``item_b``), whichever side the rater saw each on; None means "cannot compare"."""
PAIR_ORDERS = ("ab", "ba")
"""The order a pairwise judge was shown a pair in: ``ab`` (item_a first) or ``ba``."""
PAIRWISE_MODES = ("pairwise", "pairwise-all")
"""``judge_config.mode`` of a pairwise judge (one dimension per call, or every dimension in
one call); its answers are in :class:`PairJudgment`, not :class:`Judgment`."""


class Pair(SQLModel, table=True):
    """Two replies to the same scenario, to be compared side by side.

    ``item_a`` / ``item_b`` is the pair's own order (balanced by ``h2h pairs make``: every
    model as often first as second); raters see the sides randomised per rater and
    counterbalanced (:class:`PairAssignment`), judges both orders. A pair is unordered as a
    comparison: (x, y) and (y, x) are the same pair, stored once. ``attention`` maps each
    checked dimension to the expected winner on an attention-check pair (None: a real pair).
    """

    __tablename__ = "pair"
    __table_args__ = (sa.UniqueConstraint("item_a", "item_b", name="uq_pair_items"),)
    id: int | None = Field(default=None, primary_key=True)
    item_a: str = Field(foreign_key="item.id", ondelete="CASCADE", max_length=200, index=True)
    item_b: str = Field(foreign_key="item.id", ondelete="CASCADE", max_length=200, index=True)
    scenario: str = Field(max_length=200, index=True)
    source: str = Field(default="make", max_length=20)
    # none_as_null: a real pair has SQL NULL here (not JSON null), so "IS NULL" finds it
    attention: dict | None = Field(default=None, sa_type=sa.JSON(none_as_null=True))
    position: int = Field(default=0)
    created_at: datetime = _ts(nullable=False)


class PairAssignment(SQLModel, table=True):
    """A pair in a rater's queue of comparisons. ``kind`` is "primary", "repeat" (a hidden
    second showing, sides swapped) or "attention"; ``flipped`` shows ``item_b`` on the left."""

    __tablename__ = "pair_assignment"
    __table_args__ = (sa.UniqueConstraint("rater_id", "position",
                                          name="uq_pair_assignment_position"),
                      sa.UniqueConstraint("rater_id", "pair_id", "kind",
                                          name="uq_pair_assignment_rater_pair_kind"))
    id: int | None = Field(default=None, primary_key=True)
    rater_id: int = Field(foreign_key="rater.id", ondelete="CASCADE")
    pair_id: int = Field(foreign_key="pair.id", ondelete="CASCADE", index=True)
    position: int
    kind: str = Field(default="primary", max_length=10)
    flipped: bool = Field(default=False)
    completed_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    created_at: datetime = _ts(nullable=False)


class Preference(SQLModel, table=True):
    """One rater's preference between a pair's replies on one dimension (``winner`` in
    :data:`PAIR_WINNERS`, None: cannot compare); ``strength`` 2 for "much better", 1 for
    "better", None for a tie or the 3-point form. ``shown_left`` is the side ("a" or "b") the
    rater saw on the left (None when unknown, e.g. imported). ``kind``: "primary", "repeat"
    (a hidden repeat, for test–retest) or "attention" (an attention-check pair)."""

    __tablename__ = "preference"
    __table_args__ = (
        sa.UniqueConstraint("rater_id", "pair_id", "dimension", "kind",
                            name="uq_preference_rater_pair_dim_kind"),
        sa.Index("ix_preference_pair_dimension", "pair_id", "dimension"),
    )
    id: int | None = Field(default=None, primary_key=True)
    pair_id: int = Field(foreign_key="pair.id", ondelete="CASCADE")
    rater_id: int = Field(foreign_key="rater.id", ondelete="CASCADE")
    dimension: str = Field(max_length=40)
    winner: str | None = Field(default=None, max_length=4)
    strength: int | None = Field(default=None)
    kind: str = Field(default="primary", max_length=10)
    shown_left: str | None = Field(default=None, max_length=1)
    comment: str = Field(default="")
    rubric_version: str = Field(max_length=64)
    source: str = Field(default="app", max_length=20)
    seconds_spent: float | None = Field(default=None)
    created_at: datetime = _ts(nullable=False)
    updated_at: datetime = _ts(nullable=False)


class PreferenceRevision(SQLModel, table=True):
    """Every saved state of a preference, oldest first."""

    __tablename__ = "preference_revision"
    id: int | None = Field(default=None, primary_key=True)
    preference_id: int = Field(foreign_key="preference.id", ondelete="CASCADE", index=True)
    winner: str | None = Field(default=None, max_length=4)
    strength: int | None = Field(default=None)
    comment: str = Field(default="")
    rubric_version: str = Field(max_length=64)
    seconds_spent: float | None = Field(default=None)
    changed_at: datetime = _ts(nullable=False)


class PairJudgment(SQLModel, table=True):
    """A pairwise judge's answer for one pair, dimension, order and sample.

    ``order`` is the order the pair was shown in (:data:`PAIR_ORDERS`); ``verdict`` what the
    judge said in that order ("first", "second", "tie"), ``winner`` the same in the pair's own
    order ("a", "b", "tie"); both None when unscored (``unscored_reason`` says why). The raw
    reply is always kept. ``pair_hash`` is the hash of the two items' contents when judged.
    """

    __tablename__ = "pair_judgment"
    __table_args__ = (
        sa.UniqueConstraint("config_hash", "pair_id", "dimension", "order", "sample",
                            name="uq_pair_judgment_key"),
    )
    id: int | None = Field(default=None, primary_key=True)
    config_hash: str = Field(foreign_key="judge_config.hash", ondelete="CASCADE", max_length=64,
                             index=True)
    pair_id: int = Field(foreign_key="pair.id", ondelete="CASCADE", index=True)
    pair_hash: str = Field(max_length=64)
    dimension: str = Field(max_length=40)
    order: str = Field(max_length=2)
    sample: int = Field(default=0)
    verdict: str | None = Field(default=None, max_length=8)
    winner: str | None = Field(default=None, max_length=4)
    outcome: str = Field(max_length=20)
    unscored_reason: str | None = Field(default=None)
    raw_reply: str = Field(default="")
    reasoning: str = Field(default="")
    input_tokens: int = Field(default=0)
    output_tokens: int = Field(default=0)
    batch_id: str | None = Field(default=None, max_length=100)
    created_at: datetime = _ts(nullable=False)


# --- Active labelling draws (migration 0013) -----------------------------------------------


class ActiveDraw(SQLModel, table=True):
    """An active-labelling draw for a judge configuration (`h2h assign --to-shrink`): which
    items the psychologists should rate next, drawn with known probabilities so that the
    leaderboard can weight each rated item by 1 / its probability of having been rated.

    ``rated_before`` maps each model to the share of its items rated before this draw;
    ``seed``, ``budget`` and ``halfwidth`` (the ± target the command reported against) travel
    with it.
    """

    __tablename__ = "active_draw"
    id: int | None = Field(default=None, primary_key=True)
    config_hash: str = Field(foreign_key="judge_config.hash", ondelete="CASCADE",
                             max_length=64, index=True)
    seed: int
    budget: int
    halfwidth: float
    rated_before: dict = Field(sa_type=sa.JSON, nullable=False)
    created_at: datetime = _ts(nullable=False)


class ActiveDrawItem(SQLModel, table=True):
    """One item's probability of being picked in a draw (every item of the study at the
    time: those already rated keep the probability they would have had), and whether it
    was picked."""

    __tablename__ = "active_draw_item"
    __table_args__ = (sa.UniqueConstraint("draw_id", "item_id", name="uq_active_draw_item"),)
    id: int | None = Field(default=None, primary_key=True)
    draw_id: int = Field(foreign_key="active_draw.id", ondelete="CASCADE", index=True)
    item_id: str = Field(foreign_key="item.id", ondelete="CASCADE", max_length=200)
    probability: float
    picked: bool = Field(default=False)


# --- Held-out calibration and drift (migration 0014) ------------------------------------------

SPLIT_PARTS = ("train", "dev", "test")
"""The parts of a study's calibration split: exemplars come from ``train``, candidates are
chosen on ``dev``, and ``test`` is looked at once, for the result."""


class CalibrationSplit(SQLModel, table=True):
    """The study's frozen split of its scenarios for `h2h calibrate auto`: every item of a
    scenario is in the scenario's part, so no conversation is in two parts. Made once, seeded
    (``seed``); every later run, the Calibration page and the report use it."""

    __tablename__ = "calibration_split"
    scenario: str = Field(primary_key=True, max_length=200)
    part: str = Field(max_length=5)
    seed: int
    created_at: datetime = _ts(nullable=False)


class Autocalibration(SQLModel, table=True):
    """One `h2h calibrate auto` search: its base configuration, options, every candidate with
    its dev metrics, the one selected, and the held-out (test) comparison with the base.
    ``config_hash`` is the selected configuration (the base itself when none beat it)."""

    __tablename__ = "autocalibration"
    id: int | None = Field(default=None, primary_key=True)
    config_hash: str = Field(foreign_key="judge_config.hash", ondelete="CASCADE", max_length=64,
                             index=True)
    base_hash: str = Field(max_length=64)
    seed: int
    settings: dict = Field(sa_type=sa.JSON, nullable=False)
    candidates: list = Field(sa_type=sa.JSON, nullable=False)
    selected: str = Field(max_length=100)
    test: dict = Field(sa_type=sa.JSON, nullable=False)
    created_at: datetime = _ts(nullable=False)


class DriftCheck(SQLModel, table=True):
    """One `h2h calibrate drift`: a seeded sample of items a configuration judged, judged
    again; ``finished_at`` is set once every re-judgment is stored."""

    __tablename__ = "drift_check"
    id: int | None = Field(default=None, primary_key=True)
    config_hash: str = Field(foreign_key="judge_config.hash", ondelete="CASCADE", max_length=64,
                             index=True)
    seed: int
    n_items: int
    created_at: datetime = _ts(nullable=False)
    finished_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class DriftJudgment(SQLModel, table=True):
    """A re-judgment of a drift check: one item and dimension, its raw reply kept; ``score``
    None means unscored (``unscored_reason``) or a failed request (``outcome``)."""

    __tablename__ = "drift_judgment"
    __table_args__ = (sa.UniqueConstraint("check_id", "item_id", "dimension",
                                          name="uq_drift_judgment_check_item_dim"),)
    id: int | None = Field(default=None, primary_key=True)
    check_id: int = Field(foreign_key="drift_check.id", ondelete="CASCADE", index=True)
    item_id: str = Field(foreign_key="item.id", ondelete="CASCADE", max_length=200)
    item_hash: str = Field(max_length=64)
    dimension: str = Field(max_length=40)
    score: float | None = Field(default=None)
    outcome: str = Field(max_length=20)
    unscored_reason: str | None = Field(default=None)
    raw_reply: str = Field(default="")
    created_at: datetime = _ts(nullable=False)
