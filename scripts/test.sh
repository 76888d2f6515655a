#!/usr/bin/env bash
# Runs the whole suite. pytest exits 5 when it collected no test: that is a failure here,
# so CI can never pass on an empty run.
#
# PYHPA_EXPECT_COMPILED=1 (with VENV naming the compiled build's venv) runs it on the compiled
# build: the source tree must then not be importable as `pyhpa`, so the repository is left off
# sys.path (-P) and only `tests` is reachable, through a directory holding a link to it.
set -uo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
if [ "${PYHPA_EXPECT_COMPILED:-}" = "1" ]; then
  shim=$(mktemp -d)
  trap 'rm -rf "$shim"' EXIT
  ln -s "$PWD/tests" "$shim/tests"
  PYTHONPATH="$shim" "$VENV/bin/python" -P -m pytest -q -p no:cacheprovider "$@"
else
  "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@"
fi
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "no tests were collected: failing" >&2
  exit 1
fi
exit "$rc"
