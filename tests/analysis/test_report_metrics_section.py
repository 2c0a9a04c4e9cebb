"""The report's section "Do the benchmark's metrics agree with psychologists?" from the
analysis JSON's ``metrics`` block (as ``h2h analyze`` writes it after ``h2h metrics run``):
its findings, its LaTeX table in an ACL column and in ``article``, its figure in the house
style. The block is laid over the demo study's real bundle, with long metric names."""

from __future__ import annotations

from dataclasses import replace

import pytest

from analysis.analyze import AnalysisOptions
from analysis.refmetrics.results import (
    MetricComparison,
    MetricDimension,
    MetricRow,
    SystemAgreement,
    SystemRow,
)
from analysis.report.bundle import build_bundle
from analysis.report.sections import build_sections
from analysis.report.write import write_report
from analysis.serialize import Interval
from data.engine import get_engine
from tests.analysis.test_report_latex import ACL, ARTICLE, compile_problems

pytestmark = pytest.mark.integration  # left out of `make test-fast`

METRICS = ["bleu", "chrf", "rougeL", "embedding_paraphrase-multilingual-MiniLM-L12-v2"]


def _ci(v, w=0.08):
    return Interval(v, v - w, v + w)


def _block(dims: list[str], judges: list[str]) -> MetricComparison:
    out = {}
    for k, d in enumerate(dims):
        ceiling = 0.6 + 0.05 * k
        rows = [MetricRow("human ceiling", "ceiling", "ok", pearson=_ci(ceiling),
                          spearman=_ci(ceiling), kendall_tau_b=_ci(ceiling - 0.1))]
        for j, name in enumerate(judges):
            v = ceiling - 0.02 * (j + 1)
            rows.append(MetricRow(name, "judge", "ok", _ci(v), _ci(v), _ci(v),
                                  {"spearman": _ci(v - ceiling, 0.03)}))
        for i, name in enumerate(METRICS):
            v = 0.1 + 0.05 * i
            rows.append(MetricRow(name, "metric", "ok", _ci(v), _ci(v), _ci(v),
                                  {"spearman": _ci(v - ceiling, 0.05)}))
        system = SystemAgreement(
            4, 12, 96, "model", "scenarios", 50, 0, 3, (),
            {r.name: SystemRow({"m1": 0.2}, 6, _ci(0.33, 0.4), _ci(0.67, 0.2))
             for r in rows[1:]}, {"m1": 3.1, "m2": 3.4, "m3": 2.9, "m4": 3.8},
            {r.name: r.kind for r in rows[1:]})
        out[d] = MetricDimension("ok", 96, 288, 50, 0, 0.95, tuple(rows),
                                 ("2 items lack a score from some judge",), system)
    # the block's dimensions in an order other than the rubric's: the section restores it
    return MetricComparison("…", "…", dict(reversed(out.items())), ())


@pytest.fixture(scope="module")
def bundle(tmp_path_factory, demo_template):
    tmp = tmp_path_factory.mktemp("metrics")
    db = demo_template.copy_to(tmp)
    b = build_bundle(get_engine(str(db)), AnalysisOptions(B=50, seed=0))
    assert not b.analysis.metrics
    dims = [d.key for d in b.dimensions]
    return replace(b, analysis=replace(b.analysis,
                                       metrics=_block(dims, sorted(b.analysis.judges))))


def test_without_metric_scores_there_is_no_section(tmp_path_factory, bundle):
    plain = replace(bundle, analysis=replace(bundle.analysis, metrics=None))
    assert "metrics" not in [s.key for s, _ in build_sections(plain)]


def test_the_section_states_the_best_metric_against_the_ceiling(bundle):
    (sec, out), = [(s, o) for s, o in build_sections(bundle) if s.key == "metrics"]
    assert sec.title == "Do the benchmark's metrics agree with psychologists?"
    dims = [d.key for d in bundle.dimensions]
    assert [f.dimension for f in out.findings] == dims  # the rubric's order
    first = out.findings[0].text
    assert first.startswith(f"The best reference-based metric, {METRICS[-1]}, correlates")
    assert "ρ = 0.250 [0.170, 0.330]" in first and "ρ = 0.600 [0.520, 0.680]" in first
    assert "falls short of the human ceiling" in first
    (table,) = out.tables
    assert table.key == "metrics_vs_humans" and table.csv == "metrics_vs_humans"
    assert "B = 50, seed = 0" in table.caption
    # the highest ρ per dimension is bold: the first judge, never the ceiling
    bold = [r[0] for r in table.rows if isinstance(r, tuple) and r[1].bold]
    assert len(bold) == len(dims) and all(b.startswith("sim-judge-anchored") for b in bold)
    # the ceiling is the reference of Δ and τ: a blank there, not a "not estimable" dash
    ceilings = [r for r in table.rows if isinstance(r, tuple) and r[0] == "Human ceiling"]
    assert len(ceilings) == len(dims) and all(r[2:] == ("", "") for r in ceilings)
    assert any("2 items lack a score" in n for n in out.notes)
    (fig,) = out.figures
    assert fig.key == "metrics_vs_psychologists" and fig.width == "text"
    assert fig.fig.layout.template.layout.font.family.startswith("Liberation Serif")
    assert not fig.fig.layout.title.text
    labels = [d.label for d in bundle.dimensions]
    assert list(fig.fig.layout.yaxis.ticktext) == labels
    assert [t.name for t in fig.fig.data][0] == "Human ceiling"
    assert fig.fig.layout.xaxis.title.text == "Spearman's ρ with the other humans' mean"
    assert "Human ceiling 0.600" in fig.alt and METRICS[-1] in fig.alt


def test_the_sections_table_fits_an_acl_column_and_an_article(bundle, tmp_path):
    out = tmp_path / "report"
    write_report(bundle, out, figures=False)
    tex = (out / "tables" / "metrics_vs_humans.tex").read_text(encoding="utf-8")
    assert "\\resizebox" not in tex and "\\toprule" in tex
    assert "embedding\\_\\allowbreak{}" in tex
    assert "$\\tau$ (models)" in tex and "? (models)" not in tex  # τ set, not replaced by ?
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "Do the benchmark's metrics agree with psychologists?" in md
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "The best reference-based metric" in html.split("<details")[0]
    body = "\\input{tables/metrics_vs_humans.tex}\n"
    for name, template in (("acl", ACL), ("article", ARTICLE)):
        problems = compile_problems(out, name, template, body, f"metrics-{name}")
        assert problems == [], f"{name}: {problems}"
