r"""Static word vectors of the real all-MiniLM-L6-v2 weights, scored on WordSim-353 and SimLex-999.

    .venv/bin/python -m bench.static_embeddings [--max_lines=N] [--max_contexts_per_word=100] \
        [--output_dir=DIR]

Bommasani, Davis & Cardie (ACL 2020) reduce a contextual encoder to one vector per word and
layer (official/embeddings/static_vectors.py) and score each layer on word-similarity
benchmarks: the "aggregated" vectors (a word's WordPieces mean-pooled in each of its first N
sentences, then the sentences mean-pooled) against the "decontextualized" baseline (the word
alone as [CLS] word [SEP]). The paper finds aggregated better, its best layers in the lower half
of the model (BERT-base, GPT-2, ...). Here: the MiniLM weights (bench/weights.txt, converted by
bench/finetune_glue.minilm_checkpoint; 6 layers, so layers 0..6), uncased; the words those of
WordSim-353 and SimLex-999 (../shared/data/word_similarity); the corpus the first --max_lines
lines of ../shared/data/pretraining_text/gutenberg_sentences.txt (13 Project Gutenberg books, one
sentence a line; the default, 24,000 of its 32,569 lines, took 7 minutes on 2 cores). A word the
corpus lacks has no aggregated vector, so its pairs are out of vocabulary (counted in the table);
the baseline has every word the vocab covers, and is also scored on the aggregated method's pairs
alone, so the two compare on the same pairs.

Writes DIR/results.json, DIR/results.md (the markdown table it prints) and
DIR/correlation_by_layer.png (Spearman by layer, both methods, both benchmarks).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import numpy as np

from bench.finetune_glue import minilm_checkpoint
from official import checkpoints
from official.atomic_files import open_atomically
from official.configs import BertConfig
from official.embeddings import static_vectors as sv
from official.embeddings import word_similarity as ws
from official.modeling.encoder import build_encoder
from official.text.tokenizer import FullTokenizer

SHARED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..",
                      "shared", "data")
BENCHMARKS = {"WordSim-353": "word_similarity/wordsim353.tsv",
              "SimLex-999": "word_similarity/simlex999.tsv"}
CORPUS = "pretraining_text/gutenberg_sentences.txt"


def capped_corpus(max_lines: int, work_dir: str) -> str:
    path = os.path.join(work_dir, f"gutenberg_sentences_{max_lines}.txt")
    if not os.path.exists(path):
        with open(os.path.join(SHARED, CORPUS), "rb") as source, \
                open_atomically(path, "wb") as f:
            for number, line in enumerate(source):
                if number == max_lines:
                    break
                f.write(line)
    return path


def plot(results: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(1, len(BENCHMARKS), figsize=(5 * len(BENCHMARKS), 3.8),
                                sharey=True)
    for axis, name in zip(axes, BENCHMARKS):
        for method, style in (("aggregated", "o-"), ("decontextualized", "s--"),
                              ("decontextualized, same pairs", "s:")):
            layers = sorted(int(layer) for layer in results[method])
            axis.plot(layers, [results[method][str(layer)][name]["spearman"]
                               for layer in layers], style, label=method)
        axis.set_title(name)
        axis.set_xlabel("layer (0: embeddings)")
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("Spearman")
    axes[0].legend()
    figure.tight_layout()
    with open_atomically(path, "wb") as f:
        figure.savefig(f, format="png", dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max_lines", type=int, default=24000)
    parser.add_argument("--max_contexts_per_word", type=int, default=100)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--output_dir", default=None, help="default: a temp dir")
    args = parser.parse_args()
    output_dir = args.output_dir or tempfile.mkdtemp(prefix="static_embeddings_")
    os.makedirs(output_dir, exist_ok=True)

    model_dir = minilm_checkpoint(output_dir)
    config = BertConfig.from_json_file(os.path.join(model_dir, "bert_config.json"))
    tokenizer = FullTokenizer(os.path.join(model_dir, "vocab.txt"), do_lower_case=True)
    encoder = build_encoder(config)
    checkpoints.load_init_checkpoint(model_dir, encoder)
    benchmarks = {name: ws.read_pairs(os.path.join(SHARED, path))
                  for name, path in BENCHMARKS.items()}
    candidates = [w for pairs in benchmarks.values() for p in pairs for w in (p.word1, p.word2)]
    targets = sv.target_words(candidates, tokenizer)
    settings = sv.Settings(layers=tuple(range(config.num_hidden_layers + 1)),
                           max_contexts_per_word=args.max_contexts_per_word,
                           batch_size=args.batch_size)
    corpus = capped_corpus(args.max_lines, output_dir)

    start = time.perf_counter()
    aggregated = sv.aggregated_vectors(encoder, tokenizer, corpus, targets, settings)
    aggregated_seconds = time.perf_counter() - start
    start = time.perf_counter()
    baseline = sv.decontextualized_vectors(encoder, tokenizer, targets, settings)
    baseline_seconds = time.perf_counter() - start
    sv.write_word2vec(aggregated, os.path.join(output_dir, "vectors"))
    sv.write_word2vec(baseline, os.path.join(output_dir, "vectors"), "decontextualized_")

    # The baseline again on only the pairs the aggregated vectors score: the same pairs.
    met = set(aggregated.words)
    same_pairs = {name: [p for p in pairs if p.word1.lower() in met and p.word2.lower() in met]
                  for name, pairs in benchmarks.items()}
    results = {
        "aggregated": ws.evaluate_layers(aggregated.words, aggregated.layers,
                                         aggregated.vectors, benchmarks, lower_case=True),
        "decontextualized": ws.evaluate_layers(baseline.words, baseline.layers,
                                               baseline.vectors, benchmarks, lower_case=True),
        "decontextualized, same pairs": ws.evaluate_layers(
            baseline.words, baseline.layers, baseline.vectors, same_pairs, lower_case=True)}
    table = ws.markdown_table(results)
    contexts = aggregated.contexts
    summary = (
        f"MiniLM-L6-H384 (uncased), corpus: first {args.max_lines} lines of {CORPUS}, "
        f"subword mean / context mean, at most {args.max_contexts_per_word} contexts a word.\n"
        f"Target words: {len(targets.words)} ({len(targets.unknown)} with [UNK] pieces left "
        f"out); met in the corpus: {len(aggregated.words)} (contexts per word: median "
        f"{int(np.median(contexts))}, {int(np.sum(contexts == args.max_contexts_per_word))} "
        f"with all {args.max_contexts_per_word}); aggregated {aggregated_seconds:.0f} s, "
        f"decontextualized {baseline_seconds:.0f} s.")
    print(summary + "\n\n" + table, flush=True)
    as_json = {method: {str(layer): {name: r.to_dict() for name, r in by_name.items()}
                        for layer, by_name in by_layer.items()}
               for method, by_layer in results.items()}
    with open_atomically(os.path.join(output_dir, "results.json")) as f:
        json.dump({"settings": vars(args), "target_words": len(targets.words),
                   "unknown_words": targets.unknown, "words_met": len(aggregated.words),
                   "aggregated_seconds": aggregated_seconds,
                   "decontextualized_seconds": baseline_seconds, "results": as_json}, f,
                  indent=2)
        f.write("\n")
    with open_atomically(os.path.join(output_dir, "results.md")) as f:
        f.write(summary + "\n\n" + table + "\n")
    plot(as_json, os.path.join(output_dir, "correlation_by_layer.png"))
    print(f"written to {output_dir}")


if __name__ == "__main__":
    main()
