"""Measure the bundled local judge models on the demo study (the figures in docs/judges.md).

For each model: run ``h2h judge run --provider local --model M`` on a spread of the demo's
items (every ``--every``-th item in study order: all three task families, English and
Chinese), then report

* the share of answers scored (the rest are stored unscored with their reason);
* agreement with the demo's simulated raters: ``h2h calibrate``'s QWK per dimension (judge
  against the leave-one-out human consensus, the comparison the product reports), on all the
  items and on the Chinese items alone, with the human ceiling beside it;
* seconds per judgment (wall time of each call, from the cost ledger) and the machine's load.

Usage: .venv/bin/python scripts/measure_local_judges.py [--every 3] [--models a,b] [--db F]
Needs the local extra (``pip install -e '.[local]'``). Takes minutes per model on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CJK = re.compile(r"[\u4e00-\u9fff]")


def h2h(*args: str) -> str:
    exe = Path(sys.executable).with_name("h2h")
    res = subprocess.run([str(exe), *args], capture_output=True, text=True)
    if res.returncode:
        sys.exit(f"h2h {' '.join(args[:3])} failed:\n{res.stdout}\n{res.stderr}")
    return res.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=3)
    ap.add_argument("--models", default="smollm2-135m-instruct,gemma-3-270m")
    ap.add_argument("--db", default=None)
    ap.add_argument("--bootstrap", type=int, default=200)
    a = ap.parse_args()

    from analysis.options import AnalysisOptions
    from annotate.services.calibration import compare_configs
    from data.engine import get_engine

    db = a.db or str(Path(tempfile.mkdtemp(prefix="h2h-measure-")) / "demo.db")
    if not Path(db).exists():
        h2h("demo", "--db", db, "--force")
    engine = get_engine(db)
    with engine.connect() as c:
        rows = c.exec_driver_sql("SELECT id, response, context FROM item WHERE id NOT IN "
                                 "(SELECT item_id FROM attention_check) ORDER BY position"
                                 ).all()  # the demo's attention checks are not study items
    chosen = [r for i, r in enumerate(rows) if i % a.every == 0]
    items = [r[0] for r in chosen]
    chinese = [r[0] for r in chosen if CJK.search(r[1] + r[2])]
    print(f"{len(items)} items ({len(chinese)} Chinese) of {len(rows)}; load before: "
          f"{os.getloadavg()[0]:.1f}")
    opts = AnalysisOptions(B=a.bootstrap, seed=0)
    for model in a.models.split(","):
        name = f"measure-{model}"
        h2h("judge", "run", "--db", db, "--provider", "local", "--model", model,
            "--name", name, "--items", ",".join(items), "--quiet")
        with engine.connect() as c:
            (h,) = c.exec_driver_sql("SELECT hash FROM judge_config WHERE name = ?",
                                     (name,)).one()
            outcomes = dict(c.exec_driver_sql(
                "SELECT outcome, count(*) FROM judgment WHERE config_hash = ? GROUP BY outcome",
                (h,)).all())
            secs = [s for (s,) in c.exec_driver_sql(
                "SELECT seconds FROM cost_ledger WHERE config_hash = ? AND status IN "
                "('ok', 'unscored answer')", (h,)).all()]
            dist = dict(c.exec_driver_sql(
                "SELECT score, count(*) FROM judgment WHERE config_hash = ? GROUP BY score",
                (h,)).all())
        total = sum(outcomes.values())
        print(f"\n## {model}\nscored {outcomes.get('scored', 0)}/{total} "
              f"({outcomes.get('scored', 0) / total:.0%}); seconds per judgment: median "
              f"{statistics.median(secs):.2f}, mean {statistics.mean(secs):.2f}; load now "
              f"{os.getloadavg()[0]:.1f}; scores given: {dict(sorted(dist.items(), key=str))}")
        for label, subset in (("all items", items), ("Chinese items", chinese)):
            res = compare_configs(engine, [name], items=subset, options=opts)
            cells, qwks = [], []
            for dim, r in res.items():
                q = r.configs[name].qwk
                ceiling = r.human_ceiling.qwk.value
                if q.value is not None:
                    qwks.append(q.value)
                cells.append(f"{dim} {fmt(q.value)} [{fmt(q.low)}, {fmt(q.high)}] "
                             f"(human ceiling {fmt(ceiling)}, n={r.n_items})")
            mean = fmt(statistics.mean(qwks)) if qwks else "not estimable"
            print(f"QWK on {label}: mean over dimensions {mean}\n  " + "\n  ".join(cells))
            gaps = mean_gap(engine, h, subset)
            print(f"  mean |judge - mean of the humans| on {label}: {gaps[0]:.2f} over "
                  f"{gaps[1]} (item, dimension) pairs (the humans' own spread: {gaps[2]:.2f})")


def mean_gap(engine, config_hash: str, items: list[str]) -> tuple[float, int, float]:
    """Mean absolute gap between the judge and the humans' mean per (item, dimension), and,
    for scale, the humans' own mean absolute gap to that mean."""
    with engine.connect() as c:
        ratings = c.exec_driver_sql("SELECT item_id, dimension, score FROM rating WHERE score "
                                    "IS NOT NULL").all()
        judged = c.exec_driver_sql("SELECT item_id, dimension, score FROM judgment WHERE "
                                   "config_hash = ? AND score IS NOT NULL", (config_hash,)).all()
    wanted = set(items)
    humans: dict[tuple[str, str], list[float]] = {}
    for i, d, sc in ratings:
        if i in wanted:
            humans.setdefault((i, d), []).append(sc)
    gaps = [abs(sc - statistics.mean(humans[(i, d)])) for i, d, sc in judged
            if (i, d) in humans]
    spread = [abs(x - statistics.mean(v)) for v in humans.values() for x in v]
    return statistics.mean(gaps), len(gaps), statistics.mean(spread)


def fmt(x) -> str:
    return "—" if x is None else f"{x:.2f}"


if __name__ == "__main__":
    main()
