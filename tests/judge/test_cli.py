"""The `h2h judge …` and `h2h generate` commands as a researcher types them."""

from __future__ import annotations

import json
import sys

import pytest

from analysis.io import JUDGES_REQUIRED, read_long_csv
from annotate.cli import main

from .conftest import N_PAIRS, query


def h2h(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    """Run the `h2h` entry point in this process; (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["h2h", *args])
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.fixture
def db(study) -> str:
    return str(study.url.database)


def run_args(db: str, fake, *extra: str) -> list[str]:
    return ["judge", "run", "--db", db, "--provider", fake.kind, "--model", "fake-judge",
            "--base-url", fake.url, "--quiet", "--backoff", "0.01", *extra]


@pytest.mark.parametrize("cmd", [["judge", "run"], ["judge", "collect"], ["judge", "cost"],
                                 ["judge", "export"], ["judge", "configs"], ["generate"]])
def test_every_command_has_help_with_an_example(monkeypatch, capsys, cmd):
    code, out, _ = h2h(monkeypatch, capsys, *cmd, "--help")
    assert code == 0 and f"Example: h2h {' '.join(cmd)}" in out


def test_run_cost_export_configs_and_analyze(monkeypatch, capsys, db, study, anthropic_fake,
                                             tmp_path):
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."fake-*"]\ninput = 1.0\noutput = 10.0\n', encoding="utf-8")
    code, out, err = h2h(monkeypatch, capsys, *run_args(db, anthropic_fake, "--name", "j1",
                                                        "--prices", str(prices)))
    assert code == 0, err
    assert "Judge 'j1'" in out and f"stored {N_PAIRS} judgments: {N_PAIRS} ok" in out
    assert "cost $0.0280" in out  # 14 x (1000 x $1 + 100 x $10) / 1e6

    code, out, _ = h2h(monkeypatch, capsys, "judge", "run", "--db", db, "--config", "j1",
                       "--base-url", anthropic_fake.url)
    assert code == 0 and "Nothing to ask" in out and "No request was made" in out

    code, out, _ = h2h(monkeypatch, capsys, "judge", "cost", "--db", db)
    assert code == 0 and "j1" in out and "14,000" in out and "Total: $0.0280" in out

    code, out, _ = h2h(monkeypatch, capsys, "judge", "configs", "--db", db)
    assert code == 0 and "j1" in out and "per-dimension" in out

    csv_path = tmp_path / "judges.csv"
    code, out, _ = h2h(monkeypatch, capsys, "judge", "export", "--db", db, "--out",
                       str(csv_path))
    assert code == 0 and f"Wrote {N_PAIRS} judgments (0 unscored)" in out
    df = read_long_csv(csv_path, JUDGES_REQUIRED, ("sample",))  # what `h2h analyze` reads
    assert len(df) == N_PAIRS and set(df["judge"]) == {"j1"}
    row = df[(df["item_id"] == "d1") & (df["dimension"] == "empathy")].iloc[0]
    assert row["score"] == anthropic_fake.score("d1", "empathy")

    # with human ratings in the study, `h2h analyze --db` puts the stored judge beside them
    ratings = tmp_path / "ratings.csv"
    lines = ["item_id,rater,dimension,score"]
    for i, (it, dim) in enumerate(query(study, "SELECT item_id, dimension FROM judgment")):
        lines += [f"{it},ann,{dim},{1 + i % 5}", f"{it},bob,{dim},{1 + (i + 1) % 5}"]
    ratings.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert h2h(monkeypatch, capsys, "import", "ratings", str(ratings), "--db", db,
        "--add-raters")[0] == 0
    code, out, err = h2h(monkeypatch, capsys, "analyze", "--db", db, "--bootstrap", "20",
                         "--json")
    assert code == 0, err
    res = json.loads(out)
    assert set(res["judges"]) == {"j1"} and "empathy" in res["judges"]["j1"]


def test_dry_run_calls_nothing_and_writes_nothing(monkeypatch, capsys, db, study,
                                                  anthropic_fake):
    code, out, _ = h2h(monkeypatch, capsys, *run_args(db, anthropic_fake, "--dry-run",
                                                      "--reason-first"))
    assert code == 0
    assert f"Dry run: {N_PAIRS} calls" in out and "Nothing was sent" in out
    assert "## Rate this dimension: Empathy" in out and "5 = Excellent:" in out
    assert "estimated cost unknown (no price for 'fake-judge'" in out
    assert anthropic_fake.log == []
    assert query(study, "SELECT COUNT(*) FROM judge_config") == [(0,)]


def test_user_errors_are_one_message_without_traceback(monkeypatch, capsys, db,
                                                       anthropic_fake):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    code, out, err = h2h(monkeypatch, capsys, *run_args(db, anthropic_fake))
    assert code == 1 and "Error: anthropic: no API key; set ANTHROPIC_API_KEY" in err
    assert "Traceback" not in out + err and anthropic_fake.log == []
    code, _, err = h2h(monkeypatch, capsys, "judge", "run", "--db", db, "--provider", "gemini",
                       "--model", "x")
    assert code == 1 and "--provider: 'gemini' is not one of anthropic, openai" in err
    code, _, err = h2h(monkeypatch, capsys, "judge", "run", "--db", db, "--config", "nope")
    assert code == 1 and "no judge configuration 'nope' (known: none yet)" in err
    code, _, err = h2h(monkeypatch, capsys, "judge", "run", "--db", db, "--config", "x",
                       "--model", "m")
    assert code == 1 and "leave out --model" in err


def test_batch_submit_then_collect(monkeypatch, capsys, db, study, anthropic_fake):
    code, out, err = h2h(monkeypatch, capsys, *run_args(db, anthropic_fake, "--batch",
                                                        "--name", "jb"))
    assert code == 0, err
    assert "Submitted batch msgbatch_0001 with 14 requests" in out
    assert "h2h judge collect --config jb" in out
    code, out, _ = h2h(monkeypatch, capsys, *run_args(db, anthropic_fake, "--batch",
                                                      "--name", "jb"))
    assert "14 waiting in batches" in out and "Nothing to submit" in out
    code, out, err = h2h(monkeypatch, capsys, "judge", "collect", "--db", db, "--base-url",
                         anthropic_fake.url)
    assert code == 0, err
    assert f"Collected 1 batch(es): {N_PAIRS} scored, 0 unscored, 0 request failures" in out
    assert query(study, "SELECT COUNT(*), SUM(batch) FROM cost_ledger") == [(N_PAIRS, N_PAIRS)]


def test_generate_command(monkeypatch, capsys, db, study, anthropic_fake):
    args = ["generate", "--db", db, "--provider", "anthropic", "--model", "fake-gen",
            "--base-url", anthropic_fake.url, "--quiet"]
    code, out, err = h2h(monkeypatch, capsys, *args, "--dry-run")
    assert code == 0, err
    assert "8 to generate" in out and "Secure Attachment Persona" in out
    assert anthropic_fake.log == []
    code, out, err = h2h(monkeypatch, capsys, *args)
    assert code == 0, err
    assert "stored 8 responses: 8 ok" in out
    code, out, _ = h2h(monkeypatch, capsys, *args)
    assert "Nothing to generate" in out and len(anthropic_fake.calls("generate")) == 8
