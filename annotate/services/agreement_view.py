"""The Agreement page's content from an analysis result: chart values, tables that fit a
laptop screen, and notes in words.

The one place that reads the analysis result (:class:`analysis.results.StudyAnalysis`): the
page and the charts (:mod:`annotate.services.charts`) take what this module returns. Numbers are
formatted once here (:mod:`annotate.services.formats`): the same statistic with the same
decimals on every page.

Notes in words: the analysis's notes are written for the command line ("cohen_kappa: …",
"icc: …", one per dimension); here the ones this page concerns are said once, naming the
dimensions they apply to, and the statistics' internal keys never show.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from analysis.bands import krippendorff_band
from annotate.services.formats import Estimate, coef, count, share, with_ci
from annotate.services.i18n import N_
from messages import Msg, join_msgs

__all__ = ["AgreementView", "agreement_view", "JudgeView", "judge_view", "group_notes",
           "Note", "in_words", "SeverityView", "severity_view", "AGREEMENT_HEADERS",
           "JUDGE_HEADERS", "SEVERITY_HEADERS"]

LEVELS = {"nominal": Msg("nominal"), "ordinal": Msg("ordinal"), "interval": Msg("interval"),
          "ratio": Msg("ratio")}
# the table's columns (translated on the page); the dimension is the table's index
AGREEMENT_HEADERS = (N_("Level"), N_("Items / raters / ratings"), N_("Krippendorff's α (95% CI)"),
                     N_("Reading"), N_("Cohen's κ (quadratic)"),
                     N_("Human ceiling QWK (95% CI)"), N_("Gwet's AC1"), N_("Exact agreement"))
JUDGE_HEADERS = (N_("Judge"), N_("Dimension"), N_("Judge QWK (95% CI)"),
                 N_("Human ceiling QWK (95% CI)"), N_("Judge − ceiling (95% CI)"),
                 N_("Verdict"))
SEVERITY_HEADERS = (N_("Severity (logits)"), N_("SE"), N_("Ratings"), N_("Infit MnSq"),
                    N_("Outfit MnSq"), N_("Flag"))
# the statistics' keys, as a person names them (a note from the analysis starts with one)
STAT_WORDS = {"alpha": Msg("Krippendorff's α"), "cohen_kappa": Msg("Cohen's κ"),
              "fleiss_kappa": Msg("Fleiss' κ"), "icc": Msg("ICC"), "gwet": Msg("Gwet's AC1/AC2"),
              "self_consistency_alpha": Msg("self-consistency α"),
              "alt-test": Msg("alternative annotator test")}


def _of(dimension: str, n: int, total: int) -> Msg:
    """"Memory fidelity 5 of 12"."""
    return Msg("{dimension} {n} of {total}", dimension=dimension, n=n, total=total)


def _est(i) -> Estimate:
    """An :class:`analysis.serialize.Interval` (or None) as the page's estimate."""
    return Estimate(None) if i is None else Estimate(i.value, i.low, i.high)


@dataclass(frozen=True)
class AgreementView:
    """``keys`` and ``labels`` of the dimensions with ratings, in the rubric's order; one
    :class:`Estimate` per dimension for α, Cohen's κ and the ceiling's QWK; the table (index:
    dimension labels; cells formatted) and the notes (messages)."""

    keys: list[str]
    labels: list[str]
    alpha: list[Estimate]
    kappa: list[Estimate]
    ceiling: list[Estimate]
    table: pd.DataFrame
    notes: list[Note] = field(default_factory=list)


def agreement_view(res, labels: dict[str, str]) -> AgreementView:
    """The page's view of :func:`analysis.analyze.analyze`'s result (human agreement; None
    without ratings)."""
    from analysis.results import HumanAgreement

    dims = {} if res is None else res.dimensions
    keys = [k for k, d in dims.items() if isinstance(d, HumanAgreement)]
    names = [labels.get(k, k) for k in keys]
    alpha, kappa, ceiling, rows = [], [], [], []
    for k in keys:
        d = dims[k]
        ci = d.alpha_ci
        a = Estimate(d.alpha_at_level, ci.low if ci else None, ci.high if ci else None)
        hc = res.ceiling(k)
        c = Estimate(hc.qwk, hc.qwk_ci.low, hc.qwk_ci.high) if hc else Estimate(None)
        kq = Estimate(d.cohen_kappa.quadratic)
        alpha.append(a)
        kappa.append(kq)
        ceiling.append(c)
        why = d.not_estimable
        reading = krippendorff_band(a.value) if not a.missing else \
            (Msg("not estimable: {why}", why=why) if why else Msg("not estimable"))
        rows.append([LEVELS.get(d.level, d.level),
                     f"{count(d.n_items)} / {count(d.n_raters)} / {count(d.n_ratings)}",
                     with_ci(a), reading, coef(kq.value), with_ci(c),
                     coef(d.gwet.ac1), share(d.percent_exact)])
    table = pd.DataFrame(rows, columns=list(AGREEMENT_HEADERS),
                         index=pd.Index(names, name=N_("Dimension")), dtype=object)
    return AgreementView(keys, names, alpha, kappa, ceiling, table,
                         agreement_notes(res, keys, labels))


