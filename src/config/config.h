// The node's configuration: one struct tree, every field with its documented default.
// Loaded from TOML (load_config.h); the keys are a user-facing contract, documented with
// a comment each in deploy/limitsd.example.toml. Plain values: copy freely.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "limits/decision/tenant_limits.h"
#include "tls/server_tls.h"

namespace limits::config {

using Millis = std::chrono::milliseconds;
using namespace std::chrono_literals;

inline constexpr char kDefaultZone[] = "zone-a";
inline constexpr char kDefaultTopic[] = "ingest-limits-metadata";
inline constexpr int32_t kDefaultNumPartitions = 64;
inline constexpr char kDefaultStorePath[] = "data";
inline constexpr uint64_t kDefaultBlockCacheBytes = 256ull << 20;
inline constexpr uint64_t kDefaultWriteBufferBytes = 8ull << 20;
inline constexpr Millis kDefaultActiveWindow = 2h;
inline constexpr Millis kDefaultRateWindow = 5min;
inline constexpr Millis kDefaultBucketSize = 1min;
inline constexpr Millis kDefaultEvictionInterval = 10min;
inline constexpr Millis kDefaultRevokedRetention = 10min;
inline constexpr Millis kDefaultProduceInterval = 1min;
inline constexpr Millis kDefaultWaitAssign = 30s;
inline constexpr Millis kDefaultLookupGiveUp = 2min;
inline constexpr int64_t kDefaultMaxPoliciesPerTenant = 1000;
inline constexpr int64_t kDefaultMaxTenants = 100'000;
inline constexpr int64_t kDefaultMaxRateKeysPerTenant = 10'000;
inline constexpr int64_t kDefaultMaxRateKeys = 1'000'000;
inline constexpr int64_t kDefaultMaxTenantSeries = 1000;
inline constexpr Millis kDefaultStoreFailureGrace = 1min;
inline constexpr Millis kDefaultStallTimeout = 1min;
inline constexpr int32_t kDefaultMaxConsumerRestarts = 3;
inline constexpr Millis kDefaultConsumerRestartWindow = 10min;
inline constexpr char kDefaultGrpcListen[] = "0.0.0.0:9095";
inline constexpr char kDefaultHttpListen[] = "0.0.0.0:3100";
inline constexpr char kDefaultLogLevel[] = "info";
inline constexpr char kDefaultLogFormat[] = "json";

inline constexpr Millis kDefaultEtcdDialTimeout = 10s;
inline constexpr char kDefaultRingPrefix[] = "collectors/";
inline constexpr char kDefaultRingKey[] = "ingest-limits";
inline constexpr int32_t kDefaultNumTokens = 128;
inline constexpr char kDefaultMemberlistBindAddr[] = "0.0.0.0";
inline constexpr int32_t kDefaultMemberlistPort = 7946;
inline constexpr Millis kDefaultHeartbeatPeriod = 5s;
inline constexpr Millis kDefaultHeartbeatTimeout = 1min;

// Upper bounds that keep a typo from turning into an outage (e.g. 10^9 partitions).
inline constexpr int32_t kMaxNumPartitions = 100000;
inline constexpr int64_t kMaxRateBuckets = 1024;
inline constexpr int64_t kMaxNumTokens = 8192;
inline constexpr int64_t kMaxConsumerRestarts = 1000;
inline constexpr int64_t kMaxReplicationFactor = 32767;  // Kafka's INT16 field
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
  // Partition count of the topic; fixed for the life of the data. A topic with another count
  // is refused at start (and makes /ready fail when found later).
  int32_t num_partitions = kDefaultNumPartitions;
  // Create the topic when it does not exist (Admin CreateTopics: num_partitions partitions,
  // cleanup.policy=delete, the two settings below, the broker's defaults for everything else).
  // Off: an operator creates it; until then the node logs an error and /ready answers 503.
  // (Loki creates nothing itself: its clients let the broker auto-create the topic.)
  bool create_topic = false;
  // Replication factor of the topic create_topic creates; -1: the broker's
  // default.replication.factor.
  int32_t create_topic_replication_factor = -1;
  // retention.ms of the topic create_topic creates; 0: the broker's log.retention.*. At least
  // windows.active otherwise: a replay reads the whole active window.
  Millis create_topic_retention{0};
  // Consumer group. Empty in the file means "limitsd-<zone>"; never empty after loading.
  std::string consumer_group;
  // group.instance.id = node.instance_id (KIP-345): a restarted pod rejoins within the
  // session timeout and gets its partitions back without a rebalance of the others.
  bool static_membership = true;
  // A partition being consumed (replaying or ready) whose position has not moved for this
  // long while the broker answers and holds records beyond it is a stuck consumer: the
  // consumer client is re-created. At least 1s.
  Millis stall_timeout = kDefaultStallTimeout;
  // The consumer recovers by restarting — re-creating its client after a fatal librdkafka
  // error (a fenced static member) or a stall, re-subscribing after being handed partitions
  // of another topic — at most this many times within consumer_restart_window; one more (or
  // a re-creation that fails) and it gives up: /live answers 503 so Kubernetes restarts the
  // pod. 0: give up at the first fault.
  int32_t max_consumer_restarts = kDefaultMaxConsumerRestarts;
  Millis consumer_restart_window = kDefaultConsumerRestartWindow;
  // librdkafka properties, passed verbatim to each client librdkafka applies them to
  // (a consumer-only property goes to the consumers only, a producer-only one to the producer).
  std::map<std::string, std::string> properties;
  // librdkafka properties for the consumers only (the group consumer, the offset look-ups'
  // connection settings), over `properties`.
  std::map<std::string, std::string> consumer_properties;
  // librdkafka properties for the producer only, over `properties`.
  std::map<std::string, std::string> producer_properties;
};

