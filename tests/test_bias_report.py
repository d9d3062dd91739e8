"""run_scripts/bias_report.py, run as a user runs it.

SEAT on a tiny sentence_encoder export made here, over made-up test files in SEAT's format (SEAT's
lists are CC BY-NC and stay out of the repo), checked against the effect size and scipy p-value
of the export's own vectors; CrowS-Pairs on a tiny checkpoint with its masked-LM head, checked
against the numpy BERT of tests/test_crows_pairs.py; the EEC test on a tiny classifier export,
against its own probabilities paired here and scipy's paired t-test; the names test on a tiny
checkpoint, its layer 0 against numpy vectors probed by scikit-learn; bad inputs refused in one
line with nothing written.
"""

import json
import math
import os

import pytest

from tests import cli
from tests.test_crows_pairs import CSV_HEADER, ROWS, reference_scores, write_checkpoint
from tests.test_seat import effect_size_reference, s_reference, scipy_p_value

WORDS = ["apple", "pear", "plum", "fig", "hammer", "saw", "drill", "nail", "sugar", "honey",
         "sweet", "steel", "stone", "iron", "hard", "this", "is", "a", "an", "."]
EXACT_TEST = {"targ1": {"category": "Fruit", "examples": ["this is a pear .", "an apple .",
                                                          "a plum ."]},
              "targ2": {"category": "Tools", "examples": ["this is a hammer .", "a saw .",
                                                          "a drill ."]},
              "attr1": {"category": "Sweet", "examples": ["sugar .", "honey is sweet ."]},
              "attr2": {"category": "Hard", "examples": ["steel .", "stone is hard .", "iron ."]}}
SAMPLED_TEST = {"targ1": {"category": "Fruit", "examples": ["pear", "apple", "plum", "fig"]},
                "targ2": {"category": "Tools", "examples": ["hammer", "saw", "drill", "nail"]},
                "attr1": {"category": "Sweet", "examples": ["sugar", "honey", "sweet"]},
                "attr2": {"category": "Hard", "examples": ["steel", "stone", "iron", "hard"]}}


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """A sentence_encoder export and, of the same encoder, an encoder export (the wrong type)."""
    import keras

    from official.configs import BertConfig
    from official.export import saving
    from official.export.encoder import HubEncoder
    from official.export.sentence_encoder import SentenceEncoderExport
    from official.modeling.encoder import build_encoder
    from official.modeling.models import BertSentenceEncoder
    from official.text.tokenizer import FullTokenizer

    root = tmp_path_factory.mktemp("bias_exports")
    vocab = root / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS) + "\n",
                     encoding="utf-8")
    keras.utils.set_random_seed(7)
    config = BertConfig(vocab_size=len(WORDS) + 5, hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=32)
    model = BertSentenceEncoder(build_encoder(config), "mean", True)
    tokenizer = FullTokenizer(str(vocab))
    module = SentenceEncoderExport(model, tokenizer, max_seq_length=16)
    saving.save(module, str(root / "sentence_encoder"), module.signatures())
    saving.save(HubEncoder(model.encoder, tokenizer), str(root / "encoder"))
    return root


def _own_vectors(export_dir, texts):
    import tensorflow as tf

    from official.export.versions import newest_version

    serve = tf.saved_model.load(newest_version(str(export_dir))).signatures["serving_default"]
    return dict(zip(texts, serve(text=tf.constant(texts))["embeddings"].numpy()))


def _seat_files(folder):
    folder.mkdir()
    for name, test in (("exact", EXACT_TEST), ("sampled", SAMPLED_TEST)):
        (folder / f"{name}.jsonl").write_text(json.dumps(test, indent=2), encoding="utf-8")
    return folder


