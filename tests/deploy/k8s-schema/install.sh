#!/usr/bin/env bash
# The schemas tests/deploy/check_k8s.py validates the rendered manifests against, from the npm
# registry, pinned by package-lock.json (versions and integrity hashes):
#   kubernetes-models 5.1.0                       the Kubernetes v1.36 OpenAPI schemas, as ajv
#                                                 validators and TypeScript interfaces
#   @kubernetes-models/prometheus-operator 6.0.0  the Prometheus Operator's CRD schemas
#                                                 (ServiceMonitor, PrometheusRule)
#   typescript 5.9.3                              checks the objects against the interfaces:
#                                                 an unknown field is an error there
#
#   install.sh          `npm ci` into the cache once per lockfile (scripts/install-deps.sh runs
#                       it); prints the directory holding node_modules. Idempotent.
#   install.sh --dir    prints that directory without installing: exit 1 if it is not there
#
# The cache: $LIMITSD_K8S_SCHEMA_CACHE, else /var/cache/limitsd/k8s-schema when writable (root,
# CI), else ${XDG_CACHE_HOME:-~/.cache}/limitsd/k8s-schema; one subdirectory per lockfile.
# After the install the check runs offline.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

die() { echo "k8s-schema: $*" >&2; exit 1; }

cache_root() {
  if [ -n "${LIMITSD_K8S_SCHEMA_CACHE:-}" ]; then echo "$LIMITSD_K8S_SCHEMA_CACHE"; return; fi
  if mkdir -p /var/cache/limitsd/k8s-schema 2>/dev/null && [ -w /var/cache/limitsd/k8s-schema ]; then
    echo /var/cache/limitsd/k8s-schema
  else
    echo "${XDG_CACHE_HOME:-$HOME/.cache}/limitsd/k8s-schema"
  fi
}

# Keyed by the lockfile's content: a changed pin is a new cache entry, never a stale one.
dir="$(cache_root)/$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -c1-12)"

case "${1:-}" in
  --dir)
    [ -f "$dir/.complete" ] || die "not installed in $dir: run tests/deploy/k8s-schema/install.sh (scripts/install-deps.sh does)"
    echo "$dir"
    exit 0 ;;
  "") ;;
  *) die "usage: $0 [--dir]" ;;
esac

if [ ! -f "$dir/.complete" ]; then
  command -v npm >/dev/null || die "npm is not installed (scripts/install-deps.sh installs it)"
  echo "k8s-schema: installing the pinned schema packages into $dir" >&2
  mkdir -p "$(dirname "$dir")"
  # Into a fresh directory, renamed at the end: a concurrent or interrupted install never
  # leaves a half-filled cache behind.
  tmp="$(mktemp -d "$dir.XXXXXX")"
  cp "$here/package.json" "$here/package-lock.json" "$tmp/"
  # --engine-strict=false: the packages declare Node.js 22 and run on the 18 and 20 here.
  (cd "$tmp" && npm ci --no-audit --no-fund --ignore-scripts --engine-strict=false --loglevel=error >&2) ||
    { rm -rf "$tmp"; die "npm ci failed (see above)"; }
  touch "$tmp/.complete"
  if ! mv -T "$tmp" "$dir" 2>/dev/null; then rm -rf "$tmp"; fi  # another install won the race
  [ -f "$dir/.complete" ] || die "schema cache $dir is incomplete"
fi
echo "$dir"
