#include "kafka/kafka_conf.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "kafka/kafka_log.h"

namespace limits::kafka {
namespace {

// Property name -> scope, parsed once from librdkafka's own documentation table
// ("name | C/P | range | default | importance | description", "*" = both); the global and
// the topic tables both apply, as a topic property set globally is every topic's default.
std::map<std::string, PropertyScope> ReadScopes() {
  std::map<std::string, PropertyScope> scopes;
  char* text = nullptr;
  size_t size = 0;
  FILE* f = open_memstream(&text, &size);
  if (f == nullptr) return scopes;
  rd_kafka_conf_properties_show(f);
  std::fclose(f);
  std::istringstream in(std::string(text, size));
  std::free(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t bar1 = line.find('|');
    const size_t bar2 = bar1 == std::string::npos ? bar1 : line.find('|', bar1 + 1);
    if (bar2 == std::string::npos) continue;
    auto trim = [](std::string s) {
      s.erase(0, s.find_first_not_of(' '));
      s.erase(s.find_last_not_of(' ') + 1);
      return s;
    };
    const std::string name = trim(line.substr(0, bar1));
    const std::string scope = trim(line.substr(bar1 + 1, bar2 - bar1 - 1));
    PropertyScope s = scope == "*" ? PropertyScope::kBoth
                      : scope == "C" ? PropertyScope::kConsumer
                      : scope == "P" ? PropertyScope::kProducer
                                     : PropertyScope::kUnknown;
    if (s == PropertyScope::kUnknown || name.empty()) continue;  // the header and its rule
    auto [it, inserted] = scopes.emplace(name, s);
    if (!inserted && it->second != s) it->second = PropertyScope::kBoth;
  }
  return scopes;
}

bool AppliesTo(PropertyScope scope, Client client) {
  if (scope == PropertyScope::kConsumer) return client == Client::kConsumer;
  if (scope == PropertyScope::kProducer) return client == Client::kProducer;
  return true;  // both, or unknown: librdkafka itself rejects an unknown name
}

}  // namespace

Result<std::unique_ptr<RdKafka::Conf>> MakeConf(const Properties& defaults, const Properties& properties) {
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  RouteLogs(conf->c_ptr_global());
  std::string err;
  for (const auto& [k, v] : defaults) {
    if (properties.count(k)) continue;
    if (conf->set(k, v, err) != RdKafka::Conf::CONF_OK) return Status::Internal("librdkafka default " + k + ": " + err);
  }
  for (const auto& [k, v] : properties) {
    if (conf->set(k, v, err) != RdKafka::Conf::CONF_OK) {
      return Status::InvalidArgument("kafka.properties.\"" + k + "\": " + err);
    }
  }
  return conf;
}

PropertyScope ScopeOf(const std::string& name) {
  static const std::map<std::string, PropertyScope> scopes = ReadScopes();
  auto it = scopes.find(name);
  return it == scopes.end() ? PropertyScope::kUnknown : it->second;
}

Result<Properties> ClientProperties(Client client, const Properties& shared, const Properties& own) {
  const bool consumer = client == Client::kConsumer;
  const std::string own_section = consumer ? "kafka.consumer_properties" : "kafka.producer_properties";
  std::unique_ptr<RdKafka::Conf> check(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string err;
  Properties out;
  for (const auto& [k, v] : shared) {
    if (check->set(k, v, err) != RdKafka::Conf::CONF_OK) {
      return Status::InvalidArgument("kafka.properties.\"" + k + "\": " + err);
    }
    if (AppliesTo(ScopeOf(k), client)) out[k] = v;
  }
  for (const auto& [k, v] : own) {
    if (check->set(k, v, err) != RdKafka::Conf::CONF_OK) {
      return Status::InvalidArgument(own_section + ".\"" + k + "\": " + err);
    }
    if (!AppliesTo(ScopeOf(k), client)) {
      return Status::InvalidArgument(own_section + ".\"" + k + "\": a " + (consumer ? "producer" : "consumer") +
                                     " property, which librdkafka ignores in the " +
                                     (consumer ? "consumer" : "producer") + "; put it under [kafka." +
                                     (consumer ? "producer" : "consumer") + "_properties]");
    }
    out[k] = v;
  }
  return out;
}

Properties ConsumerDefaults(const std::string& brokers, const std::string& group, const std::string& client_id) {
  return {
      {"bootstrap.servers", brokers},
      {"group.id", group},
      {"client.id", client_id},
      {"partition.assignment.strategy", "cooperative-sticky"},
      {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},
      {"auto.offset.reset", "earliest"},
      // A replay is complete when the position reaches the end offset; the end-of-log event
      // carries it past control records and compaction gaps that no record would.
      {"enable.partition.eof", "true"},
      // A small prefetch bounds a replay's memory: a queue of 1 M records held ~500 MiB of
      // prefetched records on a cold start. librdkafka 2.0.2 then idles up to 1 s whenever the
      // queue is full, which FetchWaker ends as soon as the consumer has drained it. Measured
      // on the mock (a bare consumer that applies each record in ~0.3 us, 4 M records in 1 MB
      // lz4 batches): peak RSS 515 MiB -> 47 MiB, 0.60-0.70 -> 0.77-0.80 M records/s.
      // fetch.max.bytes caps a response, not a record batch (a larger batch still comes whole);
      // message.max.bytes must not exceed it.
      {"fetch.wait.max.ms", "50"},
      {"fetch.max.bytes", "262144"},
      {"max.partition.fetch.bytes", "262144"},
      {"message.max.bytes", "262144"},
      // About two 1 MB batches of Loki's records: the prefetch is one of a cold start's peak's
      // parts that do not shrink with fewer streams (with 40 000, ~25 MiB of librdkafka's
      // per-record allocations at the peak of a 1 M-stream replay).
      {"queued.min.messages", "20000"},
  };
}

Properties ProducerDefaults(const std::string& brokers, const std::string& client_id) {
  return {
      {"bootstrap.servers", brokers},
      {"client.id", client_id},
      {"linger.ms", "20"},
      {"compression.type", "lz4"},
      {"queue.buffering.max.messages", "1000000"},
  };
}

Status FromKafka(RdKafka::ErrorCode code, const std::string& context) {
  if (code == RdKafka::ERR_NO_ERROR) return Status::OK();
  const std::string msg = context + ": " + RdKafka::err2str(code);
  switch (code) {
    case RdKafka::ERR__TIMED_OUT:
    case RdKafka::ERR__TRANSPORT:
    case RdKafka::ERR__ALL_BROKERS_DOWN:
    case RdKafka::ERR__QUEUE_FULL:
      return Status::Unavailable(msg);
    case RdKafka::ERR__INVALID_ARG:
      return Status::InvalidArgument(msg);
    default:
      return Status::IOError(msg);
  }
}

}  // namespace limits::kafka
