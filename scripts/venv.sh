# Sourced by scripts/test.sh and scripts/demo.sh: make sure the Python test environment exists.
#
# The venv lives outside the repository (${APPYC_VENV:-$HOME/.cache/appyc-venv}); packages are
# installed only when missing or at other versions. Sets APPYC_PY to the venv's python.
# Extra pip options (e.g. a local index) can be given in APPYC_PIP_ARGS.

APPYC_VENV="${APPYC_VENV:-$HOME/.cache/appyc-venv}"
# numpy: the newest release for Python 3.11 (2.4.x; the GPU image has 2.5 on Python 3.12).
# Triton 3.6's interpreter turns scalars into 1-element arrays, which NumPy >= 2.4 no longer
# converts to ints; generated modules carry the fix (_appyc_interpreter_scalar_index).
# pre-commit (with PyYAML) runs tests/precommit.sh and the pragma-reference tests read the spec
# with PyYAML; maturin builds the wheel.
APPYC_PINS=(triton==3.6.0 torch==2.11.0 numpy==2.4.6 pytest==9.2.0
            pre-commit==4.7.0 pyyaml==6.0.3 maturin==1.16.0)

appyc_find_python() {
    local p
    for p in "${APPYC_PYTHON:-}" python3.11 python3; do
        if [[ -n "$p" ]] && command -v "$p" >/dev/null 2>&1; then
            echo "$p"
            return 0
        fi
    done
    echo "error: no python3 found (need Python 3.11)" >&2
    return 1
}

# Exit status 0 when the venv has every pinned package at the pinned version.
appyc_venv_ok() {
    [[ -x "$APPYC_VENV/bin/python" ]] || return 1
    "$APPYC_VENV/bin/python" - "${APPYC_PINS[@]}" <<'PY' >/dev/null 2>&1
import sys
from importlib.metadata import version, PackageNotFoundError
for pin in sys.argv[1:]:
    name, _, want = pin.partition("==")
    try:
        have = version(name)
    except PackageNotFoundError:
        sys.exit(1)
    # torch reports a local suffix ("2.11.0+cu130"): compare the public version only.
    if want and have.split("+")[0] != want:
        sys.exit(1)
PY
}

appyc_ensure_venv() {
    local stamp="$APPYC_VENV/.appyc-pins"
    if [[ -f "$stamp" && "$(cat "$stamp")" == "${APPYC_PINS[*]}" ]] && appyc_venv_ok; then
        :
    elif appyc_venv_ok; then
        echo "${APPYC_PINS[*]}" > "$stamp"
    else
        echo "== setting up Python venv at $APPYC_VENV (${APPYC_PINS[*]})"
        if [[ ! -x "$APPYC_VENV/bin/python" ]]; then
            local py
            py="$(appyc_find_python)"
            mkdir -p "$(dirname "$APPYC_VENV")"
            "$py" -m venv "$APPYC_VENV"
        fi
        # shellcheck disable=SC2086
        "$APPYC_VENV/bin/python" -m pip install --quiet --upgrade pip ${APPYC_PIP_ARGS:-}
        # shellcheck disable=SC2086
        "$APPYC_VENV/bin/python" -m pip install --quiet ${APPYC_PIP_ARGS:-} "${APPYC_PINS[@]}"
        appyc_venv_ok || { echo "error: venv at $APPYC_VENV lacks ${APPYC_PINS[*]}" >&2; return 1; }
        echo "${APPYC_PINS[*]}" > "$stamp"
    fi
    APPYC_PY="$APPYC_VENV/bin/python"
}
