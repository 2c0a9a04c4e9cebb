"""What a page shows, as text, for the language checks of tests/annotate/test_i18n_pages.py.

:func:`page_texts` walks an AppTest run's element tree and gathers every text the page draws:
bodies of Markdown, headings, captions, alerts, code and HTML; widget labels, help, options,
placeholders and default values; metric labels and values; expander labels; progress text;
table and dataframe headers (as the column configuration names them), index and string
cells; plotly titles, axis titles, legend names and hover templates.

:func:`english_left` says what English is left in those texts once everything that is data
(any text stored in the study database, or in a file the test uploaded), inline code, command
options (``--update``) and the allowed symbols and names are taken out: Latin-letter words,
which on a page set to Chinese are prose nobody translated.

Not data on a Chinese page: a rubric's English text that has a Chinese translation (admins
read the rubric in their language, as raters do; an untranslated text is data, shown tagged),
a dimension key or a file's field name unless quoted or listed as a file must write it
(``'item_id'``, ``dialogue, recollection``), and the keys of JSON objects (a judge's reply
keys its scores by dimension key).
"""

from __future__ import annotations

import html
import io
import json
import re
from collections.abc import Iterable, Iterator

import pyarrow as pa
import sqlalchemy as sa
from google.protobuf.message import Message

__all__ = ["page_texts", "study_data", "study_keys", "english_left", "ALLOWED"]

# statistics symbols, formats, programs and proper names a Chinese methods section writes
# as they are
ALLOWED = frozenset("""
    QWK ICC AC1 AC2 MAE SE SD logits logit MnSq Infit Outfit Rasch REML psych lme4
    Krippendorff Cohen Gwet Fleiss Holm Landis Koch Koo Li Shrout Wellek Linacre
    CSV JSON JSONL TOML SQLite PostgreSQL LaTeX PDF SVG PNG HTML Markdown zip UTF ACL UTC
    SAP H2HTalk h2htalk h2h irr pandas BLEU chrF ROUGE URL
    English Tab Enter Esc Home End
""".split())
# whole texts shown as they are on purpose: the sign-in page's switch speaks both languages,
# and the access code's pattern is the same in every language
ALLOWED_TEXTS = frozenset({"Language · 语言", "H2H-XXXX-XXXX-XXXX-XXXX"})
# names of formats made of words
ALLOWED_PHRASES = ("JSON Lines",)

_TAGS = re.compile(r"<[^>]*>")
_SCRIPTS = re.compile(r"(?is)<(script|style)\b.*?</\1\s*>")
_CODE = re.compile(r"`[^`]*`")
_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")  # a command's option: code, not prose
# a command named in a sentence without backticks (a message the pages show inert): code too
_COMMAND = re.compile(r"(?<![\w-])h2h(?: [a-z][a-z-]*)+")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_'’-]*")
_LETTERS = re.compile(r"[A-Za-z]{2}")
_CJK = re.compile(r"[\u3400-\u9fff]")
_ASCII_MARK = re.compile(r"[\u3400-\u9fff\u3001-\u3011\uff08\uff09][;:,] ")
_LIST = re.compile(r"[A-Za-z_][\w.-]*(?:\s*,\s*[A-Za-z_][\w.-]*)+")
_QUOTED = re.compile(r"(['‘“\"])([A-Za-z_][\w.-]*)(['’”\"])")
_HIDDEN_FIELDS = {"id", "form_id", "type", "url", "format", "theme", "config", "language",
                  "deferred_file_id", "icon", "tag", "source_id", "alt", "autocomplete"}


def _plain(text: str) -> str:
    text = _SCRIPTS.sub(" ", text)
    text = html.unescape(_TAGS.sub(" ", html.unescape(text))).replace("\u200b", "")
    text = text.replace("\\", "")
    return re.sub(r"\s+", " ", text).strip()


def _arrow(data: bytes, labels: dict[str, str] | None) -> Iterator[str]:
    table = pa.ipc.open_stream(io.BytesIO(data)).read_all()
    meta = json.loads((table.schema.metadata or {}).get(b"pandas", b"{}") or b"{}")
    index = {c for c in (meta.get("index_columns", []) if isinstance(meta, dict) else [])
             if isinstance(c, str)}
    hidden = labels is not None and labels.get("_index") == "<hidden>"
    for name in table.column_names:
        is_index = name in index or name.startswith("__index_level_")
        if is_index and hidden:
            continue
        if labels is not None and name not in labels and not is_index:
            continue  # a dataframe shows only its configured columns (show_table)
        if not is_index:
            yield (labels or {}).get(name, name)
        col = table.column(name)
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            yield from (v for v in col.to_pylist() if isinstance(v, str))


