#include "kafka/kafka_log.h"

#include <mutex>

#include "common/log.h"

namespace limits::kafka {
namespace {

// librdkafka logs at syslog levels: 0-3 error, 4 warning, 5-6 notice/info, 7 debug.
log::Level FromSyslog(int level) {
  if (level <= 3) return log::Level::kError;
  if (level == 4) return log::Level::kWarn;
  if (level <= 6) return log::Level::kInfo;
  return log::Level::kDebug;
}

void LogLine(const rd_kafka_t* rk, int level, const char* fac, const char* buf) {
  const log::Level ours = FromSyslog(level);
  if (!log::Enabled(ours)) return;
  log::Line(ours, "kafka", buf).Kv("client", rd_kafka_name(rk)).Kv("fac", fac);
}

std::mutex auth_mu;
BrokerAuthFailure last_auth_failure;  // guarded by auth_mu; `at` is epoch when none

// Without an error callback librdkafka logs errors itself; with one, each arrives once, from
// poll()/consume(), with its code. A broker connection failure (_TRANSPORT) has already been
// logged by librdkafka as a FAIL line with the same text, so its event is only a debug line.
void LogError(rd_kafka_t* rk, int err, const char* reason, void* /*opaque*/) {
  const auto code = static_cast<rd_kafka_resp_err_t>(err);
  const bool auth = code == RD_KAFKA_RESP_ERR__AUTHENTICATION || code == RD_KAFKA_RESP_ERR__SSL;
  if (auth) {
    std::lock_guard lock(auth_mu);
    last_auth_failure = {reason, std::chrono::steady_clock::now()};
  }
  const log::Level level = code == RD_KAFKA_RESP_ERR__TRANSPORT ? log::Level::kDebug : log::Level::kError;
  if (!log::Enabled(level)) return;
  log::Line line(level, "kafka", reason);
  line.Kv("client", rd_kafka_name(rk)).Kv("error", rd_kafka_err2name(code));
  if (auth) {
    line.Kv("check", kBrokerAuthKeys);  // the keys an operator fixes this with
  } else {
    line.Kv("fatal", code == RD_KAFKA_RESP_ERR__FATAL);
  }
}

}  // namespace

std::optional<BrokerAuthFailure> RecentBrokerAuthFailure(std::chrono::seconds recent) {
  std::lock_guard lock(auth_mu);
  if (last_auth_failure.reason.empty() || std::chrono::steady_clock::now() - last_auth_failure.at > recent) {
    return std::nullopt;
  }
  return last_auth_failure;
}

void RouteLogs(rd_kafka_conf_t* conf) {
  rd_kafka_conf_set_log_cb(conf, &LogLine);
  rd_kafka_conf_set_error_cb(conf, &LogError);
}

}  // namespace limits::kafka
