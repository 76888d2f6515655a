#!/usr/bin/env bash
# Runs the layer contracts and the whole suite. pytest exits 5 when it collected no test: that is
# a failure here, so CI can never pass on an empty run.
set -uo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
# The HTML report tests open the reports in Debian's headless Chromium; install it when missing
# and we may (root with apt-get), else those tests skip with the reason.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "could not install chromium: the browser tests will skip" >&2
fi
"$VENV/bin/lint-imports" || exit 1
"$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "no tests were collected: failing" >&2
  exit 1
fi
exit "$rc"
