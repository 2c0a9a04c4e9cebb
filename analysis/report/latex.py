r"""LaTeX a paper can ``\input``: one file per table, ``tables.tex`` including them all, and
``preamble.tex`` with the packages they need.

Tables are designed for the page instead of being shrunk to it (no ``\resizebox``): booktabs
rules, numbers in siunitx ``S`` columns aligned on the decimal point, each CI on a line of
its own under its estimate in a smaller size, and one flexible ``tabularx`` column (the
dimension or model name, or a verdict) that wraps, so the table takes exactly
``\columnwidth`` (a ``table``) or ``\textwidth`` (a ``table*``).

Which one, and at which size, is decided from an estimate of the table's natural width in
Times (the ACL body font) against the narrowest page it must fit: an ACL/ARR column
(7.7 cm = 218 pt at an 11 pt body, so ``\small`` is 10 pt) and, for ``table*``, the
smaller of the ACL text width (16 cm = 455 pt) and plain ``article`` (345 pt; its 9 pt
Computer Modern ``\small`` is as wide as 10 pt Times). A table that fits neither is set in
``\footnotesize``; if it still does not fit, its number columns continue in further floats
("continued: ..."), as do rows beyond a page, so that no float is wider or taller than the
page, each part numbered as the same table. The compile test
(tests/analysis/test_report_latex.py) holds these estimates to account: no overfull box, no
"Float too large", in both document classes.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from .format import MISSING, is_missing, sentence
from .paper import MARKS, Col, Est, Group, Note, PaperTable

__all__ = ["PREAMBLE", "PREAMBLE_CJK", "preamble", "tex", "table_tex", "tables_tex",
           "legend_for"]

PREAMBLE = r"""% Packages for the h2htalk report's tables and figures: \input{preamble} before
% \begin{document} (any of them your document loads already can stay).
\usepackage{booktabs}  % \toprule, \midrule, \bottomrule
\usepackage{siunitx}   % S columns: numbers aligned on the decimal point (siunitx 3)
\usepackage{tabularx}  % tables exactly \columnwidth or \textwidth wide (loads array)
\usepackage{graphicx}  % \includegraphics{figures/....pdf}
% \htname{text}: a name in a table's flexible column, beside an estimate whose CI is on the
% row below; it runs on into that row (and below it when it needs more lines) instead of
% pushing the CI down. \htnamerest{text}, on the row below, keeps the room the rest needs.
\newbox\htnamebox
\providecommand{\htname}[1]{\setbox\htnamebox=\vtop{\strut#1\strut}%
  \dp\htnamebox=0pt\leavevmode\box\htnamebox}
\providecommand{\htnamerest}[1]{\setbox\htnamebox=\vtop{\strut#1\strut}%
  \ifdim\dp\htnamebox>\baselineskip
    \rule[-\dimexpr\dp\htnamebox-\baselineskip\relax]{0pt}{\dimexpr\dp\htnamebox-\baselineskip\relax}%
  \fi}
"""

PREAMBLE_CJK = r"""% Chinese in names and labels: \htzh{...} sets it in the Song face of the CJK
% package (Debian: latex-cjk-chinese and latex-cjk-chinese-arphic-gbsn00lp; TeX Live: the
% cjk package and its arphic fonts), so that pdflatex compiles it.
\usepackage{CJKutf8}
\DeclareRobustCommand{\htzh}[1]{\begin{CJK}{UTF8}{gbsn}#1\end{CJK}}
"""
CJK_COMMAND = "\\htzh{"


def preamble(cjk: bool = False) -> str:
    """The packages the tables and figures need; ``cjk`` when some text holds Chinese
    (:data:`CJK_COMMAND` in a table or caption), which needs the CJK package too."""
    return PREAMBLE + (PREAMBLE_CJK if cjk else "")


# Han characters, CJK punctuation, kana and full-width forms: the CJK package's UTF-8 Song
# font sets them (emoji and other scripts it does not have stay "?")
_CJK_RUN = re.compile("([\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
                      "\uff01-\uff60\U00020000-\U0002fa1f]+)")


_ESC = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
        "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}", "—": "---", "–": "--", "≥": r"$\geq$", "≤": r"$\leq$",
        "<": r"$<$", ">": r"$>$", "α": r"$\alpha$", "ω": r"$\omega$",
        "ρ": r"$\rho$", "τ": r"$\tau$", "κ": r"$\kappa$", "Δ": r"$\Delta$", "ε": r"$\varepsilon$",
        "×": r"$\times$", "−": r"$-$", "…": r"\ldots{}", "±": r"$\pm$",
        "≈": r"$\approx$", "·": r"$\cdot$", "‘": "`", "’": "'", "“": "``",
        "”": "''", "\u00a0": "~",
        **{m: rf"\textsuperscript{{{x}}}" for m, x in zip("ᵃᵇᶜᵈᵉᶠᵍʰ", "abcdefgh", strict=True)}}
_BREAK_AFTER = set("-_/.")


def tex(s: object) -> str:
    r"""Text for LaTeX: special characters escaped, the few Greek letters and symbols of the
    report as math, accents kept through their base letter, long names breakable after
    ``-``, ``_``, ``/``, ``.`` (and every 8 characters in a name with no such place); Chinese
    in ``\htzh{...}`` (:data:`PREAMBLE_CJK`); other letters through their base letter,
    anything else pdflatex cannot set as ``?``.

    >>> tex("memory_fidelity ≥ 0.8 & 50%")
    'memory\\_\\allowbreak{}fidelity $\\geq$ 0.8 \\& 50\\%'
    >>> tex("通义千问-7b（SAP）")
    '\\htzh{通义千问}-\\allowbreak{}7b\\htzh{（}SAP\\htzh{）}'
    """
    out = []
    for word in re.split(r"(\s+)", str(s)):
        # a run of Chinese is set by the CJK package, which breaks lines between its
        # characters itself; the rest of the word as before
        for k, part in enumerate(_CJK_RUN.split(word)):
            out.append(rf"\htzh{{{part}}}" if k % 2 else _word(part))
    return "".join(out)


def _word(w: str) -> str:
    if not w or w.isspace():
        return " " if w else ""
    long_plain = len(w) > 16 and not any(ch in _BREAK_AFTER for ch in w[:-1])
    parts = []
    for i, ch in enumerate(w):
        if ch in _ESC:
            piece = _ESC[ch]
        elif ord(ch) < 128 or 0xC0 <= ord(ch) <= 0x17F and ch not in "×÷":
            piece = ch  # ASCII, and the Latin accented letters LaTeX's utf8 input sets
        else:
            base = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
            piece = _ESC.get(base, base) if base else "?"
        parts.append(piece)
        last = i == len(w) - 1
        nxt = w[i + 1:i + 2]
        breakable = ch in "-_/" or (ch == "." and nxt.isalpha())  # not inside "0.5"
        if not last and (breakable or (long_plain and (i + 1) % 8 == 0)):
            parts.append(r"\allowbreak{}")
    return "".join(parts)


# --- estimating widths (points at 10 pt Times; deliberately a little generous) -------------

_W = {**{c: 5.0 for c in "0123456789"}, ".": 2.5, ",": 2.5, " ": 2.5, "[": 3.4, "]": 3.4,
      "+": 7.0, "−": 7.0, "-": 3.4, "%": 8.4, "(": 3.4, ")": 3.4, "≈": 5.5, "—": 10.0}


def _width(s: str, size: float = 10.0) -> float:
    w = 0.0
    for ch in s:
        if ch in _W:
            w += _W[ch]
        elif _CJK_RUN.match(ch):
            w += 10.0  # a square em
        elif ch.isupper():
            w += 7.2
        elif ch in "ilj'ft":
            w += 3.0
        elif ch in "mwMW":
            w += 7.8
        else:
            w += 4.8
    return w * size / 10.0


# Budgets in points of Times at \small = 10 pt (ACL's 11 pt body). Plain article sets \small
# in 9 pt Computer Modern, about 11% wider than Times, which measures the same as ACL's
# 10 pt Times (checked with \settowidth): its 345 pt text width binds a table*, ACL's 218 pt
# column a table. 3% is kept spare.
COLUMN_PT = 218.0 * 0.97
TEXT_PT = 345.0 * 0.97
SEP = 8.0              # 2 x \tabcolsep (4 pt)
MIN_WRAP = 42.0
_SIZES = ((r"\small", r"\footnotesize", 1.0), (r"\footnotesize", r"\scriptsize", 0.9))
# A float must fit a page: the ACL page is 24.7 cm (about 58 lines of \small) with captions
# of about 45 characters a line in a column (95 across), plain article about 47 lines with
# captions of 76 characters. Body lines are counted generously (a CI line as a full line).
_PAGE_LINES = ((58, 45, 95), (47, 76, 76))  # (lines, caption chars per line column, wide)


@dataclass(frozen=True)
class _Layout:
    wide: bool
    size: str
    ci_size: str
    col_chunks: tuple[tuple[int, ...], ...]  # number columns of each part (one float each)


def _num(v, col: Col, signed: bool | None = None) -> str:
    """A number as siunitx input (it typesets sign and decimal marker)."""
    from .format import fmt

    s = fmt(v, col.kind, signed=col.signed if signed is None else signed)  # type: ignore
    if s == MISSING:
        return s
    s = s.replace("−", "-").replace("%", "")
    if col.kind in ("coef", "p") and s.lstrip("+-").startswith("0."):
        s = s.replace("0.", ".", 1)  # APA: no leading zero for values bounded by 1
    return s


def _ci_text(c: Est, col: Col) -> str:
    """``[low, high]``, signed as the estimate is (``+.031`` in a difference column), as in
    the HTML, the Markdown and the findings."""
    if is_missing(c.low) and is_missing(c.high):
        return ""
    lo, hi = (_num(x, col) for x in (c.low, c.high))
    return f"[{lo}, {hi}]".replace("-", "−")


def _pieces_width(s: str, col: Col, size: float = 10.0) -> float:
    """Width of the widest piece a wrapping column cannot break (words, split after - _ /);
    a one-line column takes the whole text."""
    if col.kind != "wrap":
        return _width(s, size)
    return max((_width(x, size) for word in s.split() for x in _pieces(word)), default=0.0)


def _pieces(w: str) -> list[str]:
    """A word in the pieces between the places :func:`tex` lets LaTeX break it."""
    long_plain = len(w) > 16 and not any(ch in _BREAK_AFTER for ch in w[:-1])
    pieces, cur = [], ""
    for i, ch in enumerate(w):
        cur += ch
        breakable = ch in "-_/" or (ch == "." and w[i + 1:i + 2].isalpha())
        if i < len(w) - 1 and (breakable or (long_plain and (i + 1) % 8 == 0)):
            pieces.append(cur)
            cur = ""
    return pieces + [cur] if cur else pieces


def _wrap(text: str, room: float, size: float) -> list[str]:
    """``text`` broken into lines of at most ``room`` points (estimated, generously) at the
    places LaTeX could break it: how many lines a record takes, for splitting a table that
    is longer than a page."""
    lines: list[str] = []
    cur = ""
    for word in text.split():
        for k, piece in enumerate(_pieces(word)):
            cand = cur + (" " if cur and k == 0 else "") + piece
            if cur and _width(cand, size) > room:
                lines.append(cur)
                cur = piece
            else:
                cur = cand
    return lines + [cur] if cur else lines or [""]


def _col_width(t: PaperTable, j: int, scale: float) -> float:
    col = t.cols[j]
    head = max((_width(p) for p in _head_lines(col.head)), default=0.0)
    w = head
    for r in t.rows:
        if isinstance(r, Group):
            continue
        c = r[j]
        if isinstance(c, Est):
            w = max(w, _width(_num(c.value, col)), _width(_ci_text(c, col), 9.0))
        elif isinstance(c, Note):
            w = max(w, _pieces_width(c.text, col), _pieces_width(c.sub, col, 9.0))
        elif col.kind == "wrap":
            w = max(w, _pieces_width(str(c or ""), col))
        elif isinstance(c, str):
            w = max(w, _width(c))
        elif col.numeric:
            w = max(w, _width(_num(c, col)))
        else:
            w = max(w, _width(str(c or "")))
    if col.kind == "wrap":
        w = max(w, MIN_WRAP)
    return w * scale


def _stub(t: PaperTable) -> list[int]:
    """The columns every part of a split table repeats: text and counts."""
    return [j for j, c in enumerate(t.cols) if not c.numeric or c.kind == "count"]


def _layout(t: PaperTable) -> _Layout:
    n = len(t.cols)
    stub = _stub(t)
    nums = [j for j in range(n) if j not in stub]
    natural = {size: sum(_col_width(t, j, scale) for j in range(n)) + SEP * (n - 1)
               for size, _, scale in _SIZES}
    # a column table in \small, then in \footnotesize, then a table* in either
    for wide, budget in ((False, COLUMN_PT), (True, TEXT_PT)):
        for size, ci_size, _ in _SIZES:
            if natural[size] <= budget:
                return _Layout(wide, size, ci_size, (tuple(nums),))
    # too wide even in \footnotesize: the number columns go in parts, a float each
    size, ci_size, scale = _SIZES[-1]
    widths = [_col_width(t, j, scale) for j in range(n)]
    room = TEXT_PT - sum(widths[j] for j in stub) - SEP * (len(stub) - 1)
    chunks: list[list[int]] = [[]]
    used = 0.0
    for j in nums:
        need = widths[j] + SEP
        if chunks[-1] and used + need > room:
            chunks.append([])
            used = 0.0
        chunks[-1].append(j)
        used += need
    return _Layout(True, size, ci_size, tuple(tuple(c) for c in chunks))


def _head_lines(head: str) -> list[str]:
    """A long header over two lines (three when very long), broken at spaces so that the
    longest line is as short as it can be."""
    words = head.split(" ")
    if len(head) <= 10 or len(words) == 1:
        return [head]
    n = 3 if len(head) > 24 and len(words) >= 3 else 2
    best: list[str] = [head]
    for cuts in _cuts(len(words), n):
        lines = [" ".join(words[a:b]) for a, b in zip((0,) + cuts, cuts + (len(words),),
                                                        strict=True)]
        if max(map(len, lines)) < max(map(len, best)):
            best = lines
    return best


def _cuts(n: int, parts: int) -> list[tuple[int, ...]]:
    if parts == 2:
        return [(i,) for i in range(1, n)]
    return [(i, j) for i in range(1, n) for j in range(i + 1, n)]


def _head(col: Col, align: str) -> str:
    lines = _head_lines(col.head)
    body = tex(lines[0]) if len(lines) == 1 else (
        rf"\begin{{tabular}}[b]{{@{{}}{align}@{{}}}}" + r"\\".join(tex(x) for x in lines)
        + r"\end{tabular}")
    return "{" + body + "}" if col.numeric else body


_PLAIN_SPECS = {"wrap": r">{\raggedright\arraybackslash}X", "text": "l", "count": "r"}


def _spec(t: PaperTable, j: int) -> str:
    """The column's alignment: text and counts as :data:`_PLAIN_SPECS`, every other kind a
    siunitx ``S`` column aligned on the decimal point."""
    col = t.cols[j]
    if col.kind in _PLAIN_SPECS:
        return _PLAIN_SPECS[col.kind]
    vals = [c.value if isinstance(c, Est) else c for r in t.rows if not isinstance(r, Group)
            for c in (r[j],)]
    nums = [_num(v, col) for v in vals if not is_missing(v) and not isinstance(v, str)]
    ints = max((len(s.lstrip("+-").split(".")[0]) for s in nums), default=1)
    dec = max((len(s.split(".")[1]) if "." in s else 0 for s in nums), default=0)
    sign = "+" if col.signed else ("-" if any(s.startswith("-") for s in nums) else "")
    opts = [f"table-format={sign}{ints}.{dec}"]
    if col.kind in ("coef", "p"):
        opts.append("print-zero-integer=false")
    if col.signed:
        opts.append("retain-explicit-plus")
    # Bold best values keep their weight: in text mode that is all detect-weight does, and
    # detect-weight's font checks were about half of a wide report's compile time (siunitx
    # 3.2; benchmarks/bench_latex_tables.py).
    opts.append("reset-text-series=false, mode=text")
    return "S[" + ", ".join(opts) + "]"


def _cell(c, col: Col, mark: str = "") -> str:
    dash = "{---" + tex(mark) + "}"
    if isinstance(c, Est):
        s = _num(c.value, col)
        if s == MISSING:
            return dash
        return (r"\bfseries " if c.bold else "") + s
    if isinstance(c, str) and col.numeric:  # a word where a number would be ("", "ref.")
        return "{" + tex(c) + "}"
    if col.numeric and col.kind != "count":
        s = _num(c, col)
        return dash if s == MISSING else s
    if col.kind == "count":
        return "---" if is_missing(c) else str(int(c))
    if isinstance(c, Note):
        return tex(c.text)
    return tex("" if c is None else c)


def _record(r: tuple, cols: list[int], t: PaperTable, lay: _Layout) -> list[list[str]]:
    r"""One record as the table rows it takes: the estimates on the first, their CIs (and a
    note's second line) on the second. A flexible column's text beside them is set by
    ``\htname`` (preamble.tex) across both rows, continuing below them when it needs more
    lines, so that a CI stays right under its estimate however many lines a long name
    takes (LaTeX would otherwise put the CI row under the name's last line)."""
    per_col: dict[int, list[str]] = {}
    flex: dict[int, str] = {}
    for j in cols:
        c, col = r[j], t.cols[j]
        text, sub = (c.text, c.sub) if isinstance(c, Note) else (None, "")
        if col.kind == "wrap":
            flex[j] = tex(str(c or "") if text is None else text) + (
                r"\newline{" + lay.ci_size + " " + tex(sub) + "}" if sub else "")
            continue
        lines = [_cell(c, col, t.mark(c, col))]
        if isinstance(c, Est) and (ci := _ci_text(c, col)):
            lines.append(_ci_cell(lay.ci_size + " " + tex(ci), j, cols, t))
        elif sub:
            lines.append(lay.ci_size + " " + tex(sub))
        per_col[j] = lines
    two = any(len(x) > 1 for x in per_col.values()) or any(
        isinstance(r[j], Note) and r[j].sub for j in flex)
    for j, body in flex.items():
        per_col[j] = [rf"\htname{{{body}}}", rf"\htnamerest{{{body}}}"] if two else [body]
    n = max(len(x) for x in per_col.values())
    return [[per_col[j][i] if i < len(per_col[j]) else "" for j in cols] for i in range(n)]


def _ci_cell(text: str, j: int, cols: list[int], t: PaperTable) -> str:
    """A CI under its estimate, centred in the number's column as siunitx centres text. In an
    ``S`` column it is set outside siunitx (a one-column ``\\multicolumn`` keeping the table's
    outer ``@{}``): siunitx examined every CI in each of tabularx's trial runs, a sixth of a
    wide report's compile time, for text it sets centred anyway."""
    if t.cols[j].kind in _PLAIN_SPECS:  # not an S column
        return "{" + text + "}"
    spec = ("@{}" if j == cols[0] else "") + "c" + ("@{}" if j == cols[-1] else "")
    return rf"\multicolumn{{1}}{{{spec}}}{{{text}}}"


def _wrap_room(t: PaperTable, lay: _Layout, cols: list[int]) -> float | None:
    """The estimated width of each flexible column of a part (what the other columns leave),
    None when the part has none."""
    scale = dict((size, sc) for size, _, sc in _SIZES)[lay.size]
    wrap = [j for j in cols if t.cols[j].kind == "wrap"]
    if not wrap:
        return None
    budget = TEXT_PT if lay.wide else COLUMN_PT
    room = budget - SEP * (len(cols) - 1) - sum(_col_width(t, j, scale) for j in cols
                                                 if j not in wrap)
    return max(room / len(wrap), MIN_WRAP * scale)


def _tabular(t: PaperTable, rows: list, cols: list[int], lay: _Layout, width: str) -> list[str]:
    spec = "".join(_spec(t, j) for j in cols)
    if not any(t.cols[j].kind == "wrap" for j in cols):
        # without a flexible column, tabularx would complain; let the first text column flex
        first = next((j for j in cols if not t.cols[j].numeric), None)
        if first is not None:
            spec = spec.replace(_spec(t, first), r">{\raggedright\arraybackslash}X", 1)
    lines = [rf"\begin{{tabularx}}{{{width}}}{{@{{}}{spec}@{{}}}}", r"\toprule",
             " & ".join(_head(t.cols[j], "c" if t.cols[j].numeric else "l") for j in cols)
             + r" \\", r"\midrule"]
    first_group = True
    after_record = False
    for r in rows:
        if isinstance(r, Group):
            if not first_group:
                lines.append(r"\midrule")
            lines.append(rf"\multicolumn{{{len(cols)}}}{{@{{}}>{{\raggedright\arraybackslash}}"
                         rf"p{{{width}}}@{{}}}}{{\itshape {tex(r.title)}}} \\")
            first_group, after_record = False, False
            continue
        record = _record(r, cols, t, lay)
        if after_record and (len(record) > 1 or t.has_ci):  # air between records of two lines
            lines.append(r"\addlinespace[2pt]")
        after_record = True
        lines += [" & ".join(cells) + r" \\" for cells in record]
    lines += [r"\bottomrule", r"\end{tabularx}"]
    return lines


def _max_lines(t: PaperTable, lay: _Layout, caption: str) -> int:
    """Body lines one float may hold beside its caption and the tabular's head and rules."""
    head = max(len(_head_lines(c.head)) for c in t.cols) + 2
    room = min(lines - -(-len(caption) // (wide if lay.wide else col)) - 1
               for lines, col, wide in _PAGE_LINES)
    return max(room - head - 2, 6)


def _row_lines(t: PaperTable, lay: _Layout):
    """A record's height in lines: two with a CI line, more where its text wraps in the
    flexible column (estimated for the first part; later parts have fewer columns, so their
    flexible column wraps less)."""
    cols = sorted(_stub(t) + list(lay.col_chunks[0]))
    room = _wrap_room(t, lay, cols)
    scale = dict((size, sc) for size, _, sc in _SIZES)[lay.size]

    def lines(r) -> int:
        n = len(_record(r, cols, t, lay))
        for j in cols:
            c = r[j]
            if room is not None and t.cols[j].kind == "wrap":
                text, sub = (c.text, c.sub) if isinstance(c, Note) else (str(c or ""), "")
                n = max(n, len(_wrap(text, room, 10.0 * scale)) + (1 if sub else 0))
        return n

    return lines


def _row_chunks(rows: tuple, row_lines, max_lines: int) -> list[list]:
    """Rows in pieces of at most ``max_lines`` lines (``row_lines(row)`` each); a piece that
    starts inside a group repeats the group's heading, marked "(continued)"."""
    chunks: list[list] = [[]]
    used = 0
    group: Group | None = None
    for r in rows:
        need = 1 if isinstance(r, Group) else row_lines(r)
        if chunks[-1] and used + need > max_lines:
            if isinstance(chunks[-1][-1], Group):  # never leave a heading at the bottom
                chunks.append([chunks[-1].pop()])
                used = 1
            else:
                chunks.append([Group(f"{group.title} (continued)")] if group and not
                              isinstance(r, Group) else [])
                used = len(chunks[-1])
        if isinstance(r, Group):
            group = r
        chunks[-1].append(r)
        used += need
    return chunks


def table_tex(t: PaperTable, legend: str = "") -> str:
    """The table as one or more floats (``table`` or ``table*``), caption below (ACL style)."""
    if not t.rows:
        return ""
    lay = _layout(t)
    env = "table*" if lay.wide else "table"
    width = r"\textwidth" if lay.wide else r"\columnwidth"
    stub = _stub(t)
    plain = sentence(t.title) + " " + t.caption + (" " + legend if legend else "")
    chunks = _row_chunks(t.rows, _row_lines(t, lay), _max_lines(t, lay, plain))
    out = [f"% {t.title} (h2htalk report; full precision in tables/{t.csv or t.key}.csv)"]
    first = True
    for part, nums in enumerate(lay.col_chunks):
        cols = sorted(stub + list(nums))
        what = (f" (continued: {', '.join(t.cols[j].head for j in nums)})"
                if part else " (continued)")
        for rows in chunks:
            out += [rf"\begin{{{env}}}[tbp]", r"\centering", "{" + lay.size,
                    r"\setlength{\tabcolsep}{4pt}"]
            out += _tabular(t, rows, cols, lay, width)
            out.append("}")
            if first:
                out += [rf"\caption{{{tex(plain)}}}", rf"\label{{tab:{t.key}}}"]
            else:
                out += [r"\addtocounter{table}{-1}",
                        rf"\caption{{{tex(t.title.rstrip('.?') + what)}.}}"]
            out += [rf"\end{{{env}}}", ""]
            first = False
    return "\n".join(out)


def tables_tex(keys: list[str]) -> str:
    head = ("% h2htalk report tables: \\input{preamble} in the preamble (booktabs, siunitx, "
            "tabularx,\n% graphicx), then \\input{tables} or any single tables/<name>.tex.\n")
    return head + "".join(f"\\input{{tables/{k}.tex}}\n" for k in keys)


def legend_for(t: PaperTable, B: int | None = None) -> str:
    """The sentences a caption ends with when the table has a "—" (what it means here) or an
    estimate without a CI (why: the bootstrap was skipped, or too few units to resample)."""
    reasons = t.missing_reasons
    marked = "; ".join(f"—{MARKS[i % len(MARKS)]} {r}" for i, r in enumerate(reasons))
    out = [f"— {reasons[0]}."] if len(reasons) == 1 else [marked + "."] if reasons else []
    # a value without its CI: why, each reason once (the cell's own, else the table's)
    skipped = "the bootstrap was skipped (B = 0)"
    bare: list[str] = []
    for c in t.bare_cells:
        why = c.why_no_ci or (skipped if B == 0 else t.bare_reason)
        if why not in bare:
            bare.append(why)
    if bare == [skipped]:
        out.append(f"No CIs: {skipped}.")
    elif bare:
        out.append(f"A value without a CI: {'; '.join(bare)}.")
    return " ".join(out)
