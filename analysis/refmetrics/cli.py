"""`h2h metrics run|list`: the benchmark's reference-based metrics on the study's items.

Only typer and rich at the top: sacrebleu, rouge-score, jieba, sentence-transformers and
llama-cpp-python are imported inside the commands (tests/annotate/test_startup_imports.py).
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from data.errors import H2HError

__all__ = ["metrics_app", "run_cmd", "list_cmd", "export_cmd"]

out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
metrics_app = typer.Typer(
    help="Reference-based automatic metrics (BLEU, chrF, ROUGE-L, embedding similarity) of "
         "the replies against the items' reference replies, to hold against the humans.",
    no_args_is_help=True)

DbOption = Annotated[str | None, typer.Option("--db", help="Study database: a file path or an "
                                              "SQLAlchemy URL (default: $H2H_DB, else "
                                              "./h2h.db).")]
ALL = ("bleu", "chrf", "rougeL", "embedding")
_NO_MODEL = ("no embedding model configured: pass --embedding-model (a local "
             "sentence-transformers folder, a .gguf file, or all-MiniLM-L6-v2 from the "
             "embed-minilm extra) or set H2H_EMBEDDING_MODEL. Nothing is ever downloaded.")
_LANG_RULE = ("language per item: Chinese when Chinese characters make up at least half of "
              "the words of the reply or of the reference (CJK share >= 0.5), else English")


def _parse_metrics(spec: str) -> list[str]:
    chosen: list[str] = []
    for m in (t.strip() for t in spec.split(",")):
        if not m:
            continue
        match = [k for k in ALL if k.lower() == m.lower()]
        if not match:
            raise H2HError(f"--metrics: '{m}' is not one of {', '.join(ALL)}")
        if match[0] not in chosen:
            chosen.append(match[0])
    if not chosen:
        raise H2HError(f"--metrics: name one or more of {', '.join(ALL)}")
    return chosen


@metrics_app.command("run")
def run_cmd(
    db: DbOption = None,
    metrics: Annotated[str, typer.Option("--metrics", help="Comma-separated: bleu, chrf, "
                                         "rougeL, embedding.")] = ",".join(ALL),
    name: Annotated[str | None, typer.Option("--name", help="Name prefix: configurations are "
                                             "named NAME-bleu, NAME-chrf and so on (default: the "
                                             "metric's name).")] = None,
    embedding_model: Annotated[str | None, typer.Option(
        "--embedding-model", envvar="H2H_EMBEDDING_MODEL",
        help="Local embedding model: a sentence-transformers folder, a .gguf file "
             "(llama-cpp-python), or all-MiniLM-L6-v2 (the embed-minilm extra). Without one "
             "the embedding metric is skipped.")] = None,
    zh_segmenter: Annotated[str, typer.Option("--zh-segmenter", help="ROUGE-L on Chinese: "
                                              "char (one token per character) or jieba "
                                              "(words).")] = "char",
    replace: Annotated[bool, typer.Option("--replace", help="A name already used by other "
                                          "settings (e.g. after a library upgrade): delete "
                                          "its scores and compute them again.")] = False,
) -> None:
    """Score every item that has a reference reply with each metric, and store the scores.

    Resumable: a configuration scores only items it has not scored at their current content.
    Items without a reference are skipped and counted; attention-check items are left out.

    Example: h2h metrics run --db pilot.db --metrics bleu,chrf,rougeL --zh-segmenter jieba
    """
    chosen = _parse_metrics(metrics)
    if zh_segmenter not in ("char", "jieba"):
        raise H2HError(f"--zh-segmenter: '{zh_segmenter}' is not char or jieba")
    if name is not None and (not name.strip() or len(name) > 180):
        raise H2HError("--name must be a non-empty name of at most 180 characters")
    from data.engine import get_engine
    from data.metrics import items_to_score
    from data.migrate import ensure_current

    from .embedding import resolve_model
    from .run import run_metrics
    from .scorers import build_scorer

    engine = get_engine(db)
    ensure_current(engine)
    model = None
    if "embedding" in chosen:
        if embedding_model:
            try:
                model = resolve_model(embedding_model)
            except ValueError as exc:
                raise H2HError(str(exc)) from None
        elif chosen == ["embedding"]:
            raise H2HError(_NO_MODEL)
    todo = items_to_score(engine)
    if not todo.items:
        raise H2HError(
            f"none of the study's {todo.total} items has a reference reply, so no "
            "reference-based metric can be computed: add each item's `reference` (the "
            "expected reply; docs/formats.md) and re-import with `h2h import items FILE "
            "--update`")
    n_zh = sum(_is_zh(it) for it in todo.items)
    out.print(f"{len(todo.items)} of {todo.total} items have a reference reply "
              f"({len(todo.items) - n_zh} English, {n_zh} Chinese); {todo.without_reference} "
              "without a reference are skipped"
              + (f"; {todo.attention_checks} attention-check items left out"
                 if todo.attention_checks else "") + ".")
    out.print(f"[dim]{_LANG_RULE}.[/dim]")
    scorers = []
    for metric in chosen:
        if metric == "embedding" and model is None:
            out.print(f"embedding: skipped — {escape(_NO_MODEL)}")
            continue
        try:
            scorers.append(build_scorer(metric, prefix=name, zh_segmenter=zh_segmenter,
                                        embedding_model=model))
        except ValueError as exc:
            raise H2HError(str(exc)) from None
    try:
        _, reports = run_metrics(engine, scorers, replace=replace, todo=todo)
    except ValueError as exc:  # an embedding model that cannot be loaded
        raise H2HError(str(exc)) from None
    t = Table("configuration", "scale", "scored now", "already stored", "not scorable")
    for rep in reports:
        t.add_row(escape(rep.spec.name), rep.spec.scale, str(rep.scored_now),
                  str(rep.already), str(rep.unscored))
    out.print(t)
    for rep in reports:  # library, settings and tokenization, each on one line
        out.print(escape(f"{rep.spec.name}: {rep.spec.describe()}"))
    for rep in reports:
        for reason, k in rep.reasons.items():
            out.print(escape(f"  {rep.spec.name}: {k} items not scored: {reason}"))
    where = "" if db is None else f" --db {db}"
    out.print(f"Next: h2h analyze{where} (metrics beside the judges and the human ceiling), "
              f"h2h report{where} --out report/")


def _is_zh(item) -> bool:
    from .spec import language

    return language(item.response, item.reference)[0] == "zh"


@metrics_app.command("list")
def list_cmd(db: DbOption = None) -> None:
    """The stored metric configurations: settings and how many items each scored (stale:
    the item changed since; `h2h metrics run` scores it again).

    Example: h2h metrics list --db pilot.db
    """
    from data.engine import get_engine
    from data.metrics import list_metric_configs
    from data.migrate import ensure_current

    engine = get_engine(db)
    ensure_current(engine)
    rows = list_metric_configs(engine)
    if not rows:
        out.print("No metric configurations yet; compute them with `h2h metrics run`.")
        return
    t = Table("name", "hash", "metric", "library", "scored", "not scorable", "stale",
              "settings", "tokenizer")
    for r in rows:
        c = r["row"]
        t.add_row(escape(c.name), c.hash[:8], c.metric, f"{c.library} {c.library_version}",
                  str(r["scored"]), str(r["unscored"]), str(r["stale"]),
                  escape(", ".join(f"{k}={v}" for k, v in c.settings.items())),
                  escape("; ".join(f"{k}: {v}" for k, v in c.tokenizer.items())))
    out.print(t)



@metrics_app.command("export")
def export_cmd(
    db: DbOption = None,
    out_file: Annotated[str | None, typer.Option("--out", help="CSV file (default: stdout).")]
    = None,
) -> None:
    """Every stored metric score as long CSV for R or pandas: item_id, metric, score, lang,
    cjk_share, model, condition, scenario, task, config_hash (empty score = not scorable).

    Example: h2h metrics export --db pilot.db --out metric_scores.csv
    """
    import csv
    import io

    from data.engine import get_engine
    from data.metrics import export_rows
    from data.migrate import ensure_current
    from data.outfiles import check_out_file, write_out_text

    if out_file is not None:
        check_out_file(out_file, example="metric_scores.csv")
    engine = get_engine(db)
    ensure_current(engine)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["item_id", "metric", "score", "lang", "cjk_share", "model", "condition",
                "scenario", "task", "config_hash"])
    for row in export_rows(engine):
        w.writerow(["" if v is None else (f"{v:.12g}" if isinstance(v, float) else v)
                    for v in row])
    if out_file is None:
        sys.stdout.write(buf.getvalue())
    else:
        write_out_text(out_file, buf.getvalue())
        out.print(f"Wrote {buf.getvalue().count(chr(10)) - 1} metric scores to {out_file}")
