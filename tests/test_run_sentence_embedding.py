"""run_sentence_embedding end to end, as a user runs it: a toy retrieval task learned from pairs.

The toy: 24 topics; a query is "q a<topic>" and 1 to 3 filler words, its passage "p<topic>"
and other fillers, shuffled. Query and passage share no word that says their topic (the fillers
are drawn at random on both sides), so an untrained encoder ranks the dev passages at about
chance (MRR@10 near 0.12 over 24 documents) and a trained one must have learnt from the pairs
that a<t> and p<t> go together. The dev file holds one pair per topic.
"""

import json
import random

import pytest

from official.configs import BertConfig
from tests.cli import eval_results, refused, run_module, run_modules, succeeded

TOPICS = 24
FILLERS = [f"w{i}" for i in range(10)]
VOCAB = (["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "q"] + [f"a{t:02d}" for t in range(TOPICS)]
         + [f"p{t:02d}" for t in range(TOPICS)] + FILLERS)
MAX_SEQ_LENGTH = 16


def toy_pair(rng, topic):
    query = " ".join(["q", f"a{topic:02d}", *rng.sample(FILLERS, rng.randint(1, 3))])
    words = [f"p{topic:02d}", *rng.sample(FILLERS, rng.randint(1, 3))]
    rng.shuffle(words)
    return query, " ".join(words)


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    root = tmp_path_factory.mktemp("run_sentence_embedding")
    rng = random.Random(0)
    train = [toy_pair(rng, t) for t in range(TOPICS) for _ in range(10)]
    rng.shuffle(train)
    dev = [toy_pair(rng, t) for t in range(TOPICS)]
    for name, pairs in (("train.tsv", train), ("dev.tsv", dev)):
        (root / name).write_text("".join(f"{q}\t{p}\n" for q, p in pairs), encoding="utf-8")
    (root / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    BertConfig(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2,
               num_attention_heads=2, intermediate_size=64,
               max_position_embeddings=64).to_json_file(str(root / "bert_config.json"))
    return root


def command(toy, output_dir, *flags):
    """run_sentence_embedding's module and flags for the toy (`run_module`'s arguments)."""
    return [
        "run_scripts.run_sentence_embedding", f"--train_file={toy / 'train.tsv'}",
        f"--dev_file={toy / 'dev.tsv'}", f"--vocab_file={toy / 'vocab.txt'}",
        f"--bert_config_file={toy / 'bert_config.json'}", f"--output_dir={output_dir}",
        f"--max_seq_length={MAX_SEQ_LENGTH}", "--train_batch_size=16", "--eval_batch_size=16",
        "--predict_batch_size=16", "--learning_rate=5e-3", "--num_train_epochs=4",
        "--log_steps=15", "--iterations_per_loop=15", *flags]


def run(toy, output_dir, *flags):
    return run_module(*command(toy, output_dir, *flags))


@pytest.fixture(scope="module")
def trained(toy):
    """The trained run's output_dir; beside it, the same encoder evaluated untrained
    (toy / "untrained")."""
    out = toy / "out"
    for result in run_modules(command(toy, out, "--do_train", "--do_eval", "--do_predict"),
                              command(toy, toy / "untrained", "--do_eval",
                                      "--allow_untrained_head")):
        succeeded(result)
    return out


def test_pairs_teach_retrieval(toy, trained):
    """Untrained: about chance. Trained 4 epochs (60 updates of 16 pairs): every query finds
    its passage; best/ holds the encoder with the pooling record the export reads, and
    --do_predict ranks the dev file again."""
    untrained = toy / "untrained"  # evaluated beside the trained run (the fixture)
    chance = float(eval_results(untrained / "eval_results.txt")["mrr_at_10"])
    assert chance < 0.35

    out = trained
    dev = eval_results(out / "eval_results.txt")
    assert dev["global_step"] == "60"
    assert float(dev["mrr_at_10"]) >= 0.9 and float(dev["mrr_at_10"]) > chance + 0.5
    assert float(dev["recall_at_1"]) >= 0.8
    assert eval_results(out / "best" / "eval_results.txt")["mrr_at_10"] == dev["mrr_at_10"]
    assert '"pooling": "mean"' in (out / "best" / "sentence_encoder.json").read_text()
    predicted = eval_results(out / "retrieval_results.txt")
    assert predicted["mrr_at_10"] == dev["mrr_at_10"]
    rankings = (out / "retrieval_rankings.tsv").read_text(encoding="utf-8").splitlines()
    assert len(rankings) == 1 + TOPICS * 10
    rows = [line.split("\t") for line in rankings[1:]]
    found_first = [row for row in rows if row[1] == "1" and row[3] == "1"]
    assert len(found_first) == round(float(predicted["recall_at_1"]) * TOPICS)
    # A query's passage is the one of its topic: "q a07 ..." and "... p07 ...".
    assert all(f"p{query.split()[1][1:]}" in document.split()
               for query, _, _, _, document in found_first)


def test_the_trained_encoder_exports_and_searches(toy, trained, tmp_path):
    """The whole path: best/ exported as a sentence encoder (its record's pooling), the dev
    passages searched with the dev queries: each query's first hit is its own passage as often
    as the run's recall@1 says."""
    succeeded(run_module("run_scripts.export_saved_model", "--export_type=sentence_encoder",
                         f"--init_checkpoint={trained / 'best'}",
                         f"--vocab_file={toy / 'vocab.txt'}", f"--export_dir={tmp_path / 'x'}"))
    pairs = [line.split("\t") for line in (toy / "dev.tsv").read_text().splitlines()]
    (tmp_path / "queries.txt").write_text("".join(q + "\n" for q, _ in pairs))
    (tmp_path / "corpus.txt").write_text("".join(p + "\n" for _, p in pairs))
    succeeded(run_module("run_scripts.semantic_search", f"--export_dir={tmp_path / 'x'}",
                         f"--corpus_file={tmp_path / 'corpus.txt'}",
                         f"--queries_file={tmp_path / 'queries.txt'}", "--top_k=1",
                         f"--output_file={tmp_path / 'hits.jsonl'}"))
    hits = [json.loads(line) for line in (tmp_path / "hits.jsonl").read_text().splitlines()]
    right = sum(hit["results"][0]["line"] == number for number, hit in enumerate(hits, 1))
    recall = float(eval_results(trained / "best" / "eval_results.txt")["recall_at_1"])
    assert right == round(recall * TOPICS), (right, recall)


def test_a_bad_line_is_one_error_naming_it(toy, tmp_path):
    bad = tmp_path / "train.tsv"
    bad.write_text("q a00 w1\tp00 w2\nq a01 w3\n", encoding="utf-8")
    refused(run_module(
        "run_scripts.run_sentence_embedding", f"--train_file={bad}",
        f"--vocab_file={toy / 'vocab.txt'}", f"--bert_config_file={toy / 'bert_config.json'}",
        f"--output_dir={tmp_path / 'out'}", f"--max_seq_length={MAX_SEQ_LENGTH}", "--do_train"),
        f"{bad}:2: 1 tab-separated columns")


def test_a_rerun_with_another_pooling_is_refused(toy, trained):
    """The checkpoints were trained for mean pooling (their sentence_encoder.json): resuming
    them under another would train another encoder on top."""
    refused(run(toy, trained, "--do_train", "--pooling=cls"),
            f"{trained / 'sentence_encoder.json'}: the checkpoints in {trained} were made with",
            '"pooling": "mean"', '"pooling": "cls"')


def test_a_teachers_vectors_teach_a_1_layer_student_what_its_pairs_do_not(toy, trained,
                                                                          tmp_path):
    """Distillation into a sentence encoder (sentence-transformers' MSELoss on the teacher's
    vectors). The teacher is the 2-layer encoder that learnt the toy (a<t> goes with p<t>:
    the `trained` run). The students, 1 layer from the same random start, see only pairs that
    never link a<t> to p<t> (a query with another query of its topic, a passage with another
    passage): trained on them alone, the student ranks the dev passages at about chance;
    taught the teacher's vectors of the same texts beside them, it learns which passage a query
    goes with."""
    teacher = trained
    assert float(eval_results(teacher / "best" / "eval_results.txt")["mrr_at_10"]) >= 0.9
    student_config = toy / "student_config.json"
    BertConfig(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
               intermediate_size=64, max_position_embeddings=64).to_json_file(str(student_config))
    rng = random.Random(1)
    sides = [toy_pair(rng, t) for t in range(TOPICS) for _ in range(10)]
    same_side = [(a, b) for (a, _), (b, _) in zip(sides[::2], sides[1::2])]
    same_side += [(a, b) for (_, a), (_, b) in zip(sides[::2], sides[1::2])]
    rng.shuffle(same_side)
    (tmp_path / "same_side.tsv").write_text("".join(f"{a}\t{b}\n" for a, b in same_side))
    student = ("--do_train", "--do_eval", f"--train_file={tmp_path / 'same_side.tsv'}",
               f"--bert_config_file={student_config}", "--num_train_epochs=6")
    # The two students side by side. The vectors' squared errors are small numbers beside the
    # ranking loss: --alpha_soft=10.
    for result in run_modules(
            command(toy, tmp_path / "alone", *student),
            command(toy, tmp_path / "distilled", *student, f"--teacher_checkpoint={teacher}",
                    "--alpha_soft=10", "--alpha_hard=1")):
        succeeded(result)

    alone, distilled = (float(eval_results(tmp_path / name / "best" / "eval_results.txt")
                              ["mrr_at_10"]) for name in ("alone", "distilled"))
    assert alone < 0.4 and distilled >= alone + 0.4, (alone, distilled)
    assert (tmp_path / "distilled" / "best" / "sentence_encoder.json").exists()
