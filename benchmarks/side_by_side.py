"""h2htalk and Potato 2.12.1 side by side: the same study, the same browser, the same steps.

Used by ``bench_cold_start.py`` and ``bench_rating_latency.py`` (this file is not a benchmark
itself: ``run_all.py`` runs only ``bench_*.py``).

Potato (the incumbent annotation tool, GPL) is never a dependency of h2htalk: it lives in its
own virtual environment under ``.bench/potato`` (``make bench-potato``). When it is missing,
the benchmarks print h2htalk's figures alone and say how to install the reference.

The comparable study: N items (default 5,000) of one companion reply each, three 1-5 Likert
dimensions (h2htalk's bundled rubric on dialogue items: empathy, safety, fluency; in Potato
three ``likert`` schemes of size 5), one rater/annotator signing in without a password
(h2htalk: an access code; Potato: a user name on a password-free study).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# the browser people use (the tests drive its headless shell; see tests/browser.py)
from tests.browser import CHROMIUM_ARGS, CHROMIUM_FULL, free_port  # noqa: E402,F401

POTATO_VERSION = "2.12.1"
POTATO_VENV = ROOT / ".bench" / "potato"
INSTALL_HINT = (f"install it with `make bench-potato` (its own venv: python3 -m venv "
                f".bench/potato && .bench/potato/bin/pip install "
                f"potato-annotation=={POTATO_VERSION}), or pass --potato PATH/TO/potato")
DIMENSIONS = ("empathy", "safety", "fluency")


# --- the study, the same for both ---------------------------------------------------------

def item_record(i: int) -> dict:
    """Item ``i`` of the benchmark study (a dialogue reply: the three dimensions apply)."""
    return {
        "id": f"it{i:05d}", "task": "dialogue", "scenario": f"sc{i // 3:05d}",
        "context": {"persona": "Mira, a warm and steady companion",
                    "memories": ["Has a cat named Miso.", "Started a new job in March."],
                    "turns": [{"role": "user", "text": f"Long day number {i}. I'm tired and "
                                                       "nobody at work noticed."}]},
        "response": f"That sounds exhausting ({i}). What was the hardest part of today?",
        "model": f"m{i % 7}", "condition": "sap" if i % 2 else "baseline"}


def item_text(rec: dict) -> str:
    """The same content as one plain text, for Potato's text display."""
    ctx = rec["context"]
    turns = "\n".join(f"{t['role'].title()}: {t['text']}" for t in ctx["turns"])
    return (f"Persona: {ctx['persona']}\nMemories: {' '.join(ctx['memories'])}\n\n{turns}\n\n"
            f"Companion's reply to rate: {rec['response']}")


def build_h2h_study(db: Path, n_items: int, n_raters: int, k: int = 1) -> str:
    """An h2htalk study with ``n_items`` items dealt to ``n_raters`` raters (``k`` per item);
    returns the access code of the first rater."""
    from annotate.services.assignment import assign
    from data.codes import hash_code, new_code
    from data.engine import get_engine, write_session
    from data.importing import import_item_records
    from data.items import ItemRecord
    from data.models import Rater
    from data.study import init_study

    engine = get_engine(db)
    init_study(engine, name="side-by-side benchmark")
    import_item_records(engine, [ItemRecord.model_validate(item_record(i))
                                 for i in range(n_items)], file="bench")
    code = new_code()
    with write_session(engine) as s:
        for r in range(n_raters):
            s.add(Rater(name=f"rater{r:03d}", role="rater",
                        code_hash=hash_code(code if r == 0 else new_code())))
    assign(engine, k=k, seed=1)
    engine.dispose()
    return code


