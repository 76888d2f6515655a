#!/usr/bin/env bash
# Runs the layer contracts and the whole suite. pytest exits 5 when it collected no test: that is
# a failure here, so CI can never pass on an empty run.
set -uo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
"$VENV/bin/lint-imports" || exit 1
"$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "no tests were collected: failing" >&2
  exit 1
fi
exit "$rc"
