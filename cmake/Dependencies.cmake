# Every dependency is a Debian 12 package (scripts/install-deps.sh installs them all).
# find_package and pkg-config only: no FetchContent, no vendored copies.
find_package(Threads REQUIRED)
find_package(RocksDB 7.8 REQUIRED CONFIG)   # librocksdb-dev
find_package(toml11 3.7 REQUIRED CONFIG)    # libtoml11-dev
find_package(yaml-cpp 0.7 REQUIRED CONFIG)  # libyaml-cpp-dev: Loki's runtime-config overrides
find_package(absl REQUIRED CONFIG)          # libabsl-dev: flat_hash_map, btree_map
find_package(Protobuf 3.21 REQUIRED)        # libprotobuf-dev, protobuf-compiler (module mode)
find_package(PkgConfig REQUIRED)
pkg_check_modules(RDKAFKA REQUIRED IMPORTED_TARGET rdkafka++>=2.0 rdkafka>=2.0)  # librdkafka-dev
find_package(gRPC REQUIRED CONFIG)          # libgrpc++-dev, protobuf-compiler-grpc
find_package(prometheus-cpp REQUIRED CONFIG)  # prometheus-cpp-dev
find_package(Snappy REQUIRED CONFIG)        # libsnappy-dev: dskit's ring value codec
find_package(ZLIB REQUIRED)                 # zlib1g-dev: the admission log's record checksums