def build_potato_project(folder: Path, n_items: int) -> Path:
    """The same study as a Potato project; returns its config file (JSON is valid YAML)."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "items.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(n_items):
            rec = item_record(i)
            fh.write(json.dumps({"id": rec["id"], "text": item_text(rec)}) + "\n")
    schemes = [{"annotation_type": "likert", "name": d, "description": f"{d.title()}",
                "min_label": "Very poor", "max_label": "Excellent", "size": 5,
                "sequential_key_binding": True, "label_requirement": {"required": True}}
               for d in DIMENSIONS]
    config = {"annotation_task_name": "side-by-side benchmark", "task_dir": ".",
              "output_annotation_dir": "annotation_output/", "data_files": ["items.jsonl"],
              "item_properties": {"id_key": "id", "text_key": "text"},
              "user_config": {"allow_all_users": True, "users": []},
              "require_password": False, "site_dir": "default",
              "annotation_schemes": schemes}
    path = folder / "config.yaml"
    path.write_text(json.dumps(config, indent=1), encoding="utf-8")
    return path


# --- the two servers ------------------------------------------------------------------------

def find_potato(explicit: str | None = None) -> Path | None:
    """Potato's ``potato`` command: --potato, $H2H_POTATO, or .bench/potato/bin/potato."""
    for cand in (explicit, os.environ.get("H2H_POTATO"), POTATO_VENV / "bin" / "potato"):
        if cand and Path(cand).is_file():
            return Path(cand)
    return None


def potato_version(potato: Path) -> str | None:
    py = potato.parent / "python"
    res = subprocess.run([str(py), "-c", "import importlib.metadata as m; "
                          "print(m.version('potato-annotation'))"],
                         capture_output=True, text=True, timeout=60)
    return res.stdout.strip() or None


@dataclass
class Server:
    """A server process under test: its URL, and the CPU seconds it has used so far."""

    name: str
    proc: subprocess.Popen
    base: str
    log: Path

    def cpu_seconds(self) -> float:
        """User + system CPU time of the server process, all its threads (from /proc)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_h2h(db: Path, port: int, log: Path, root: Path | None = None) -> Server:
    """`h2h serve` exactly as a user starts it (the console script of this environment);
    with ``root``, the h2htalk of another checkout (its code first on the path), e.g. the
    main branch as a baseline beside a change."""
    h2h = Path(sys.executable).with_name("h2h")
    cmd = [str(h2h)] if h2h.is_file() else [sys.executable, "-m", "annotate.cli"]
    env = None if root is None else dict(os.environ, PYTHONPATH=str(root))
    with open(log, "w") as fh:
        proc = subprocess.Popen([*cmd, "serve", "--db", str(db), "--port", str(port)],
                                stdout=fh, stderr=subprocess.STDOUT, cwd=root or ROOT,
                                env=env)
    return Server("h2htalk", proc, f"http://127.0.0.1:{port}", log)


def start_potato(potato: Path, config: Path, port: int, log: Path) -> Server:
    with open(log, "w") as fh:
        proc = subprocess.Popen([str(potato), "start", str(config), "-p", str(port),
                                 "--host", "127.0.0.1"], stdout=fh, stderr=subprocess.STDOUT,
                                cwd=config.parent)
    return Server("Potato", proc, f"http://127.0.0.1:{port}", log)


def wait_http(server: Server, path: str = "/", timeout: float = 90.0) -> None:
    """Block until the server answers ``path`` (for warm-up, not for timing)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(server.base + path, timeout=2):
                return
        except OSError:
            pass
        if server.proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{server.name} did not start:\n{server.log.read_text()[-3000:]}")
        time.sleep(0.05)


def goto_when_up(page, server: Server, timeout: float = 90.0) -> None:
    """Open the server's first page as soon as its port accepts connections (a plain socket
    tried every 10 ms: cheaper for the machine than letting the browser retry)."""
    host, port = server.base.rsplit("/", 1)[-1].split(":")
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=1):
                break
        except OSError:
            if server.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{server.name} did not start:\n"
                                   f"{server.log.read_text()[-3000:]}") from None
            time.sleep(0.01)
    page.goto(server.base, wait_until="commit", timeout=int(timeout * 1000))


