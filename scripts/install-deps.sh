#!/usr/bin/env bash
# Installs everything limitsd needs to build and test on Debian 12, from Debian's packages only.
# Idempotent: apt skips what is already installed. Run as root or with sudo available.
#   scripts/install-deps.sh          build and test (what CI and the README's commands use)
#   scripts/install-deps.sh build    only what compiling needs (deploy/Dockerfile's build stage)
set -euo pipefail

mode="${1:-all}"
case "$mode" in
  all | build) ;;
  *) echo "usage: $0 [build]" >&2; exit 2 ;;
esac

packages=(
  build-essential cmake pkg-config
  librocksdb-dev librdkafka-dev prometheus-cpp-dev libtoml11-dev libabsl-dev
  libyaml-cpp-dev
  libgtest-dev libgmock-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libsnappy-dev zlib1g-dev libssl-dev
)
test_packages=(
  python3-grpcio python3-protobuf
  # the TLS tests make their certificates with the openssl command
  openssl
  # the fuzz targets (tests/fuzz, scripts/fuzz.sh): clang with libFuzzer and its sanitizers
  clang libclang-rt-14-dev
  # the allocator tests preload jemalloc, as an operator may (ARCHITECTURE.md, "The allocator")
  libjemalloc2
  # the ring tests: a real etcd (server, etcdctl) and dskit's snappy codec for the Python frontend emulation
  etcd-server etcd-client python3-snappy
  # tests/deploy: manifests, lint, alert rules (promtool is in Debian's prometheus package)
  python3-yaml yamllint prometheus
  # deploy/test-image.sh: bootstrap a Debian base image, build and run deploy/Dockerfile
  podman runc mmdebstrap uidmap
  # the real Kafka broker of the realkafka tests (scripts/kafka-dev.sh)
  openjdk-17-jre-headless maven
  # The memberlist interop test builds a Go peer offline from Debian's Go packages.
  golang-go golang-github-hashicorp-memberlist-dev golang-github-golang-snappy-dev golang-google-protobuf-dev
)
if [ "$mode" = all ]; then
  packages+=("${test_packages[@]}")
  # tests/deploy's schema check runs on Node.js with packages from the npm registry. A
  # machine that has node and npm from elsewhere (NodeSource's nodejs bundles npm) keeps them;
  # otherwise Debian's.
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then packages+=(nodejs npm); fi
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  # The prometheus package is here for promtool: keep apt from starting its server (it would
  # listen on :9090) through the standard policy-rc.d hook, if the machine has none of its own.
  policy=/usr/sbin/policy-rc.d
  remove_policy=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
    $sudo chmod 755 "$policy"
    remove_policy=1
  fi
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  status=0
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" || status=$?
  if [ -n "$remove_policy" ]; then $sudo rm -f "$policy"; fi
  if [ "$status" -ne 0 ]; then exit "$status"; fi
fi

if [ "$mode" = all ]; then
  # Apache Kafka's broker jars (Maven Central), cached outside the build tree; once per version.
  "$(dirname "$0")/kafka-dev.sh" fetch >/dev/null
  # Kafka 3.9.2 for the SCRAM test (Debian's librdkafka 2.0.2 fails SCRAM against Kafka 4).
  LIMITSD_KAFKA_VERSION=3.9.2 "$(dirname "$0")/kafka-dev.sh" fetch >/dev/null
  # The Kubernetes and Prometheus Operator schemas (npm, pinned by tests/deploy/k8s-schema's
  # package-lock.json), cached outside the build tree; once per lockfile.
  "$(dirname "$0")/../tests/deploy/k8s-schema/install.sh" >/dev/null
fi
