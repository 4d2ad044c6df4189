#!/usr/bin/env bash
# Usage: scripts/demo.sh [SAMPLE]   (default samples/vector_add.py)
# Builds appyc, compiles SAMPLE to a Triton module, shows where it went, and runs the
# differential test of that sample under the Triton interpreter.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/venv.sh

SAMPLE="${1:-samples/vector_add.py}"
[[ -f "$SAMPLE" ]] || SAMPLE="samples/$(basename "${SAMPLE%.py}").py"
[[ -f "$SAMPLE" ]] || { echo "error: no such sample: ${1:-}" >&2; exit 2; }
STEM="$(basename "$SAMPLE" .py)"

echo "== cargo build --release"
cargo build --release
TARGET_DIR="${CARGO_TARGET_DIR:-target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$PWD/$TARGET_DIR" ;; esac
export APPYC_BIN="${APPYC_BIN:-$TARGET_DIR/release/appyc}"

OUT_DIR="${APPYC_DEMO_OUT:-${TMPDIR:-/tmp}/appyc-demo}"
mkdir -p "$OUT_DIR"
OUT="$OUT_DIR/${STEM}_triton.py"
echo "== $APPYC_BIN $SAMPLE -o $OUT"
"$APPYC_BIN" "$SAMPLE" -o "$OUT"
echo "generated: $OUT ($(wc -l < "$OUT") lines)"

appyc_ensure_venv
echo "== difftest of $STEM (TRITON_INTERPRET=1)"
"$APPYC_PY" -m pytest tests/difftest/test_samples.py -q -p no:cacheprovider --sample "$STEM"
