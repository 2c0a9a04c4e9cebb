"""Every figure to PDF, SVG and PNG through one Chromium (kaleido), started early.

* **One browser, started while the statistics run.** :class:`FigureExporter` opens kaleido's
  Chromium in a background thread as soon as it is created; ``h2h report`` creates it before
  importing or computing anything else, so the seconds a browser takes to start overlap the
  statistics.
* **No page reload between images.** kaleido reloads its page after every image, re-parsing
  the 4.6 MB plotly.js each time (about 150 ms of a 170 ms SVG). Our figures are plain plotly
  figures drawn one after another into a fresh plot each time, so :class:`_Kaleido` skips the
  reload; an image then takes 20-70 ms. This overrides one private method of kaleido 1.x
  (``_return_kaleido_tab``); were it renamed, the override would simply not apply and export
  would be slower, never wrong.
* **The PDF is the SVG, printed.** kaleido prints a PDF from an ``<img>`` of the SVG with
  0.1-inch print margins on a page the size of the figure, which cuts the bottom of the figure
  off (the x-axis title goes) and turns text into Type 3 glyph programs. Instead the SVG
  kaleido wrote is put inline in a page of exactly its size with no margins and printed by
  the same browser (Chrome DevTools ``Page.printToPDF``, through choreographer's public tab
  API): the whole figure, vector, its TrueType font embedded as a real (CID) font.

MathJax is switched off: kaleido would otherwise load it from a CDN for every export (the
report must work offline and our figures use no TeX).
"""

from __future__ import annotations

import asyncio
import base64
import html
import os
import re
import tempfile
import threading
from collections.abc import Iterable
from concurrent.futures import Future
from pathlib import Path

__all__ = ["FigureExporter", "FORMATS"]

FORMATS = ("pdf", "svg", "png")
_TIMEOUT = 300.0
_SIZE = re.compile(r'<svg[^>]*?\swidth="([\d.]+)"[^>]*?\sheight="([\d.]+)"')
_PAGE = ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title>"
         "<style>@page{{size:{w}px {h}px;"
         "margin:0}}html,body{{margin:0;padding:0;background:#fff}}svg{{display:block}}"
         "</style></head><body>{svg}</body></html>")


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
        self._tmp = tempfile.TemporaryDirectory(prefix="h2h-figures-")
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="h2h-figure-export")
        self._thread.start()
        self._browser: Future = asyncio.run_coroutine_threadsafe(self._open(tabs), self._loop)
        self._print_tab = None

    async def _open(self, tabs: int):
        k = _kaleido_class()(n=tabs, mathjax=False)
        await k.open()
        return k

    def _run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=_TIMEOUT)

    def write(self, figures: Iterable[tuple[object, Path]],
              formats: Iterable[str] = FORMATS) -> int:
        """Write each ``(figure, path without suffix)`` in each format (pdf, svg, png; PNG at
        300 dpi); returns how many files were written."""
        return self.submit(figures, formats).result(timeout=_TIMEOUT)

    def submit(self, figures: Iterable[tuple[object, Path]],
               formats: Iterable[str] = FORMATS) -> Future:
        """Start writing, as :meth:`write` does, and return at once: the browser renders
        while the caller goes on (``h2h report`` writes its tables and HTML meanwhile).
        The future's result is the number of files written, or the export's error.

        Each figure is turned into its plain dict here, in the caller's thread, once (kaleido
        would do it again for every format, in the browser's thread)."""
        from .style import PNG_SCALE

        figs = [(fig.to_dict() if hasattr(fig, "to_dict") else fig, Path(stem))
                for fig, stem in figures]
        formats = tuple(formats)
        # the PDF is printed from the SVG: write it beside, or in a scratch folder
        svg_of = {i: (stem.with_suffix(".svg") if "svg" in formats
                      else Path(self._tmp.name) / f"{i}.svg") for i, (_, stem) in enumerate(figs)}
        svgs = [{"fig": fig, "path": str(svg_of[i]), "opts": {"format": "svg"}}
                for i, (fig, _) in enumerate(figs) if "svg" in formats or "pdf" in formats]
        pngs = [{"fig": fig, "path": str(stem.with_suffix(".png")),
                 "opts": {"format": "png", "scale": PNG_SCALE}}
                for fig, stem in figs if "png" in formats]
        pdfs = [(svg_of[i], stem.with_suffix(".pdf")) for i, (_, stem) in enumerate(figs)
                if "pdf" in formats]
        count = len(figs) * len(formats)

        async def run() -> int:
            k = await asyncio.wrap_future(self._browser)
            await self._write_all(k, svgs, pngs, pdfs)
            return count

        return asyncio.run_coroutine_threadsafe(run(), self._loop)

    async def _write_all(self, k, svgs: list, pngs: list, pdfs: list) -> None:
        """SVGs first; then the PNGs (kaleido's tabs) and the PDFs printed from the SVGs (a
        tab of its own) at the same time."""
        if svgs:
            await k.write_fig_from_object(svgs, cancel_on_error=True)
        jobs = []
        if pngs:
            jobs.append(k.write_fig_from_object(pngs, cancel_on_error=True))
        if pdfs:
            jobs.append(self._print_pdfs(k, pdfs))
        await asyncio.gather(*jobs)

    async def _print_pdfs(self, k, jobs: list[tuple[Path, Path]]) -> None:
        if self._print_tab is None:
            self._print_tab = await k.create_tab("")
            await self._print_tab.send_command("Page.enable")
        tab = self._print_tab
        for n, (svg_path, pdf_path) in enumerate(jobs):
            svg = svg_path.read_text(encoding="utf-8")
            m = _SIZE.search(svg)
            if m is None:
                raise ValueError(f"{svg_path}: no width and height on the SVG")
            page = Path(self._tmp.name) / f"page{n}.html"
            page.write_text(_PAGE.format(w=m.group(1), h=m.group(2), svg=svg,
                                         title=html.escape(pdf_path.stem)), encoding="utf-8")
            loaded = tab.subscribe_once("Page.loadEventFired")
            await tab.send_command("Page.navigate", params={"url": page.as_uri()})
            await asyncio.wait_for(loaded, _TIMEOUT)
            res = await tab.send_command("Page.printToPDF", params={
                "printBackground": True, "preferCSSPageSize": True, "marginTop": 0,
                "marginBottom": 0, "marginLeft": 0, "marginRight": 0, "pageRanges": "1"})
            if "error" in res:
                raise RuntimeError(f"printing {pdf_path.name}: {res['error']}")
            pdf_path.write_bytes(base64.b64decode(res["result"]["data"]))

    def close(self) -> None:
        try:  # a browser still starting is waited for, so that no Chromium is left behind
            if self._browser.exception(timeout=_TIMEOUT) is None:
                self._run(self._browser.result().close())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=60)
            self._tmp.cleanup()

    def __enter__(self) -> FigureExporter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