struct StoreConfig {
  // Directory of the RocksDB database.
  std::string path = kDefaultStorePath;
  // One block cache shared by every column family.
  uint64_t block_cache_bytes = kDefaultBlockCacheBytes;
  // One memtable budget shared by every column family.
  uint64_t write_buffer_bytes = kDefaultWriteBufferBytes;
  // After the store fails (a write error is sticky), /live reports failure once this long
  // has passed, so Kubernetes restarts the pod (the node leaves the consumer group at once).
  Millis failure_grace = kDefaultStoreFailureGrace;
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
  // An accepted stream is produced to the topic at most once per this interval (after it and up
  // to a quarter more: Windows::ProduceDelay).
  Millis produce_interval = kDefaultProduceInterval;
  // With nothing assigned after this long, the node reports ready anyway.
  Millis wait_assign = kDefaultWaitAssign;
  // A partition whose log bounds cannot be looked up is not served; after this long it is
  // served anyway (replaying from its checkpoint in the background) — liveness over
  // exactness, logged and counted (limitsd_lookup_give_ups_total).
  Millis lookup_give_up = kDefaultLookupGiveUp;
};

struct ServerConfig {
  std::string grpc_listen = kDefaultGrpcListen;  // host:port of the IngestLimits gRPC service
  std::string http_listen = kDefaultHttpListen;  // host:port of /metrics, /ready, /live, usage
  // host:port of a second HTTP listener for the operator documents (/ingest-limits/usage/,
  // /partitions, /memberlist): set, they move there and http_listen serves only /metrics and
  // the probes, so what a scraper reaches reveals no tenant's usage or peer addresses.
  // Empty: everything on http_listen.
  std::string operator_http_listen;
  // Once ready, /ready stays 200 through later rebalances (Loki's semantics: a rebalance never
  // takes a whole zone out of its Service at once). /partitions and the
  // limitsd_partitions_not_ready gauge keep the truth. A failed store is never latched.
  bool latch_readiness = true;
  // TLS of the gRPC listener, as dskit's server.grpc_tls_config: off while cert_file and
  // key_file are empty; client_auth_type RequireAndVerifyClientCert with client_ca_file is mTLS.
  tls::ServerTls grpc_tls;
  // TLS of the HTTP listener (/metrics, probes, usage), as dskit's server.http_tls_config.
  // Kubernetes' HTTPS probes present no certificate: with a client_auth_type that requires
  // one, use exec or gRPC probes instead.
  tls::ServerTls http_tls;
  // TLS of operator_http_listen, with the same keys; off while empty, whatever http_tls is.
  tls::ServerTls operator_http_tls;
  // dskit's server.tls_min_version and server.tls_cipher_suites (Go's names), for every TLS
  // listener. gRPC 1.51 negotiates TLS 1.2 and 1.3 only: VersionTLS10..12 all mean 1.2 there,
  // and VersionTLS13 cannot be enforced by it (refused at load).
  std::string tls_min_version;
  std::string tls_cipher_suites;
  // How often the listeners re-read their certificate, key and CA files (rotation without
  // a restart; a pair that does not match is not taken, the old one stays).
  Millis tls_reload_interval = std::chrono::seconds(5);
};

