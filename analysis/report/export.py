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

* **The headless shell when it is installed.** Chromium's ``chromium-headless-shell`` (Debian
  package of that name) is the same engine without the desktop browser around it: it starts in
  about 1.5 s where ``chromium`` takes 2.0 s here, and uses less CPU meanwhile, which the
  statistics computed at the same time get back; its SVG, PNG and PDF are identical (checked
  pixel for pixel on the demo report). ``BROWSER_PATH`` (kaleido's own setting) still wins;
  without either, kaleido finds ``chromium`` or Chrome itself.

MathJax is switched off: kaleido would otherwise load it from a CDN for every export (the
report must work offline and our figures use no TeX).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Iterable
from concurrent.futures import Future
from pathlib import Path

__all__ = ["FigureExporter", "FORMATS"]

FORMATS = ("pdf", "svg", "png")
_TIMEOUT = 300.0
_CLOSE_TIMEOUT = 30.0  # a clean close takes well under a second
_GONE_GRACE = 1.0  # once the browser's process has ended, its answer is read or never comes
_SIZE = re.compile(r'<svg[^>]*?\swidth="([\d.]+)"[^>]*?\sheight="([\d.]+)"')
# Put one figure in the print page: its SVG as the body, the page exactly its size; resolves
# after the next frame is drawn.
_SET_PAGE = ("new Promise(done => {{ document.title = {title}; document.body.innerHTML = {svg}; "
             "document.getElementById('page-size').textContent = "
             "'@page{{size:' + {w} + 'px ' + {h} + 'px;margin:0}}'; "
             "requestAnimationFrame(() => requestAnimationFrame(() => done(true))); }})")
_PAGE = ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>h2htalk figure</title>"
         "<style id='page-size'></style><style>html,body{margin:0;padding:0;"
         "background:#fff}svg{display:block}</style></head><body></body></html>")


# where Debian puts the headless shell's binary (/usr/bin/chromium-headless-shell is a shell
# script that runs it as a child: the browser would then not be the process kaleido watches)
_HEADLESS_SHELLS = ("/usr/lib/chromium/chromium-headless-shell",)


