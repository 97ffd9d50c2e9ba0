"""Token statistics of a causal LM (aicd.lm.stats): every column against a naive full-logits
computation (log_softmax over the whole vocabulary, ranks from an argsort) on two tiny random
Llamas built here with a byte-level BPE trained on real trial code, the criteria against the
papers' formulas and Fast-DetectGPT's detector, the two-model terms, short texts, order and
padding, bad input; and a few trial rows through the real SmolLM2 in bfloat16 and float32."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from aicd.common.errors import AicdError
from aicd.lm.stats import CRITERIA, STAT_NAMES, TokenStats, choose_dtype, criterion

pytestmark = pytest.mark.encoders

WINDOW = 64
COL = {name: i for i, name in enumerate(STAT_NAMES)}


def _tiny_llama(folder, vocab_size: int, seed: int, tokenizer) -> str:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    eos = tokenizer.eos_token_id
    config = LlamaConfig(vocab_size=vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128, bos_token_id=eos,
                         eos_token_id=eos, pad_token_id=None, tie_word_embeddings=False, initializer_range=0.3)
    # pad_token_id=None: Llama zeroes the padding token's embedding row, and here BOS is that token
    torch.manual_seed(seed)
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def tiny_llamas(tmp_path_factory, code_rows):
    """Two 2-layer, 32-wide random Llamas (different seeds) sharing a 300-token BPE trained on
    trial code; a third folder holds the first model with a tokenizer that has no BOS."""
    from aicd.lm.train import EOS, train_tokenizer
    from transformers import PreTrainedTokenizerFast
    texts, _ = code_rows
    tok = train_tokenizer([str(t) for t in texts], vocab_size=300)
    vocab = len(tok)
    q = _tiny_llama(tmp_path_factory.mktemp("llama-q"), vocab, 0, tok)
    p = _tiny_llama(tmp_path_factory.mktemp("llama-p"), vocab, 1, tok)
    no_bos = PreTrainedTokenizerFast(tokenizer_object=tok.backend_tokenizer, eos_token=EOS, unk_token=EOS,
                                     pad_token=EOS)
    nb = _tiny_llama(tmp_path_factory.mktemp("llama-nobos"), vocab, 0, no_bos)
    return q, p, nb


@pytest.fixture(scope="module")
def texts(code_rows):
    code, _ = code_rows
    return [str(t) for t in code[:20]] + ["x", "def f():\n    return 1\n"]


@functools.lru_cache(maxsize=4)
def _float32_lm(path):
    import torch
    from transformers import AutoModelForCausalLM
    return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()


def _naive(path, ref_path, ids):
    """Every statistic of one token sequence from the full logits (batch of one, no padding), in
    float64; and the float32 logits of q and p with the labels."""
    import torch
    lm = _float32_lm(path)
    ref = lm if ref_path is None else _float32_lm(ref_path)
    x = torch.tensor([ids])
    with torch.no_grad():
        logits = lm(input_ids=x).logits[0, :-1].double()
        ref_logits = ref(input_ids=x).logits[0, :-1].double()
    labels = x[0, 1:]
    lq = torch.log_softmax(logits, -1)
    p = torch.softmax(ref_logits, -1)
    ll = lq.gather(1, labels.unsqueeze(1)).squeeze(1)
    rank = 1.0 + (lq > ll.unsqueeze(1)).sum(1).double()  # counted over the vocabulary, in float64
    order = lq.argsort(-1, descending=True)  # no ties here: the rank is also the position in the sorted vocabulary
    assert torch.equal((order == labels.unsqueeze(1)).nonzero()[:, 1].double() + 1, rank)
    mu = (p * lq).sum(-1)
    var = (p * lq.square()).sum(-1) - mu.square()
    entropy = -(lq.exp() * lq).sum(-1)
    return np.array([len(labels), ll.mean(), rank.log().mean(), entropy.mean(), mu.mean(), var.sum()]), \
        logits.float(), ref_logits.float(), labels


def _check_against_naive(stats, texts, got, path, ref_path):
    for i, seq in enumerate(stats.encode(texts)):
        want = _naive(path, ref_path, seq)[0]
        np.testing.assert_allclose(got[i], want, rtol=2e-5, atol=2e-5, err_msg=f"text {i}: {STAT_NAMES}")


def test_every_statistic_matches_full_logits(tiny_llamas, texts):
    q, _, _ = tiny_llamas
    stats = TokenStats(q, window=WINDOW, batch_size=4, dtype="float32", chunk_tokens=7)
    got = stats.compute(texts)
    assert got.shape == (len(texts), len(STAT_NAMES)) and got.dtype == np.float64
    assert np.isfinite(got).all()
    assert (got[:, COL["tokens"]] <= WINDOW - 1).all() and (got[:, COL["tokens"]] == WINDOW - 1).any()
    # a random Llama at this init is far from uniform: the checks see real ranks and entropies
    assert got[:, COL["entropy"]].mean() < 0.8 * np.log(len(stats.tokenizer))
    assert (got[:20, COL["logrank"]] > 0).all()  # the trial rows; "x" may be the top token
    _check_against_naive(stats, texts, got, q, None)


def test_reference_model_gives_two_model_terms(tiny_llamas, texts):
    q, p, _ = tiny_llamas
    stats = TokenStats(q, reference_path=p, window=WINDOW, batch_size=3, dtype="float32", chunk_tokens=11)
    got = stats.compute(texts)
    _check_against_naive(stats, texts, got, q, p)
    white = TokenStats(q, window=WINDOW, batch_size=3, dtype="float32").compute(texts)
    one_model = [COL[c] for c in ("tokens", "loglik", "logrank", "entropy")]
    np.testing.assert_allclose(got[:, one_model], white[:, one_model], rtol=1e-5, atol=1e-5)
    assert not np.allclose(got[:, COL["ref_mean"]], white[:, COL["ref_mean"]], atol=1e-2)


def test_binoculars_as_in_its_code(tiny_llamas, texts):
    """q = performer, p = observer: ppl from the performer's logits, x-ppl =
    softmax(observer) . -log_softmax(performer), score = -(ppl / x-ppl)."""
    import torch
    q, p, _ = tiny_llamas
    stats = TokenStats(q, reference_path=p, window=WINDOW, dtype="float32")
    got = criterion("binoculars", stats.compute(texts))
    for i, seq in enumerate(stats.encode(texts)):
        _, performer, observer, labels = _naive(q, p, seq)
        ppl = torch.nn.functional.cross_entropy(performer, labels).item()
        x_ppl = -(torch.softmax(observer, -1) * torch.log_softmax(performer, -1)).sum(-1).mean().item()
        assert got[i] == pytest.approx(-(ppl / x_ppl), rel=1e-4)


@pytest.mark.parametrize("reference", [False, True], ids=["white-box", "two-model"])
def test_fast_detectgpt_agrees_with_the_detector(tiny_llamas, texts, reference):
    import torch
    from aicd.detectors.fast_detectgpt import FastDetectGPTDetector, criterion_from_logits
    q, p, _ = tiny_llamas
    ref = p if reference else None
    stats = TokenStats(q, reference_path=ref, window=WINDOW, batch_size=4, dtype="float32")
    got = criterion("fast_detectgpt", stats.compute(texts))
    for i, seq in enumerate(stats.encode(texts)):
        _, logits, ref_logits, labels = _naive(q, ref, seq)
        mask = torch.ones(1, len(labels), dtype=torch.bool)
        want = criterion_from_logits(logits[None], ref_logits[None], labels[None], mask)
        assert got[i] == pytest.approx(want.item(), rel=1e-4, abs=1e-5)
    detector = FastDetectGPTDetector(seed=0, threads=1, model=q, reference_model=ref, window=WINDOW, batch_size=4)
    np.testing.assert_allclose(got, detector.criteria(texts), rtol=1e-4, atol=1e-4)


def test_criteria_signs_and_undefined_values():
    #                 tokens loglik logrank entropy ref_mean ref_var_sum
    stats = np.array([[4.0, -1.0, 0.5, 2.0, -1.5, 4.0],
                      [3.0, -0.1, 0.0, 0.3, -0.2, 1.0],       # every token the top one: LRR undefined
                      [np.nan] * 6])
    want = {"loglik": [-1.0, -0.1], "logrank": [-0.5, -0.0], "entropy": [-2.0, -0.3], "lrr": [2.0, np.nan],
            "fast_detectgpt": [4 * 0.5 / 2.0, 3 * 0.1 / 1.0], "binoculars": [-(1.0 / 1.5), -(0.1 / 0.2)]}
    assert set(want) == set(CRITERIA)
    for name in CRITERIA:
        score = criterion(name, stats)
        np.testing.assert_allclose(score[:2], want[name], err_msg=name)
        assert np.isnan(score[2]), name
    with pytest.raises(ValueError, match="unknown zero-shot criterion 'ppl'"):
        criterion("ppl", stats)
    with pytest.raises(ValueError, match=r"must be an \(n, 6\) array"):
        criterion("loglik", stats[:, :5])


def test_texts_under_two_tokens_are_nan(tiny_llamas):
    q, _, no_bos = tiny_llamas
    with_bos = TokenStats(q, window=WINDOW, dtype="float32").compute(["", "x", "int x;"])
    # BOS alone: nothing scored, a count of 0 (a text too short, not a text left out) and NaN
    assert with_bos[0, COL["tokens"]] == 0 and np.isnan(np.delete(with_bos[0], COL["tokens"])).all()
    assert with_bos[1, COL["tokens"]] == 1 and np.isfinite(with_bos[1:]).all()  # "x" scored from BOS
    plain = TokenStats(no_bos, window=WINDOW, dtype="float32")
    assert plain.encode(["x"]) == [[plain.tokenizer.convert_tokens_to_ids("x")]]
    got = plain.compute(["", "x", "int x;"])
    assert (got[:2, COL["tokens"]] == 0).all() and np.isnan(np.delete(got[:2], COL["tokens"], axis=1)).all()
    assert np.isfinite(got[2]).all()
    for name in CRITERIA:
        assert np.isnan(criterion(name, got[:2])).all(), name


def test_order_batching_and_padding_do_not_change_a_texts_stats(tiny_llamas, texts):
    q, p, _ = tiny_llamas
    stats = TokenStats(q, reference_path=p, window=WINDOW, batch_size=5, dtype="float32")
    base = stats.compute(texts)
    perm = np.random.default_rng(0).permutation(len(texts))
    np.testing.assert_array_equal(stats.compute([texts[i] for i in perm]), base[perm])  # same batches: same bytes
    alone = TokenStats(q, reference_path=p, window=WINDOW, batch_size=1, dtype="float32").compute(texts)
    np.testing.assert_allclose(alone, base, rtol=1e-5, atol=1e-5)  # no padding at all vs padded batches
    full = TokenStats(q, reference_path=p, window=WINDOW, batch_size=5, dtype="float32", chunk_tokens=0).compute(texts)
    np.testing.assert_allclose(full, base, rtol=1e-5, atol=1e-5)  # the model's own full logits


def test_cpu_row_blocks_equal_one_block(monkeypatch):
    """The CPU's few-positions-at-a-time reduction equals the whole chunk at once (the GPU path)."""
    import torch
    from aicd.lm import stats as lm_stats
    g = torch.Generator().manual_seed(0)
    z, zp = torch.randn(2, 11, 500, generator=g) * 4
    labels = torch.randint(0, 500, (11,), generator=g)
    blocked = [lm_stats.token_terms(z, ref, labels) for ref in (None, zp)]
    monkeypatch.setattr(lm_stats, "TERM_ROWS", 1000)
    for ref, got in zip((None, zp), blocked):
        torch.testing.assert_close(got, lm_stats.token_terms(z, ref, labels), rtol=1e-6, atol=1e-6)


