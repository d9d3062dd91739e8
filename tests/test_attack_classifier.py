"""run_scripts/attack_classifier as a user runs it, against toy SavedModels with the exports'
signatures: a classifier whose decision hangs on the word "good", and a sentence encoder that
puts texts holding "fine" far from the others. What each example's attack must do is worked out
by hand; and data_prep/attack_data (the input TSV, the output read back for --augment_with)."""

import json
import subprocess
import time

import pytest

from data_prep import attack_data
from data_prep.input_errors import TsvError
from tests import cli
from tests.test_tagger import save_toy_tagger


def save_toy_exports(root) -> tuple[str, str]:
    """(classifier export_dir, sentence-encoder export_dir), version folder 1 in each."""
    import tensorflow as tf

    labels = tf.constant(["neg", "pos"])

    class Classifier(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text_a")])
        def serve(self, text_a):
            good = tf.strings.regex_full_match(tf.strings.lower(text_a), r".*\bgood\b.*")
            positive = tf.where(good, 0.9, 0.2)
            probabilities = tf.stack([1.0 - positive, positive], axis=1)
            return {"probabilities": probabilities,
                    "label": tf.gather(labels, tf.argmax(probabilities, axis=1))}

        @tf.function(input_signature=[])
        def class_labels(self):
            return labels

    class Encoder(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
        def serve(self, text):
            fine = tf.cast(tf.strings.regex_full_match(tf.strings.lower(text), r".*\bfine\b.*"),
                           tf.float32)
            return {"embeddings": tf.stack([1.0 - fine, fine], axis=1)}

    paths = []
    for name, module in (("classifier", Classifier()), ("encoder", Encoder())):
        tf.saved_model.save(module, str(root / name / "1"),
                            signatures={"serving_default": module.serve})
        paths.append(str(root / name))
    return tuple(paths)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("attack")
    classifier, encoder = save_toy_exports(root)
    save_toy_tagger(root / "tagger")  # "good" an ADJ, every other word a NOUN
    (root / "synonyms.txt").write_text("good fine\ngood nice\ngood bad\nmovie film\nnot never\n")
    (root / "antonyms.txt").write_text("good bad\n")
    (root / "dev.tsv").write_text("label\tsentence\npos\ta good movie\nneg\tnot a good "
                                  "movie\nneg\tA dull film .\npos\tGood , and not dull\n")
    return {"root": root, "classifier": classifier, "encoder": encoder,
            "tagger": str(root / "tagger"),
            "synonyms": str(root / "synonyms.txt"), "antonyms": str(root / "antonyms.txt"),
            "dev": str(root / "dev.tsv")}


def attack(f, output, *extra):
    return cli.run_module(
        "run_scripts.attack_classifier", f"--export_dir={f['classifier']}",
        f"--input_file={f['dev']}", f"--synonyms_file={f['synonyms']}",
        f"--antonyms_files={f['antonyms']}", f"--output_file={output}", *extra)


def read_lines(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_the_attack_flips_the_decisive_word_within_the_similarity_threshold(files, tmp_path):
    output = tmp_path / "attack.jsonl"
    result = cli.succeeded(attack(files, output,
                                  f"--similarity_export_dir={files['encoder']}",
                                  "--similarity_threshold=0.5", "--similarity_window=0"))
    rows = read_lines(output)
    assert [r["status"] for r in rows] == ["successful", "skipped", "failed", "successful"]
    # 1: "good" decides; "fine" (first listed) is orthogonal to the original, so "nice" wins;
    # "bad" is an antonym of "good" and never tried. Queries: original, 2 deletions, "nice".
    assert rows[0]["perturbed"] == "a nice movie"
    assert rows[0]["changes"] == [{"word": 1, "original": "good", "replacement": "nice"}]
    assert rows[0]["queries"] == 4 and rows[0]["similarity"] == pytest.approx(1.0)
    assert rows[0]["predicted"] == "neg" and rows[0]["gold_probability"] == pytest.approx(
        [0.9, 0.2])
    # 2: the toy reads no negation: it gets the text wrong, so it is skipped after one query.
    assert rows[1]["queries"] == 1 and rows[1]["perturbed"] == "not a good movie"
    # 3: nothing flips it: deleting "dull" or "film" (not "A", a stop word), then "film" ->
    # "movie", which does not lower the gold probability, so nothing is kept.
    assert rows[2]["queries"] == 4 and rows[2]["changes"] == []
    # 4: "Good" decides and becomes "Nice" (cased like it); "and" and "not" are stop words.
    assert rows[3]["perturbed"] == "Nice , and not dull" and rows[3]["queries"] == 4
    assert json.loads((tmp_path / "attack.summary.json").read_text()) == {
        "Number of successful attacks": 2, "Number of failed attacks": 1,
        "Number of skipped attacks": 1, "Original accuracy": 75.0,
        "Accuracy under attack": 25.0, "Attack success rate": 66.67,
        "Average perturbed word %": 29.17,  # (1/3 + 1/4) / 2
        "Average num. words per input": 3.5, "Avg num queries": 4.0,
        "Texts cut to --max_words=1000": 0}
    assert "Attack success rate: " in result.stdout


def test_the_tagger_drops_a_replacement_of_another_part_of_speech(files, tmp_path):
    """"Good" is an ADJ, "fine" and "nice" NOUNs to the toy tagger: with it, "good" has no
    candidate left and the first text's attack fails (original, 2 deletions, "movie" ->
    "film", which does not lower the gold probability); without it "fine" flips it."""
    dev = tmp_path / "one.tsv"
    dev.write_text("label\tsentence\npos\ta good movie\n")
    output = tmp_path / "attack.jsonl"
    files = {**files, "dev": str(dev)}
    cli.succeeded(attack(files, output, f"--pos_tagger_export_dir={files['tagger']}"))
    [row] = read_lines(output)
    assert row["status"] == "failed" and row["queries"] == 4 and row["changes"] == []
    cli.succeeded(attack(files, tmp_path / "without.jsonl"))
    [row] = read_lines(tmp_path / "without.jsonl")
    assert row["status"] == "successful" and row["perturbed"] == "a fine movie"


def test_bad_inputs_are_one_line_and_write_nothing(files, tmp_path):
    output = tmp_path / "attack.jsonl"
    bad = tmp_path / "bad.tsv"
    bad.write_text("sentence\tlabel\na good movie\tpositive\n")
    refusals = cli.run_modules(
        ["run_scripts.attack_classifier", f"--export_dir={files['classifier']}",
         f"--input_file={bad}", f"--synonyms_file={files['synonyms']}", f"--output_file={output}"],
        ["run_scripts.attack_classifier", f"--export_dir={files['encoder']}",
         f"--input_file={files['dev']}", f"--synonyms_file={files['synonyms']}",
         f"--output_file={output}"],
        ["run_scripts.attack_classifier", f"--export_dir={files['classifier']}",
         f"--input_file={files['dev']}", f"--synonyms_file={files['synonyms']}",
         f"--pos_tagger_export_dir={files['encoder']}", f"--output_file={output}"],
        ["run_scripts.attack_classifier", f"--export_dir={files['classifier']}",
         f"--input_file={files['dev']}", f"--synonyms_file={files['synonyms']}",
         "--similarity_window=-1", f"--output_file={output}"])
    cli.refused(refusals[0], f"{bad}:2: label 'positive' is not one of the export's")
    cli.refused(refusals[1], "--export_dir: ", "not text_a")
    cli.refused(refusals[2], "--pos_tagger_export_dir: ", "not a tagger (export_type=ner)")
    cli.refused(refusals[3], "--similarity_window=-1: must be 0 (the whole text) or more")
    assert not output.exists() and not (tmp_path / "attack.summary.json").exists()


def test_labelled_texts_need_both_columns_and_name_the_line(tmp_path):
    path = tmp_path / "in.tsv"
    path.write_text("text\tlabel\nx\t1\n")
    with pytest.raises(TsvError, match=rf"^{path}:1: the header has no sentence column"):
        attack_data.read_labelled_texts(str(path))
    path.write_text("sentence\tlabel\nfine\t1\n\nonly text\n")
    with pytest.raises(TsvError, match=rf"^{path}:4: 1 columns, the header has 2"):
        attack_data.read_labelled_texts(str(path))
    path.write_text("sentence\tlabel\tid\nfine\t1\t7\n")
    assert attack_data.read_labelled_texts(str(path)) == [
        attack_data.LabelledText(2, "fine", "1")]


def test_texts_past_max_words_are_cut_after_their_last_word_kept():
    rows = [attack_data.LabelledText(2, "a good movie , truly .", "pos"),
            attack_data.LabelledText(3, "short", "neg")]
    kept, cut = attack_data.cut_to_words(rows, 3)
    assert [r.text for r in kept] == ["a good movie", "short"] and cut == 1
    assert [(r.line, r.label) for r in kept] == [(2, "pos"), (3, "neg")]


def test_adversarial_examples_are_the_successful_attacks_with_known_labels(tmp_path):
    path = tmp_path / "attack.jsonl"
    rows = [{"status": "failed", "label": "1", "perturbed": "a"},
            {"status": "successful", "label": "1", "perturbed": "b"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert [e.text_a for e in attack_data.read_adversarial_examples(str(path), ["0", "1"])] \
        == ["b"]
    with pytest.raises(TsvError, match=rf"^{path}:2: label '1' is not one of the task's a, b"):
        attack_data.read_adversarial_examples(str(path), ["a", "b"])
    path.write_text(json.dumps(rows[0]) + "\nnot json\n")
    with pytest.raises(TsvError, match=rf"^{path}:2: not a line of an attack's output"):
        attack_data.read_adversarial_examples(str(path), ["0", "1"])
    path.write_text(json.dumps(rows[0]) + "\n")
    with pytest.raises(TsvError, match=rf"^{path}: no successful attack in it"):
        attack_data.read_adversarial_examples(str(path), ["0", "1"])


def test_a_killed_attack_goes_on_from_the_last_whole_line(files, tmp_path):
    rows = [("pos", f"a good movie number {i}") if i % 2 else ("neg", f"a dull film number {i}")
            for i in range(300)]
    dev = tmp_path / "many.tsv"
    dev.write_text("label\tsentence\n" + "".join(f"{a}\t{b}\n" for a, b in rows))
    output = tmp_path / "attack.jsonl"
    progress = tmp_path / "attack.progress.jsonl"
    command = ["run_scripts.attack_classifier",
               f"--export_dir={files['classifier']}", f"--input_file={dev}",
               f"--synonyms_file={files['synonyms']}", f"--output_file={output}"]
    process = cli.start(*command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + cli.PATIENCE
    while time.monotonic() < deadline and process.poll() is None and (
            not progress.exists() or progress.read_text().count("\n") < 4):
        time.sleep(0.01)
    process.kill()
    process.wait()
    assert not output.exists(), "the attack finished before it could be killed"
    done = progress.read_text().count("\n") - 1
    with open(progress, "a", encoding="utf-8") as f:
        f.write('{"status": "succ')  # a line cut by the kill
    result = cli.succeeded(cli.run_module(*command))
    assert f"Going on after the {done} texts an interrupted run attacked" in result.stderr
    records = read_lines(output)
    assert [r["original"] for r in records] == [text for _, text in rows]
    assert all(r["perturbed"] == r["original"].replace("good", "fine") and
               r["status"] == "successful" if label == "pos" else r["status"] == "failed"
               for r, (label, _) in zip(records, rows))
    assert not progress.exists()
    # Without an encoder, the first synonym that flips the label ("fine") is taken; the run's
    # successful attacks read back as training rows with their gold labels.
    adversarial = attack_data.read_adversarial_examples(str(output), ["neg", "pos"])
    assert [(e.text_a, e.label) for e in adversarial] == [
        (text.replace("good", "fine"), "pos") for label, text in rows if label == "pos"]