def browser_path() -> str | None:
    """The browser to draw with: ``BROWSER_PATH`` left to kaleido (None), else Chromium's
    headless shell when installed, else None (kaleido looks for chromium or Chrome)."""
    if os.environ.get("BROWSER_PATH"):
        return None
    for candidate in (*_HEADLESS_SHELLS, shutil.which("chrome-headless-shell")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def _kaleido_class():
    import kaleido

    class _Kaleido(kaleido.Kaleido):
        async def _return_kaleido_tab(self, tab):  # see the module docstring
            await self.tabs_ready.put(tab)

    return _Kaleido


class FigureExporter:
    """A Chromium that writes plotly figures; open it early, :meth:`write` when ready,
    :meth:`close` at the end (or use it as a context manager)."""

    def __init__(self, tabs: int = 1):
        # One plotly tab draws the SVGs one after another while a second, plain tab prints
        # and photographs the one before: each further plotly tab would cost a renderer and
        # a parse of plotly.js (about 0.4 s of CPU) and win nothing on two cores.
        self._tmp = tempfile.TemporaryDirectory(prefix="h2h-figures-")
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="h2h-figure-export")
        self._thread.start()
        self._browser: Future = asyncio.run_coroutine_threadsafe(self._open(tabs), self._loop)
        self._print_tab = None
        self._print_lock = asyncio.Lock()

    async def _open(self, tabs: int):
        path = browser_path()
        k = _kaleido_class()(n=tabs, mathjax=False, **({"path": path} if path else {}))
        await k.open()
        return k

    def _run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=_TIMEOUT)

    def write(self, figures: Iterable[tuple[object, Path]],
              formats: Iterable[str] = FORMATS) -> int:
        """Write each ``(figure, path without suffix)`` in each format (pdf, svg, png; PNG at
        300 dpi); returns how many files were written."""
        return self.wait(self.submit(figures, formats))

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
        # plotly draws each figure once, as SVG (beside, or in a scratch folder); the PDF and
        # the PNG are that SVG printed and photographed by the same browser
        svg_of = {i: (stem.with_suffix(".svg") if "svg" in formats
                      else Path(self._tmp.name) / f"{i}.svg") for i, (_, stem) in enumerate(figs)}
        svgs = [{"fig": fig, "path": str(svg_of[i]), "opts": {"format": "svg"}}
                for i, (fig, _) in enumerate(figs)] if formats else []
        pages = [(svg_of[i], stem.with_suffix(".pdf") if "pdf" in formats else None,
                  stem.with_suffix(".png") if "png" in formats else None)
                 if {"pdf", "png"} & set(formats) else None for i, (_, stem) in enumerate(figs)]
        count = len(figs) * len(formats)

        async def run() -> int:
            k = await asyncio.wrap_future(self._browser)
            # plotly draws the SVGs one after another; as each is ready, the print tab
            # prints and photographs it while the next one is drawn
            drawn: asyncio.Queue = asyncio.Queue()

            async def draw() -> None:
                try:
                    for spec, page in zip(svgs, pages, strict=True):
                        await k.write_fig_from_object([spec], cancel_on_error=True)
                        if page is not None:
                            await drawn.put(page)
                finally:
                    drawn.put_nowait(None)  # no await: this also runs while being cancelled

            async def finish() -> None:
                while (page := await drawn.get()) is not None:
                    async with self._print_lock:  # a page at a time (submits overlap)
                        await self._finish(k, *page, PNG_SCALE)

            await asyncio.gather(draw(), finish())
            return count

        return asyncio.run_coroutine_threadsafe(run(), self._loop)

    def wait(self, job: Future) -> int:
        """The result of :meth:`submit`, waited for at most ``_TIMEOUT`` seconds: a browser
        that stops answering (frozen, or starved far beyond its share of the CPU) ends the
        wait with a TimeoutError that says so, instead of holding the report for good."""
        try:
            return job.result(timeout=_TIMEOUT)
        except TimeoutError as exc:
            ours = not job.done()  # else kaleido's own wait for the browser ran out first
            job.cancel()
            said = f"for {_TIMEOUT:.0f} s" if ours else "in time"
            raise TimeoutError(f"the browser drawing the figures did not answer {said}"
                               ) from exc

    async def _tab(self, k):
        """The tab that prints and photographs figures: a blank page of ours, loaded once,
        in front (a tab behind draws no frames, and the page waits for one)."""
        if self._print_tab is None:
            tab = await k.create_tab("")
            await tab.send_command("Page.enable")
            blank = Path(self._tmp.name) / "page.html"
            blank.write_text(_PAGE, encoding="utf-8")
            loaded = tab.subscribe_once("Page.loadEventFired")
            await tab.send_command("Page.navigate", params={"url": blank.as_uri()})
            await asyncio.wait_for(loaded, _TIMEOUT)
            await tab.send_command("Page.bringToFront")
            self._print_tab = tab
        return self._print_tab

    async def _finish(self, k, svg_path: Path, pdf_path: Path | None, png_path: Path | None,
                      png_scale: float) -> None:
        """The SVG inline in the print tab's page, which takes exactly its size (no
        navigation, no new document): printed to PDF and photographed to PNG at
        ``png_scale`` (the whole figure, whatever the tab's size)."""
        tab = await self._tab(k)
        svg = svg_path.read_text(encoding="utf-8")
        m = _SIZE.search(svg)
        if m is None:
            raise ValueError(f"{svg_path}: no width and height on the SVG")
        w, h = m.group(1), m.group(2)
        res = await tab.send_command("Runtime.evaluate", params={
            "expression": _SET_PAGE.format(svg=json.dumps(svg), w=json.dumps(w),
                                           h=json.dumps(h),
                                           title=json.dumps((pdf_path or png_path).stem)),
            "awaitPromise": True, "returnByValue": True})
        if "error" in res or res.get("result", {}).get("exceptionDetails"):
            raise RuntimeError(f"drawing {svg_path.name}: {res}")
        if pdf_path is not None:
            res = await tab.send_command("Page.printToPDF", params={
                "printBackground": True, "preferCSSPageSize": True, "marginTop": 0,
                "marginBottom": 0, "marginLeft": 0, "marginRight": 0, "pageRanges": "1"})
            if "error" in res:
                raise RuntimeError(f"printing {pdf_path.name}: {res['error']}")
            pdf_path.write_bytes(base64.b64decode(res["result"]["data"]))
        if png_path is not None:
            res = await tab.send_command("Page.captureScreenshot", params={
                "format": "png", "captureBeyondViewport": True, "fromSurface": True,
                "optimizeForSpeed": True,
                "clip": {"x": 0, "y": 0, "width": float(w), "height": float(h),
                         "scale": png_scale}})
            if "error" in res:
                raise RuntimeError(f"drawing {png_path.name}: {res['error']}")
            png_path.write_bytes(base64.b64decode(res["result"]["data"]))

    def close(self) -> None:
        try:  # a browser still starting is waited for, so that no Chromium is left behind
            if self._browser.exception(timeout=_TIMEOUT) is None:
                k = self._browser.result()
                done = asyncio.run_coroutine_threadsafe(k.close(), self._loop)
                proc = getattr(k, "subprocess", None)
                if not _closed_in_time(done, proc):
                    # A browser that never answers "Browser.close" (seen once on a machine
                    # loaded far beyond its cores: a report whose files were all written
                    # failed after 300 s) is killed: everything it drew is on disk already.
                    # One that exited without its answer being read is not waited for.
                    done.cancel()
                    if proc is not None and proc.poll() is None:
                        _kill_group(proc)
        finally:
            self._unwind()
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=60)
            self._tmp.cleanup()

    def _unwind(self) -> None:
        """Cancel what still runs in the exporter's loop (drawings given up on after a
        browser stopped answering) and let it end there, before the loop stops: a drawing
        left suspended was later closed by the garbage collector, on a closed loop, and
        printed "Event loop is closed" into whatever ran then."""
        async def cancel_the_rest() -> None:
            me = asyncio.current_task()
            rest = [t for t in asyncio.all_tasks() if t is not me]
            for t in rest:
                t.cancel()
            await asyncio.gather(*rest, return_exceptions=True)

        try:
            asyncio.run_coroutine_threadsafe(cancel_the_rest(), self._loop).result(
                timeout=_CLOSE_TIMEOUT)
        except TimeoutError:
            pass  # a task that will not end: the loop is stopped all the same

    def __enter__(self) -> FigureExporter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _closed_in_time(done: Future, proc) -> bool:
    """Wait for choreographer's close of the browser: at most ``_CLOSE_TIMEOUT`` seconds, and
    at most ``_GONE_GRACE`` once the browser's process (``proc``, its wrapper) has ended.
    Chromium can exit before its answer to "Browser.close" is read; choreographer (1.4) then
    posts a close of its own, which finds the browser closing already and returns, and
    nothing ends the wait for that answer (CI: a report test 38 s instead of 6-8, the whole
    30 s waited). Any error of the close itself is raised, as before."""
    deadline = time.monotonic() + _CLOSE_TIMEOUT
    gone_at = None
    while True:
        try:
            done.result(timeout=0.05)
            return True
        except TimeoutError:
            pass
        now = time.monotonic()
        if gone_at is None and proc is not None and proc.poll() is not None:
            gone_at = now
        if now > deadline or (gone_at is not None and now - gone_at > _GONE_GRACE):
            return False


def _kill_group(proc) -> None:
    """Kill choreographer's browser wrapper and the browser under it (its own process group)."""
    import signal
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait(timeout=30)
    _wait_group_gone(proc.pid, timeout=30)


def _wait_group_gone(pgid: int, timeout: float) -> None:
    """SIGKILL is delivered at once but a browser with many threads takes a while to die on
    a loaded machine (CI once saw it still running right after the wrapper was reaped): wait,
    bounded, until no process of the group is left but zombies (which the init process reaps)."""
    deadline = time.monotonic() + timeout
    while _group_running(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)


def _group_running(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    procfs = Path("/proc")
    if not procfs.is_dir():  # no way to tell zombies apart: the signal was sent, go on
        return False
    for stat in procfs.glob("[0-9]*/stat"):
        try:
            state, _ppid, pgrp = stat.read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        if int(pgrp) == pgid and state != "Z":
            return True
    return False
