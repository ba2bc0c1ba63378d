// LoadgenOptions: what `limitsctl loadgen` was asked to do, parsed and checked from its flags
// (limitsctl's parser has already split "--flag value" and "--flag=value") and, with
// `limitsctl --config`, the node's configuration for the topic, partition count, brokers,
// librdkafka properties and gRPC address. Every error names the flag.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "config/config.h"
#include "loadgen/universe.h"

namespace limits::loadgen {

struct ProduceOptions {
  std::string brokers;
  std::string topic = config::kDefaultTopic;
  int32_t partitions = 0;               // 0: the topic's partition count
  double rate = 10'000;                 // records/s; 0: as fast as the producer takes them
  uint64_t records = 0;                 // stop after this many; 0: no limit
  std::string zone = "loadgen";         // StreamMetadataRecord.zone
  std::chrono::milliseconds spread{0};  // timestamps spread over the last `spread` (see SpreadTimestampMs)
  // librdkafka: batch.size, linger.ms, compression.type; unset: ours (1 MB, 100 ms, lz4) or --config's.
  std::optional<uint64_t> batch_size;
  std::optional<std::chrono::milliseconds> linger;
  std::optional<std::string> compression;
  // From --config: [kafka.properties] and [kafka.producer_properties].
  std::map<std::string, std::string> shared_properties, producer_properties;
};

struct ExceedsOptions {
  std::string target;  // host:port of the node's gRPC service
  double rate = 100;   // ExceedsLimits requests/s; 0: as fast as `concurrency` callers go
  uint32_t streams_per_request = 100;
  double new_fraction = 0.1;
  uint32_t concurrency = 4;
  double update_rate = 0;  // UpdateRates requests/s; 0: none
  std::chrono::milliseconds timeout{10'000};
};

struct LoadgenOptions {
  std::optional<ProduceOptions> produce;
  std::optional<ExceedsOptions> exceeds;
  std::optional<std::chrono::milliseconds> duration;  // none: until Ctrl-C (or --records)
  UniverseOptions universe;
};

// The flags `limitsctl loadgen` takes (each with a value).
const std::vector<std::string_view>& LoadgenFlags();

// InvalidArgument naming the flag on any bad value or combination. `config` may be null.
Result<LoadgenOptions> ParseLoadgenOptions(const std::map<std::string, std::string>& flags,
                                           const config::Config* config);

// "127.0.0.1:9095" for a listen address "0.0.0.0:9095", ":9095" or "[::]:9095"; others unchanged.
std::string DialAddressOf(const std::string& listen);

}  // namespace limits::loadgen
