#!/usr/bin/env bash
# Installs everything limitsd needs to build and test on Debian 12, from Debian's packages only.
# Idempotent: apt skips what is already installed. Run as root or with sudo available.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  librocksdb-dev librdkafka-dev prometheus-cpp-dev libtoml11-dev libabsl-dev libcivetweb-dev
  libyaml-cpp-dev
  libgtest-dev libgmock-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libsnappy-dev
  python3-grpcio python3-protobuf
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
