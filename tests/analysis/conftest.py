"""Fixtures of the analysis tests."""

from __future__ import annotations

import pytest


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
