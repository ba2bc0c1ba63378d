// RawConsume (see raw_consume.h).
#include "raw_consume.h"

#include <librdkafka/rdkafkacpp.h>

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

namespace limits::bench {

Result<RawConsumeResult> RawConsume(const std::string& bootstrap, const std::string& topic, int partitions) {
  std::string err;
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  // MOCK-KAFKA.md's tuned consumer: the ceiling a replay can approach on this machine.
  const std::vector<std::pair<std::string, std::string>> props = {
      {"bootstrap.servers", bootstrap},       {"group.id", "limits-bench-raw"},
      {"enable.auto.commit", "false"},        {"enable.partition.eof", "true"},
      {"queued.min.messages", "1000000"},     {"fetch.wait.max.ms", "10"},
      {"fetch.max.bytes", "104857600"},       {"max.partition.fetch.bytes", "10485760"},
  };
  for (const auto& [k, v] : props) {
    if (conf->set(k, v, err) != RdKafka::Conf::CONF_OK) return Status::InvalidArgument(k + ": " + err);
  }
  std::unique_ptr<RdKafka::KafkaConsumer> consumer(RdKafka::KafkaConsumer::create(conf.get(), err));
  if (!consumer) return Status::Unavailable("raw consumer: " + err);
  std::vector<RdKafka::TopicPartition*> tps;
  for (int p = 0; p < partitions; ++p) tps.push_back(RdKafka::TopicPartition::create(topic, p, RdKafka::Topic::OFFSET_BEGINNING));
  const auto t0 = std::chrono::steady_clock::now();
  const RdKafka::ErrorCode assigned = consumer->assign(tps);
  for (auto* tp : tps) delete tp;
  if (assigned != RdKafka::ERR_NO_ERROR) return Status::Unavailable("assign: " + RdKafka::err2str(assigned));
  RawConsumeResult r;
  std::vector<bool> at_end(static_cast<size_t>(partitions), false);
  int ended = 0;
  auto last = t0;
  std::optional<std::chrono::steady_clock::time_point> first;  // the first record: connected and fetching
  while (ended < partitions) {
    std::unique_ptr<RdKafka::Message> m(consumer->consume(1000));
    if (m->err() == RdKafka::ERR_NO_ERROR) {
      if (!first) first = std::chrono::steady_clock::now();
      ++r.records;
    } else if (m->err() == RdKafka::ERR__PARTITION_EOF) {
      // eof is reported again after each later message; the first one per partition counts.
      if (!at_end[static_cast<size_t>(m->partition())]) {
        at_end[static_cast<size_t>(m->partition())] = true;
        ++ended;
      }
    } else if (m->err() != RdKafka::ERR__TIMED_OUT) {
      return Status::Unavailable("raw consume: " + m->errstr());
    }
    last = std::chrono::steady_clock::now();
    if (last - t0 > std::chrono::minutes(10)) return Status::Unavailable("raw consume: not at the end after 10 minutes");
  }
  // From the first record, as the node's replay is timed from its look-ups done (connected).
  r.seconds = std::chrono::duration<double>(last - first.value_or(t0)).count();
  r.connect_seconds = std::chrono::duration<double>(first.value_or(t0) - t0).count();
  consumer->close();
  return r;
}

}  // namespace limits::bench