struct LogConfig {
  std::string level = kDefaultLogLevel;    // debug, info, warn, error
  std::string format = kDefaultLogFormat;  // json or logfmt
};

struct LimitsConfig {
  // Loki's main configuration file: its limits_config gives the defaults (a key it sets may
  // not be set in [limits.defaults] too), and its runtime_config.file the overrides files
  // when overrides_file is empty. Read at start, as Loki reads it.
  std::string loki_config_file;
  // Optional per-tenant overrides, reloaded without a restart: one TOML file of
  // [tenants."<tenant>"] tables, or a comma-separated list of Loki runtime-config YAML files
  // (overrides: {<tenant>: ...}) merged as Loki merges runtime_config.file.
  std::string overrides_file;
  // Its format: "" by its extension (.yaml/.yml: Loki's YAML, else TOML), "toml" or "loki".
  std::string overrides_format;
  // Limits of every tenant without an override, and the keys [limits.defaults] set itself.
  TenantLimits defaults;
  TenantOverrides defaults_set;
  // Per-tenant overrides from this file; the overrides file's entries take precedence.
  std::map<std::string, TenantOverrides> tenants;
  // Distinct ingestion-policy names one tenant may have on a node; streams of a name beyond it
  // count under no policy (the default bucket, as Loki counts every policy without a limit of
  // its own). Names the overrides give a limit of their own are always kept.
  int64_t max_policies_per_tenant = kDefaultMaxPoliciesPerTenant;
  // Tenants the node holds at once. A new tenant beyond it is not stored: its streams are
  // rejected (as max streams; unlimited tenants' are accepted) and its rate keys answered
  // without being kept. Counted and logged; bounds what a flood of tenant names can cost.
  int64_t max_tenants = kDefaultMaxTenants;
  // UpdateRates hashes that are not streams (Loki's callers send segmentation keys) the node
  // keeps rates for, per tenant and in all. A new key beyond either is answered with its
  // bytes alone and not kept; counted and logged.
  int64_t max_rate_keys_per_tenant = kDefaultMaxRateKeysPerTenant;
  int64_t max_rate_keys = kDefaultMaxRateKeys;
  // Reject a tenant's streams with reason 3 once its ingestion rate and burst are used up on
  // this node. Off as in Loki, whose distributors enforce the rate earlier in the push.
  bool enforce_rate = false;
};

struct MetricsConfig {
  // Tenants with series of their own in the per-tenant metrics (those with the most
  // streams); the rest are summed under tenant="other".
  int64_t max_tenant_series = kDefaultMaxTenantSeries;
};

// Membership in Loki's ingest-limits ring (dskit), so Loki's limits frontend finds this node.
// Defaults are dskit's lifecycler defaults.
struct RingConfig {
  // KV store of the ring: "" (no ring), "etcd", "memberlist".
  std::string store;
  // etcd client URLs, host:port (or http://host:port).
  std::vector<std::string> etcd_endpoints;
  // Deadline of an etcd call while the connection is not established.
  Millis etcd_dial_timeout = kDefaultEtcdDialTimeout;
  // TLS to etcd, as dskit's kvstore.etcd: tls_enabled, tls_cert_path / tls_key_path (a client
  // certificate, for etcd's --client-cert-auth), tls_ca_path (else the system's roots),
  // tls_server_name (the name the certificate must carry; else the endpoint's host),
  // tls_insecure_skip_verify. Files are re-read every server.tls_reload_interval.
  bool etcd_tls_enabled = false;
  std::string etcd_tls_cert_path;
  std::string etcd_tls_key_path;
  std::string etcd_tls_ca_path;
  std::string etcd_tls_server_name;
  bool etcd_tls_insecure_skip_verify = false;
  // etcd's user and password (dskit's username / password): authenticated once, the token
  // renewed when etcd says it is no longer valid.
  std::string etcd_username;
  std::string etcd_password;
  // TLS on every gossip connection, as dskit's memberlist (-memberlist.tls-enabled,
  // tls-cert-path, tls-key-path, tls-ca-path, tls-server-name, tls-insecure-skip-verify):
  // one certificate serves both as listener and as dialler; the CA verifies the peers.
  bool memberlist_tls_enabled = false;
  std::string memberlist_tls_cert_path;
  std::string memberlist_tls_key_path;
  std::string memberlist_tls_ca_path;
  std::string memberlist_tls_server_name;
  bool memberlist_tls_insecure_skip_verify = false;
  // The ring's KV key is prefix + key (Loki: "collectors/" + "ingest-limits").
  std::string prefix = kDefaultRingPrefix;
  std::string key = kDefaultRingKey;
  // Advertised host; empty means the first non-loopback IPv4 address of this machine.
  std::string instance_addr;
  // Advertised port; 0 means the port the gRPC server listens on.
  int32_t instance_port = 0;
  // Tokens of this instance in the ring.
  int32_t num_tokens = kDefaultNumTokens;
  // How often the instance's heartbeat timestamp is refreshed.
  Millis heartbeat_period = kDefaultHeartbeatPeriod;
  // Readers skip an instance whose heartbeat is older than this (Loki's frontend uses its
  // own setting; this one decides when the node warns that it is being skipped).
  Millis heartbeat_timeout = kDefaultHeartbeatTimeout;
  // Remove the instance from the ring on a graceful shutdown (else it stays LEAVING).
  bool unregister_on_shutdown = true;

