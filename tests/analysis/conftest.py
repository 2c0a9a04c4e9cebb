"""Fixtures of the analysis tests."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import built_once_per_run, run_h2h

DEMO_REPORT = ("--bootstrap", "300", "--seed", "9", "--severity-adjusted")
"""The options of the demo study's report that test_report.py reads and test_report_latex.py
compiles."""


@dataclass(frozen=True)
class DemoReport:
    """The demo study and its report as `h2h report` wrote them (:data:`DEMO_REPORT`)."""

    folder: Path  # demo.db, report/, and report.out: what the command printed

    def copy_to(self, into: Path) -> tuple[Path, Path, str]:
        """The study and the report copied into ``into`` (a test may write beside the report
        or open the study); (study, report folder, what `h2h report` printed)."""
        shutil.copyfile(self.folder / "demo.db", into / "demo.db")
        shutil.copytree(self.folder / "report", into / "report")
        return (into / "demo.db", into / "report",
                (self.folder / "report.out").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def demo_report_template(tmp_path_factory, demo_template) -> DemoReport:
    """The demo study's report with its figures, written once per test run by whichever
    worker asks first (it takes seconds); tests take copies of it."""
    def build(folder: Path) -> None:
        db = demo_template.copy_to(folder)
        proc = run_h2h("report", "--db", str(db), "--out", str(folder / "report"),
                       *DEMO_REPORT)
        (folder / "report.out").write_text(proc.stdout, encoding="utf-8")

    return DemoReport(built_once_per_run(tmp_path_factory, "demo-report", build))


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """A sentence-transformers folder: one BERT layer of width 8, mean pooling."""
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    try:  # sentence-transformers 6 moved the modules; 3 to 5 have them here
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:
        from sentence_transformers.models import Pooling, Transformer

    root = tmp_path_factory.mktemp("tiny")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"abcdefghijklmnopqrstuvwxyz",
             "你", "好", "今", "天", "hello", "there", "friend", "the", "same", "words"]
    (root / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    torch.manual_seed(0)
    bert = BertModel(BertConfig(vocab_size=len(vocab), hidden_size=8, num_hidden_layers=1,
                                num_attention_heads=2, intermediate_size=16,
                                max_position_embeddings=64))
    hf = root / "hf"
    bert.save_pretrained(hf)
    BertTokenizerFast(vocab_file=str(root / "vocab.txt")).save_pretrained(hf)
    tr = Transformer(str(hf), max_seq_length=32)
    st = SentenceTransformer(modules=[tr, Pooling(8, pooling_mode="mean")])
    st.save(str(root / "st"))
    return root
