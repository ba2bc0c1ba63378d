#include "kafka/kafka_offset_source.h"

#include <algorithm>
#include <set>

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

Result<std::unique_ptr<RdKafka::KafkaConsumer>> MakeHandle(const KafkaOffsetSource::Options& o,
                                                           const std::string& role, Properties defaults) {
  defaults["bootstrap.servers"] = o.brokers;
  defaults["client.id"] = o.client_id + "-" + role;
  // Required by KafkaConsumer; these handles only assign() and never join or commit.
  defaults["group.id"] = o.client_id + "-" + role;
  defaults["enable.auto.commit"] = "false";
  defaults["enable.auto.offset.store"] = "false";
  ASSIGN_OR_RETURN(std::unique_ptr<RdKafka::Conf> conf, MakeConf(defaults, ConnectionProperties(o.properties)));
  std::string err;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer(RdKafka::KafkaConsumer::create(conf.get(), err));
  if (!consumer) return Status::InvalidArgument("offset look-up consumer: " + err);
  return consumer;
}

}  // namespace

Result<std::unique_ptr<KafkaOffsetSource>> KafkaOffsetSource::Create(const Options& options) {
  ASSIGN_OR_RETURN(auto lists, MakeHandle(options, "offsets", {}));
  // A probe reads one record: fetch one batch per partition (the broker always returns at
  // least one whole batch), queue nothing beyond it, start where asked or at the log start.
  ASSIGN_OR_RETURN(auto probes, MakeHandle(options, "probes",
                                           {{"fetch.wait.max.ms", "10"},
                                            {"fetch.max.bytes", "67108864"},
                                            {"max.partition.fetch.bytes", "1024"},
                                            {"queued.min.messages", "1000"},
                                            {"queued.max.messages.kbytes", "1024"},
                                            {"enable.partition.eof", "true"},
                                            {"auto.offset.reset", "earliest"}}));
  // A handle assigns a partition of a topic it has no metadata for only after its next
  // periodic metadata refresh (a second): ask for the topic now. Best effort — without an
  // answer the first probe is merely slower.
  std::string err;
  std::unique_ptr<RdKafka::Topic> topic(RdKafka::Topic::create(probes.get(), options.topic, nullptr, err));
  RdKafka::Metadata* metadata = nullptr;
  if (topic && probes->metadata(false, topic.get(), &metadata, 2000) == RdKafka::ERR_NO_ERROR) delete metadata;
  return std::unique_ptr<KafkaOffsetSource>(new KafkaOffsetSource(options, std::move(lists), std::move(probes)));
}

KafkaOffsetSource::KafkaOffsetSource(Options options, std::unique_ptr<RdKafka::KafkaConsumer> lists,
                                     std::unique_ptr<RdKafka::KafkaConsumer> probes)
    : options_(std::move(options)), lists_(std::move(lists)), probes_(std::move(probes)) {}

KafkaOffsetSource::~KafkaOffsetSource() {
  if (lists_) lists_->close();
  if (probes_) probes_->close();
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
  LogBounds b;
  ASSIGN_OR_RETURN(b.start, ListOffset(partition, RdKafka::Topic::OFFSET_BEGINNING, timeout));
  ASSIGN_OR_RETURN(b.end, ListOffset(partition, RdKafka::Topic::OFFSET_END, timeout));
  return b;
}

Result<std::optional<int64_t>> KafkaOffsetSource::OffsetForTime(int32_t partition, int64_t time_ms,
                                                                std::chrono::milliseconds timeout) {
  ASSIGN_OR_RETURN(int64_t offset, ListOffset(partition, time_ms, timeout));
  if (offset < 0) return std::optional<int64_t>();
  return std::optional<int64_t>(offset);
}

Result<Probe> KafkaOffsetSource::ProbeAt(int32_t partition, int64_t offset, std::chrono::milliseconds timeout) {
  stats_.probes.fetch_add(1, std::memory_order_relaxed);
  ProbeRequest request{partition, offset, std::chrono::steady_clock::now() + timeout};
  std::unique_lock lock(mu_);
  queued_.push_back(&request);
  while (!request.done) {
    if (round_running_) {
      cv_.wait(lock);
      continue;
    }
    // Lead one round with everything queued (one request per partition; the rest wait).
    round_running_ = true;
    std::vector<ProbeRequest*> round;
    std::set<int32_t> taken;
    for (auto it = queued_.begin(); it != queued_.end();) {
      if (taken.insert((*it)->partition).second) {
        round.push_back(*it);
        it = queued_.erase(it);
      } else {
        ++it;
      }
    }
    lock.unlock();
    RunRound(round);
    lock.lock();
    round_running_ = false;
    cv_.notify_all();
  }
  return request.result;
}

void KafkaOffsetSource::RunRound(std::vector<ProbeRequest*> round) {
  stats_.probe_rounds.fetch_add(1, std::memory_order_relaxed);
  std::vector<RdKafka::TopicPartition*> tps;
  std::map<int32_t, ProbeRequest*> by_partition;
  for (ProbeRequest* r : round) {
    tps.push_back(RdKafka::TopicPartition::create(options_.topic, r->partition, r->offset));
    by_partition[r->partition] = r;
  }
  auto answer = [](ProbeRequest* r, Result<Probe> result) {
    r->result = std::move(result);
    r->done = true;
  };
  if (RdKafka::ErrorCode rc = probes_->assign(tps); rc != RdKafka::ERR_NO_ERROR) {
    for (ProbeRequest* r : round) answer(r, FromKafka(rc, "assign for a probe"));
  }
  size_t open = 0;
  for (ProbeRequest* r : round) open += r->done ? 0 : 1;
  while (open > 0) {
    const auto now = std::chrono::steady_clock::now();
    for (auto& [p, r] : by_partition) {
      if (!r->done && now >= r->deadline) {
        answer(r, Status::Unavailable("reading the record at offset " + std::to_string(r->offset) + " of partition " +
                                      std::to_string(p) + " timed out"));
        --open;
      }
    }
    if (open == 0) break;
    std::unique_ptr<RdKafka::Message> m(probes_->consume(20));
    const RdKafka::ErrorCode err = m->err();
    if (err != RdKafka::ERR_NO_ERROR && err != RdKafka::ERR__PARTITION_EOF) continue;
    auto it = by_partition.find(m->partition());
    if (it == by_partition.end() || it->second->done) continue;
    ProbeRequest* r = it->second;
    if (err == RdKafka::ERR__PARTITION_EOF) {
      // The log end, and no record at or after the offset on the way (only control records,
      // or an offset past the end). Events of earlier assignments never reach here: librdkafka
      // drops them when the assignment changes.
      answer(r, Probe{.kind = Probe::Kind::kNothing, .offset = m->offset(), .timestamp_ms = -1});
      --open;
      continue;
    }
    if (m->offset() < r->offset) continue;  // earlier records of the same batch
    answer(r, Probe{.kind = Probe::Kind::kRecord, .offset = m->offset(), .timestamp_ms = m->timestamp().timestamp});
    --open;
  }
  probes_->unassign();
  // The rest of the fetched batch is still queued and counts against queued.min.messages:
  // until it is drained, the next round's partitions would not be fetched (for a second).
  for (;;) {
    std::unique_ptr<RdKafka::Message> m(probes_->consume(0));
    if (m->err() == RdKafka::ERR__TIMED_OUT) break;
  }
  for (auto* tp : tps) delete tp;
}

}  // namespace limits::kafka
