# Every dependency is a Debian 12 package (scripts/install-deps.sh installs them all).
# find_package and pkg-config only: no FetchContent, no vendored copies.
find_package(Threads REQUIRED)
find_package(RocksDB 7.8 REQUIRED CONFIG)   # librocksdb-dev
find_package(toml11 3.7 REQUIRED CONFIG)    # libtoml11-dev
find_package(absl REQUIRED CONFIG)          # libabsl-dev: flat_hash_map, btree_map
