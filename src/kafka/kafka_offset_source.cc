#include "kafka/kafka_offset_source.h"

#include <map>

#include "common/log.h"

namespace limits::kafka {

Result<std::unique_ptr<KafkaOffsetSource>> KafkaOffsetSource::Create(const Options& options) {
  Properties defaults = {
      {"bootstrap.servers", options.brokers},
      {"client.id", options.client_id + "-offsets"},
      // Required by KafkaConsumer; this handle only assign()s and never joins or commits.
      {"group.id", options.client_id + "-offsets"},
      {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},
      {"fetch.wait.max.ms", "10"},
      {"fetch.max.bytes", "1048576"},
      {"max.partition.fetch.bytes", "65536"},
  };
  // Only connection settings apply here; fetch tuning meant for the group consumer does not.
  Properties props;
  for (const auto& [k, v] : options.properties) {
    if (k.rfind("security.", 0) == 0 || k.rfind("sasl.", 0) == 0 || k.rfind("ssl.", 0) == 0 ||
        k.rfind("socket.", 0) == 0 || k.rfind("reconnect.", 0) == 0 || k == "broker.address.family") {
      props[k] = v;
    }
  }
  ASSIGN_OR_RETURN(std::unique_ptr<RdKafka::Conf> conf, MakeConf(defaults, props));
  std::string err;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer(RdKafka::KafkaConsumer::create(conf.get(), err));
  if (!consumer) return Status::InvalidArgument("offset look-up consumer: " + err);
  return std::unique_ptr<KafkaOffsetSource>(new KafkaOffsetSource(options, std::move(consumer)));
}

KafkaOffsetSource::KafkaOffsetSource(Options options, std::unique_ptr<RdKafka::KafkaConsumer> consumer)
    : options_(std::move(options)), consumer_(std::move(consumer)) {}

KafkaOffsetSource::~KafkaOffsetSource() {
  if (consumer_) consumer_->close();
}

void KafkaOffsetSource::ListOffsets(std::vector<PartitionOffsets>& out, int64_t time,
                                    int64_t PartitionOffsets::*field) {
  std::vector<RdKafka::TopicPartition*> tps;
  std::vector<size_t> index;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].ok) continue;
    tps.push_back(RdKafka::TopicPartition::create(options_.topic, out[i].partition, time));
    index.push_back(i);
  }
  if (tps.empty()) return;
  const RdKafka::ErrorCode rc = consumer_->offsetsForTimes(tps, static_cast<int>(options_.timeout.count()));
  for (size_t j = 0; j < tps.size(); ++j) {
    PartitionOffsets& o = out[index[j]];
    const RdKafka::ErrorCode e = rc != RdKafka::ERR_NO_ERROR ? rc : tps[j]->err();
    if (e != RdKafka::ERR_NO_ERROR) {
      o.ok = false;
      o.error = "ListOffsets(" + std::to_string(time) + "): " + RdKafka::err2str(e);
    } else {
      o.*field = tps[j]->offset();
    }
    delete tps[j];
  }
}

std::map<int32_t, int64_t> KafkaOffsetSource::ReadTimestamps(const std::map<int32_t, int64_t>& offsets) {
  std::vector<RdKafka::TopicPartition*> tps;
  for (const auto& [p, off] : offsets) tps.push_back(RdKafka::TopicPartition::create(options_.topic, p, off));
  std::map<int32_t, int64_t> found;
  probes_.fetch_add(offsets.size(), std::memory_order_relaxed);
  if (consumer_->assign(tps) == RdKafka::ERR_NO_ERROR) {
    const auto deadline = std::chrono::steady_clock::now() + options_.read_timeout;
    while (found.size() < offsets.size() && std::chrono::steady_clock::now() < deadline) {
      std::unique_ptr<RdKafka::Message> m(consumer_->consume(50));
      if (m->err() != RdKafka::ERR_NO_ERROR) continue;
      auto want = offsets.find(m->partition());
      // The first record at or after the wanted offset (compaction may leave gaps).
      if (want == offsets.end() || m->offset() < want->second || found.count(m->partition())) continue;
      found[m->partition()] = m->timestamp().timestamp;
    }
  }
  consumer_->unassign();
  for (auto* tp : tps) delete tp;
  return found;
}

void KafkaOffsetSource::FindWindowStart(std::vector<PartitionOffsets>& out, int64_t window_start_ms) {
  for (auto& o : out) {
    if (o.ok) o.window_start = -1;
  }
  ListOffsets(out, window_start_ms, &PartitionOffsets::window_start);
  // Binary-search state of each partition the broker could not (or would not) answer for:
  // the answer lies in [lo, hi]; hi = end means "no record in the window".
  struct Range {
    int64_t lo, hi;
  };
  std::map<int32_t, Range> search;
  std::map<int32_t, size_t> index;
  std::map<int32_t, int64_t> last;
  for (size_t i = 0; i < out.size(); ++i) {
    PartitionOffsets& o = out[i];
    if (!o.ok) continue;
    if (o.window_start >= 0) continue;  // a real answer
    index[o.partition] = i;
    if (o.start >= o.end) {
      o.window_start = o.end;  // empty
      continue;
    }
    last[o.partition] = o.end - 1;
  }
  if (last.empty()) return;
  // Is the newest record inside the window at all?
  const std::map<int32_t, int64_t> newest = ReadTimestamps(last);
  for (const auto& [p, off] : last) {
    PartitionOffsets& o = out[index[p]];
    auto ts = newest.find(p);
    if (ts == newest.end()) {
      o.ok = false;
      o.error = "reading the record at offset " + std::to_string(off) + " timed out";
    } else if (ts->second < window_start_ms) {
      o.window_start = o.end;  // all records are older than the window
    } else {
      search[p] = {o.start, off};
    }
  }
  while (!search.empty()) {
    std::map<int32_t, int64_t> probes;
    for (auto it = search.begin(); it != search.end();) {
      if (it->second.lo >= it->second.hi) {
        out[index[it->first]].window_start = it->second.lo;
        it = search.erase(it);
      } else {
        probes[it->first] = it->second.lo + (it->second.hi - it->second.lo) / 2;
        ++it;
      }
    }
    if (probes.empty()) break;
    const std::map<int32_t, int64_t> ts = ReadTimestamps(probes);
    for (const auto& [p, mid] : probes) {
      auto t = ts.find(p);
      if (t == ts.end()) {
        out[index[p]].ok = false;
        out[index[p]].error = "reading the record at offset " + std::to_string(mid) + " timed out";
        search.erase(p);
        continue;
      }
      Range& r = search[p];
      if (t->second >= window_start_ms) r.hi = mid;
      else r.lo = mid + 1;
    }
  }
}

std::vector<PartitionOffsets> KafkaOffsetSource::Lookup(std::span<const int32_t> partitions, int64_t window_start_ms) {
  std::lock_guard lock(mu_);
  std::vector<PartitionOffsets> out;
  for (int32_t p : partitions) out.push_back({.partition = p, .ok = true, .error = {}});
  ListOffsets(out, RdKafka::Topic::OFFSET_BEGINNING, &PartitionOffsets::start);
  ListOffsets(out, RdKafka::Topic::OFFSET_END, &PartitionOffsets::end);
  for (auto& o : out) {
    if (o.ok && (o.start < 0 || o.end < o.start)) {
      o.ok = false;
      o.error = "implausible offsets: start " + std::to_string(o.start) + ", end " + std::to_string(o.end);
    }
  }
  FindWindowStart(out, window_start_ms);
  return out;
}

}  // namespace limits::kafka
