#include "kafka/kafka_offset_source.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <future>

#include "common/log.h"

namespace limits::kafka {
namespace {

// Only connection settings of [kafka.properties] apply to these handles; fetch tuning meant
// for the group consumer does not.
Properties ConnectionProperties(const Properties& all) {
  Properties props;
  for (const auto& [k, v] : all) {
    if (k.rfind("security.", 0) == 0 || k.rfind("sasl.", 0) == 0 || k.rfind("ssl.", 0) == 0 ||
        k.rfind("socket.", 0) == 0 || k.rfind("reconnect.", 0) == 0 || k == "broker.address.family" ||
        k == "client.rack") {
      props[k] = v;
    }
  }
  return props;
}

Result<std::unique_ptr<RdKafka::KafkaConsumer>> MakeListHandle(const KafkaOffsetSource::Options& o) {
  Properties defaults;
  defaults["bootstrap.servers"] = o.brokers;
  defaults["client.id"] = o.client_id + "-offsets";
  // Required by KafkaConsumer; this handle only lists offsets and never joins or commits.
  defaults["group.id"] = o.client_id + "-offsets";
  defaults["enable.auto.commit"] = "false";
  defaults["enable.auto.offset.store"] = "false";
  ASSIGN_OR_RETURN(std::unique_ptr<RdKafka::Conf> conf, MakeConf(defaults, ConnectionProperties(o.properties)));
  std::string err;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer(RdKafka::KafkaConsumer::create(conf.get(), err));
  if (!consumer) return Status::InvalidArgument("offset look-up consumer: " + err);
  return consumer;
}

// A probe reads one record: fetch about one batch per partition (the broker always returns
// at least one whole batch), queue nothing beyond it, start where asked or at the log start.
Result<std::unique_ptr<RdKafka::Consumer>> MakeProbeHandle(const KafkaOffsetSource::Options& o) {
  Properties defaults = {{"bootstrap.servers", o.brokers},
                         {"client.id", o.client_id + "-probes"},
                         {"fetch.wait.max.ms", "10"},
                         {"fetch.max.bytes", "67108864"},
                         {"max.partition.fetch.bytes", "1024"},
                         {"queued.min.messages", "1"},
                         {"queued.max.messages.kbytes", "1024"},
                         {"enable.partition.eof", "true"},
                         {"enable.auto.commit", "false"},
                         {"enable.auto.offset.store", "false"},
                         {"auto.offset.reset", "earliest"}};
  ASSIGN_OR_RETURN(std::unique_ptr<RdKafka::Conf> conf, MakeConf(defaults, ConnectionProperties(o.properties)));
  std::string err;
  std::unique_ptr<RdKafka::Consumer> consumer(RdKafka::Consumer::create(conf.get(), err));
  if (!consumer) return Status::InvalidArgument("offset probe consumer: " + err);
  return consumer;
}

}  // namespace

Result<std::unique_ptr<KafkaOffsetSource>> KafkaOffsetSource::Create(const Options& options) {
  ASSIGN_OR_RETURN(auto lists, MakeListHandle(options));
  ASSIGN_OR_RETURN(auto probes, MakeProbeHandle(options));
  std::string err;
  std::unique_ptr<RdKafka::Topic> topic(RdKafka::Topic::create(probes.get(), options.topic, nullptr, err));
  if (!topic) return Status::InvalidArgument("offset probe topic " + options.topic + ": " + err);
  // Ask for the topic's metadata now rather than at the first probe. Best effort: without an
  // answer the first probe is merely slower.
  RdKafka::Metadata* metadata = nullptr;
  if (probes->metadata(false, topic.get(), &metadata, 2000) == RdKafka::ERR_NO_ERROR) delete metadata;
  return std::unique_ptr<KafkaOffsetSource>(
      new KafkaOffsetSource(options, std::move(lists), std::move(probes), std::move(topic)));
}

KafkaOffsetSource::KafkaOffsetSource(Options options, std::unique_ptr<RdKafka::KafkaConsumer> lists,
                                     std::unique_ptr<RdKafka::Consumer> probes,
                                     std::unique_ptr<RdKafka::Topic> probe_topic)
    : options_(std::move(options)),
      lists_(std::move(lists)),
      probes_(std::move(probes)),
      probe_topic_(std::move(probe_topic)) {}

KafkaOffsetSource::~KafkaOffsetSource() {
  if (lists_) lists_->close();
  // The topic handle goes before the client that owns it.
  probe_topic_.reset();
  probes_.reset();
}

Result<int64_t> KafkaOffsetSource::ListOffset(int32_t partition, int64_t time, std::chrono::milliseconds timeout) {
  stats_.list_offsets.fetch_add(1, std::memory_order_relaxed);
  std::unique_ptr<RdKafka::TopicPartition> tp(RdKafka::TopicPartition::create(options_.topic, partition, time));
  std::vector<RdKafka::TopicPartition*> tps = {tp.get()};
  RdKafka::ErrorCode rc = lists_->offsetsForTimes(tps, static_cast<int>(timeout.count()));
  if (rc == RdKafka::ERR_NO_ERROR) rc = tp->err();
  if (rc != RdKafka::ERR_NO_ERROR) {
    return FromKafka(rc, "ListOffsets(partition " + std::to_string(partition) + ", " + std::to_string(time) + ")");
  }
  return tp->offset();
}

Result<LogBounds> KafkaOffsetSource::Bounds(int32_t partition, std::chrono::milliseconds timeout) {
  // Both ListOffsets in flight at once (one round trip to a slow leader), each read on its own.
  // librdkafka's query_watermark_offsets pairs its two answers by arrival and, when one is -1,
  // reports the other as both bounds (rdkafka.c): under injected ListOffsets errors it said
  // start == end for a partition holding 225 records, which was then served without them.
  auto start = std::async(std::launch::async,
                          [&] { return ListOffset(partition, RdKafka::Topic::OFFSET_BEGINNING, timeout); });
  Result<int64_t> end = ListOffset(partition, RdKafka::Topic::OFFSET_END, timeout);
  Result<int64_t> begin = start.get();
  RETURN_IF_ERROR(begin.status());
  RETURN_IF_ERROR(end.status());
  if (*begin < 0 || *end < *begin) {
    return Status::Unavailable("ListOffsets(partition " + std::to_string(partition) + ") answered start " +
                               std::to_string(*begin) + ", end " + std::to_string(*end));
  }
  return LogBounds{.start = *begin, .end = *end};
}

Result<std::optional<int64_t>> KafkaOffsetSource::OffsetForTime(int32_t partition, int64_t time_ms,
                                                                std::chrono::milliseconds timeout) {
  ASSIGN_OR_RETURN(int64_t offset, ListOffset(partition, time_ms, timeout));
  if (offset < 0) return std::optional<int64_t>();
  return std::optional<int64_t>(offset);
}

std::mutex& KafkaOffsetSource::PartitionLock(int32_t partition) {
  std::lock_guard lock(mu_);
  std::unique_ptr<std::mutex>& m = partition_locks_[partition];
  if (!m) m = std::make_unique<std::mutex>();
  return *m;
}

Result<Probe> KafkaOffsetSource::ProbeAt(int32_t partition, int64_t offset, std::chrono::milliseconds timeout) {
  stats_.probes.fetch_add(1, std::memory_order_relaxed);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::string where = "offset " + std::to_string(offset) + " of partition " + std::to_string(partition);
  std::lock_guard partition_lock(PartitionLock(partition));
  if (RdKafka::ErrorCode rc = probes_->start(probe_topic_.get(), partition, offset); rc != RdKafka::ERR_NO_ERROR) {
    return FromKafka(rc, "starting to read " + where);
  }
  Result<Probe> result = Status::Unavailable("reading the record at " + where + " timed out");
  std::string last_error;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    std::unique_ptr<RdKafka::Message> m(
        probes_->consume(probe_topic_.get(), partition, static_cast<int>(std::min<int64_t>(left.count(), 25))));
    stats_.probe_fetches.fetch_add(1, std::memory_order_relaxed);
    const RdKafka::ErrorCode err = m->err();
    if (err == RdKafka::ERR__TIMED_OUT) {
      // librdkafka 2.0.2 sometimes leaves a started partition unfetched until its broker
      // thread next wakes, up to 1 s later (FetchWaker has the story): a ListOffsets to the
      // leader wakes it. Probes normally answer within a few ms.
      int64_t low = 0, high = 0;
      (void)probes_->query_watermark_offsets(options_.topic, partition, &low, &high,
                                             static_cast<int>(std::clamp<int64_t>(left.count(), 1, 1000)));
      continue;
    }
    if (err == RdKafka::ERR__PARTITION_EOF) {
      // The log end, and no record at or after the offset on the way (only control records,
      // or an offset at or past the end).
      result = Probe{.kind = Probe::Kind::kNothing, .offset = m->offset(), .timestamp_ms = -1};
      break;
    }
    if (err != RdKafka::ERR_NO_ERROR) {
      last_error = m->errstr();  // librdkafka retries on its own until our deadline
      continue;
    }
    if (m->offset() < offset) continue;  // earlier records of the same batch
    result = Probe{.kind = Probe::Kind::kRecord, .offset = m->offset(), .timestamp_ms = m->timestamp().timestamp};
    break;
  }
  // stop() waits for the fetcher to let go, but what it fetched beyond the record stays
  // queued (librdkafka 2.0.2 drops outdated messages only when the queue is next read): a
  // whole batch per partition, ~80 MiB over 64 partitions of 1 MB batches, held until the
  // partition's next probe. One read at no wait drops them all.
  probes_->stop(probe_topic_.get(), partition);
  std::unique_ptr<RdKafka::Message>(probes_->consume(probe_topic_.get(), partition, 0));
  probes_->poll(0);  // serve the handle's own events (errors, logs)
  if (!result.ok() && !last_error.empty()) {
    return Status::Unavailable("reading the record at " + where + " timed out; last error: " + last_error);
  }
  return result;
}

size_t KafkaOffsetSource::HeldRecords(int32_t partition) const {
  rd_kafka_queue_t* q = rd_kafka_queue_get_partition(probes_->c_ptr(), options_.topic.c_str(), partition);
  if (q == nullptr) return 0;
  const size_t n = rd_kafka_queue_length(q);
  rd_kafka_queue_destroy(q);
  return n;
}

}  // namespace limits::kafka