def _column_labels(columns_json: str) -> dict[str, str] | None:
    if not columns_json:
        return None
    cfg = json.loads(columns_json)
    out = {}
    for name, c in cfg.items():
        if c.get("hidden"):
            out[name] = "<hidden>"
        elif "label" in c:
            out[name] = c["label"]
    return out


def _plotly(spec: str) -> Iterator[str]:
    fig = json.loads(spec)

    def titles(obj):
        if isinstance(obj, dict):
            for k, v in obj.items():
                if k == "text" and isinstance(v, str):
                    yield v
                elif k == "title" and isinstance(v, str):
                    yield v
                else:
                    yield from titles(v)
        elif isinstance(obj, list):
            for v in obj:
                yield from titles(v)

    yield from titles(fig.get("layout", {}))
    for trace in fig.get("data", []):
        for k in ("name", "hovertemplate"):
            if isinstance(trace.get(k), str):
                yield re.sub(r"%\{[^}]*\}", " ", trace[k])
        for k in ("x", "y", "text"):  # category values drawn as tick labels
            vals = trace.get(k)
            if isinstance(vals, list):
                yield from (v for v in vals if isinstance(v, str))


def _proto_strings(m: Message) -> Iterator[str]:
    kind = type(m).__name__
    if kind == "IFrame":  # the session cookie's script: nothing a person reads
        return
    if kind in ("Dataframe", "Table"):
        labels = _column_labels(getattr(m, "columns", "")) if kind == "Dataframe" else None
        if kind == "Table" and m.hide_index:
            labels = {"_index": "<hidden>"}
        if m.arrow_data.data:
            yield from _arrow(m.arrow_data.data, labels)
        return
    if kind == "PlotlyChart":
        yield from _plotly(m.spec)
        return
    for f, v in m.ListFields():
        if f.name in _HIDDEN_FIELDS:
            continue
        if f.type == f.TYPE_MESSAGE:
            for x in (list(v) if f.is_repeated else [v]):
                yield from _proto_strings(x)
        elif f.type == f.TYPE_STRING:
            yield from (list(v) if f.is_repeated else [v])