def agreement_notes(res: dict, keys: list[str], labels: dict[str, str]) -> list[Note]:
    """What the page's numbers rest on, each said once: "cannot rate" answers left out, how
    Cohen's κ is pooled and the pairs it leaves out, and the analysis's other notes grouped
    (:func:`group_notes`). Notes about statistics the page does not show (ICC) are left
    out."""
    dims = {} if res is None else res.dimensions
    out: list[Note] = []
    cannot = [(labels.get(k, k), dims[k].n_cannot_rate or 0) for k in keys]
    if any(n for _n, n in cannot):
        out.append(Note(Msg("“Cannot rate” answers are left out of every statistic: {list}.",
                            list=join_msgs(", ", [f"{name} {n}" for name, n in cannot if n]))))
    pairs = [(labels.get(k, k), dims[k].cohen_pairs) for k in keys
             if dims[k].cohen_pairs is not None]
    if pairs:
        least = max(p.min_items for _n, p in pairs)
        out.append(Note(Msg("Cohen's κ: the mean over rater pairs, weighted by the items each "
                            "pair shares; pairs sharing fewer than {min} items are left out.",
                            min=least)))
        short = [(name, p.too_few_items, p.used + p.too_few_items)
                 for name, p in pairs if p.too_few_items]
        if short:
            out.append(Note(Msg("Rater pairs left out of Cohen's κ for sharing too few items: "
                                "{list}.", list=join_msgs(", ", [
                                    _of(name, n, total) for name, n, total in short]))))
    skip = ("{n} 'cannot rate' entries are left out",)
    rest = {labels.get(k, k): [n for n in dims[k].notes
                               if getattr(n, "template", None) not in skip
                               and not _about(n, ("cohen_kappa", "icc"))]
            for k in keys}
    return out + group_notes(rest)


def _about(note, stats: tuple[str, ...]) -> bool:
    """The note is about one of ``stats`` (it starts with its key, as the analysis writes)."""
    text = str(note)
    return any(text.startswith(f"{s}:") for s in stats)


def in_words(text: str, tr=str) -> str:
    """A translated note with its leading statistic key said in words ("icc: …" -> "ICC:
    …", also after a translation that kept the key with a full-width colon)."""
    for key, words in STAT_WORDS.items():
        for colon in (": ", "："):
            if text.startswith(key + colon):
                return tr(words) + colon + text[len(key) + len(colon):]
    return text


@dataclass(frozen=True)
class Note:
    """A note and the dimensions (or judges) it applies to; ``every`` when it is all."""

    text: Msg | str
    where: tuple[str, ...] = ()
    every: bool = False
    every_words: Msg = Msg("Every dimension")

    def say(self, tr=str) -> str:
        """The note in the reader's language: "Empathy, Safety: …", "Every dimension: …"
        or, for a note on the whole page, the note alone."""
        body = in_words(str(tr(self.text)), tr)
        if not self.where:
            return body
        who = tr(self.every_words) if self.every else tr(join_msgs(", ", self.where))
        return str(tr(Msg("{dimensions}: {note}", dimensions=who, note=body)))


def group_notes(notes: dict[str, list]) -> list[Note]:
    """Notes per dimension (``{dimension label: [notes]}``) as one :class:`Note` each: the
    same note of several dimensions once, naming them."""
    order: list[str] = []
    where: dict[str, list[str]] = {}
    first: dict[str, Msg | str] = {}
    for dim, items in notes.items():
        for n in items:
            key = str(n)
            if key not in where:
                order.append(key)
                where[key], first[key] = [], n
            if dim not in where[key]:
                where[key].append(dim)
    return [Note(first[k], tuple(where[k]), len(where[k]) == len(notes) > 1) for k in order]


