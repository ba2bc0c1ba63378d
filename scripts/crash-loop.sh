#!/usr/bin/env bash
# Issue 24's crash loop: limitsd SIGKILLed at random moments (>= 32 times) on a real Kafka broker
# (scripts/kafka-dev.sh) under an ExceedsLimits load and another zone's produce load, both with
# reference models; prints a line per kill, a table per tenant and one summary line
# ("kills=32 admitted=... lost=0 over_limit=0 double_counted=0 produced_streams=... produced_lost=0 ...").
# Exit 0 when nothing was lost, 1 on any loss, 3 when the broker or limitsd could not be run.
#
#   scripts/crash-loop.sh                                   this build's limitsd, the defaults
#   scripts/crash-loop.sh --limitsd /work/main/build/bin/limitsd --seed 2
#   scripts/crash-loop.sh --kills 60 --limit 1000 --tenants 4
# Every option goes to crash_loop (`scripts/crash-loop.sh --help` lists them). BUILD_DIR (default
# build) picks the build tree; NO_BUILD=1 skips building crash_loop, limitsd and limitsctl.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
if [ "${NO_BUILD:-0}" != 1 ]; then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLIMITSD_BUILD_BENCH=ON >/dev/null
  fi
  cmake --build "$build" -j2 --target crash_loop limitsd limitsctl >/dev/null
fi
echo "machine: $(nproc) cores; $(free -g | awk '/^Mem:/ {print $2 " GiB RAM"}'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command: scripts/crash-loop.sh $*"
exec "$build/tests/bench/crash_loop" "$@"
