"""No dead end for a lost code or a rater deactivated by mistake (issue 34): `h2h raters
reissue` and `reactivate`, and the same two actions on the Raters page. A new code signs in
while the old one does not, and the old code's sessions end at once — through the same
revocation as deactivation, on SQLite and PostgreSQL."""

from __future__ import annotations

import html

import pytest
import sqlalchemy as sa
from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from annotate import state
from annotate.cli import app
from annotate.services import queue
from annotate.services.auth import SessionEnded, resume_identity, sign_in
from data.engine import write_session
from data.importing import import_item_records
from data.items import ItemRecord
from data.models import Assignment
from data.raters import add_rater, deactivate_rater, reactivate_rater, reissue_code
from data.sessions import open_session
from data.study import current_rubric
from tests.annotate.conftest import APP_DIR
from tests.helpers import item


@pytest.fixture
def study(engine):
    import_item_records(engine, [ItemRecord.model_validate(item(f"it{i}")) for i in range(2)],
                        file="t")
    pat, code = add_rater(engine, "pat", "rater")
    with write_session(engine) as s:
        for i in range(2):
            s.add(Assignment(rater_id=pat.id, item_id=f"it{i}", position=i))
    return {"engine": engine, "code": code}


def _save(engine, who, n: int) -> None:
    view = queue.item_at(engine, who.rater_id, n, current_rubric(engine))
    queue.save_item(engine, who, view, {d.key: 3 for d in view.dimensions}, "", False, 1.0)


def _ratings(engine) -> int:
    with engine.connect() as c:
        return c.execute(sa.text("SELECT COUNT(*) FROM rating")).scalar_one()


def test_a_new_code_signs_in_the_old_one_does_not_and_its_sessions_end_at_once(study):
    eng = study["engine"]
    old = sign_in(eng, study["code"])
    _save(eng, old, 0)
    code, ended, active = reissue_code(eng, "pat")
    assert (ended, active) == (1, True) and code != study["code"]
    # the old session is refused on its next page and its next save, saying why
    with pytest.raises(SessionEnded) as gone:
        resume_identity(eng, old.session)
    assert gone.value.reason == "reissued" and "new access code" in str(gone.value)
    with pytest.raises(SessionEnded):
        _save(eng, old, 1)
    assert _ratings(eng) == len(current_rubric(eng).dimensions_for("dialogue"))  # kept, no more
    assert sign_in(eng, study["code"]) is None          # the old code: refused
    new = sign_in(eng, code)                            # the new one: the same rater, same queue
    assert new.name == "pat" and new.rater_id == old.rater_id
    _save(eng, new, 1)


def test_reactivate_lets_a_deactivated_rater_back_with_their_code(study):
    eng = study["engine"]
    deactivate_rater(eng, "pat")
    assert sign_in(eng, study["code"]) is None
    assert reactivate_rater(eng, "pat") == (True, True)
    assert sign_in(eng, study["code"]).name == "pat"
    assert reactivate_rater(eng, "pat") == (False, True)  # already active: nothing changes


def _cli(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "120"})


def test_the_commands(tmp_path):
    db = str(tmp_path / "s.db")
    assert _cli("init", "--db", db).exit_code == 0
    first = _cli("raters", "add", "demo-rater", "--db", db).output.strip().splitlines()[-1]
    again = _cli("raters", "add", "demo-rater", "--db", db)
    assert again.exit_code == 1  # "already exists": the reason reissue is there
    res = _cli("raters", "reissue", "demo-rater", "--db", db)
    assert res.exit_code == 0, res.output
    code = res.output.strip().splitlines()[-1]
    assert "the old one no longer works" in res.output and code.startswith("H2H-")
    from data.engine import get_engine
    eng = get_engine(db)
    assert sign_in(eng, first) is None
    who = sign_in(eng, code)  # signed in twice: two sessions, both end
    token, _ = open_session(eng, who.rater_id)
    assert who.name == "demo-rater"
    assert "2 open sessions ended" in _cli("raters", "reissue", "demo-rater",
                                           "--db", db).output
    for t in (who.session, token):
        with pytest.raises(SessionEnded):
            resume_identity(eng, t)

    assert _cli("raters", "deactivate", "demo-rater", "--db", db).exit_code == 0
    deact = _cli("raters", "reissue", "demo-rater", "--db", db)
    assert "is deactivated: h2h raters reactivate" in deact.output
    newest = deact.output.strip().splitlines()[-1]
    assert sign_in(eng, newest) is None  # deactivated: not until reactivated
    back = _cli("raters", "reactivate", "demo-rater", "--db", db)
    assert back.exit_code == 0 and "Reactivated 'demo-rater'" in back.output
    assert sign_in(eng, newest).name == "demo-rater"
    assert "already active; nothing changed" in _cli("raters", "reactivate", "demo-rater",
                                                     "--db", db).output
    unknown = _cli("raters", "reissue", "nobody", "--db", db)
    assert unknown.exit_code == 1 and "no rater named 'nobody'" in str(unknown.exception)


def _page(who) -> AppTest:
    at = AppTest.from_file(str(APP_DIR / "views" / "admin_raters.py"), default_timeout=120)
    at.session_state[state.IDENTITY] = who
    return at.run()


def test_the_raters_page_gives_a_new_code_and_reactivates(demo_db):
    eng = demo_db["engine"]
    old = sign_in(eng, demo_db["rater_code"])
    at = _page(demo_db["admin"])
    box = at.selectbox(key="h2h_access_rater")
    assert "pat" in box.options and not any("sim" in o for o in box.options)
    box.select("pat")
    at.button(key="h2h_reissue_go").click().run()
    assert not at.exception
    code = at.code[0].value
    shown = [html.unescape(s.value) for s in at.success]
    assert "pat" in shown[0]
    assert "The old code of pat no longer works; 2 open sessions ended." in shown[1]
    assert sign_in(eng, demo_db["rater_code"]) is None and sign_in(eng, code).name == "pat"
    with pytest.raises(SessionEnded):
        resume_identity(eng, old.session)

    deactivate_rater(eng, "pat")
    at = _page(demo_db["admin"])
    at.selectbox(key="h2h_access_rater").select("pat")
    at.button(key="h2h_reactivate_go").click().run()
    assert html.unescape(at.success[0].value) == "pat may sign in again."
    assert sign_in(eng, code).name == "pat"