@dataclass(frozen=True)
class JudgeView:
    """Each judge's QWK per dimension beside the human ceiling's (same items, paired)."""

    labels: list[str]
    ceiling: list[Estimate]
    judges: dict[str, list[Estimate]]
    table: pd.DataFrame
    notes: list[Note] = field(default_factory=list)


def judge_view(res, labels: dict[str, str]) -> JudgeView | None:
    """The judges section's view of a result with judges (None without any)."""
    from analysis.results import JudgeAgreement

    judges = {} if res is None else res.judges

    def agreement(j: str, k: str) -> JudgeAgreement | None:
        a = judges[j].get(k)
        return a if isinstance(a, JudgeAgreement) and a.vs_ceiling is not None else None

    keys = [k for k in ({} if res is None else res.dimensions)
            if any(agreement(j, k) for j in judges)]
    if not keys:
        return None
    names = [labels.get(k, k) for k in keys]
    ceiling = []
    for k in keys:
        first = next(agreement(j, k) for j in sorted(judges) if agreement(j, k))
        ceiling.append(_est(first.vs_ceiling.ceiling))
    per: dict[str, list[Estimate]] = {}
    rows = []
    for j in sorted(judges):
        per[j] = []
        for k, name in zip(keys, names, strict=True):
            a = agreement(j, k)
            e = _est(a.vs_ceiling.judge) if a else Estimate(None)
            per[j].append(e)
            if a:
                vc = a.vs_ceiling
                rows.append([j, name, with_ci(e), with_ci(_est(vc.ceiling)),
                             with_ci(_est(vc.diff), signed=True),
                             a.verdict.phrase if a.verdict else "—"])
    table = pd.DataFrame(rows, columns=list(JUDGE_HEADERS), dtype=object)
    notes = group_notes({f"{j} · {name}": list(getattr(judges[j].get(k), "notes", ()) or ())
                         for j in sorted(judges) for k, name in zip(keys, names, strict=True)})
    notes = [Note(n.text, n.where, n.every, Msg("Every judge and dimension")) for n in notes]
    return JudgeView(names, ceiling, per, table, notes)


@dataclass(frozen=True)
class SeverityView:
    """The many-facet Rasch model's raters for the chart (``points``), one table per
    dimension (``tables``: label, ratings, frame indexed by rater; cells formatted), and the
    notes: dimensions not estimable, raters and items flagged for misfit, counted apart."""

    points: list
    dimensions: list[str]
    tables: list[tuple[str, int, pd.DataFrame]]
    notes: list[Note]


def severity_view(models: dict, labels: dict[str, str]) -> SeverityView:
    """From :func:`analysis.rater_model.fit_dimensions` (``{key: RaterModel}``)."""
    from annotate.services.charts import SeverityPoint
    from annotate.services.formats import NONE

    def pts(v) -> str:
        return NONE if v is None or v != v else f"{v:.2f}".replace("-", "−")

    points, dims, tables, notes = [], [], [], []
    flagged_raters, flagged_items = [], []
    for key, m in models.items():
        name = labels.get(key, key)
        if not m.estimable:
            notes.append(Note(m.reason, (name,)))
            continue
        dims.append(name)
        r = m.raters
        for row in r.itertuples():
            points.append(SeverityPoint(row.rater, name, float(row.severity),
                                        None if row.se != row.se else float(row.se),
                                        bool(row.flag), str(row.flag or "")))
        table = pd.DataFrame([[pts(x.severity), pts(x.se), count(x.n), pts(x.infit),
                               pts(x.outfit), x.flag or ""] for x in r.itertuples()],
                             columns=list(SEVERITY_HEADERS),
                             index=pd.Index(list(r["rater"]), name=N_("Rater")), dtype=object)
        tables.append((name, m.n_ratings, table))
        n_r = int((r["flag"] != "").sum())
        n_i = int((m.items["flag"] != "").sum())
        flagged_raters.append((name, n_r, len(r)))
        flagged_items.append((name, n_i, len(m.items)))
        if m.notes:
            notes += group_notes({name: list(m.notes)})
    if dims:
        notes.insert(0, Note(Msg("Raters flagged for misfit (infit or outfit outside 0.5–1.5, "
                                 "n ≥ 10): {list}.", list=join_msgs(", ", [
                                     _of(d, n, t) for d, n, t in flagged_raters]))))
        notes.insert(1, Note(Msg("Replies (items) flagged for misfit, not shown above: "
                                 "{list}.", list=join_msgs(", ", [
                                     _of(d, n, t) for d, n, t in flagged_items]))))
    return SeverityView(points, dims, tables, notes)
