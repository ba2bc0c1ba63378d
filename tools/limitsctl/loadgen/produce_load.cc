#include "loadgen/produce_load.h"

#include <algorithm>
#include <thread>

#include "config/units.h"
#include "kafka/kafka_conf.h"
#include "kafka/record_codec.h"

namespace limits::loadgen {
namespace {

constexpr uint64_t kDefaultBatchBytes = 1'000'000;  // Loki's producers: 1 MB batches
constexpr int64_t kDefaultLingerMs = 100;
constexpr uint64_t kChunk = 10'000;  // records between looks at the clock and the stop flag

int64_t WallMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

class ProduceLoad::DeliveryReports final : public RdKafka::DeliveryReportCb {
 public:
  explicit DeliveryReports(LoadCounters& counters) : counters_(counters) {}
  void dr_cb(RdKafka::Message& message) override {
    try {
      if (message.err() == RdKafka::ERR_NO_ERROR) {
        counters_.records_delivered.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      counters_.records_failed.fetch_add(1, std::memory_order_relaxed);
      counters_.RecordError("delivery: " + RdKafka::err2str(message.err()),
                            "partition " + std::to_string(message.partition()) + ": " + message.errstr());
    } catch (...) {
    }
  }

 private:
  LoadCounters& counters_;
};

ProduceLoad::ProduceLoad(const ProduceOptions& options, const Universe& universe, LoadCounters& counters)
    : options_(options),
      universe_(universe),
      counters_(counters),
      reports_(std::make_unique<DeliveryReports>(counters)) {}

ProduceLoad::~ProduceLoad() = default;

Result<std::unique_ptr<ProduceLoad>> ProduceLoad::Create(const ProduceOptions& options, const Universe& universe,
                                                         LoadCounters& counters) {
  auto load = std::unique_ptr<ProduceLoad>(new ProduceLoad(options, universe, counters));
  // Ours, then --config's properties over them, then what the flags ask for explicitly.
  const uint64_t batch = options.batch_size.value_or(kDefaultBatchBytes);
  kafka::Properties defaults = {
      {"client.id", "limitsctl-loadgen"},
      {"linger.ms", std::to_string(kDefaultLingerMs)},
      {"batch.size", std::to_string(kDefaultBatchBytes)},
      {"compression.type", "lz4"},
      // Small records: the count limits (10 000 by default) would cut batches far below 1 MB.
      {"batch.num.messages", "1000000"},
      {"queue.buffering.max.messages", "2000000"},
  };
  ASSIGN_OR_RETURN(kafka::Properties properties, kafka::ClientProperties(kafka::Client::kProducer,
                                                                          options.shared_properties,
                                                                          options.producer_properties));
  properties["bootstrap.servers"] = options.brokers;
  if (options.batch_size) properties["batch.size"] = std::to_string(*options.batch_size);
  if (options.linger) properties["linger.ms"] = std::to_string(options.linger->count());
  if (options.compression) properties["compression.type"] = *options.compression;
  // A batch is also capped by message.max.bytes (1 000 000 by default).
  if (batch > kDefaultBatchBytes && !properties.count("message.max.bytes")) {
    properties["message.max.bytes"] = std::to_string(batch);
  }
  Result<std::unique_ptr<RdKafka::Conf>> conf = kafka::MakeConf(defaults, properties);
  if (!conf.ok()) return conf.status();
  std::string err;
  if ((*conf)->set("dr_cb", load->reports_.get(), err) != RdKafka::Conf::CONF_OK) return Status::Internal(err);
  auto value = [&](const std::string& key) {
    std::string v;
    (*conf)->get(key, v);
    return v;
  };
  load->batching_ = "batch.size " + value("batch.size") + ", linger.ms " + value("linger.ms") + ", " +
                    value("compression.type");
  load->producer_.reset(RdKafka::Producer::create(conf->get(), err));
  if (!load->producer_) return Status::InvalidArgument("producer: " + err);

  // All topics' metadata: asking for ours by name would auto-create it (4 partitions on the mock).
  RdKafka::Metadata* raw = nullptr;
  const RdKafka::ErrorCode rc = load->producer_->metadata(true, nullptr, &raw, 10'000);
  std::unique_ptr<RdKafka::Metadata> metadata(raw);
  if (rc != RdKafka::ERR_NO_ERROR) {
    return Status::Unavailable("cannot read the topics of " + options.brokers + ": " + RdKafka::err2str(rc));
  }
  for (const RdKafka::TopicMetadata* t : *metadata->topics()) {
    if (t->topic() == options.topic) load->partitions_ = static_cast<int32_t>(t->partitions()->size());
  }
  if (load->partitions_ == 0) {
    return Status::NotFound("topic \"" + options.topic + "\" does not exist on " + options.brokers +
                            " (create it with the node's kafka.num_partitions partitions, or give --topic)");
  }
  if (options.partitions != 0 && options.partitions != load->partitions_) {
    return Status::FailedPrecondition("topic \"" + options.topic + "\" has " + std::to_string(load->partitions_) +
                                      " partitions, not " + std::to_string(options.partitions) +
                                      " (--partitions / kafka.num_partitions): stream_hash % partitions would "
                                      "put streams where the node does not look");
  }
  return load;
}

std::string ProduceLoad::Describe() const {
  std::string rate = options_.rate > 0 ? "at " + std::to_string(static_cast<uint64_t>(options_.rate)) + " records/s"
                                       : std::string("as fast as it goes");
  std::string s = "producing to " + options_.topic + " (" + std::to_string(partitions_) + " partitions) on " +
                  options_.brokers + " " + rate + "; " + batching_;
  if (options_.records > 0) s += "; " + std::to_string(options_.records) + " records";
  if (options_.spread.count() > 0) s += "; timestamps spread over " + config::FormatDuration(options_.spread);
  return s;
}

bool ProduceLoad::ProduceOne(uint64_t n, int64_t timestamp_ms) {
  const Universe::Slot slot = universe_.RecordAt(n);
  const std::string& tenant = universe_.Tenant(slot.tenant);
  const uint64_t hash = universe_.StreamHash(slot.tenant, slot.stream);
  std::string value = kafka::EncodeRecordValue(options_.zone, tenant, hash, universe_.bytes_per_stream(),
                                               universe_.Policy(slot.stream));
  const auto partition = static_cast<int32_t>(hash % static_cast<uint64_t>(partitions_));
  const RdKafka::ErrorCode rc =
      producer_->produce(options_.topic, partition, RdKafka::Producer::RK_MSG_COPY, value.data(), value.size(),
                         tenant.data(), tenant.size(), timestamp_ms, nullptr, nullptr);
  if (rc == RdKafka::ERR__QUEUE_FULL) return false;
  counters_.records_queued.fetch_add(1, std::memory_order_relaxed);
  if (rc != RdKafka::ERR_NO_ERROR) {
    counters_.records_failed.fetch_add(1, std::memory_order_relaxed);
    counters_.RecordError("produce: " + RdKafka::err2str(rc), "partition " + std::to_string(partition));
  }
  return true;
}

void ProduceLoad::Run(const std::atomic<bool>& stop, Pacer::Clock::time_point start,
                      std::optional<std::chrono::milliseconds> duration) {
  const Pacer pacer(options_.rate, start);
  const uint64_t limit = options_.records > 0 ? options_.records : UINT64_MAX;
  const std::optional<Pacer::Clock::time_point> end =
      duration ? std::optional(start + *duration) : std::nullopt;
  const auto spread_ms = static_cast<int64_t>(options_.spread.count());
  uint64_t n = 0;
  while (n < limit && !stop.load(std::memory_order_relaxed)) {
    const auto now = Pacer::Clock::now();
    if (end && now >= *end) break;
    const uint64_t due = std::min({pacer.DueBy(now), limit, n + kChunk});
    const int64_t wall = WallMillis();
    double progress = 1;
    if (spread_ms > 0 && options_.records == 0 && duration) {
      progress = std::chrono::duration<double>(now - start) / *duration;
    }
    while (n < due && !stop.load(std::memory_order_relaxed)) {
      if (spread_ms > 0 && options_.records > 0) progress = static_cast<double>(n) / static_cast<double>(limit);
      if (!ProduceOne(n, SpreadTimestampMs(wall, spread_ms, progress))) {
        producer_->poll(5);  // the queue is full: let librdkafka send and report
        continue;
      }
      ++n;
      if (n % 1024 == 0) producer_->poll(0);
    }
    producer_->poll(0);
    if (pacer.paced() && n < limit) {
      std::this_thread::sleep_until(std::min(pacer.DueAt(n), Pacer::Clock::now() + std::chrono::milliseconds(20)));
    }
  }
  if (n >= limit) finished_.store(true, std::memory_order_release);
}

uint64_t ProduceLoad::Flush(std::chrono::milliseconds timeout) {
  producer_->flush(static_cast<int>(timeout.count()));
  return static_cast<uint64_t>(std::max(0, producer_->outq_len()));
}

}  // namespace limits::loadgen