def test_seat_effect_sizes_and_p_values_are_those_of_the_exports_vectors(exports, tmp_path):
    out = tmp_path / "out"
    result = cli.succeeded(cli.run_module(
        "run_scripts.bias_report", "--test=seat", f"--export_dir={exports / 'sentence_encoder'}",
        f"--seat_files={_seat_files(tmp_path / 'seat')}", "--permutations=50", "--seed=3",
        "--batch_size=4", f"--output_dir={out}"))
    report = json.loads((out / "bias_results.json").read_text(encoding="utf-8"))
    assert [r["test"] for r in report["results"]] == ["exact", "sampled"]
    for row, test in zip(report["results"], (EXACT_TEST, SAMPLED_TEST)):
        vectors = _own_vectors(exports / "sentence_encoder",
                               sorted({t for s in test.values() for t in s["examples"]}))
        x, y, a, b = ([vectors[t] for t in test[s]["examples"]]
                      for s in ("targ1", "targ2", "attr1", "attr2"))
        assert row["effect_size"] == pytest.approx(effect_size_reference(x, y, a, b), abs=1e-5)
        exact_p = scipy_p_value([s_reference(w, a, b) for w in x],
                                [s_reference(w, a, b) for w in y])
        if test is EXACT_TEST:  # C(6, 3) = 20 partitions, at most --permutations: all of them
            assert (row["p_value_method"], row["partitions"]) == ("exact", 20)
            assert row["p_value"] == pytest.approx(exact_p, abs=1e-9)
        else:  # C(8, 4) = 70 > 50: 49 drawn with the seed, and the observed one
            assert (row["p_value_method"], row["partitions"]) == ("sampled", 50)
            # k of 50 partitions reach the observed statistic, the observed one among them; 49
            # draws put k / 50 within four binomial standard deviations of the exact p.
            count = row["p_value"] * 50
            assert count == pytest.approx(round(count), abs=1e-9) and 1 <= round(count) <= 50
            spread = 4 * math.sqrt(exact_p * (1 - exact_p) / 49) + 1 / 50
            assert abs(row["p_value"] - exact_p) <= spread
    table = (out / "bias_results.md").read_text(encoding="utf-8")
    assert "| exact | Fruit / Tools | Sweet / Hard | 3/3/2/3 |" in table
    assert "exact, 20 partitions" in table and "sampled, 50 partitions" in table
    assert table.strip() in result.stdout


