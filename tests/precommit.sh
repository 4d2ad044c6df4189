#!/usr/bin/env bash
# Runs pre-commit itself on this repository's .pre-commit-hooks.yaml, against a scratch git
# repository configured through [tool.appyc]: the check hook fails on a missing and on a stale
# output and writes nothing, the regenerating hook writes the outputs (and fails, as pre-commit
# hooks that modify files do), and both pass once the outputs are committed.
#
# Usage: tests/precommit.sh PYTHON (a python with pre-commit installed; scripts/test.sh passes
# the venv's). The hooks are built by pre-commit (`cargo install`) from a snapshot of the working
# tree, so uncommitted changes are what is tested; the build reuses the compiled dependencies of
# target/release through a copy, so only appyc itself is compiled.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${1:?usage: tests/precommit.sh PYTHON}"
TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$REPO/$TARGET_DIR" ;; esac

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git_() { git -c user.name=appyc-ci -c user.email=ci@appyc.invalid -c init.defaultBranch=main "$@"; }
fail() { echo "tests/precommit.sh: FAIL: $*" >&2; exit 1; }

# The hook repository: the working tree's files, committed.
mkdir "$work/hooks"
(cd "$REPO" && git ls-files -z -co --exclude-standard | tar --null -T - --ignore-failed-read -cf - 2>/dev/null) \
    | tar -xf - -C "$work/hooks"
git_ -C "$work/hooks" init -q
git_ -C "$work/hooks" add -A
git_ -C "$work/hooks" commit -qm snapshot
rev="$(git -C "$work/hooks" rev-parse HEAD)"

# Registry dependencies get the same build hashes in any target directory: a copy of the
# main build's makes them fresh, without touching target/release itself.
export CARGO_TARGET_DIR="$work/target"
if [[ -d "$TARGET_DIR/release/deps" ]]; then
    mkdir -p "$CARGO_TARGET_DIR/release"
    cp -a "$TARGET_DIR/release/deps" "$TARGET_DIR/release/build" "$TARGET_DIR/release/.fingerprint" \
        "$CARGO_TARGET_DIR/release/"
fi
export PRE_COMMIT_HOME="$work/pre-commit-home"

# The project that uses the hooks.
p="$work/project"
mkdir -p "$p/kernels"
cp "$REPO/samples/vector_add.py" "$p/kernels/"
cat > "$p/pyproject.toml" <<'TOML'
[project]
name = "kernels"
version = "0"

[tool.appyc]
source = ["kernels"]
output = "gen"
TOML
hooks_config() {
    { echo "repos:"
      echo "  - repo: $work/hooks"
      echo "    rev: $rev"
      echo "    hooks:"
      for id in "$@"; do echo "      - id: $id"; done
    } > "$p/.pre-commit-config.yaml"
    git -C "$p" add -A
}
git_ -C "$p" init -q
hooks_config appyc-check

run_hooks() { (cd "$p" && "$PY" -m pre_commit run --all-files --color never) > "$work/log" 2>&1; }

echo "-- pre-commit: appyc-check on a missing output (builds the hook with cargo)"
if run_hooks; then cat "$work/log"; fail "appyc-check passed without outputs"; fi
grep -q "gen/vector_add.py is missing" "$work/log" || { cat "$work/log"; fail "missing output not named"; }
[[ ! -e "$p/gen" ]] || fail "appyc-check wrote outputs"

echo "-- pre-commit: appyc regenerates"
hooks_config appyc
if run_hooks; then cat "$work/log"; fail "appyc passed although it wrote outputs"; fi
grep -q "wrote gen/vector_add.py" "$work/log" || { cat "$work/log"; fail "the new output was not named"; }
cmp -s "$p/gen/vector_add.py" <(cd "$p" && "$TARGET_DIR/release/appyc" kernels/vector_add.py -o -) \
    || fail "the hook's output differs from appyc's"
git -C "$p" add -A
run_hooks || { cat "$work/log"; fail "appyc failed on an up-to-date tree"; }
echo "# edited" >> "$p/gen/vector_add.py"
git -C "$p" add -A
if run_hooks; then cat "$work/log"; fail "appyc passed although it rewrote an output"; fi
cmp -s "$p/gen/vector_add.py" <(cd "$p" && "$TARGET_DIR/release/appyc" kernels/vector_add.py -o -) \
    || fail "the hook did not restore the edited output"
git -C "$p" add -A

echo "-- pre-commit: both hooks on a fresh tree, then appyc-check on a stale one"
hooks_config appyc appyc-check
run_hooks || { cat "$work/log"; fail "hooks failed on an up-to-date tree"; }
sed -i 's/C\[i\] = A\[i\] + B\[i\]/C[i] = A[i] - B[i]/' "$p/kernels/vector_add.py"
git -C "$p" add -A
before="$(cat "$p/gen/vector_add.py")"
hooks_config appyc-check
if run_hooks; then cat "$work/log"; fail "appyc-check passed on a stale output"; fi
grep -q "gen/vector_add.py is stale" "$work/log" || { cat "$work/log"; fail "stale output not named"; }
[[ "$(cat "$p/gen/vector_add.py")" == "$before" ]] || fail "appyc-check wrote"
echo "-- pre-commit hooks: ok"
