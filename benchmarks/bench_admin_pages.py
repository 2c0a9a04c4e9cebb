"""The coordinator's pages run again, side by side: a visit to the Agreement page and a look at
another disagreement on Judge calibration, with their results kept (annotate.computed) and
computed afresh on every run as before, in the same run (medians of interleaved repeats).

The study is the demo's (``h2h demo``: 147 items, five dimensions, simulated raters and two
simulated judges), the pages run in Streamlit's AppTest as an admin's session runs them, at
the pages' B (500; B matters little here: the bootstraps are vectorised, and the rater model's
fit is as costly). The reference is the same run of the same page with the kept results
dropped first (what every run did before). Both must show the same numbers. A kept visit to
the Agreement page must take at most 0.25 of the reference; on Judge calibration, where the
page also draws the item, its scores and the prompt editor on every run, at most 0.7.

Prints PASS or FAIL and exits non-zero on FAIL.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REPEATS = 5


def _admin(db: Path):
    from annotate.services.auth import Identity
    from data.engine import get_engine
    from data.raters import add_rater
    from data.sample import build_sample_study
    from data.sessions import open_session
    from data.study import current_rubric, init_study
    from judge.simulate import add_simulated_judges

    engine = get_engine(db)
    init_study(engine, name="Benchmark study")
    build_sample_study(engine, current_rubric(engine))
    add_simulated_judges(engine, current_rubric(engine), seed=3)
    admin, _ = add_rater(engine, "ada", "admin")
    token, _ = open_session(engine, admin.id)
    return Identity(admin.id, "ada", "admin", token)


def _timed(at, act) -> float:
    t0 = time.perf_counter()
    act(at)
    elapsed = time.perf_counter() - t0
    if at.exception:
        sys.exit(f"the page failed: {at.exception}")
    return elapsed


def main() -> int:
    os.environ.setdefault("STREAMLIT_LOGGER_LEVEL", "error")  # not its bare-mode notes
    from streamlit.testing.v1 import AppTest

    from annotate import computed, state

    views = ROOT / "annotate" / "views"
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "study.db"
        os.environ["H2H_DB"] = str(db)
        who = _admin(db)

        def page(name: str) -> AppTest:
            at = AppTest.from_file(str(views / name), default_timeout=300)
            at.session_state[state.IDENTITY] = who
            return at

        def tables(at) -> list:
            return [t.value.to_dict() for t in at.table] + [d.value.to_dict()
                                                            for d in at.dataframe]

        cases = [("Agreement page, B = 500: a visit again", page("admin_agreement.py").run(),
                  lambda at: at.run(), 0.25)]
        calibrate = page("admin_calibrate.py").run()

        def two_picks(at) -> None:  # ends on the same item each time: the same tables
            at.selectbox(key="h2h_dis_item").select_index(1).run()
            at.selectbox(key="h2h_dis_item").select_index(2).run()

        cases.append(("Judge calibration, B = 500: two disagreements looked at", calibrate,
                      two_picks, 0.7))

        ok = True
        for name, at, act, most in cases:
            kept, fresh = [], []
            act(at)
            shown = tables(at)
            for _ in range(REPEATS):
                kept.append(_timed(at, act))
                same = tables(at) == shown
                computed.forget()
                fresh.append(_timed(at, act))
                same = same and tables(at) == shown
                if not same:
                    print(f"{name}: the numbers differ between kept and computed runs")
                    ok = False
            k, f = statistics.median(kept), statistics.median(fresh)
            ratio = k / f
            ok = ok and ratio <= most
            print(f"{name}: {k:.3f} s kept, {f:.3f} s computed again; ratio {ratio:.2f} "
                  f"(<= {most})")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