def test_crows_pairs_scores_are_a_numpy_berts_pseudo_log_likelihoods(tmp_path):
    write_checkpoint(tmp_path)
    csv_file = tmp_path / "pairs.csv"
    csv_file.write_text(CSV_HEADER + "\n".join(ROWS) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    result = cli.succeeded(cli.run_module(
        "run_scripts.bias_report", "--test=crows_pairs", f"--init_checkpoint={tmp_path}",
        f"--input_file={csv_file}", "--max_seq_length=32", "--batch_size=7",
        f"--output_dir={out}"))
    report = json.loads((out / "bias_results.json").read_text(encoding="utf-8"))
    assert report["pairs"] == 4 and len(report["scored"]) == 4

    from official.checkpoints import tf1
    from official.robustness import crows_pairs
    from official.text.tokenizer import FullTokenizer

    weights = tf1.read(str(tmp_path / "bert_model.ckpt"))
    tokenizer = FullTokenizer(str(tmp_path / "vocab.txt"))
    counted = 0
    for pair, scored in zip(crows_pairs.read_pairs(str(csv_file)), report["scored"]):
        more = ["[CLS]", *tokenizer.tokenize(pair.sent_more), "[SEP]"]
        less = ["[CLS]", *tokenizer.tokenize(pair.sent_less), "[SEP]"]
        first, second = (more, less) if pair.direction == "stereo" else (less, more)
        ids = [tokenizer.convert_tokens_to_ids(t) for t in (first, second)]
        scores = reference_scores(weights, *ids, *crows_pairs.shared_positions(*ids))
        want_more, want_less = scores if pair.direction == "stereo" else scores[::-1]
        assert scored["sent_more_score"] == pytest.approx(want_more, abs=1.5e-3)
        assert scored["sent_less_score"] == pytest.approx(want_less, abs=1.5e-3)
        counted += scored["preferred"] == "sent_more"
    assert report["score"] == pytest.approx(100 * counted / 4)
    table = (out / "bias_results.md").read_text(encoding="utf-8")
    assert f"| all | 4 | {report['ties']} | {report['score']:.2f} |" in table
    assert "Blodgett et al. (2021)" in table and table.strip() in result.stdout


def test_bad_inputs_are_one_line_and_nothing_is_written(exports, tmp_path):
    out = tmp_path / "out"
    seat = _seat_files(tmp_path / "seat")
    broken = dict(EXACT_TEST)
    broken.pop("attr2")
    (seat / "broken.jsonl").write_text(json.dumps(broken, indent=2), encoding="utf-8")
    model = tmp_path / "encoder_only"
    model.mkdir()
    write_checkpoint(model, heads=False)
    bad_csv, csv_file = tmp_path / "bad.csv", tmp_path / "pairs.csv"
    bad_csv.write_text(CSV_HEADER + ROWS[0] + "\n0,a,b,stereo\n", encoding="utf-8")
    csv_file.write_text(CSV_HEADER + ROWS[0] + "\n", encoding="utf-8")
    crows = ["run_scripts.bias_report", "--test=crows_pairs", f"--init_checkpoint={model}",
             "--max_seq_length=32", f"--output_dir={out}"]
    seat_flags = [f"--seat_files={seat}", f"--output_dir={out}"]
    good_seat = tmp_path / "good_seat"
    good_seat.mkdir()
    for name in os.listdir(seat):
        if name != "broken.jsonl":
            os.link(seat / name, good_seat / name)
    results = cli.run_modules(  # each a process of its own, side by side
        ["run_scripts.bias_report", "--test=seat",
         f"--export_dir={exports / 'sentence_encoder'}", *seat_flags],
        ["run_scripts.bias_report", "--test=seat", f"--seat_files={good_seat}",
         f"--output_dir={out}"],
        ["run_scripts.bias_report", "--test=seat", f"--export_dir={exports / 'encoder'}",
         f"--seat_files={good_seat}", f"--output_dir={out}"],
        [*crows, f"--input_file={bad_csv}"],
        [*crows, f"--input_file={csv_file}"])
    cli.refused(results[0], f"bias_report: {seat / 'broken.jsonl'}: no attr2 set")
    cli.refused(results[1], "bias_report: --export_dir: required with --test=seat")
    cli.refused(results[2], "bias_report: --export_dir: ", "no 'serving_default' signature "
                "(export it with export_saved_model --export_type=sentence_encoder)")
    cli.refused(results[3], f"bias_report: {bad_csv}:3: the row has 4 fields where the header "
                "has 6")
    cli.refused(results[4], f"bias_report: {model}: has no masked-LM head (cls/predictions/*)")
    assert not out.exists()


def test_a_flag_of_the_other_test_is_refused_before_any_work(tmp_path):
    # Nothing these flags name exists: the refusal comes before any of it is looked at.
    out = tmp_path / "out"
    seat = ["run_scripts.bias_report", "--test=seat", f"--export_dir={tmp_path / 'export'}",
            f"--seat_files={tmp_path / 'seat'}", f"--output_dir={out}"]
    crows = ["run_scripts.bias_report", "--test=crows_pairs",
             f"--init_checkpoint={tmp_path / 'model'}", f"--input_file={tmp_path / 'p.csv'}",
             f"--output_dir={out}"]
    results = cli.run_modules([*crows, f"--export_dir={tmp_path / 'export'}"],
                              [*crows, "--permutations=10"],
                              [*seat, f"--vocab_file={tmp_path / 'vocab.txt'}"],
                              [*seat, "--max_seq_length=64"])
    crows_scores = ("it has no effect with --test=crows_pairs, which scores the masked LM of "
                    "--init_checkpoint on the CSV --input_file")
    seat_scores = ("it has no effect with --test=seat, which scores the sentence_encoder export "
                   "--export_dir on --seat_files")
    cli.refused(results[0], "bias_report: --export_dir is a flag of --test=seat and eec: "
                + crows_scores)
    cli.refused(results[1], "bias_report: --permutations is a flag of --test=seat: "
                + crows_scores)
    cli.refused(results[2], "bias_report: --vocab_file is a flag of --test=crows_pairs and names: "
                + seat_scores)
    cli.refused(results[3], "bias_report: --max_seq_length is a flag of --test=crows_pairs and "
                "names: " + seat_scores)
    assert not out.exists()


# A template set in the tiny export's words (tests/test_robustness_classifier.py's WORDS), so
# that every person, name and word is its own token and the scores differ.
TINY_SET = {
    "templates": ["<person> was <emotional state word> .", "i love <person> ."],
    "emotion_words": {"joy": {"emotional state word": ["good", "great"]},
                      "anger": {"emotional state word": ["bad", "awful"]}},
    "noun_phrases": [{"female": "the crew", "male": "this seat"},
                     {"female": "it", "male": "the flight"}],
    "names": {"A": {"female": ["thank", "love"], "male": ["hate", "american"]},
              "B": {"female": ["you", "crew"], "male": ["seat", "flight"]}},
}


def _tiny_set(folder, edit=None):
    data = json.loads(json.dumps(TINY_SET))
    if edit:
        edit(data)
    path = folder / f"set_{len(list(folder.glob('set_*.json')))}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _names_checkpoint(folder):
    """A tiny random TF1 checkpoint whose vocab holds the set's words; returns its weights."""
    from official.checkpoints import tf1
    from official.configs import BertConfig
    from tests.checkpoint_helpers import original_weights

    words = sorted({w for t in TINY_SET["templates"] for w in t.split() if "<" not in w}
                   | {w for e in TINY_SET["emotion_words"].values()
                      for ws in e.values() for w in ws}
                   | {n for g in TINY_SET["names"].values() for ns in g.values() for n in ns})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words
    config = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=32)
    folder.mkdir()
    config.to_json_file(str(folder / "bert_config.json"))
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    weights = original_weights(config, heads=False, seed=9)
    tf1.write(weights, str(folder / "bert_model.ckpt"))
    return weights, vocab


