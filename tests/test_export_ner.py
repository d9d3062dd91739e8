"""official/export/ner.py: raw sentences -> entities, as the fine-tuning data and conlleval
see them.

The reference: BasicTokenizer's words (the original's word split), data_prep.conll's features
for them, the Keras model's argmax at each word's first piece, and ner_metrics.get_chunks.
"""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from data_prep.conll import LABELS, Sentence, convert_sentences
from official.configs import BertConfig
from official.export.ner import NerExport
from official.modeling.encoder import build_encoder
from official.modeling.models import BertTokenClassifier
from official.tasks.ner_metrics import UPOS_LABELS, get_chunks
from official.text.basic_tokenizer import BasicTokenizer
from official.text.tokenizer import FullTokenizer

VOCAB = os.path.join(os.path.dirname(__file__), "..", "data", "vocab", "uncased_vocab.txt")
SENTENCES = ["EU rejects German call to boycott British lamb.",
             "Peter Blackburn (BRUSSELS 1996-08-22), the European Commission's spokesman.",
             "", "   ", "Only",
             "Nadim Ladki said the Syrian army had moved troops to the Lebanese border on "
             "Tuesday, a day after the talks in Washington ended."]


@pytest.fixture(scope="module")
def tokenizer():
    return FullTokenizer(VOCAB, do_lower_case=True)


@pytest.fixture(scope="module")
def model():
    keras.utils.set_random_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=64, max_position_embeddings=64)
    return BertTokenClassifier(build_encoder(config), num_labels=len(LABELS))


@pytest.fixture(scope="module")
def export(model, tokenizer):
    """The export of LABELS at max_seq_length 64, traced once for the tests that serve it."""
    return NerExport(model, tokenizer, LABELS, 64)


def _reference(model, tokenizer, texts, max_seq_length):
    """Per text: (words, tags, [(text, type, start, end)]) from the project's own pieces."""
    basic = BasicTokenizer(lower_case=False).tokenize(tf.constant(texts)).to_list()
    sentences = [Sentence(tuple(w.decode() for w in ws), ("O",) * len(ws), 0, 1)
                 for ws in basic]
    features = convert_sentences(sentences, LABELS, max_seq_length, tokenizer)
    logits = np.asarray(model({
        "input_word_ids": np.array([f.input_ids for f in features], np.int32),
        "input_mask": np.array([f.input_mask for f in features], np.int32),
        "input_type_ids": np.array([f.segment_ids for f in features], np.int32)}))
    tags = [[None] * len(s.words) for s in sentences]
    for feature, row in zip(features, logits):
        for position, word in enumerate(feature.word_ids):
            if word >= 0:
                tags[feature.sentence_index][word] = LABELS[int(row[position].argmax())]
    results = []
    for text, sentence, sentence_tags in zip(texts, sentences, tags):
        offsets, cursor = [], 0
        for word in sentence.words:
            cursor = text.index(word, cursor)
            offsets.append((cursor, cursor + len(word)))
            cursor += len(word)
        entities = [(text[offsets[c.start][0]:offsets[c.end - 1][1]], c.type,
                     offsets[c.start][0], offsets[c.end - 1][1])
                    for c in get_chunks(sentence_tags)]
        results.append((list(sentence.words), sentence_tags, entities))
    return results


def _served(outputs, index):
    n, m = int(outputs["num_words"][index]), int(outputs["num_entities"][index])
    words = [w.decode() for w in outputs["words"][index][:n].numpy()]
    tags = [t.decode() for t in outputs["tags"][index][:n].numpy()]
    entities = [(outputs["entity_text"][index][i].numpy().decode(),
                 outputs["entity_type"][index][i].numpy().decode(),
                 int(outputs["entity_start"][index][i]), int(outputs["entity_end"][index][i]))
                for i in range(m)]
    return words, tags, entities


@pytest.mark.parametrize("max_seq_length", [64, 10])  # 10: long sentences span windows
def test_entities_are_the_models_chunks(model, tokenizer, export, max_seq_length):
    if max_seq_length != 64:
        export = NerExport(model, tokenizer, LABELS, max_seq_length)
    outputs = export.signatures()["serving_default"](text=tf.constant(SENTENCES))
    expected = _reference(model, tokenizer, SENTENCES, max_seq_length)
    assert sum(len(e) for _, _, e in expected) > 3  # the random model finds some
    for i, reference in enumerate(expected):
        assert _served(outputs, i) == reference, SENTENCES[i]


def test_offsets_are_characters_of_the_text(export):
    texts = ["Zoë Saldaña à Paris, 日本 \u200b ok", b"bad \xff bytes"]
    outputs = export(tf.constant(texts))
    words, _, entities = _served(outputs, 0)
    assert words == ["Zoë", "Saldaña", "à", "Paris", ",", "日", "本", "ok"]  # U+200B: no word
    for text, _, start, end in entities:
        assert texts[0][start:end] == text
    assert _served(outputs, 1)[0] == ["bad", "bytes"]


def test_tags_of_single_words_serve_each_word_as_a_span_of_its_own(model, tokenizer):
    """A part-of-speech tagger's labels (no O, no prefix): each word's tag as it is, and each word
    an entity of its tag, where the same labels with B- prefixes would join runs of a tag."""
    word_tags = list(UPOS_LABELS[:len(LABELS)])
    export = NerExport(model, tokenizer, word_tags, 64)
    outputs = export.signatures()["serving_default"](text=tf.constant(SENTENCES))
    for i, (words, tags, _) in enumerate(_reference(model, tokenizer, SENTENCES, 64)):
        expected_tags = [word_tags[LABELS.index(tag)] for tag in tags]
        spans, cursor = [], 0
        for word, tag in zip(words, expected_tags):
            cursor = SENTENCES[i].index(word, cursor)
            spans.append((word, tag, cursor, cursor + len(word)))
            cursor += len(word)
        assert _served(outputs, i) == (words, expected_tags, spans), SENTENCES[i]


def test_labels_must_be_tags(model, tokenizer):
    with pytest.raises(ValueError, match="neither 'O' nor"):
        NerExport(model, tokenizer, ["O", "PER"] + list(LABELS[2:]), 64)
    with pytest.raises(ValueError, match="8 labels"):
        NerExport(model, tokenizer, LABELS[:8], 64)


def test_a_feature_based_run_serves_its_frozen_encoder_and_bilstm_head(tokenizer, tmp_path):
    """A feature-based run's output_dir (a frozen encoder's PEFT record naming the setting):
    the export rebuilds its BertFeatureTagger from the record, on the base, and tags as it."""
    from official.export import jobs
    from official.peft import methods
    from official.tasks.ner import NerTask
    from official.tasks.ner_settings import FeatureBasedSettings
    from tests.peft_helpers import write_base, write_run

    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=64, max_position_embeddings=64)
    base = write_base(config, tmp_path / "base")
    task = NerTask(LABELS, FeatureBasedSettings("weighted_sum_all", lstm_units=8))
    trained = write_run(base, methods.from_flags(freeze_encoder=True), tmp_path / "run", task)
    export = jobs.serving_module(jobs.ExportOptions(
        export_type="ner", export_dir="", vocab_file=VOCAB, max_seq_length=16,
        init_checkpoint=str(tmp_path / "run"), labels=list(LABELS)), tokenizer)
    outputs = export.signatures()["serving_default"](text=tf.constant(SENTENCES))
    expected = _reference(trained, tokenizer, SENTENCES, 16)
    assert sum(len(e) for _, _, e in expected) > 3
    for i, reference in enumerate(expected):
        assert _served(outputs, i) == reference, SENTENCES[i]