def page_texts(at) -> list[str]:
    """Every text the page drew (see the module's docstring), unescaped, whitespace folded."""
    out: list[str] = []

    def walk(node):
        proto = getattr(node, "proto", None)
        if isinstance(proto, Message):
            out.extend(_proto_strings(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return [t for t in (_plain(s) for s in out) if t]


def _strings(value) -> Iterator[str]:
    if isinstance(value, str):
        try:
            parsed = json.loads(value) if value[:1] in "[{" else None
        except ValueError:
            parsed = None
        if parsed is not None:
            yield from _strings(parsed)
        yield value
    elif isinstance(value, dict):  # its keys are structure (a judge's reply keys scores by
        for v in value.values():   # dimension key), not text anyone reads
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def _format_words() -> set[str]:
    """The names of the file formats' fields and columns, and their keywords: error messages
    quote them as they must be written in a file, in every language."""
    from data import items, ratings, rubric

    words = {*items.ITEM_FIELDS, *items.CSV_ITEM_COLUMNS, *items.CONTEXT_FIELDS,
             *ratings.RATING_EXPORT_COLUMNS, *rubric.BUILTIN_TASKS, rubric.CANNOT_RATE,
             "user", "companion", *items.CHAT_ROLES, "system", "content", "rationale",
             "nominal", "ordinal", "interval", "ratio", "binary", "tasks"}
    for name in ("_TOP_FIELDS", "_DIM_FIELDS"):
        words |= set(getattr(rubric, name, ()))
    return words


FORMAT_WORDS = _format_words()

# the columns that hold text from files or people (not the codes the app writes: roles,
# kinds, statuses, levels, task names — those the pages translate)
DATA_COLUMNS = {
    "item": ("id", "scenario", "context", "response", "model", "condition", "reference",
             "metadata"),
    "rater": ("name",), "study": ("name", "description"),
    "rubric": ("version", "source"),
    "rating": ("comment",), "adjudication": ("note",), "qualification": ("note",),
    "gold_score": ("rationale",), "attention_check": ("note",),
    "judge_config": ("name", "provider", "model", "template_name", "template"),
    "judgment": ("reasoning", "raw_reply"), "norming_session": ("name",),
    "metric_config": ("name", "metric", "library", "tokenizer"),
    "generation_config": ("name", "model"),
}


def _rubric_texts(engine, language: str) -> set[str]:
    """The texts of every stored rubric as a reader of ``language`` sees them: the
    translation where the rubric has one, else the rubric's own text (shown tagged). The
    rubric's own text of a translated one is not data on a page in ``language``: the page
    should have shown the translation, as raters see it. Dimension keys are not either:
    pages name a dimension by its label (a key may show as inline code)."""
    from data.rubric import rubric_from_definition
    from data.rubric_languages import text_paths
    from data.rubric_markdown import rubric_html

    found: set[str] = set()
    with engine.connect() as c:
        for (defn,) in c.execute(sa.text('SELECT "definition" FROM "rubric"')):
            rubric = rubric_from_definition(json.loads(defn) if isinstance(defn, str)
                                            else defn)
            have = rubric.translations.get(language) or {}
            for path, base in text_paths(rubric):
                text = have.get(path, base) if language != rubric.language else base
                found.add(text)
                found.add(rubric_html(text))  # as the guidelines page draws its Markdown
    return found


def study_data(engine, extra: Iterable[str] = (), language: str = "zh") -> list[str]:
    """Every text from files or people the study holds (:data:`DATA_COLUMNS`, JSON values
    opened up; the rubrics' texts as shown in ``language``), and ``extra`` (the files a test
    uploaded, line by line and cell by cell): the data the pages may show as it is."""
    found: set[str] = set()
    with engine.connect() as c:
        for table, cols in DATA_COLUMNS.items():
            quoted = ", ".join(f'"{col}"' for col in cols)
            for row in c.execute(sa.text(f'SELECT {quoted} FROM "{table}"')):
                for v in row:
                    found.update(_strings(v))
    found.update(_rubric_texts(engine, language))
    for text in extra:  # an uploaded file: every line, cell, JSON value and word of it
        found.add(text)
        for line in text.splitlines():
            found.add(line)
            found.update(re.split(r"[,\t]", line))
            found.update(re.split(r"[\s=,\t:\"'\[\]{}()]+", line))
            try:
                found.update(_strings(json.loads(line)))
            except ValueError:
                pass
    return sorted({t for t in (_plain(s) for s in found) if _LETTERS.search(t)}, key=len,
                  reverse=True)


def study_keys(engine) -> frozenset[str]:
    """The dimension keys of every stored rubric: identifiers, shown only as a file must write
    them (quoted, in a list of allowed values, or as inline code)."""
    with engine.connect() as c:
        return frozenset(k for (k,) in c.execute(sa.text('SELECT "key" FROM "dimension"')))


def english_left(texts: Iterable[str], data: list[str],
                 keys: Iterable[str] = ()) -> list[str]:
    """The English left in ``texts`` once data (whole values, at word boundaries), inline
    code, :data:`ALLOWED` words, and the file formats' field names and the rubric's ``keys``
    where quoted or listed are taken out: each text with its English words, as
    ``'words'  ⟵  'text'``."""
    idents = FORMAT_WORDS | set(keys)
    problems = []
    for text in texts:
        if text in ALLOWED_TEXTS:
            continue
        rest = _OPTION.sub(" ", _COMMAND.sub(" ", _CODE.sub(" ", text)))
        # a file's field or keyword quoted as it must be written ('item_id'); unquoted, a
        # column name or task key on a page is an untranslated header or value
        rest = _QUOTED.sub(lambda m: " " if m[2] in idents else m[0], rest)
        rest = _LIST.sub(lambda m: " " if set(re.split(r"\s*,\s*", m[0])) <= idents
                         else m[0], rest)
        for phrase in ALLOWED_PHRASES:
            rest = rest.replace(phrase, " ")
        for value in data:
            if value in rest:  # Chinese data keeps a Chinese stand-in, for the marks below
                rest = re.sub(rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])",
                              "中" if _CJK.search(value) else " ", rest)
        words = [w.strip("'’-") for w in _WORD.findall(rest)]
        words = [w for w in words if _LETTERS.search(w) and w not in ALLOWED]
        # ASCII "; " ", " ": " after Chinese: a sentence joined or labelled the English way
        marks = [m[0] for m in _ASCII_MARK.finditer(rest)]
        if words or marks:
            problems.append(f"{' '.join(words + marks)!r}  ⟵  {text[:160]!r}")
    return problems