def test_eec_and_names_are_the_references_figures(tmp_path):
    """eec: the export's own probabilities, paired by a loop here and tested by scipy; names:
    layer 0's vectors in numpy (LayerNorm of word + position + segment embeddings, a name one
    word piece) probed by scikit-learn within races by name folds and across them."""
    import numpy as np
    from scipy import stats
    from sklearn.linear_model import LogisticRegression

    from official.robustness import eec
    from tests.numpy_bert import layer_norm
    from tests.test_robustness_classifier import make_export

    template_file = _tiny_set(tmp_path)
    export = make_export(tmp_path / "sst2", ["0", "1"], seed=5, initializer_range=1.0)
    weights, vocab = _names_checkpoint(tmp_path / "model")
    eec_out, names_out = tmp_path / "eec", tmp_path / "names"
    eec_flags = ["run_scripts.bias_report", "--test=eec", f"--export_dir={export}",
                 "--score_class=1", f"--input_file={template_file}", "--batch_size=5"]
    results = cli.run_modules(
        [*eec_flags, f"--output_dir={eec_out}"],
        [*eec_flags, "--words_per_emotion=1", "--names_per_group=1",
         f"--output_dir={tmp_path / 'eec_sample'}"],
        ["run_scripts.bias_report", "--test=names", f"--init_checkpoint={tmp_path / 'model'}",
         f"--input_file={template_file}", "--folds=2", "--max_seq_length=16",
         f"--output_dir={names_out}"])
    for result in results:
        cli.succeeded(result)

    report = json.loads((eec_out / "bias_results.json").read_text(encoding="utf-8"))
    template_set = eec.read_template_set(str(template_file))
    sentences = eec.sentences(template_set)
    texts = [s.text for s in sentences]
    assert [r["text"] for r in report["scored"]] == texts and len(texts) == 5 * 12
    import tensorflow as tf

    from official.export.versions import newest_version

    serve = tf.saved_model.load(newest_version(export)).signatures["serving_default"]
    probability = serve(text_a=tf.constant(texts))["probabilities"].numpy()[:, 1]
    np.testing.assert_allclose([r["score"] for r in report["scored"]], probability, atol=1e-6)
    score = dict(zip(texts, probability.astype(np.float64)))
    # Race, by hand: per context and gender, the mean of race A's names against race B's.
    first, second = [], []
    for template in TINY_SET["templates"]:
        for word in ([None] if "<emotional" not in template else
                     [w for e in TINY_SET["emotion_words"].values()
                      for w in e["emotional state word"]]):
            for gender in ("female", "male"):
                means = [np.mean([score["".join(eec.fill(template, n, gender, word))]
                                  for n in TINY_SET["names"][race][gender]])
                         for race in ("A", "B")]
                first.append(means[0])
                second.append(means[1])
    race = report["comparisons"]["race (names)"]["all"]
    reference = stats.ttest_rel(first, second)
    assert race["pairs"] == 10
    assert race["mean_difference"] == pytest.approx(np.mean(np.subtract(first, second)),
                                                    abs=1e-6)
    assert race["t"] == pytest.approx(reference.statistic, rel=1e-4)
    assert race["p_value"] == pytest.approx(reference.pvalue, rel=1e-4)
    table = (eec_out / "bias_results.md").read_text(encoding="utf-8")
    assert "### race (names): A - B" in table and "Kiritchenko & Mohammad (2018)" in table
    assert table.strip() in results[0].stdout

    names = json.loads((names_out / "bias_results.json").read_text(encoding="utf-8"))
    assert [row["layer"] for row in names["layers"]] == [0, 1, 2]
    assert names["occurrences"] == 8 * 5  # names x (2 + 2 words, and 1 without)
    w = {k: np.asarray(v, np.float64) for k, v in weights.items()}
    rows, labels = [], []
    for template in TINY_SET["templates"]:
        words = ([None] if "<emotional" not in template else
                 [x for e in TINY_SET["emotion_words"].values() for x in e["emotional state word"]])
        for word in words:
            for race, by_gender in TINY_SET["names"].items():
                for gender, listed in by_gender.items():
                    for name in listed:
                        before, person, _ = eec.fill(template, name, gender, word)
                        position = 1 + len(before.split())  # after [CLS]; one piece a word
                        x = (w["bert/embeddings/word_embeddings"][vocab.index(person.lower())]
                             + w["bert/embeddings/position_embeddings"][position]
                             + w["bert/embeddings/token_type_embeddings"][0])
                        rows.append(layer_norm(x, w["bert/embeddings/LayerNorm/gamma"],
                                               w["bert/embeddings/LayerNorm/beta"]))
                        labels.append((name, gender, race))
    x = np.array(rows)
    name, gender, race = (np.array(column) for column in zip(*labels))
    female = (gender == "female").astype(int)

    def accuracy(train, test):
        mean, scale = x[train].mean(axis=0), x[train].std(axis=0)
        probe = LogisticRegression(C=1.0, tol=1e-10, max_iter=10000).fit(
            (x[train] - mean) / scale, female[train])
        return float(np.mean(probe.predict((x[test] - mean) / scale) == female[test]))

    layer0 = names["layers"][0]["gender"]
    for group in ("A", "B"):
        # --folds=2: each gender's names in file order, the first to fold 0, the second to 1.
        fold = np.array([TINY_SET["names"][r][g].index(n) % 2
                         for n, g, r in zip(name, gender, race)])
        correct = sum(accuracy((race == group) & (fold != k), (race == group) & (fold == k))
                      * np.count_nonzero((race == group) & (fold == k)) for k in (0, 1))
        assert layer0["within"][group] == pytest.approx(correct / np.count_nonzero(race == group))
    assert layer0["across"]["A -> B"] == pytest.approx(accuracy(race == "A", race == "B"))
    assert layer0["across"]["B -> A"] == pytest.approx(accuracy(race == "B", race == "A"))
    table = (names_out / "bias_results.md").read_text(encoding="utf-8")
    assert "| gender A -> B |" in table and "Guo & Caliskan (2021)" in table

    # The sample: the first word of each emotion and the first name of each race and gender.
    sample = json.loads((tmp_path / "eec_sample" / "bias_results.json").read_text("utf-8"))
    people = [("the crew", "female"), ("this seat", "male"), ("it", "female"),
              ("the flight", "male"), ("thank", "female"), ("hate", "male"), ("you", "female"),
              ("seat", "male")]
    expected = {"".join(eec.fill(template, person, gender, word))
                for template, words in ((TINY_SET["templates"][0], ["good", "bad"]),
                                        (TINY_SET["templates"][1], [None]))
                for word in words for person, gender in people}
    assert len(expected) == 3 * 8
    assert sorted(r["text"] for r in sample["scored"]) == sorted(expected)
    for r in sample["scored"]:  # the same export's scores as the whole set's run
        assert r["score"] == pytest.approx(score[r["text"]], abs=1e-6)
    # 3 contexts: 2 noun-phrase pairs each, a gender pair per race, a race pair per gender.
    assert [sample["comparisons"][c]["all"]["pairs"] for c in eec.COMPARISONS] == [6, 6, 6]
    table = (tmp_path / "eec_sample" / "bias_results.md").read_text("utf-8")
    assert "(a sample: each emotion's first 1 word and each race and gender's first 1 name)" \
        in table


