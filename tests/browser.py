"""Real-browser helpers: a served app on a free loopback port and Debian's Chromium."""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# The browser tests drive Debian's Chromium through its headless shell (the package
# chromium-headless-shell, which `make test` installs): the same engine and version as
# /usr/bin/chromium, without the full browser's user interface layers. Measured on
# test_browser_rating_page.py (21 tests, one worker, the whole process tree's CPU):
# 98.2 CPU-s with chromium, 70.3 with the headless shell. The full browser still runs the
# uploader's tests (CHROMIUM_FULL), so the app is also checked in the browser people use.
CHROMIUM = "/usr/lib/chromium/chromium-headless-shell"
CHROMIUM_FULL = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def settled(page, timeout: int = 60_000) -> None:
    """The script run that drew what is on screen has ended, its fade-ins are over and the
    browser has drawn two more frames, so the widgets' values are in place. Call it after
    waiting for something only the expected run draws (a heading, a ready marker): from then
    on the app's script state is "running" for that run or "notRunning" after it. A click
    made before this can be undone by the value of the widget arriving a frame after the
    page's end marker (seen under load: a norming re-score saved with the blind score)."""
    page.wait_for_function("() => document.querySelector('[data-testid=\"stApp\"]')"
                           "?.dataset.testScriptState === 'notRunning' && document"
                           ".getAnimations().every(a => a.playState !== 'running')",
                           timeout=timeout)
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => "
                  "requestAnimationFrame(r)))")


def upload_file(page, label: str, path: str | Path) -> None:
    """Put ``path`` into the file uploader labelled ``label`` (e.g. "Items file"): by its
    label, since a page can hold several uploaders, and while a run is drawing the next one
    the last is still on the page, faded."""
    page.get_by_label(label, exact=True).get_by_test_id(
        "stFileUploaderDropzoneInput").set_input_files(str(path))


def session_cookie(context, timeout: float = 30.0, *, gone: bool = False) -> dict | None:
    """The study's session cookie, once the browser holds it; with ``gone``, None once it
    has none any more. The app has the cookie set and deleted by a script on the page (an
    ``HttpOnly`` cookie can be set or deleted only by an HTTP response: annotate/cookies.py),
    after the page that needs it is drawn: a reload, a typed address or a second tab at once
    after sign-in can come before it and land on the sign-in page, and the sign-in page after
    a sign-out is drawn before the cookie is deleted (both seen with two workers on two busy
    cores). The session itself ends in the database at sign-out, before either. A person
    takes longer than that; a test waits for it."""
    deadline = time.monotonic() + timeout
    while True:
        found = [c for c in context.cookies()
                 if c["name"].startswith("h2h_session_") and c["value"]]
        if found and not gone:
            return found[0]
        if gone and not found:
            return None
        if time.monotonic() > deadline:
            raise AssertionError(f"the session cookie is {'still there' if gone else 'missing'}"
                                 f" {timeout:.0f} s after "
                                 f"{'sign-out' if gone else 'sign-in'}")
        time.sleep(0.05)


@contextmanager
def served(db: str | Path, log: Path, *options: str) -> Iterator[str]:
    """Run `h2h serve` (with ``options``) on a free port; yields the base URL; stops it
    afterwards."""
    port = free_port()
    with open(log, "w") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "annotate.cli", "serve", "--db", str(db),
                                 "--port", str(port), *options], stdout=fh,
                                stderr=subprocess.STDOUT, env=dict(os.environ))
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(base + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("h2h serve did not start:\n" + log.read_text())
            time.sleep(0.05)  # it answers some 1.5 s after starting: ask often, not 0.3 s late
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


class _Sniff(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's naming)
        self.server.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()

    def log_message(self, *args):
        pass


@contextmanager
def sniffer() -> Iterator[tuple[str, list[str]]]:
    """An HTTP server on a free loopback port that records every path requested of it:
    hostile text points here, so any request it gets is text that was not inert.
    Yields (base URL, list of requested paths)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), _Sniff)
    server.hits = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.hits
    finally:
        server.shutdown()
