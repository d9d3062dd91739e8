"""Tests for official.robustness.tagger: the export's words matched to the attack's by hand, and
a toy SavedModel with the NER export's signature read back."""

import pytest

from official.robustness import tagger as tg


def test_a_word_takes_the_tag_of_the_export_word_it_starts_with():
    text = "The film's ending, well-made!"
    words = ["The", "film", "'", "s", "ending", ",", "well", "-", "made", "!"]
    tags = ["B-DET", "B-NOUN", "B-PUNCT", "B-PART", "B-NOUN", "B-PUNCT", "B-ADV", "B-PUNCT",
            "B-VERB", "B-PUNCT"]
    # WordText's words: The, film's, ending, well-made.
    assert tg.word_tags(text, words, tags) == ["DET", "NOUN", "NOUN", "ADV"]
    # A word the export dropped (no word piece) has no tag; a tag without a prefix is kept.
    assert tg.word_tags("a zz b", ["a", "b"], ["DET", "NOUN"]) == ["DET", None, "NOUN"]
    with pytest.raises(ValueError, match="the tagger's word 'c' is not in 'a b'"):
        tg.word_tags("a b", ["a", "c"], ["DET", "NOUN"])


def save_toy_tagger(path) -> None:
    """A SavedModel serving the NER export's words, tags and num_words: words at spaces, each
    tagged B-ADJ if it is "good", else B-NOUN."""
    import tensorflow as tf

    class Tagger(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
        def serve(self, text):
            words = tf.strings.split(text)
            tags = tf.where(tf.strings.lower(words.flat_values) == "good", "B-ADJ", "B-NOUN")
            return {"words": words.to_tensor(""), "tags": words.with_flat_values(tags)
                    .to_tensor(""), "num_words": tf.cast(words.row_lengths(), tf.int32)}

    module = Tagger()
    tf.saved_model.save(module, str(path / "1"), signatures={"serving_default": module.serve})


def test_an_exported_tagger_tags_texts_in_batches_in_order(tmp_path):
    save_toy_tagger(tmp_path / "tagger")
    tagger = tg.ExportedTagger(str(tmp_path / "tagger"), batch_size=2)
    assert tagger(["a good movie", "Good", "so so good film ."]) == [
        ["NOUN", "ADJ", "NOUN"], ["ADJ"], ["NOUN", "NOUN", "ADJ", "NOUN"]]