def test_literal_special_tokens_are_text(tiny_llamas):
    q, _, _ = tiny_llamas
    stats = TokenStats(q, window=WINDOW, dtype="float32")
    eos = stats.tokenizer.eos_token_id
    ids = stats.encode(['s = "<|endoftext|>"'])[0]
    assert ids[0] == stats.tokenizer.bos_token_id and eos not in ids[1:]


def test_bad_settings_and_input_are_one_line_errors(tiny_llamas, tmp_path):
    q, _, _ = tiny_llamas
    with pytest.raises(AicdError, match="dtype 'float16' is not one of auto, float32, bfloat16"):
        TokenStats(q, dtype="float16")
    with pytest.raises(AicdError, match="window must be an integer >= 2"):
        TokenStats(q, window=1)
    with pytest.raises(AicdError, match="window 512 exceeds the 128 positions"):
        TokenStats(q, window=512)
    with pytest.raises(AicdError, match="has no config.json"):
        TokenStats(str(tmp_path))
    other = tmp_path / "other"
    from aicd.lm.train import train_tokenizer
    _tiny_llama(other, 300, 2, train_tokenizer(["int main() { return 0; }"] * 50, vocab_size=300))
    with pytest.raises(AicdError, match="does not share the tokenizer"):
        TokenStats(q, reference_path=str(other))
    with pytest.raises(AicdError, match="text 1 is a NoneType, not a string"):
        TokenStats(q, window=WINDOW, dtype="float32").compute(["x = 1", None])


