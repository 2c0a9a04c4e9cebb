"""report.md: the HTML report's summary in Markdown (a README on GitHub or Overleaf): the
findings, the focused tables, the figures, and where the full tables are."""

from __future__ import annotations

from .format import dim_labels, dim_order, sentence
from .html import LEGEND
from .model import ReportBundle
from .paper import Group, PaperTable
from .sections import Finding, Section, SectionOutput, glance_table

__all__ = ["report_md"]

_PREFIX = {"can_replace": "✅ ", "cannot_replace": "❌ ", "not_enough_evidence": "⏳ ",
           "caveat": "⚠️ **Caveat:** ", "note": "", "not_estimable": "", "finding": ""}


_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_$|"} | {"<": "&lt;", ">": "&gt;"})


def md(s: object) -> str:
    r"""Text as Markdown shows it: emphasis, code, math and HTML characters escaped (names and
    labels come from files), on one line.

    >>> md("a_b <i>x</i> $5 | c")
    'a\\_b &lt;i&gt;x&lt;/i&gt; \\$5 \\| c'
    """
    return str(s).translate(_MD_SPECIAL).replace("\n", " ")


def _cell(s: str) -> str:
    return md(s)


def _md_table(t: PaperTable) -> str:
    lines = ["| " + " | ".join(_cell(c.head) for c in t.cols) + " |",
             "|" + "|".join("---:" if c.numeric else ":---" for c in t.cols) + "|"]
    for r in t.rows:
        if isinstance(r, Group):
            lines.append(f"| *{_cell(r.title)}* |" + " |" * (len(t.cols) - 1))
            continue
        cells = []
        for c, col in zip(r, t.cols, strict=True):
            s = _cell(t.text(c, col))
            cells.append(f"**{s}**" if getattr(c, "bold", False) and s else s)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _finding(f: Finding) -> str:
    return f"* {_PREFIX.get(f.kind, '')}{md(f.text)}"


def report_md(bundle: ReportBundle, built: list[tuple[Section, SectionOutput]],
              numbers: dict[str, int], general: list[Finding], legends: dict[str, str]) -> str:
    m = bundle.manifest
    c = m.counts
    labels = dim_labels(bundle)
    lines = [f"# {md(m.study)}: agreement and evaluation report", "",
             f"Rubric **{md(m.rubric.name)}**, version `{m.rubric.version}`. "
             f"{c.items} items, {c.raters} raters, {c.ratings} ratings, "
             f"{c.judgments} judgments. Generated {m.generated_at}.", ""]
    if c.simulated_raters:
        lines += [f"> Demo data: ratings from {len(c.simulated_raters)} **simulated** raters "
                  "are included.", ""]
    findings = general + [f for _, out in built for f in out.findings]
    lines += ["## Findings", ""]
    columns, rows = glance_table(bundle, built)
    if rows:
        lines += ["| Dimension | " + " | ".join(_cell(c) for c in columns) + " |",
                  "|" + "|".join(":---" for _ in range(len(columns) + 1)) + "|"]
        lines += ["| " + " | ".join([_cell(label)] + [
            _cell(_PREFIX.get(g.kind, "") + g.text) if g else "—" for g in cells]) + " |"
            for label, cells in rows]
        lines.append("")
    lines += [f"_{LEGEND}_", ""]
    lines += [_finding(f) for f in findings if f.dimension is None]
    for d in dim_order(bundle):
        fs = [f for f in findings if f.dimension == d]
        if fs:
            lines += ["", f"### {md(labels[d])}", ""] + [_finding(f) for f in fs]
    lines.append("")
    for s, out in built:
        if not (out.tables or out.figures):
            continue
        lines += [f"## {md(s.title)}", ""]
        for t in out.tables:
            lines += [f"**Table {numbers['tab:' + t.key]}.** {md(sentence(t.title))} "
                      f"{md(t.caption)} {md(legends[t.key])} (`tables/{t.csv or t.key}.csv`, "
                      f"`tables/{t.key}.tex`)", "", _md_table(t), ""]
        for f in out.figures:
            alt = md(f.alt).replace("[", "(").replace("]", ")")
            lines += [f"![{alt}](figures/{f.key}.png)", "",
                      f"**Figure {numbers['fig:' + f.key]}.** {md(f.caption)}", ""]
    details = [t for _, out in built for t in out.details]
    if details:
        lines += ["## Full tables", ""] + [
            f"* `tables/{t.key}.csv` — {md(sentence(t.title))} {md(t.caption)}"
            for t in details] + [""]
    return "\n".join(lines)
