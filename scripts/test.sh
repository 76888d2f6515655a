#!/usr/bin/env bash
# Runs the layer contracts and the whole suite. pytest exits 5 when it collected no test: that is
# a failure here, so CI can never pass on an empty run.
set -uo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
# Debian packages some tests need, installed when missing and we may (root with apt-get); else
# those tests skip with the reason: headless Chromium opens the HTML reports, and a real
# Prometheus server (with promtool) scrapes the embedded cluster and serves backfilled history.
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
{ command -v prometheus && command -v promtool; } >/dev/null 2>&1 || missing+=(prometheus)
if [ "${#missing[@]}" -gt 0 ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null) \
    || echo "could not install ${missing[*]}: the tests that need them will skip" >&2
fi
"$VENV/bin/lint-imports" || exit 1
# Six workers over two cores: most of the suite waits on servers, controllers and kubectl (a
# serial run used 7 CPU-minutes in 12 wall-minutes; four workers left a core idle half the time),
# so files run side by side (whole files per worker: their servers start once), the files marked
# `long` first (tests/conftest.py).
"$VENV/bin/python" -m pytest -q -p no:cacheprovider -n "${PYTEST_WORKERS:-6}" --dist loadfile \
  --no-loadscope-reorder "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "no tests were collected: failing" >&2
  exit 1
fi
exit "$rc"
