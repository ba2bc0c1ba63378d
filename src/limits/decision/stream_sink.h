// StreamSink: where accepted streams due for producing go (the Kafka producer), as an
// interface so limits/ sees no Kafka type. Implementations must not block the caller.
#pragma once

#include <cstdint>
#include <string>

namespace limits {

class StreamSink {
 public:
  virtual ~StreamSink() = default;
  virtual void Produce(const std::string& tenant, uint64_t stream_hash, uint64_t total_size,
                       const std::string& policy) = 0;
};

}  // namespace limits
