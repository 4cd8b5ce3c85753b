#!/usr/bin/env bash
# Installs what `make test` needs and a fresh machine lacks. Idempotent.
set -euo pipefail

# PostgreSQL: the machines run it at 127.0.0.1:5432; start it if it stopped.
if command -v pg_ctlcluster >/dev/null 2>&1 && ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  ver=$(ls /etc/postgresql 2>/dev/null | head -n1 || true)
  [ -n "$ver" ] && pg_ctlcluster --skip-systemctl-redirect "$ver" main start || true
fi

# Headless Chromium for the /docs end-to-end test, from Debian's packages.
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing chromium (Debian package) for the /docs browser test"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq chromium >/dev/null
  else
    echo "chromium is missing and cannot be installed here (needs root and apt-get);" \
      "the /docs browser test will fail unless SVC_SKIP_BROWSER_TEST=1" >&2
  fi
fi
