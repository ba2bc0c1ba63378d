// The node's configuration: one struct tree, every field with its documented default.
// Loaded from TOML (load_config.h); the keys are a user-facing contract, documented with
// a comment each in deploy/limitsd.example.toml. Plain values: copy freely.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "limits/tenant_limits.h"

namespace limits::config {

using Millis = std::chrono::milliseconds;
using namespace std::chrono_literals;

inline constexpr char kDefaultZone[] = "zone-a";
inline constexpr char kDefaultTopic[] = "ingest-limits-metadata";
inline constexpr int32_t kDefaultNumPartitions = 64;
inline constexpr char kDefaultStorePath[] = "data";
inline constexpr uint64_t kDefaultBlockCacheBytes = 256ull << 20;
inline constexpr uint64_t kDefaultWriteBufferBytes = 64ull << 20;
inline constexpr Millis kDefaultActiveWindow = 2h;
inline constexpr Millis kDefaultRateWindow = 5min;
inline constexpr Millis kDefaultBucketSize = 1min;
inline constexpr Millis kDefaultEvictionInterval = 10min;
inline constexpr Millis kDefaultRevokedRetention = 10min;
inline constexpr Millis kDefaultProduceInterval = 1min;
inline constexpr Millis kDefaultWaitAssign = 30s;
inline constexpr char kDefaultGrpcListen[] = "0.0.0.0:9095";
inline constexpr char kDefaultHttpListen[] = "0.0.0.0:3100";
inline constexpr char kDefaultLogLevel[] = "info";
inline constexpr char kDefaultLogFormat[] = "json";

// Upper bounds that keep a typo from turning into an outage (e.g. 10^9 partitions).
inline constexpr int32_t kMaxNumPartitions = 100000;
inline constexpr int64_t kMaxRateBuckets = 1024;
// Every duration key is at most 2^32 - 1 seconds (~136 years): the usage store keeps its
// windows and its timestamps in unsigned 32-bit seconds, and the other durations go into
// clocks and timers (int64 ms, steady_clock ns) where this bound never overflows.
inline constexpr Millis kMaxDuration = std::chrono::seconds(UINT32_MAX);
// Every size key is at most 2^63 - 1 bytes: RocksDB takes sizes as size_t and the WAL bound
// is twice the write buffer.
inline constexpr uint64_t kMaxSizeBytes = static_cast<uint64_t>(INT64_MAX);
// Tenant and ingestion-policy names under [limits] and in the overrides file: at most this
// many bytes, as in requests and records (storage::kMaxTenantLength, limits::kMaxPolicyLength).
inline constexpr size_t kMaxLimitsNameBytes = 255;

struct NodeConfig {
  // Zone this node serves; one consumer group per zone, and produced records carry it.
  std::string zone = kDefaultZone;
  // This instance's identity in the records it produces. Empty in the file means the
  // hostname (a StatefulSet pod name); after loading it is never empty.
  std::string instance_id;
};

struct KafkaConfig {
  // Bootstrap servers. Empty: the node starts librdkafka's mock cluster in-process.
  std::string brokers;
  // Topic of StreamMetadataRecord values, partitioned by stream hash.
  std::string topic = kDefaultTopic;
  // Partition count of the topic; fixed for the life of the data.
  int32_t num_partitions = kDefaultNumPartitions;
  // Consumer group. Empty in the file means "limitsd-<zone>"; never empty after loading.
  std::string consumer_group;
  // librdkafka properties, passed verbatim to both consumer and producer.
  std::map<std::string, std::string> properties;
};

struct StoreConfig {
  // Directory of the RocksDB database.
  std::string path = kDefaultStorePath;
  // One block cache shared by every column family.
  uint64_t block_cache_bytes = kDefaultBlockCacheBytes;
  // One memtable budget shared by every column family.
  uint64_t write_buffer_bytes = kDefaultWriteBufferBytes;
};

struct WindowsConfig {
  // A stream not seen within this window is inactive: it does not count and is evicted.
  Millis active = kDefaultActiveWindow;
  // Rates are averaged over this window...
  Millis rate = kDefaultRateWindow;
  // ...kept in buckets of this size (rate must be a whole multiple of it).
  Millis bucket = kDefaultBucketSize;
  // How often streams outside the active window are evicted from memory and disk.
  Millis eviction_interval = kDefaultEvictionInterval;
  // A revoked partition's data is dropped this long after revocation unless re-assigned.
  Millis revoked_retention = kDefaultRevokedRetention;
  // An accepted stream is produced to the topic at most once per this interval.
  Millis produce_interval = kDefaultProduceInterval;
  // With nothing assigned after this long, the node reports ready anyway.
  Millis wait_assign = kDefaultWaitAssign;
};

struct ServerConfig {
  std::string grpc_listen = kDefaultGrpcListen;  // host:port of the IngestLimits gRPC service
  std::string http_listen = kDefaultHttpListen;  // host:port of /metrics, /ready, /live, usage
};

struct LogConfig {
  std::string level = kDefaultLogLevel;    // debug, info, warn, error
  std::string format = kDefaultLogFormat;  // json or logfmt
};

struct LimitsConfig {
  // Optional file of per-tenant overrides, reloaded without a restart: TOML
  // [tenants."<tenant>"] tables, or Loki's runtime-config YAML (overrides: {<tenant>: ...}).
  std::string overrides_file;
  // Its format: "" by its extension (.yaml/.yml: Loki's YAML, else TOML), "toml" or "loki".
  std::string overrides_format;
  // Limits of every tenant without an override.
  TenantLimits defaults;
  // Per-tenant overrides from this file; the overrides file's entries take precedence.
  std::map<std::string, TenantOverrides> tenants;
};

struct Config {
  NodeConfig node;
  KafkaConfig kafka;
  StoreConfig store;
  WindowsConfig windows;
  ServerConfig server;
  LogConfig log;
  LimitsConfig limits;
};

}  // namespace limits::config
