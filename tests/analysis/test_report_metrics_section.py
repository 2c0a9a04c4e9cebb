"""The report's section "Do the benchmark's metrics agree with psychologists?" from the
analysis JSON's ``metrics`` block (as ``h2h analyze`` writes it after ``h2h metrics run``):
its findings, its LaTeX table in an ACL column and in ``article``, its figure in the house
style. The block is laid over the demo study's real bundle, with long metric names."""

from __future__ import annotations

import copy

import pytest

from analysis.analyze import AnalysisOptions
from analysis.report.bundle import build_bundle
from analysis.report.sections import build_sections
from analysis.report.write import write_report
from data.engine import get_engine
from tests.analysis.test_report_latex import ACL, ARTICLE, compile_problems

pytestmark = pytest.mark.integration  # left out of `make test-fast`

METRICS = ["bleu", "chrf", "rougeL", "embedding_paraphrase-multilingual-MiniLM-L12-v2"]


def _ci(v, w=0.08):
    return {"value": v, "low": v - w, "high": v + w}


def _block(dims: list[str], judges: list[str]) -> dict:
    out = {"design": "…", "kappa": "…", "notes": [], "dimensions": {}}
    for k, d in enumerate(dims):
        ceiling = 0.6 + 0.05 * k
        rows = [{"name": "human ceiling", "kind": "ceiling", "status": "ok",
                 "spearman": _ci(ceiling), "kendall_tau_b": _ci(ceiling - 0.1),
                 "pearson": _ci(ceiling)}]
        for j, name in enumerate(judges):
            v = ceiling - 0.02 * (j + 1)
            rows.append({"name": name, "kind": "judge", "status": "ok", "spearman": _ci(v),
                         "kendall_tau_b": _ci(v), "pearson": _ci(v),
                         "minus_ceiling": {"spearman": _ci(v - ceiling, 0.03)}})
        for i, name in enumerate(METRICS):
            v = 0.1 + 0.05 * i
            rows.append({"name": name, "kind": "metric", "status": "ok", "spearman": _ci(v),
                         "kendall_tau_b": _ci(v), "pearson": _ci(v), "qwk": None,
                         "minus_ceiling": {"spearman": _ci(v - ceiling, 0.05)}})
        system = {"n_models": 4, "n_scenarios": 12, "n_items": 96, "B": 50, "seed": 0,
                  "notes": [], "human_means": {"m1": 3.1, "m2": 3.4, "m3": 2.9, "m4": 3.8},
                  "kinds": {r["name"]: r["kind"] for r in rows[1:]},
                  "rows": {r["name"]: {"kendall_tau_b": _ci(0.33, 0.4),
                                       "pairwise_accuracy": _ci(0.67, 0.2),
                                       "pairs_ordered_by_humans": 6,
                                       "model_means": {"m1": 0.2}} for r in rows[1:]}}
        out["dimensions"][d] = {"status": "ok", "n_items": 96, "n_pairs": 288, "B": 50,
                                "seed": 0, "level": 0.95, "rows": rows,
                                "notes": ["2 items lack a score from some judge"],
                                "system": system}
    # the block's dimensions in an order other than the rubric's: the section restores it
    out["dimensions"] = dict(reversed(out["dimensions"].items()))
    return out


@pytest.fixture(scope="module")
def bundle(tmp_path_factory, demo_template):
    tmp = tmp_path_factory.mktemp("metrics")
    db = demo_template.copy_to(tmp)
    b = build_bundle(get_engine(str(db)), AnalysisOptions(B=50, seed=0))
    assert "metrics" not in b["analysis"] or not b["analysis"]["metrics"]
    dims = [d["key"] for d in b["dimensions"]]
    b = copy.deepcopy(b)
    b["analysis"]["metrics"] = _block(dims, sorted(b["analysis"]["judges"]))
    return b


def test_without_metric_scores_there_is_no_section(tmp_path_factory, bundle):
    plain = copy.deepcopy(bundle)
    del plain["analysis"]["metrics"]
    assert "metrics" not in [s.key for s, _ in build_sections(plain)]


def test_the_section_states_the_best_metric_against_the_ceiling(bundle):
    (sec, out), = [(s, o) for s, o in build_sections(bundle) if s.key == "metrics"]
    assert sec.title == "Do the benchmark's metrics agree with psychologists?"
    dims = [d["key"] for d in bundle["dimensions"]]
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
    labels = [d["label"] for d in bundle["dimensions"]]
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