def test_auto_dtype_follows_the_cpu():
    from aicd.lm.stats import cpu_has_bf16
    flags = open("/proc/cpuinfo").read()
    native = "amx_bf16" in flags or "avx512_bf16" in flags
    assert cpu_has_bf16() == native
    assert choose_dtype("auto", "cpu") == ("bfloat16" if native else "float32")
    assert choose_dtype("float32", "cpu") == "float32"


def test_real_causal_lm_bfloat16_close_to_float32(code_rows, packaged_lm):
    """SmolLM2-135M (Llama, 49,152-token vocabulary) on four trial rows, two human and two
    machine: bfloat16's backbone changes every statistic by little."""
    path = packaged_lm
    code, target = code_rows
    rows = [str(c) for c in code[target == "human"][:2]] + [str(c) for c in code[target == "machine"][:2]]
    fp32 = TokenStats(path, window=96, batch_size=2, dtype="float32").compute(rows)
    bf16 = TokenStats(path, window=96, batch_size=2, dtype="bfloat16").compute(rows)
    assert np.isfinite(fp32).all() and np.isfinite(bf16).all()
    np.testing.assert_array_equal(fp32[:, COL["tokens"]], bf16[:, COL["tokens"]])
    assert (fp32[:, COL["loglik"]] < 0).all() and (fp32[:, COL["loglik"]] > -8).all()
    assert not np.array_equal(fp32, bf16)  # the dtype took effect
    # measured: at most 0.004 (loglik), 0.016 (logrank), 0.006 (entropy), 0.034 (fast_detectgpt)
    for name, tol in (("loglik", 0.02), ("logrank", 0.05), ("entropy", 0.02), ("ref_mean", 0.02)):
        np.testing.assert_allclose(bf16[:, COL[name]], fp32[:, COL[name]], atol=tol, err_msg=name)
    np.testing.assert_allclose(criterion("fast_detectgpt", bf16), criterion("fast_detectgpt", fp32), atol=0.2)
