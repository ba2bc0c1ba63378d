#!/usr/bin/env bash
# The one entry point of issue 9's benchmark: builds what it needs (two jobs), then runs
# limits_bench — a mock broker in its own process (or a real Kafka broker, scripts/kafka-dev.sh),
# the topic filled by limitsctl loadgen, a bare librdkafka consumer, limitsd cold / after
# SIGKILL / after SIGTERM, gRPC load from a separate process — and prints the figures side by
# side with issue 9's targets. Figures only: nothing here asserts a time.
#
#   tests/bench/run.sh                      the full scenario on the mock broker
#   tests/bench/run.sh --real-kafka         the same on a real Kafka broker
#   tests/bench/run.sh --both               both brokers, side by side
#   tests/bench/run.sh --memory             adds the 10 M-stream memory run (heavy; --memory-only alone)
#   tests/bench/run.sh --records 400000 --streams 100000   a quick, smaller run
# Other options go to limits_bench (--partitions, --tenants, --spread, --grpc-seconds, --grpc-rounds,
# --grpc-callers, --new-fraction, --no-grpc, --memory-streams, --dir, --node-set key=value for
# limitsd). BUILD_DIR (default build) picks the build tree; NO_BUILD=1 skips the build step.
set -euo pipefail

command_line="$*"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
args=()
broker=mock
while [ $# -gt 0 ]; do
  case "$1" in
    --real-kafka) broker=kafka; shift ;;
    --both) broker=both; shift ;;
    --help|-h) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done

if [ "${NO_BUILD:-0}" != 1 ]; then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  cmake --build "$build" -j2 --target limitsd limitsctl mock_broker grpc_load limits_bench >/dev/null
fi

echo "machine: $(nproc) cores; $(lscpu | sed -n 's/^Model name: *//p'); $(free -g | awk '/^Mem:/ {print $2 " GiB RAM"}');" \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command: tests/bench/run.sh $command_line"
exec "$build/tests/bench/limits_bench" \
  --limitsd "$build/bin/limitsd" \
  --limitsctl "$build/bin/limitsctl" \
  --mock-broker "$build/tests/mock_broker" \
  --grpc-load "$build/tests/bench/grpc_load" \
  --broker "$broker" "${args[@]}"
