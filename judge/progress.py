"""The progress bar of a run: done / total, rate, ETA, failures, unscored answers, running cost."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
)
from rich.text import Text

__all__ = ["RunProgress", "Tally", "format_usd"]


@dataclass
class Tally:
    """What storing one call's result added."""

    scored: int = 0
    unscored: int = 0
    failed: int = 0
    cost: float | None = 0.0
    reasons: Counter = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)  # category -> one reason in full


def format_usd(value: float | None, unpriced: bool = False) -> str:
    if value is None:
        return "—"
    text = f"${value:,.4f}" if value < 1 else f"${value:,.2f}"
    return text + (" + unpriced" if unpriced else "")


class _RateEta(ProgressColumn):
    """``1,234/min ETA 0:02:10``."""

    def render(self, task) -> Text:
        speed = task.finished_speed or task.speed
        rate = "—/min" if not speed else f"{speed * 60:,.0f}/min"
        left = task.time_remaining
        eta = "—" if left is None else time.strftime("%H:%M:%S", time.gmtime(left))
        return Text(f"{rate} ETA {eta}", style="cyan")


class RunProgress:
    """A rich progress bar on stderr; with ``enabled=False`` it only counts."""

    def __init__(self, description: str, total: int, *, enabled: bool = True,
                 console: Console | None = None):
        self.failed_attempts = 0
        self.unscored = 0
        self.request_failed = 0
        self.cost = 0.0
        self.unpriced = False
        self._bar: Progress | None = None
        if enabled and total:
            self._bar = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(bar_width=12),
                MofNCompleteColumn(), _RateEta(), TextColumn("{task.fields[status]}"),
                console=console or Console(stderr=True), transient=False)
            self._task = self._bar.add_task(description, total=total, status=self._status())

    def _status(self) -> str:
        return (f"{self.failed_attempts} retries · {self.request_failed} failed · "
                f"{self.unscored} unscored · {format_usd(self.cost, self.unpriced)}")

    def __enter__(self) -> RunProgress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.stop()

    def failed_attempt(self) -> None:
        self.failed_attempts += 1
        self._refresh(0)

    def done(self, tally: Tally) -> None:
        self.unscored += tally.unscored
        self.request_failed += tally.failed
        if tally.cost is None:
            self.unpriced = True
        else:
            self.cost += tally.cost
        self._refresh(1)

    def _refresh(self, advance: int) -> None:
        if self._bar is not None:
            self._bar.update(self._task, advance=advance, status=self._status())
