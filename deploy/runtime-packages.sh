#!/usr/bin/env bash
# Prints the Debian packages that hold the shared libraries the given binaries load, one per
# line. deploy/Dockerfile's build stage runs it on limitsd and limitsctl, and the runtime stage
# installs exactly that list, so a new library dependency cannot be forgotten in the image.
#   deploy/runtime-packages.sh build/bin/limitsd build/bin/limitsctl
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 BINARY..." >&2; exit 2; }

libs=$(ldd "$@" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u)
missing=$(ldd "$@" | awk '/not found/ {print $1}' | sort -u)
[ -z "$missing" ] || { echo "runtime-packages: not found: $missing" >&2; exit 1; }

for lib in $libs; do
  # Debian 12 merges /lib into /usr/lib; dpkg knows a file by the path its package ships.
  real=$(readlink -f "$lib")
  owner=""
  for path in "$lib" "$real" "${real/#\/usr\/lib\//\/lib\/}" "${lib/#\/lib\//\/usr\/lib\/}"; do
    owner=$(dpkg-query -S "$path" 2>/dev/null | head -n 1 | cut -d: -f1) && [ -n "$owner" ] && break
  done
  [ -n "$owner" ] || { echo "runtime-packages: no package holds $lib" >&2; exit 1; }
  echo "$owner"
done | sort -u
