#include "testing/real_kafka.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "testing/subprocess.h"

namespace limits::testing {
namespace {

constexpr int kAdminTimeoutMs = 30'000;

std::string LastLine(const std::string& s) {
  std::string t = s;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  const size_t nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

// Options for one admin request: the request and the broker-side operation both time out.
rd_kafka_AdminOptions_t* AdminOptions(rd_kafka_t* rk, rd_kafka_admin_op_t op) {
  char err[512];
  rd_kafka_AdminOptions_t* opts = rd_kafka_AdminOptions_new(rk, op);
  rd_kafka_AdminOptions_set_request_timeout(opts, kAdminTimeoutMs, err, sizeof err);
  rd_kafka_AdminOptions_set_operation_timeout(opts, kAdminTimeoutMs, err, sizeof err);
  return opts;
}

}  // namespace

std::string UniqueTopic(const std::string& prefix) {
  static std::atomic<int> n{0};
  return prefix + "-" + std::to_string(getpid()) + "-" + std::to_string(n.fetch_add(1));
}

Result<std::unique_ptr<RealKafka>> RealKafka::Start(bool sasl_ssl, const std::string& kafka_version) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/limitsd-realkafka-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return Status::IOError("mkdtemp " + pattern);
  const std::string dir = pattern;
  std::vector<std::string> argv = {LIMITSD_KAFKA_DEV_SCRIPT, "start", "--dir", dir, "--owner-pid",
                                   std::to_string(getpid())};
  if (!kafka_version.empty()) argv.insert(argv.begin(), {"/usr/bin/env", "LIMITSD_KAFKA_VERSION=" + kafka_version});
  if (sasl_ssl) argv.push_back("--sasl-ssl");
  RunResult r = RunProgram(argv);
  if (r.exit_code != 0) {
    std::filesystem::remove_all(dir);
    return Status::Unavailable("kafka-dev.sh start failed (exit " + std::to_string(r.exit_code) + "): " + r.err);
  }
  const std::string bootstrap = LastLine(r.out);
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    return Status::InvalidArgument(err);
  }
  rd_kafka_t* admin = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (admin == nullptr) return Status::InvalidArgument(std::string("admin handle: ") + err);
  return std::unique_ptr<RealKafka>(new RealKafka(dir, bootstrap, admin));
}

std::string RealKafka::sasl_bootstrap() const {
  std::ifstream in(dir_ + "/sasl_bootstrap");
  std::string line;
  std::getline(in, line);
  return line;
}

RealKafka::RealKafka(std::string dir, std::string bootstrap, rd_kafka_t* admin)
    : dir_(std::move(dir)), bootstrap_(std::move(bootstrap)), admin_(admin) {}

