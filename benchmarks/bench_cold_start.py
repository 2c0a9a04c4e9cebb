"""Cold start to the first item: `h2h serve` process start -> first item drawn after sign-in.

Measured in Debian's Chromium through Playwright, side by side with Potato 2.12.1 on the same
5,000-item, 3-dimension study (see side_by_side.py), in interleaved rounds: each round starts
each server process from nothing, opens its address as soon as it accepts connections, signs
in (h2htalk: access code; Potato: user name), and stops the clock when the first item's reply
and its blank three-dimension form are on screen. Each round uses a fresh browser context (no
cache, no cookies); one untimed warm-up start per app comes first (bytecode compiled, files
in the OS cache, Potato's own first-start indexing done, as for a study in use).

Target (issue 16): h2htalk's median at most 1.0x Potato's. Also printed: when each server first
answered, when the sign-in form was ready, and sign-in -> first item (issue 34: at most 1.0x
Potato's too). With ``--baseline PATH`` another checkout of h2htalk (e.g. the main branch's
worktree) runs in the same interleaved rounds on a copy of the same study, so a change is
measured against the code it changes as well as against Potato, under the same load.

    python benchmarks/bench_cold_start.py [--port P] [--potato-port Q] [--rounds 5]
        [--baseline ../main]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import side_by_side as sbs  # noqa: E402

TARGET = 1.0


def one_start(browser, app: sbs.App, start, who: str) -> dict[str, float]:
    """Start a server, sign in, wait for the first item; the phases in seconds."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    t0 = time.perf_counter()
    server = start()
    try:
        sbs.goto_when_up(page, server)
        t_up = time.perf_counter()
        app.fill_sign_in(page, who)
        t_form = time.perf_counter()
        app.click_sign_in(page)
        sbs.wait_js(page, app.drawn, arg=None)
        t_item = time.perf_counter()
        cpu = server.cpu_seconds()
    finally:
        ctx.close()
        server.stop()
    return {"total": t_item - t0, "answered": t_up - t0, "sign-in form": t_form - t0,
            "sign-in -> item": t_item - t_form, "server CPU": cpu}


def summary(runs: list[dict[str, float]]) -> str:
    keys = ("total", "answered", "sign-in form", "sign-in -> item", "server CPU")
    return ", ".join(f"{k} {sbs.median([r[k] for r in runs]):.2f} s" for k in keys)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=None, help="Port for h2h serve (default: a "
                    "free one).")
    ap.add_argument("--potato-port", type=int, default=None, help="Port for Potato.")
    ap.add_argument("--potato", default=None, help="Potato's `potato` command (default: "
                    "$H2H_POTATO, else .bench/potato/bin/potato).")
    ap.add_argument("--items", type=int, default=5_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--baseline", type=Path, default=None, help="Another h2htalk checkout "
                    "to run side by side (its code first on the path), e.g. main's worktree.")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    port = args.port or sbs.free_port()
    potato = sbs.find_potato(args.potato)
    tmp = Path(tempfile.mkdtemp(prefix="h2h-bench-cold-"))
    db = tmp / "study.db"
    code = sbs.build_h2h_study(db, args.items, n_raters=20, k=3)
    print(f"study: {args.items} items, 3 dimensions, 20 raters (k = 3); h2h serve on port "
          f"{port}")
    starts = {"h2htalk": lambda: sbs.start_h2h(db, port, tmp / "h2h.log")}
    apps = {"h2htalk": (sbs.H2H, lambda r: code)}
    if args.baseline is not None:
        base_db = tmp / "baseline.db"
        shutil.copy(db, base_db)
        bport = sbs.free_port()
        starts["baseline"] = lambda: sbs.start_h2h(base_db, bport, tmp / "baseline.log",
                                                   root=args.baseline.resolve())
        apps["baseline"] = (sbs.H2H, lambda r: code)
        print(f"baseline: h2htalk from {args.baseline.resolve()} on port {bport}")
    if potato is None:
        print(f"Potato {sbs.POTATO_VERSION} not found: the Potato column is skipped; "
              f"{sbs.INSTALL_HINT}")
    else:
        version = sbs.potato_version(potato)
        pport = args.potato_port or sbs.free_port()
        config = sbs.build_potato_project(tmp / "potato", args.items)
        starts["Potato"] = lambda: sbs.start_potato(potato, config, pport, tmp / "potato.log")
        apps["Potato"] = (sbs.POTATO, lambda r: f"rater-{r}")
        print(f"reference: Potato {version} ({potato}) on port {pport}")
        if version != sbs.POTATO_VERSION:
            print(f"warning: expected Potato {sbs.POTATO_VERSION}, found {version}")

    runs: dict[str, list[dict[str, float]]] = {name: [] for name in starts}
    with sync_playwright() as p:
        browser = sbs.launch_browser(p)
        for name in starts:  # warm-up, untimed
            app, who = apps[name]
            one_start(browser, app, starts[name], who("warm-up"))
        for r in range(args.rounds):
            order = list(starts) if r % 2 == 0 else list(reversed(starts))
            for name in order:
                app, who = apps[name]
                runs[name].append(one_start(browser, app, starts[name], who(r)))
                print(f"  round {r + 1} {name}: {runs[name][-1]['total']:.2f} s", flush=True)
        browser.close()

    print(f"\nprocess start -> first item drawn after sign-in, median of {args.rounds} "
          "interleaved rounds:")
    for name, rs in runs.items():
        print(f"  {name:8s} {summary(rs)}")
    ours = sbs.median([r["total"] for r in runs["h2htalk"]])
    shutil.rmtree(tmp, ignore_errors=True)
    if "Potato" not in runs:
        print(f"h2htalk cold start {ours:.2f} s; Potato column skipped (not installed), no "
              "ratio and no verdict")
        return 0
    ref = sbs.median([r["total"] for r in runs["Potato"]])
    ratio = ours / ref
    print(f"cold start: h2htalk {ours:.2f} s vs Potato {ref:.2f} s -> {ratio:.2f}x "
          f"(target <= {TARGET:.1f}x)")
    signin = (sbs.median([r["sign-in -> item"] for r in runs["h2htalk"]])
              / sbs.median([r["sign-in -> item"] for r in runs["Potato"]]))
    print(f"sign-in -> first item: {signin:.2f}x Potato's")
    if "baseline" in runs:
        for key in ("total", "sign-in -> item"):
            mine = sbs.median([r[key] for r in runs["h2htalk"]])
            base = sbs.median([r[key] for r in runs["baseline"]])
            print(f"{key}: {mine:.2f} s vs the baseline's {base:.2f} s -> {mine / base:.2f}x")
    ok = ratio <= TARGET
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
