"""A probing study's results written for a reader: JSON, a table, and the curves as a PNG.

    RESULTS_FILE  probe_results.json   run_study's dict (official/probing/study.py), as is
    TABLE_FILE    probe_results.txt    `table(results)`: one row per layer (dev and test scores,
                                       control and selectivity), then the mix and the
                                       cumulative rows
    PLOT_FILE     probe_curves.png     `plot(results, path)`: the test score by layer (with the
                                       control task's and the cumulative mixes'), and the mix's
                                       weights by layer
    PROBES_DIR    probes/<name>.npz    `write_probes`: each trained probe's weights at its best
                                       epoch, by variable path (run_study's names: layer_03,
                                       control_layer_03, mix, layers_0-3), for numpy alone: a
                                       linear probe's logits are x @ logits/kernel +
                                       logits/bias, its classes results["labels"]

Each file is written atomically, probes/ as a whole (an earlier run's probes go with it).
Example of a table:
    >>> results = {"task": "upos", "metric": "accuracy", "probe": "linear",
    ...            "layers": [{"layer": 0, "dev": {"accuracy": 0.5}, "test": {"accuracy": 0.4},
    ...                        "control": {"dev": {"accuracy": 0.3}, "test": {"accuracy": 0.2}},
    ...                        "selectivity": {"dev": 0.2, "test": 0.2}}]}
    >>> print(table(results))
    upos, linear probes: accuracy by layer (dev / test)
    layer   dev     test    control  selectivity
    0       0.5000  0.4000  0.2000   0.2000
"""

from __future__ import annotations

import json
import os

import numpy as np

from official.atomic_files import atomic_folder, atomic_path, open_atomically

RESULTS_FILE, TABLE_FILE, PLOT_FILE = "probe_results.json", "probe_results.txt", "probe_curves.png"
PROBES_DIR = "probes"


def _row(cells: list[str], header: list[str]) -> str:
    """Cells left-aligned under their header, scores 6 characters wide."""
    return "  ".join(c.ljust(max(len(h), 6)) for c, h in zip(cells, header)).rstrip()


def table(results: dict) -> str:
    """The results as plain text: the task's metric on dev and test, the test split's other
    scores (accuracy beside conll_ner's F1, Spearman beside UUAS or root accuracy), then the
    control task's test accuracy and the selectivity (Hewitt & Liang's, by accuracy)."""
    metric = results["metric"]
    lines = [f"{results['task']}, {results['probe']} probes: {metric} by layer (dev / test)"]
    first = results["layers"][0]["test"]
    others = [name for name in first if name not in (metric, "loss")]
    controlled = any("control" in e for e in results["layers"])
    header = ["layer", "dev", "test"] + [f"test {name}" for name in others] + \
        (["control", "selectivity"] if controlled else [])
    lines.append(_row(header, header))
    for e in results["layers"]:
        cells = [str(e["layer"]), f"{e['dev'][metric]:.4f}", f"{e['test'][metric]:.4f}"]
        cells += [f"{e['test'][name]:.4f}" for name in others]
        if controlled:
            cells += [f"{e['control']['test']['accuracy']:.4f}", f"{e['selectivity']['test']:.4f}"]
        lines.append(_row(cells, header))
    if "mix" in results:
        mix = results["mix"]
        weights = " ".join(f"{w:.3f}" for w in mix["weights"])
        lines.append(f"scalar mix of all layers: dev {mix['dev'][metric]:.4f}  test "
                     f"{mix['test'][metric]:.4f}  weights s = {weights}  gamma "
                     f"{mix['scale']:.3f}  E_s[l] = {mix['expected_layer']:.2f}")
    if "cumulative" in results:
        lines.append("cumulative mixes (layers 0..l): " + "  ".join(
            f"{e['layers']} {e['test'][metric]:.4f}"
            + (f" (Delta {e['delta']:+.4f})" if "delta" in e else "")
            for e in results["cumulative"]))
        lines.append(f"E_Delta[l] = {results['expected_delta_layer']:.2f}")
    return "\n".join(lines)


def plot(results: dict, path: str) -> None:
    """The curves as a PNG at `path` (matplotlib, no display needed)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metric = results["metric"]
    layers = [e["layer"] for e in results["layers"]]
    panels = 2 if "mix" in results else 1
    figure, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 4), squeeze=False)
    ax = axes[0][0]
    ax.plot(layers, [e["test"][metric] for e in results["layers"]], "o-",
            label=f"{results['task']} ({metric})")
    if any("control" in e for e in results["layers"]):
        ax.plot(layers, [e["control"]["test"]["accuracy"] for e in results["layers"]], "s--",
                label="control task (accuracy)")
        ax.plot(layers, [e["selectivity"]["test"] for e in results["layers"]], "^:",
                label="selectivity")
    if "cumulative" in results:
        ax.plot(range(len(results["cumulative"])),
                [e["test"][metric] for e in results["cumulative"]], "x-.",
                label="mix of layers 0..l")
    ax.set_xlabel("layer (0 = embeddings)")
    ax.set_ylabel(f"test {metric}")
    ax.set_title(f"{results['task']}, {results['probe']} probe")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    if "mix" in results:
        ax = axes[0][1]
        weights = results["mix"]["weights"]
        ax.bar(range(len(weights)), weights)
        ax.axvline(results["mix"]["expected_layer"], color="k", linestyle="--",
                   label=f"E_s[l] = {results['mix']['expected_layer']:.2f}")
        ax.set_xlabel("layer")
        ax.set_ylabel("mix weight s_l")
        ax.set_title("scalar mix")
        ax.legend(fontsize=8)
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=100)
    plt.close(figure)


def write(results: dict, output_dir: str) -> dict[str, str]:
    """The three files in output_dir; {name: path}."""
    paths = {name: os.path.join(output_dir, name)
             for name in (RESULTS_FILE, TABLE_FILE, PLOT_FILE)}
    with open_atomically(paths[RESULTS_FILE]) as f:
        f.write(json.dumps(results, indent=2, sort_keys=True) + "\n")
    with open_atomically(paths[TABLE_FILE]) as f:
        f.write(table(results) + "\n")
    plot(results, paths[PLOT_FILE])
    return paths


def write_probes(weights: dict[str, dict[str, np.ndarray]], output_dir: str) -> str:
    """output_dir/probes/<name>.npz for each probe of `weights` (run_study's `probe_weights`),
    the folder replacing an earlier run's whole; its path."""
    final = os.path.join(output_dir, PROBES_DIR)
    with atomic_folder(final) as staging:
        for name, arrays in weights.items():
            with open(os.path.join(staging, f"{name}.npz"), "wb") as f:
                np.savez(f, **arrays)
    return final
