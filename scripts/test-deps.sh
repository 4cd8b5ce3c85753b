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

# Debian packages `make test` needs, with what each is for; one apt-get run
# installs the missing ones.
need=()
# Headless Chromium for the /docs end-to-end test.
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# buildah, podman and runc for the container image test (TestContainerImage
# in cmd/svc builds an image FROM scratch and runs it; crun, podman's
# default runtime, refuses machines whose cgroup v2 hierarchy holds a
# controller, runc runs there). About 40 s to install here.
command -v buildah >/dev/null 2>&1 || need+=(buildah)
command -v podman >/dev/null 2>&1 || need+=(podman)
command -v runc >/dev/null 2>&1 || need+=(runc)


# --no-install-recommends: headless Chromium needs none of the recommended
# desktop packages (the browser test passes without them).
if [ "${#need[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt=(apt-get -o "DPkg::Lock::Timeout=$APT_LOCK_WAIT" -o "Acquire::Retries=3")
    echo "test-deps: installing ${need[*]} (Debian packages, no recommended packages)"
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
    # --no-install-recommends: headless Chromium needs none of the
    # recommended desktop packages (the browser test passes without them),
    # and the image test none of podman's.
    # Print the packages apt is about to install, then install them.
    "${apt[@]}" install -s --no-install-recommends "${need[@]}" | awk '/^Inst /{print "test-deps:   " $2}'
    "${apt[@]}" install -y -qq --no-install-recommends "${need[@]}" >/dev/null
    for p in "${need[@]}"; do
      echo "test-deps: $p installed: $("$p" --version 2>/dev/null | head -n1 || echo unknown)"
    done
  else
    echo "${need[*]} missing and cannot be installed here (needs root and apt-get):" \
      "the /docs browser test fails without chromium unless SVC_SKIP_BROWSER_TEST=1;" \
      "the container image test skips without buildah and podman" >&2
  fi
fi