  // --- store = "memberlist": a member of Loki's gossip cluster (dskit's memberlist KV).
  // Defaults are dskit's -memberlist.* defaults unless said otherwise.
  // Members to join, host[:port] (port 7946 when omitted); names are resolved on each try.
  std::vector<std::string> memberlist_join;
  std::string memberlist_bind_addr = kDefaultMemberlistBindAddr;
  int32_t memberlist_bind_port = kDefaultMemberlistPort;
  // What peers dial: empty = bind address, or the first non-loopback IPv4 when bound to any.
  std::string memberlist_advertise_addr;
  int32_t memberlist_advertise_port = 0;  // 0: the bind port
  // Empty: node.instance_id.
  std::string memberlist_node_name;
  // Append a random suffix to the name (dskit's -memberlist.randomize-node-name, on in dskit):
  // a pod restarted with a new IP is then not taken for its dead predecessor.
  bool memberlist_randomize_node_name = false;
  std::string memberlist_cluster_label;
  bool memberlist_cluster_label_verification_disabled = false;
  Millis memberlist_gossip_interval = 200ms;
  int32_t memberlist_gossip_nodes = 3;
  Millis memberlist_pullpush_interval = 30s;
  Millis memberlist_gossip_to_dead_nodes_time = 30s;
  Millis memberlist_dead_node_reclaim_time = 0ms;
  int32_t memberlist_retransmit_factor = 4;
  Millis memberlist_stream_timeout = 2s;
  Millis memberlist_probe_interval = 5s;
  Millis memberlist_probe_timeout = 2s;
  Millis memberlist_left_ingesters_timeout = 5min;
  Millis memberlist_leave_timeout = 20s;
  Millis memberlist_min_join_backoff = 1s;
  Millis memberlist_max_join_backoff = 1min;
  Millis memberlist_rejoin_interval = 0ms;
};

// Exact stream limits across the nodes of a zone (ARCHITECTURE.md, "Exact limits across a
// zone"): the nodes the ring lists in this node's zone share each tenant's limit through the
// limitsd.zone.v1.Zone service on their gRPC port, instead of each admitting a static share.
// Needs a ring. Peers are called with the client TLS below (dskit grpcclient's names); their
// side is server.grpc_tls_config.
struct ZoneConfig {
  bool enabled = false;
  // How often this node exchanges with every other node of its zone.
  Millis exchange_interval = std::chrono::seconds(1);
  // How long a node admits a cold bucket after its last exchange with the bucket's home.
  Millis lease = std::chrono::seconds(60);
  // Deadline of one call to a peer, and of all a request's calls together (sooner when the
  // caller's deadline is: a quarter of its time is kept for the answer).
  Millis call_timeout = std::chrono::seconds(2);
  bool tls_enabled = false;
  std::string tls_cert_path;
  std::string tls_key_path;
  std::string tls_ca_path;
  std::string tls_server_name;
  bool tls_insecure_skip_verify = false;
};

struct Config {
  NodeConfig node;
  KafkaConfig kafka;
  StoreConfig store;
  WindowsConfig windows;
  ServerConfig server;
  LogConfig log;
  LimitsConfig limits;
  MetricsConfig metrics;
  RingConfig ring;
  ZoneConfig zone;
};

}  // namespace limits::config
