#!/usr/bin/env bash
# Installs what `make test` needs and a fresh machine lacks, and says what it
# installs. Idempotent. Another apt-get or dpkg holding the package lock is
# waited for (up to APT_LOCK_WAIT seconds, default 300) instead of failing.
set -euo pipefail

APT_LOCK_WAIT=${APT_LOCK_WAIT:-300}

# PostgreSQL: the machines run it at 127.0.0.1:5432; start it if it stopped.
if command -v pg_ctlcluster >/dev/null 2>&1 && ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  ver=$(ls /etc/postgresql 2>/dev/null | head -n1 || true)
  if [ -n "$ver" ]; then
    echo "test-deps: starting PostgreSQL $ver"
    pg_ctlcluster --skip-systemctl-redirect "$ver" main start || true
  fi
fi

# Headless Chromium for the /docs end-to-end test, from Debian's packages.
# --no-install-recommends: headless Chromium needs none of the recommended
# desktop packages (the browser test passes without them).
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt=(apt-get -o "DPkg::Lock::Timeout=$APT_LOCK_WAIT" -o "Acquire::Retries=3")
    echo "test-deps: installing chromium (Debian package, no recommended packages) for the /docs browser test"
    echo "test-deps: waiting up to ${APT_LOCK_WAIT}s for the package lock if another apt-get holds it"
    # The lists lock of `apt-get update` is not covered by the dpkg lock
    # timeout in every apt version: retry, bounded by the same wait.
    waited=0
    until "${apt[@]}" update -qq >/dev/null 2>&1; do
      if [ "$waited" -ge "$APT_LOCK_WAIT" ]; then
        echo "test-deps: apt-get update kept failing for ${APT_LOCK_WAIT}s" >&2
        "${apt[@]}" update -qq
        exit 1
      fi
      sleep 5
      waited=$((waited + 5))
    done
    # Print the packages apt is about to install, then install them.
    "${apt[@]}" install -s --no-install-recommends chromium | awk '/^Inst /{print "test-deps:   " $2}'
    "${apt[@]}" install -y -qq --no-install-recommends chromium >/dev/null
    echo "test-deps: chromium installed: $(chromium --version 2>/dev/null || echo unknown)"
  else
    echo "chromium is missing and cannot be installed here (needs root and apt-get);" \
      "the /docs browser test will fail unless SVC_SKIP_BROWSER_TEST=1" >&2
  fi
fi
