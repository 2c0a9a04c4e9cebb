"""`h2h judge import`: judge scores made outside h2htalk (light: the work is imported when
the command runs, see tests/annotate/test_startup_imports.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from data.cli import DbOption

__all__ = ["import_cmd"]


def import_cmd(
    file: Annotated[Path, typer.Argument(help="Judges CSV: item_id,judge,dimension,score"
                                              "[,sample].")],
    db: DbOption = None,
    update: Annotated[bool, typer.Option("--update", help="Replace scores that differ from "
                                         "the stored ones (otherwise the file is "
                                         "refused).")] = False,
) -> None:
    """Store judge scores made outside h2htalk as named configurations (one per judge name).

    The whole file is checked first (file, line and field of every problem) and nothing is
    written if anything is wrong; importing the same file again changes nothing.
    Calibration, `h2h leaderboard` and the report then treat each judge like any other.

    Example: h2h judge import judges.csv --db pilot.db
    """
    from rich.console import Console

    from data.engine import get_engine
    from data.migrate import ensure_current

    from .judge_import import import_judges_csv

    engine = get_engine(db)
    ensure_current(engine)
    out = Console(highlight=False, soft_wrap=True)
    for r in import_judges_csv(engine, file, update=update):
        out.print(f"Judge '{r.name}' (configuration {r.config_hash[:8]}, imported): "
                  f"{r.added} judgments added, {r.unchanged} unchanged, {r.replaced} replaced"
                  + (f"; {r.unscored} without a score (stored unscored)" if r.unscored else ""))
