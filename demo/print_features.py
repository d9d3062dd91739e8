"""Prints an extract_features JSON-lines file as a short table: token, then its first values.

Usage: python -m demo.print_features FEATURES.jsonl
"""

import json
import sys

SHOWN_VALUES = 4


def main(path: str) -> None:
    with open(path, encoding="utf-8") as f:
        for line in f:
            example = json.loads(line)
            print(f"\nexample {example['linex_index']}:")
            for feature in example["features"]:
                last = feature["layers"][0]
                values = " ".join(f"{v:+.4f}" for v in last["values"][:SHOWN_VALUES])
                print(f"  {feature['token']:>14}  layer {last['index']:>2}: {values} ... "
                      f"({len(last['values'])} values)")
    print(f"\nall layers and values: {path}")


if __name__ == "__main__":
    main(sys.argv[1])