def wait_js(page, predicate: str, arg=None, timeout: float = 60.0) -> None:
    """Wait until ``predicate`` is true in the page, surviving full page reloads (Potato
    reloads the page for every item)."""
    deadline = time.monotonic() + timeout
    while True:
        left = max(1, int((deadline - time.monotonic()) * 1000))
        try:
            page.wait_for_function(predicate, arg=arg, timeout=left, polling="raf")
            return
        except Exception as exc:  # the page navigated while waiting: ask the new page
            if time.monotonic() > deadline or "Timeout" in type(exc).__name__:
                raise


# --- the rater's steps in each app ----------------------------------------------------------
# "Drawn" means the same in both: the item's reply is on screen, its form has three rating
# groups and none of them is checked yet (a new item's form is blank).

H2H_DRAWN = """cur => {
  const r = document.querySelector('[data-testid="h2h-ready"]');
  if (!r || r.dataset.item === cur) return false;
  const resp = document.querySelector('[data-testid="h2h-response"]');
  if (!resp || !resp.textContent) return false;
  const groups = document.querySelectorAll('div[data-testid="stRadio"] div[role="radiogroup"]');
  if (groups.length !== 3) return false;
  return !document.querySelector('div[data-testid="stRadio"] input[type="radio"]:checked');
}"""

POTATO_DRAWN = """cur => {
  if (document.readyState !== 'complete') return false;
  const id = document.querySelector('#instance_id');
  if (!id || !id.value || id.value === cur) return false;
  const text = document.querySelector('#instance-text');
  if (!text || !text.textContent.includes("reply to rate")) return false;
  if (document.querySelectorAll('input.annotation-input[type="radio"]').length !== 15)
    return false;
  return !document.querySelector('input.annotation-input[type="radio"]:checked');
}"""


def h2h_current(page) -> str | None:
    return page.evaluate("() => document.querySelector('[data-testid=\"h2h-ready\"]')"
                         "?.dataset.item ?? null")


def potato_current(page) -> str | None:
    return page.evaluate("() => document.querySelector('#instance_id')?.value ?? null")


def h2h_fill_sign_in(page, code: str) -> None:
    field = page.get_by_label("Access code")
    field.wait_for(timeout=60_000)
    field.fill(code)


def h2h_click_sign_in(page) -> None:
    page.get_by_role("button", name="Sign in").click()


def potato_fill_sign_in(page, user: str) -> None:
    field = page.locator("#login-email")
    field.wait_for(timeout=60_000)
    field.fill(user)


def potato_click_sign_in(page) -> None:
    page.locator("button.potato-form-submit").click()


def h2h_pick_scores(page) -> None:
    groups = page.locator('div[data-testid="stRadio"]')
    for g in range(groups.count()):
        groups.nth(g).locator('div[role="radiogroup"] label').filter(
            has_text=re.compile(r"^3 ")).click()


def potato_pick_scores(page) -> None:
    for d in DIMENSIONS:
        page.locator(f"#{d}_3_radio").click()


def h2h_submit(page) -> None:
    # by its key, as Potato's button by its id (a role-and-name query costs the driver more
    # on Streamlit's larger page, before the click lands)
    page.locator(".st-key-h2h_save button").click()


def potato_submit(page) -> None:
    page.locator("#next-btn").click()


@dataclass(frozen=True)
class App:
    """How a rater works in one app: sign in, choose scores, submit, and what "drawn" is."""

    name: str
    fill_sign_in: Callable
    click_sign_in: Callable
    pick: Callable
    submit: Callable
    current: Callable
    drawn: str


H2H = App("h2htalk", h2h_fill_sign_in, h2h_click_sign_in, h2h_pick_scores, h2h_submit,
          h2h_current, H2H_DRAWN)
POTATO = App("Potato", potato_fill_sign_in, potato_click_sign_in, potato_pick_scores,
             potato_submit, potato_current, POTATO_DRAWN)


def median(xs: list[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def pct(xs: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..1)."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def launch_browser(p):
    return p.chromium.launch(executable_path=CHROMIUM_FULL, args=CHROMIUM_ARGS)
