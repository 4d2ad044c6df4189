#!/usr/bin/env bash
# Runs every test: the Rust build and unit tests, the wheel, then the differential tests of all
# samples and of the pragma reference's examples (compiled with appyc, run under the Triton
# interpreter, compared with NumPy) and the Python package, then pre-commit on the hooks. No GPU.
# Needs Rust and Python 3.11; the Python packages go into a cached venv (see scripts/venv.sh).
# Extra arguments are passed to pytest (e.g. `-k spmv`, `-x`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/venv.sh

echo "== cargo build --release"
cargo build --release
echo "== cargo test --release"
cargo test --release

appyc_ensure_venv

TARGET_DIR="${CARGO_TARGET_DIR:-target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$PWD/$TARGET_DIR" ;; esac

echo "== the wheel (maturin, abi3), pip-installed into the venv: appyc_aot and the appyc command"
start=$SECONDS
rm -rf "$TARGET_DIR/wheels"
"$APPYC_VENV/bin/maturin" build --release --quiet -o "$TARGET_DIR/wheels"
"$APPYC_PY" -m pip install --quiet --no-deps --force-reinstall "$TARGET_DIR"/wheels/appyc_aot-*.whl
echo "   ($((SECONDS - start)) s)"
export APPYC_BIN="${APPYC_BIN:-$TARGET_DIR/release/appyc}"

echo "== difftests (TRITON_INTERPRET=1, appyc at $APPYC_BIN)"
"$APPYC_PY" -m pytest tests/difftest -q -p no:cacheprovider "$@"

echo "== pre-commit hooks (tests/precommit.sh: pre-commit itself on a scratch repository)"
start=$SECONDS
bash tests/precommit.sh "$APPYC_PY"
echo "   ($((SECONDS - start)) s)"
