"""Fixtures for judge tests: a fresh SQLite study with a few items, and loopback fake providers."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from data.engine import _engine_for, get_engine
from data.importing import import_item_records
from data.items import parse_items
from data.study import init_study
from judge.calls import RunOptions
from judge.prices import PriceTable, load_prices
from tests.helpers import h2h_env, item, jsonl, run_h2h  # noqa: F401 (h2h_env: re-exported)

from .fakes import FakeServer

# Two dialogue items (3 dimensions each), one recollection (+ memory fidelity), one itinerary
# (+ plan quality): 3 + 3 + 4 + 4 = 14 (item, dimension) pairs.
ITEMS = [item("d1"), item("d2"), item("r1", task="recollection"), item("i1", task="itinerary")]
N_PAIRS = 14
FAST = RunOptions(concurrency=4, max_retries=3, backoff=0.01, max_backoff=0.05)


def make_study(path: Path, items=ITEMS):
    engine = get_engine(path)
    init_study(engine, name="judge test study")
    records = parse_items(jsonl(*items), "items.jsonl", ("dialogue", "recollection",
                                                         "itinerary"))
    import_item_records(engine, records, file="items.jsonl")
    return engine


@pytest.fixture(scope="session")
def _study_template(tmp_path_factory) -> Path:
    """Migrations take a while; each test gets a fresh copy of one freshly built study file."""
    path = tmp_path_factory.mktemp("template") / "study.db"
    engine = make_study(path)
    engine.dispose()  # closing the last connection checkpoints the WAL into the file
    _engine_for.cache_clear()
    return path


@pytest.fixture
def study(tmp_path, _study_template) -> Iterator:
    """A fresh study (default rubric, the ITEMS) in this test's own folder."""
    path = tmp_path / "study.db"
    shutil.copyfile(_study_template, path)
    engine = get_engine(path)
    yield engine
    engine.dispose()
    _engine_for.cache_clear()


@pytest.fixture
def prices(tmp_path) -> PriceTable:
    """$1 per million input and $10 per million output tokens for every fake model."""
    p = tmp_path / "prices.toml"
    p.write_text('batch_discount = 0.5\n[models."fake-*"]\ninput = 1.0\noutput = 10.0\n'
                 'cache_write = 1.25\ncache_read = 0.1\n', encoding="utf-8")
    return load_prices(p)


@pytest.fixture
def anthropic_fake(monkeypatch) -> Iterator[FakeServer]:
    fake = FakeServer("anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake.api_key)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    yield fake
    fake.close()


@pytest.fixture
def openai_fake(monkeypatch) -> Iterator[FakeServer]:
    fake = FakeServer("openai", api_key=None)  # like a local Ollama / vLLM server
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    yield fake
    fake.close()


def judge_spec(engine, provider: str = "anthropic", **kw):
    from data.study import current_rubric
    from judge.config import JudgeSpec
    from judge.prompts import load_judge_template
    return JudgeSpec(provider, kw.pop("model", "fake-judge"), load_judge_template(None),
                     current_rubric(engine).version, **kw)


def judge(engine, fake: FakeServer, prices: PriceTable, *, options: RunOptions = FAST,
          filters=None, timeout: float = 5.0, **kw):
    """Run a judge configuration against ``fake`` through the real SDK; (plan, stats)."""
    from judge.judging import Filters
    from judge.providers import make_provider
    from judge.run import run_judge
    spec = kw.pop("spec", None) or judge_spec(engine, fake.kind, **kw)
    provider = make_provider(spec.provider, base_url=fake.url, timeout=timeout,
                             structured=spec.structured)
    return run_judge(engine, spec, provider, filters=filters or Filters(), options=options,
                     prices=prices)


def query(engine, sql: str, **params) -> list[tuple]:
    import sqlalchemy as sa
    with engine.connect() as c:
        return [tuple(r) for r in c.execute(sa.text(sql), params).all()]


# --- real local models (issue 10): the bundled GGUF, the demo study, llama-cpp-python's server -

def h2h_proc(*args: str, process: bool = False):
    """Run `h2h …` to the end (in this process unless ``process``); (exit code, stdout,
    stderr)."""
    res = run_h2h(*args, check=False, process=process, timeout=900)
    return res.returncode, res.stdout, res.stderr


@pytest.fixture(scope="session")
def smollm2() -> Path:
    """The bundled SmolLM2-135M-Instruct GGUF (the `local` extra installs it)."""
    from judge.providers.local_models import resolve_local_model
    return resolve_local_model("smollm2-135m-instruct").path


@pytest.fixture(scope="session")
def smollm2_shallow(smollm2, tmp_path_factory) -> Path:
    """SmolLM2 with its first 2 of 30 blocks (tests/local_model.py): a real GGUF model
    that reads a prompt ten times faster, for the tests of what surrounds the model."""
    from tests.helpers import built_once_per_run
    from tests.local_model import shallow_copy

    def build(folder: Path) -> None:
        shallow_copy(smollm2, folder / "smollm2-2-blocks.gguf")

    return built_once_per_run(tmp_path_factory, "shallow", build) / "smollm2-2-blocks.gguf"


@pytest.fixture
def demo(tmp_path, demo_template) -> str:
    """A fresh copy of the demo study (simulated raters and judges) for this test."""
    return str(demo_template.copy_to(tmp_path))
