"""report.html: one self-contained file (plotly.js inline, no font or script from elsewhere, so
it opens offline) that reads top-down: the findings in plain words, then one section per
question with its focused tables and figures, the full tables collapsed and sortable, and the
reproducibility record last."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pandas as pd

from .figures import Figure
from .format import dim_labels, dim_order, fmt, fmt_est, is_missing, sentence
from .model import ReportBundle
from .paper import Group, PaperTable
from .sections import Finding, Section, SectionOutput, glance_table
from .tables import HEADERS, Table

__all__ = ["report_html", "detail_frame", "LEGEND"]

e = html.escape

LEGEND = ("How to read the numbers: an estimate is followed by its 95% confidence interval in "
          "brackets, [low, high]; coefficients have 3 decimals, scores and differences in "
          "scale points 2; “—” marks a value that cannot be estimated on these data (the "
          "section's notes say why); n counts items; Δ is a judge's QWK minus the human "
          "ceiling's, the evidence of its verdict.")

_CSS = """
:root{--ink:#1f2328;--muted:#59636e;--rule:#d1d9e0;--can:#1a7f37;--cannot:#cf222e;
--wait:#9a6700;--note:#59636e}
body{font-family:Georgia,'Nimbus Roman','Times New Roman',serif;max-width:1040px;margin:2rem auto;
padding:0 1.2rem;color:var(--ink);line-height:1.5}
h1{font-size:1.75rem;margin-bottom:.2rem}h2{margin-top:2.4rem;border-bottom:1px solid var(--rule);
padding-bottom:.2rem}h3{margin:1.2rem 0 .3rem}.meta,.caption,figcaption,.intro{color:var(--muted)}
.meta{margin-top:0}.banner{background:#fff8c5;border:1px solid #d4a72c;padding:.5rem .8rem;
border-radius:.3rem}nav ol{columns:2;padding-left:1.2rem}
.legend{font-size:.92rem;color:var(--muted)}
ul.findings{list-style:none;padding-left:0;margin:.2rem 0 .8rem}
ul.findings li{padding:.25rem .6rem;margin:.2rem 0;border-left:4px solid var(--rule)}
li.can_replace{border-color:var(--can)!important;background:#dafbe1}
li.cannot_replace{border-color:var(--cannot)!important;background:#ffebe9}
li.not_enough_evidence{border-color:var(--wait)!important;background:#fff8c5}
li.not_estimable,li.note{border-color:var(--note)!important;color:var(--muted)}
li.caveat{border-color:var(--wait)!important;font-style:italic}
li.caveat::before{content:"Caveat: ";font-weight:bold;font-style:normal}
table{border-collapse:collapse;font-size:.88rem;margin:.4rem 0}
th,td{padding:.2rem .55rem;text-align:right;vertical-align:top}
th{border-bottom:1px solid var(--ink);font-weight:600}td:first-child,th:first-child{text-align:left}
table.paper{border-top:2px solid var(--ink);border-bottom:2px solid var(--ink)}
td.text,th.text{text-align:left}tr.group td{font-style:italic;border-top:1px solid var(--rule);
text-align:left}td.best{font-weight:bold}
figure{margin:1.2rem 0}figure.col{max-width:620px}figcaption{font-size:.9rem;margin-top:.3rem}
details{margin:1rem 0;border:1px solid var(--rule);border-radius:.3rem;padding:.4rem .8rem}
details summary{cursor:pointer;font-weight:600}details .wrap{overflow-x:auto}
table.sortable th{cursor:pointer;user-select:none;background:#f6f8fa}
table.sortable th[aria-sort=ascending]::after{content:" ▲"}
table.sortable th[aria-sort=descending]::after{content:" ▼"}
table.sortable td{border-bottom:1px solid #eef1f4}pre{white-space:pre-wrap;font-size:.8rem}
table.glance{border-top:2px solid var(--ink);border-bottom:2px solid var(--ink);margin:.6rem 0 1rem}
table.glance th,table.glance td{text-align:left;border-bottom:1px solid #eef1f4}
table.glance td.can_replace{color:var(--can);font-weight:600}
table.glance td.cannot_replace{color:var(--cannot);font-weight:600}
table.glance td.not_enough_evidence{color:var(--wait)}table.glance td.note{color:var(--muted)}
"""

# A few lines rather than a library: the report must not fetch anything.
_SORT_JS = """
document.querySelectorAll('table.sortable').forEach(function(t){
 t.querySelectorAll('th').forEach(function(th,i){
  th.tabIndex=0;
  function go(){var b=t.tBodies[0],rows=Array.from(b.rows),
   asc=th.getAttribute('aria-sort')!=='ascending';
   t.querySelectorAll('th').forEach(function(h){h.removeAttribute('aria-sort')});
   th.setAttribute('aria-sort',asc?'ascending':'descending');
   function key(r){var c=r.cells[i],v=c.getAttribute('data-v');
    if(v!==null&&v!==''){return [0,parseFloat(v)]}
    return [c.textContent.trim()===''?2:1,c.textContent]}
   rows.sort(function(x,y){var a=key(x),c=key(y);if(a[0]!==c[0])return a[0]-c[0];
    var d=a[1]<c[1]?-1:a[1]>c[1]?1:0;return asc?d:-d});
   rows.forEach(function(r){b.appendChild(r)})}
  th.addEventListener('click',go);th.addEventListener('keydown',function(ev){if(ev.key==='Enter')go()})
 })});
"""


def _paper_html(t: PaperTable, number: int, legend: str) -> str:
    head = "".join(f"<th class='{'num' if c.numeric else 'text'}' scope='col'>{e(c.head)}</th>"
                   for c in t.cols)
    body = []
    for r in t.rows:
        if isinstance(r, Group):
            body.append(f"<tr class='group'><td colspan='{len(t.cols)}'>{e(r.title)}</td></tr>")
            continue
        cells = []
        for c, col in zip(r, t.cols, strict=True):
            cls = ["num" if col.numeric else "text"]
            if getattr(c, "bold", False):
                cls.append("best")
            cells.append(f"<td class='{' '.join(cls)}'>{e(t.text(c, col))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    name = e(t.csv or t.key)
    csv = (f" Full precision: <a href='tables/{name}.csv'>tables/{name}.csv</a>; LaTeX: "
           f"<code>tables/{e(t.key)}.tex</code>.")
    return (f"<figure class='table' id='tab-{e(t.key)}'><table class='paper'><thead><tr>{head}"
            f"</tr></thead><tbody>{''.join(body)}</tbody></table><figcaption><b>Table {number}."
            f"</b> {e(sentence(t.title))} {e(t.caption)} {e(legend)}{csv}</figcaption></figure>")


def detail_frame(t: Table, labels: dict[str, str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A full table for reading (readable headers, rubric labels, CIs folded into
    ``value [low, high]``, rounded) and the raw values of each cell for sorting."""
    df = t.df.copy()
    if "dimension" in df.columns:
        df["dimension"] = df["dimension"].map(lambda k: labels.get(k, k))
    shown, raw = {}, {}
    folded = {lo for _, lo, _ in t.ci_pairs} | {hi for _, _, hi in t.ci_pairs}
    cis = {v: (lo, hi) for v, lo, hi in t.ci_pairs}
    for col in df.columns:
        if col in folded:
            continue
        head, kind = HEADERS.get(col, (col.replace("_", " "), None))
        vals = df[col].tolist()
        signed = col in ("judge_minus_ceiling", "difference", "diff", "bias")
        if col in cis:
            lo, hi = (df[c].tolist() for c in cis[col])
            shown[head] = [fmt_est(v, a, b, kind or "coef", signed=signed)
                           for v, a, b in zip(vals, lo, hi, strict=True)]
        elif kind:
            shown[head] = [fmt(v, kind, signed=signed) for v in vals]
        else:
            shown[head] = ["" if is_missing(v) else fmt(v) if isinstance(v, bool) else
                           _readable(col, str(v), labels) for v in vals]
        raw[head] = [v if kind and not is_missing(v) and not isinstance(v, bool) else None
                     for v in vals]
    return pd.DataFrame(shown), pd.DataFrame(raw)


# values of the CSVs that are keys (stable for R and pandas), as a reader reads them
_VALUES = {"metric": {"qwk": "QWK", "alpha_with_judge": "α with judge", "mae": "MAE",
                      "spearman": "Spearman's ρ", "kendall": "Kendall's τ-b",
                      "pearson": "Pearson's r"},
           "icc_method": {"reml": "REML", "anova": "ANOVA"}}


def _readable(col: str, v: str, labels: dict[str, str]) -> str:
    """A text cell of a full table for reading: known keys by their names, and a leading
    dimension key ("memory_fidelity: …") by the rubric's label."""
    if v in _VALUES.get(col, {}):
        return _VALUES[col][v]
    if col == "task":  # as the paper tables' groups read
        return "All task families" if v == "all" else v.capitalize()
    key, sep, rest = v.partition(": ")
    if sep and key in labels:
        return f"{labels[key]}: {rest}"
    return v


def _detail_html(t: Table, labels: dict[str, str]) -> str:
    shown, raw = detail_frame(t, labels)
    if shown.empty:
        return ""
    # text columns (no number to sort by) read from the left, numbers from the right
    text = {h: all(v is None or pd.isna(v) for v in raw[h].tolist()) for h in shown.columns}
    head = "".join(f"<th scope='col' class='{'text' if text[h] else 'num'}'>{e(h)}</th>"
                   for h in shown.columns)
    cols = [(shown[h].tolist(), raw[h].tolist(), text[h]) for h in shown.columns]
    rows = []
    for i in range(len(shown)):
        cells = []
        for vals, raws, is_text in cols:
            v = raws[i]
            dv = "" if v is None or pd.isna(v) else f" data-v='{float(v)!r}'"
            cells.append(f"<td{dv} class='{'text' if is_text else 'num'}'>{e(str(vals[i]))}"
                         "</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (f"<h4 id='full-{e(t.key)}'>{e(t.title)}</h4><p class='caption'>{e(t.caption)} "
            f"CSV: <a href='tables/{e(t.key)}.csv'>tables/{e(t.key)}.csv</a>. Click a column "
            "header to sort.</p><div class='wrap'><table class='sortable'><thead><tr>"
            f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>")


def _figure_html(f: Figure, number: int) -> str:
    """The figure drawn by the inline plotly.js at screen size (the files keep print size)."""
    spec = json.loads(f.fig.to_json())
    lay = spec.setdefault("layout", {})
    lay["height"] = round((lay.get("height") or 300) * (1.55 if f.width == "column" else 1.45))
    lay.pop("width", None)
    lay["autosize"] = True  # the print-size fonts stay: margins and labels keep their room
    cfg = {"displaylogo": False, "responsive": True}
    div = f"plot-{f.key}"
    script = (f"Plotly.newPlot({json.dumps(div)}, {json.dumps(spec['data'])}, "
              f"{json.dumps(lay)}, {json.dumps(cfg)});").replace("</", "<\\/")
    cls = "col" if f.width == "column" else "text"
    return (f"<figure class='fig {cls}' id='fig-{e(f.key)}'><div role='img' "
            f"aria-label='{e(f.alt)}'><div id='{e(div)}' class='plotly-graph-div'></div>"
            f"<script>{script}</script></div><figcaption><b>Figure {number}.</b> "
            f"{e(f.caption)} Files: <a href='figures/{e(f.key)}.pdf'>PDF</a>, "
            f"<a href='figures/{e(f.key)}.svg'>SVG</a>, <a href='figures/{e(f.key)}.png'>PNG"
            "</a>.</figcaption></figure>")


def _glance_html(bundle: ReportBundle, built) -> str:
    columns, rows = glance_table(bundle, built)
    if not rows:
        return ""
    head = "<th scope='col'>Dimension</th>" + "".join(f"<th scope='col'>{e(c)}</th>"
                                                      for c in columns)
    body = "".join("<tr><th scope='row'>" + e(label) + "</th>" + "".join(
        f"<td class='{g.kind}'>{e(g.text)}</td>" if g else "<td class='note'>—</td>"
        for g in cells) + "</tr>" for label, cells in rows)
    return (f"<table class='glance'><thead><tr>{head}</tr></thead><tbody>{body}</tbody>"
            "</table>")


def _findings_html(bundle: ReportBundle, findings: list[Finding], built) -> str:
    labels = dim_labels(bundle)
    parts = ["<section id='findings'><h2>Findings</h2>", _glance_html(bundle, built),
             f"<p class='legend'>{e(LEGEND)}</p>"]
    general = [f for f in findings if f.dimension is None]
    if general:
        parts.append("<ul class='findings'>" + "".join(
            f"<li class='{f.kind}'>{e(f.text)}</li>" for f in general) + "</ul>")
    for d in dim_order(bundle):
        fs = [f for f in findings if f.dimension == d]
        if fs:
            parts.append(f"<h3>{e(labels[d])}</h3><ul class='findings'>" + "".join(
                f"<li class='{f.kind}'>{e(f.text)}</li>" for f in fs) + "</ul>")
    parts.append("</section>")
    return "".join(parts)


def _plotly_js() -> str:
    """plotly.js as plotly.py ships it (read directly: plotly.offline costs a third of a
    second to import for this one file)."""
    import plotly

    return (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_text(
        encoding="utf-8")


def report_html(bundle: ReportBundle, built: list[tuple[Section, SectionOutput]],
                numbers: dict[str, int], general: list[Finding], legends: dict[str, str]
                ) -> str:
    m = bundle.manifest
    labels = dim_labels(bundle)
    title = f"{m.study}: agreement and evaluation report"
    c = m.counts
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             "<meta name='viewport' content='width=device-width, initial-scale=1'>",
             f"<title>{e(title)}</title><style>{_CSS}</style>",
             f"<script>{_plotly_js()}</script></head><body>",
             f"<header><h1>{e(title)}</h1><p class='meta'>Rubric <b>{e(m.rubric.name)}"
             f"</b>, version <code>{e(m.rubric.version)}</code> · {c.items} items · "
             f"{c.raters} raters · {c.ratings} ratings · {c.judgments} judgments · "
             f"generated {e(m.generated_at)}</p></header>"]
    if c.simulated_raters:
        parts.append(f"<p class='banner'>Demo data: ratings from {len(c.simulated_raters)} "
                     "<b>simulated</b> raters are included"
                     + (", and the judges marked (simulated) called no model"
                        if m.simulated_judges else "") + ".</p>")
    toc = ["<li><a href='#findings'>Findings</a></li>"] + [
        f"<li><a href='#{e(s.key)}'>{e(s.title)}</a></li>" for s, _ in built] + [
        "<li><a href='#reproducibility'>Reproducibility</a></li>"]
    parts.append("<nav aria-label='Contents'><ol>" + "".join(toc) + "</ol></nav>")
    findings = general + [f for _, out in built for f in out.findings]
    parts.append(_findings_html(bundle, findings, built))
    for s, out in built:
        parts.append(f"<section id='{e(s.key)}'><h2>{e(s.title)}</h2>"
                     f"<p class='intro'>{e(s.intro)}</p>")
        for t in out.tables:
            parts.append(_paper_html(t, numbers[f"tab:{t.key}"], legends[t.key]))
        for f in out.figures:
            parts.append(_figure_html(f, numbers[f"fig:{f.key}"]))
        if out.details or out.notes:
            n = len(out.details)
            parts.append(f"<details><summary>Full tables ({n}) and notes</summary>")
            parts += [_detail_html(t, labels) for t in out.details]
            if out.notes:
                parts.append("<h4>Notes</h4><ul>" + "".join(f"<li>{e(x)}</li>"
                                                            for x in out.notes) + "</ul>")
            parts.append("</details>")
        parts.append("</section>")
    parts.append("<section id='reproducibility'><h2>Reproducibility</h2><p>Everything needed "
                 "to reproduce these numbers: the rubric version hash, each judge "
                 "configuration with its prompt template hash, bootstrap B and seed, package "
                 "versions (also in <code>manifest.json</code>).</p><details><summary>"
                 "manifest.json</summary><pre>"
                 + e(json.dumps(m.to_dict(), indent=2, ensure_ascii=False))
                 + "</pre></details></section>")
    parts.append(f"<script>{_SORT_JS}</script></body></html>")
    return "".join(parts)

