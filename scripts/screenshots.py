"""Screenshots of every page, in English and Chinese, for docs/screenshots/ (issue 34).

Builds a demo study in a temporary folder (with a little progress: a rater trained, released
and rating, so the charts have something to show), serves it with `h2h serve`, and takes each
page at 1366 × 768 (a common laptop) in Debian's Chromium, signed in as a rater and as an
admin. The PNGs are reduced to a 256-colour palette (Pillow) so they stay small.

    python scripts/screenshots.py [--out docs/screenshots] [--width 1366 --height 768]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser import CHROMIUM_ARGS, CHROMIUM_FULL, served, settled  # noqa: E402

RATER_PAGES = [("rate", None, "rate"), ("guidelines", "guidelines", "guidelines"),
               ("norming", "norming", "norming")]
ADMIN_PAGES = [("overview", "overview"), ("import", "admin_import"),
               ("raters", "admin_raters"), ("assignment", "admin_assign"),
               ("progress", "admin_progress"), ("agreement", "admin_agreement"),
               ("adjudication", "admin_adjudicate"), ("rater-quality", "admin_quality"),
               ("norming-admin", "admin_norming"), ("calibration", "admin_calibrate"),
               ("report", "admin_report"), ("export", "admin_export")]


def build(folder: Path) -> tuple[Path, str, str, str]:
    """A demo study with some progress; returns (db, admin code, rater code, trainee code)."""
    db = folder / "demo.db"
    out = subprocess.run([sys.executable, "-m", "annotate.cli", "demo", "--db", str(db)],
                         check=True, capture_output=True, text=True, cwd=ROOT).stdout
    admin = re.search(r"Admin code \(demo-admin\): (H2H-[A-Z0-9-]+)", out).group(1)
    trainee = re.search(r"Rater code \(demo-rater\): (H2H-[A-Z0-9-]+)", out).group(1)
    from annotate.services import queue
    from annotate.services.assignment import assign
    from annotate.services.auth import sign_in
    from data.engine import get_engine
    from data.quality import release
    from data.raters import add_rater
    from data.study import current_rubric

    engine = get_engine(db)
    _, code = add_rater(engine, "Dr Lee", "rater")
    release(engine, "Dr Lee")
    assign(engine, k=2, seed=3, include_unqualified=True)  # every item to Dr Lee too
    who = sign_in(engine, code)
    rubric = current_rubric(engine)
    for n in range(1, 13):  # a dozen items saved: the progress chart has a point
        view = queue.item_at(engine, who.rater_id, n, rubric)
        if view is None:
            break
        queue.save_item(engine, who, view, {d.key: 3 + (n + i) % 3 for i, d in
                                            enumerate(view.dimensions)}, "", False, 40.0)
    engine.dispose()
    return db, admin, code, trainee


def shoot(base: str, code: str, pages, out: Path, lang: str, size: dict, prefix: str,
          browser) -> list[Path]:
    page = browser.new_page(viewport=size)
    page.goto(base)
    page.get_by_role("radio", name="中文").first.wait_for(timeout=60_000)
    if lang == "zh":
        page.get_by_role("radio", name="中文").first.click()
        settled(page)
    page.get_by_label("访问码" if lang == "zh" else "Access code").fill(code)
    page.get_by_role("button", name="登录" if lang == "zh" else "Sign in").click()
    page.get_by_test_id("stSidebarNav").wait_for(timeout=60_000)
    settled(page, timeout=180_000)
    made = []
    for name, path, *_rest in pages:
        if path and path != "rate":
            page.goto(f"{base}/{path}")
        page.get_by_test_id("stSidebarNav").wait_for(timeout=60_000)
        settled(page, timeout=180_000)
        page.wait_for_timeout(800)  # charts finish their first draw
        file = out / f"{prefix}{name}-{lang}.png"
        page.screenshot(path=str(file))
        made.append(file)
    page.close()
    return made


def shrink(files: list[Path]) -> None:
    """A 256-colour palette: a screenshot of text and flat colours keeps its look."""
    from PIL import Image

    for f in files:
        with Image.open(f) as im:
            im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT,
                                       dither=Image.Dither.NONE).save(f, optimize=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    ap.add_argument("--width", type=int, default=1366)
    ap.add_argument("--height", type=int, default=768)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    size = {"width": args.width, "height": args.height}
    with tempfile.TemporaryDirectory(prefix="h2h-shots-") as tmp:
        db, admin, rater, trainee = build(Path(tmp))
        with served(db, Path(tmp) / "serve.log") as base, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM_FULL, args=CHROMIUM_ARGS)
            made = []
            for lang in ("en", "zh"):
                page = browser.new_page(viewport=size)  # the sign-in page itself
                page.goto(base)
                page.get_by_role("radio", name="中文").first.wait_for(timeout=60_000)
                if lang == "zh":
                    page.get_by_role("radio", name="中文").first.click()
                settled(page)
                made.append(args.out / f"sign-in-{lang}.png")
                page.screenshot(path=str(made[-1]))
                page.close()
                made += shoot(base, rater, RATER_PAGES, args.out, lang, size, "", browser)
                made += shoot(base, trainee, [("training", None)], args.out, lang, size, "",
                              browser)
                made += shoot(base, admin, ADMIN_PAGES, args.out, lang, size, "", browser)
            browser.close()
    shrink(made)
    total = sum(f.stat().st_size for f in made)
    print(f"{len(made)} screenshots in {args.out} ({total / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
