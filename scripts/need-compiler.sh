#!/usr/bin/env bash
# The compiled build needs a C compiler and the headers of the interpreter it builds for.
# Installs them with apt-get (Debian's gcc and python3-dev) when either is missing.
set -euo pipefail
python=${1:-python3}
has_headers() {
  "$python" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'
}
# The compiler setuptools will call: the one the interpreter was built with.
compiler=$("$python" -c 'import sysconfig; print((sysconfig.get_config_var("CC") or "cc").split()[0])')
if command -v "$compiler" >/dev/null && has_headers; then
  exit 0
fi
echo "the compiled build needs a C compiler and Python headers: installing gcc and python3-dev" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
$sudo apt-get install -y -qq gcc python3-dev >/dev/null
command -v "$compiler" >/dev/null || { echo "no $compiler after installing gcc" >&2; exit 1; }
has_headers || { echo "no Python.h for $python after installing python3-dev: use make BASE_PYTHON=/usr/bin/python3" >&2; exit 1; }
