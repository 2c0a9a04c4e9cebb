"""Writing the report folder from the bundle:

=========================  =========================================================
``report.html``            self-contained, findings first (:mod:`.html`)
``report.md``              the same summary in Markdown (:mod:`.markdown`)
``tables/<key>.tex``       one ``\\input``-able LaTeX table each (:mod:`.latex`)
``tables.tex``             ``\\input`` of every table; ``preamble.tex`` its packages
``figures.tex``            a ``figure`` environment per figure, captions included
``tables/<key>.csv``       every table at full precision
``figures/<key>.pdf|svg|png``  every figure (:mod:`.export`)
``manifest.json``          what was computed how (hashes, seeds, B, versions)
``analysis.json``          exactly ``h2h analyze --json`` with the same options
=========================  =========================================================
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from .export import FORMATS, FigureExporter
from .html import report_html
from .latex import CJK_COMMAND, legend_for, preamble, table_tex, tables_tex, tex
from .markdown import report_md
from .model import ReportBundle
from .sections import SECTIONS, Finding, Section, SectionOutput, build_sections

__all__ = ["write_report"]


def write_report(bundle: ReportBundle, out: str | Path, *, figures: bool = True,
                 exporter: FigureExporter | None = None,
                 sections: list[Section] | None = None,
                 built: list[tuple[Section, SectionOutput]] | None = None,
                 finish: Callable[[], object] | None = None) -> dict[str, float]:
    """Write every output into ``out``; returns the time spent per step (seconds).

    ``exporter`` is an already started :class:`FigureExporter` (``h2h report`` starts one
    before the statistics so that Chromium starts meanwhile); without one, one is started
    here when ``figures`` is true. The caller closes an exporter it passed in. ``sections``
    replaces the list of sections; ``built`` passes sections already built from this
    bundle. ``finish`` is the second step of :func:`~.bundle.start_bundle` when ``bundle``
    is its first: it is called before the first section that needs it (the sections before
    it have their figures drawn meanwhile) and in any case before anything is written."""
    out = Path(out)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    timing: dict[str, float] = {}
    t0 = time.perf_counter()
    own = figures and exporter is None
    if figures:
        exporter = exporter or FigureExporter()
    pending: list = []

    def draw(section_figures) -> None:  # the browser draws while the rest goes on here
        if figures and section_figures:
            pending.append(exporter.submit(
                ((f.fig, out / "figures" / f.key) for f in section_figures), FORMATS))

    finished = finish is None

    def complete() -> None:
        nonlocal finished
        if not finished:
            t1 = time.perf_counter()
            finish()
            finished = True
            timing["statistics_after_first_sections"] = time.perf_counter() - t1

    try:
        if built is None:  # each section's figures go to the browser once it is built
            built = []
            for s in SECTIONS if sections is None else sections:
                if s.needs != "analysis":
                    complete()
                for pair in build_sections(bundle, [s]):
                    built.append(pair)
                    draw(pair[1].figures)
        else:
            for _, res in built:
                draw(res.figures)
        complete()
        timing["sections"] = (time.perf_counter() - t0
                              - timing.get("statistics_after_first_sections", 0.0))
        _write_text_outputs(bundle, built, out, timing)
        if figures:
            t0 = time.perf_counter()
            for job in pending:
                exporter.wait(job)
            (out / "figures.tex").write_text(_figures_tex(built, _numbers(built)),
                                             encoding="utf-8")
            timing["figure_export"] = time.perf_counter() - t0  # the wait beyond the rest
    finally:
        if own:
            exporter.close()
    return timing


def _write_text_outputs(bundle: ReportBundle, built: list[tuple[Section, SectionOutput]],
                        out: Path,
                        timing: dict[str, float]) -> None:
    """Everything but the figures' files: CSVs, LaTeX, JSON, Markdown and HTML."""
    t0 = time.perf_counter()
    numbers = _numbers(built)
    B = bundle.analysis.meta.bootstrap.B
    legends = {t.key: legend_for(t, B) for _, r in built for t in r.tables}
    cjk = any(CJK_COMMAND in tex(f.caption) for _, r in built for f in r.figures)
    for _, res in built:
        for t in res.details:
            t.df.to_csv(out / "tables" / f"{t.key}.csv", index=False)
        for t in res.tables:
            text = table_tex(t, legends[t.key])
            cjk = cjk or CJK_COMMAND in text
            (out / "tables" / f"{t.key}.tex").write_text(text, encoding="utf-8")
    keys = [t.key for _, r in built for t in r.tables]
    (out / "tables.tex").write_text(tables_tex(keys), encoding="utf-8")
    # the CJK package only when a name or label is Chinese (a paper without it needs none)
    (out / "preamble.tex").write_text(preamble(cjk), encoding="utf-8")
    (out / "analysis.json").write_text(bundle.analysis.to_json() + "\n", encoding="utf-8")
    (out / "manifest.json").write_text(json.dumps(bundle.manifest.to_dict(), indent=2,
                                                  ensure_ascii=False) + "\n", encoding="utf-8")
    timing["tables"] = time.perf_counter() - t0
    general: list[Finding] = []
    t0 = time.perf_counter()
    (out / "report.md").write_text(report_md(bundle, built, numbers, general, legends),
                                   encoding="utf-8")
    (out / "report.html").write_text(report_html(bundle, built, numbers, general, legends),
                                     encoding="utf-8")
    timing["html"] = time.perf_counter() - t0


def _numbers(built: list[tuple[Section, SectionOutput]]) -> dict[str, int]:
    """Table and figure numbers in reading order (as LaTeX would number them)."""
    nums: dict[str, int] = {}
    t = f = 0
    for _, res in built:
        for tab in res.tables:
            t += 1
            nums[f"tab:{tab.key}"] = t
        for fig in res.figures:
            f += 1
            nums[f"fig:{fig.key}"] = f
    return nums


def _figures_tex(built, numbers) -> str:
    lines = ["% h2htalk report figures: \\input{figures} (needs graphicx; see preamble.tex)."]
    for _, res in built:
        for f in res.figures:
            env = "figure" if f.width == "column" else "figure*"
            width = r"\columnwidth" if f.width == "column" else r"\textwidth"
            lines += [rf"\begin{{{env}}}[tbp]", r"\centering",
                      rf"\includegraphics[width={width}]{{figures/{f.key}.pdf}}",
                      rf"\caption{{{tex(f.caption)}}}", rf"\label{{fig:{f.key}}}",
                      rf"\end{{{env}}}", ""]
    return "\n".join(lines)