def test_bad_eec_and_names_inputs_are_one_line_and_nothing_is_written(tmp_path):
    from tests.test_robustness_classifier import make_export

    out = tmp_path / "out"
    no_person = _tiny_set(tmp_path, lambda d: d["templates"].append("i love it ."))
    good = _tiny_set(tmp_path)
    empty = tmp_path / "empty.json"
    empty.write_text("", encoding="utf-8")
    export = make_export(tmp_path / "sst2", ["0", "1"])
    eec_flags = ["run_scripts.bias_report", "--test=eec", f"--export_dir={export}",
                 f"--output_dir={out}"]
    names_flags = ["run_scripts.bias_report", "--test=names",
                   f"--init_checkpoint={tmp_path / 'model'}", f"--input_file={good}",
                   f"--output_dir={out}"]
    _names_checkpoint(tmp_path / "model")
    results = cli.run_modules(
        [*eec_flags, "--score_class=1", f"--input_file={no_person}"],
        [*eec_flags, "--score_class=1", f"--input_file={empty}"],
        [*eec_flags, "--score_class=positive", f"--input_file={good}"],
        [*names_flags, "--folds=3"],
        [*names_flags, "--score_class=1"],
        [*eec_flags, "--score_class=1", f"--input_file={good}", "--words_per_emotion=0"],
        [*names_flags, "--names_per_group=-1"],
        [*names_flags, "--names_per_group=1"])
    cli.refused(results[0], f"bias_report: {no_person}: template 3 ('i love it .'): must hold "
                "<person> once, holds it 0 times")
    cli.refused(results[1], f"bias_report: {empty}: empty file, a template set expected")
    cli.refused(results[2], "bias_report: --score_class=positive: not a label of ",
                "(its labels: 0, 1)")
    cli.refused(results[3], "bias_report: --folds=3: must be from 2 to 2, the fewest names of "
                f"one gender of one race in {good}")
    cli.refused(results[4], "bias_report: --score_class is a flag of --test=eec: it has no "
                "effect with --test=names, which probes the names of the template set "
                "--input_file in the vectors of --init_checkpoint")
    cli.refused(results[5], "bias_report: --words_per_emotion=0: must be at least 1")
    cli.refused(results[6], "bias_report: --names_per_group=-1: must be at least 1")
    cli.refused(results[7], "bias_report: --folds=5: must be from 2 to 1, the fewest names of "
                f"one gender of one race in {good} (--names_per_group=1)")
    assert not out.exists()


def test_eec_and_names_check_their_inputs_where_tensorflow_cannot_load(tmp_path):
    from tests.test_startup import run_without_tensorflow

    template_file = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                 "data", "eec_templates", "eec_templates.json")
    out = tmp_path / "out"
    eec_run = run_without_tensorflow(
        "run_scripts.bias_report", "--test=eec", f"--export_dir={tmp_path / 'e'}",
        "--score_class=1", f"--input_file={template_file}", f"--output_dir={out}")
    cli.refused(eec_run, f"bias_report: --export_dir: {tmp_path / 'e'}: no such folder")
    names_run = run_without_tensorflow(
        "run_scripts.bias_report", "--test=names", f"--init_checkpoint={tmp_path}",
        f"--input_file={template_file}", "--folds=11", f"--output_dir={out}")
    cli.refused(names_run, "bias_report: --folds=11: must be from 2 to 10")
    assert not out.exists()