RealKafka::~RealKafka() {
  rd_kafka_destroy(admin_);
  RunProgram({LIMITSD_KAFKA_DEV_SCRIPT, "stop", "--dir", dir_});
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

Status RealKafka::AwaitEvent(rd_kafka_queue_t* queue, rd_kafka_event_type_t type, rd_kafka_event_t** out) {
  rd_kafka_event_t* ev = rd_kafka_queue_poll(queue, kAdminTimeoutMs + 5000);
  if (ev == nullptr) return Status::Unavailable("admin request: no answer");
  if (rd_kafka_event_type(ev) != type) {
    rd_kafka_event_destroy(ev);
    return Status::Internal("admin request: unexpected event");
  }
  if (rd_kafka_event_error(ev) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    Status s = Status::Unavailable(rd_kafka_event_error_string(ev));
    rd_kafka_event_destroy(ev);
    return s;
  }
  *out = ev;
  return Status::OK();
}

Status RealKafka::CreateTopic(const std::string& topic, int32_t partitions,
                              const std::map<std::string, std::string>& configs) {
  char err[512];
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, err, sizeof err);
  if (nt == nullptr) return Status::InvalidArgument(err);
  for (const auto& [k, v] : configs) {
    if (rd_kafka_NewTopic_set_config(nt, k.c_str(), v.c_str()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_NewTopic_destroy(nt);
      return Status::InvalidArgument("topic config " + k);
    }
  }
  rd_kafka_AdminOptions_t* opts = AdminOptions(admin_, RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_queue_t* q = rd_kafka_queue_new(admin_);
  rd_kafka_CreateTopics(admin_, &nt, 1, opts, q);
  rd_kafka_event_t* ev = nullptr;
  Status s = AwaitEvent(q, RD_KAFKA_EVENT_CREATETOPICS_RESULT, &ev);
  if (s.ok()) {
    size_t n = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
    for (size_t i = 0; i < n; ++i) {
      if (rd_kafka_topic_result_error(results[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        s = Status::Unavailable("create topic " + topic + ": " + rd_kafka_topic_result_error_string(results[i]));
      }
    }
    rd_kafka_event_destroy(ev);
  }
  rd_kafka_queue_destroy(q);
  rd_kafka_AdminOptions_destroy(opts);
  rd_kafka_NewTopic_destroy(nt);
  RETURN_IF_ERROR(s);
  // The controller answers before every partition's leader is known to the broker's metadata.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kAdminTimeoutMs);
  while (std::chrono::steady_clock::now() < deadline) {
    rd_kafka_topic_t* t = rd_kafka_topic_new(admin_, topic.c_str(), nullptr);
    const rd_kafka_metadata_t* md = nullptr;
    bool ready = false;
    if (rd_kafka_metadata(admin_, 0, t, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR &&
          md->topics[0].partition_cnt == partitions) {
        ready = true;
        for (int i = 0; i < md->topics[0].partition_cnt; ++i) ready = ready && md->topics[0].partitions[i].leader >= 0;
      }
      rd_kafka_metadata_destroy(md);
    }
    rd_kafka_topic_destroy(t);
    if (ready) return Status::OK();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return Status::Unavailable("topic " + topic + ": partitions have no leader yet");
}

Status RealKafka::DeleteRecords(const std::string& topic, int32_t partition, int64_t before_offset) {
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, topic.c_str(), partition)->offset = before_offset;
  rd_kafka_DeleteRecords_t* del = rd_kafka_DeleteRecords_new(list);
  rd_kafka_topic_partition_list_destroy(list);
  rd_kafka_AdminOptions_t* opts = AdminOptions(admin_, RD_KAFKA_ADMIN_OP_DELETERECORDS);
  rd_kafka_queue_t* q = rd_kafka_queue_new(admin_);
  rd_kafka_DeleteRecords(admin_, &del, 1, opts, q);
  rd_kafka_event_t* ev = nullptr;
  Status s = AwaitEvent(q, RD_KAFKA_EVENT_DELETERECORDS_RESULT, &ev);
  if (s.ok()) {
    const rd_kafka_topic_partition_list_t* offsets =
        rd_kafka_DeleteRecords_result_offsets(rd_kafka_event_DeleteRecords_result(ev));
    for (int i = 0; offsets && i < offsets->cnt; ++i) {
      if (offsets->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        s = Status::Unavailable("delete records of " + topic + ": " + rd_kafka_err2str(offsets->elems[i].err));
      }
    }
    rd_kafka_event_destroy(ev);
  }
  rd_kafka_queue_destroy(q);
  rd_kafka_AdminOptions_destroy(opts);
  rd_kafka_DeleteRecords_destroy(del);
  return s;
}

Result<std::pair<int64_t, int64_t>> RealKafka::Watermarks(const std::string& topic, int32_t partition) {
  int64_t lo = -1, hi = -1;
  const rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(admin_, topic.c_str(), partition, &lo, &hi, 10'000);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) return Status::Unavailable(rd_kafka_err2str(e));
  return std::make_pair(lo, hi);
}

Result<int32_t> RealKafka::PartitionCount(const std::string& topic) {
  rd_kafka_topic_t* t = rd_kafka_topic_new(admin_, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  const rd_kafka_resp_err_t e = rd_kafka_metadata(admin_, 0, t, &md, 10'000);
  rd_kafka_topic_destroy(t);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) return Status::Unavailable(rd_kafka_err2str(e));
  int32_t count = -1;
  for (int i = 0; i < md->topic_cnt; ++i) {
    if (topic == md->topics[i].topic && md->topics[i].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      count = md->topics[i].partition_cnt;
    }
  }
  rd_kafka_metadata_destroy(md);
  if (count < 0) return Status::NotFound("topic " + topic + " is not in the metadata");
  return count;
}

Result<std::map<std::string, std::pair<std::string, bool>>> RealKafka::TopicConfigs(const std::string& topic) {
  rd_kafka_ConfigResource_t* resource = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic.c_str());
  rd_kafka_AdminOptions_t* opts = AdminOptions(admin_, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS);
  rd_kafka_queue_t* q = rd_kafka_queue_new(admin_);
  rd_kafka_DescribeConfigs(admin_, &resource, 1, opts, q);
  rd_kafka_event_t* ev = nullptr;
  Status s = AwaitEvent(q, RD_KAFKA_EVENT_DESCRIBECONFIGS_RESULT, &ev);
  std::map<std::string, std::pair<std::string, bool>> out;
  if (s.ok()) {
    size_t n = 0;
    const rd_kafka_ConfigResource_t** results =
        rd_kafka_DescribeConfigs_result_resources(rd_kafka_event_DescribeConfigs_result(ev), &n);
    for (size_t i = 0; i < n; ++i) {
      if (rd_kafka_ConfigResource_error(results[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        s = Status::Unavailable(rd_kafka_ConfigResource_error_string(results[i]));
        continue;
      }
      size_t m = 0;
      const rd_kafka_ConfigEntry_t** entries = rd_kafka_ConfigResource_configs(results[i], &m);
      for (size_t j = 0; j < m; ++j) {
        const char* value = rd_kafka_ConfigEntry_value(entries[j]);
        out[rd_kafka_ConfigEntry_name(entries[j])] = {
            value ? value : "", rd_kafka_ConfigEntry_source(entries[j]) == RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG};
      }
    }
    rd_kafka_event_destroy(ev);
  }
  rd_kafka_queue_destroy(q);
  rd_kafka_AdminOptions_destroy(opts);
  rd_kafka_ConfigResource_destroy(resource);
  RETURN_IF_ERROR(s);
  return out;
}

}  // namespace limits::testing
