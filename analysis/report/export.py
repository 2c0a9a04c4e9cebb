"""Every figure to PDF, SVG and PNG through one Chromium (kaleido), started early.

Two things make this fast, measured in ``benchmarks/bench_report.py``:

* **One browser, started while the statistics run.** :class:`FigureExporter` opens kaleido's
  Chromium in a background thread as soon as it is created; ``h2h report`` creates it before
  computing anything, so the second or two a browser takes to start overlaps the statistics.
* **No page reload between images.** kaleido reloads its page after every image, re-parsing
  the 4.6 MB plotly.js each time (about 150 ms of a 170 ms SVG). Our figures are plain plotly
  figures drawn one after another into a fresh plot each time, so :class:`_Kaleido` skips the
  reload; an image then takes 20-70 ms. This overrides one private method of kaleido 1.x
  (``_return_kaleido_tab``); were it renamed, the override would simply not apply and export
  would be slower, never wrong.

MathJax is switched off: kaleido would otherwise load it from a CDN for every export (the
report must work offline and our figures use no TeX). PDFs are printed by Chromium, which
embeds the (subset) fonts; the report test checks that with ``pdffonts``.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterable
from concurrent.futures import Future
from pathlib import Path

__all__ = ["FigureExporter", "FORMATS"]

FORMATS = ("pdf", "svg", "png")
_TIMEOUT = 300.0


def _kaleido_class():
    import kaleido

    class _Kaleido(kaleido.Kaleido):
        async def _return_kaleido_tab(self, tab):  # see the module docstring
            await self.tabs_ready.put(tab)

    return _Kaleido


class FigureExporter:
    """A Chromium that writes plotly figures; open it early, :meth:`write` when ready,
    :meth:`close` at the end (or use it as a context manager)."""

    def __init__(self, tabs: int | None = None):
        # a tab per core (up to 4): the statistics run on one core while the browser starts,
        # then the tabs render figures in parallel
        tabs = tabs or max(1, min(4, os.cpu_count() or 1))
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="h2h-figure-export")
        self._thread.start()
        self._browser: Future = asyncio.run_coroutine_threadsafe(self._open(tabs), self._loop)

    async def _open(self, tabs: int):
        k = _kaleido_class()(n=tabs, mathjax=False)
        await k.open()
        return k

    def write(self, jobs: Iterable[tuple[object, Path, str, float]]) -> int:
        """Write ``(figure, path, format, scale)`` jobs; returns how many were written."""
        k = self._browser.result(timeout=_TIMEOUT)
        specs = [{"fig": fig, "path": str(path), "opts": {"format": fmt, "scale": scale}}
                 for fig, path, fmt, scale in jobs]
        if specs:
            asyncio.run_coroutine_threadsafe(
                k.write_fig_from_object(specs, cancel_on_error=True), self._loop
            ).result(timeout=_TIMEOUT)
        return len(specs)

    def close(self) -> None:
        try:  # a browser still starting is waited for, so that no Chromium is left behind
            if self._browser.exception(timeout=_TIMEOUT) is None:
                asyncio.run_coroutine_threadsafe(self._browser.result().close(), self._loop
                                                 ).result(timeout=60)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=60)

    def __enter__(self) -> FigureExporter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
