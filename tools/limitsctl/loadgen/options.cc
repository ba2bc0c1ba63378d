#include "loadgen/options.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>

#include "config/units.h"

namespace limits::loadgen {
namespace {

using Flags = std::map<std::string, std::string>;

// Flags of one load only: giving one without that load is a mistake worth naming.
constexpr std::string_view kProduceFlags[] = {"topic",  "partitions", "produce-rate", "records",    "zone",
                                                     "spread", "batch-size", "linger",       "compression"};
constexpr std::string_view kExceedsFlags[] = {"request-rate", "streams-per-request", "new-fraction",
                                                     "concurrency",  "update-rate",         "timeout"};

Status Bad(std::string_view flag, const std::string& want, const std::string& got) {
  return Status::InvalidArgument("--" + std::string(flag) + ": expected " + want + ", got \"" + got + "\"");
}

Result<uint64_t> Whole(std::string_view flag, const std::string& text, uint64_t min, uint64_t max) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v < min || v > max) {
    return Bad(flag, "a whole number " + std::to_string(min) + ".." + std::to_string(max), text);
  }
  return v;
}

Result<double> Real(std::string_view flag, const std::string& text, double min, double max, const std::string& want) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v < min || v > max) {
    return Bad(flag, want, text);
  }
  return v;
}

Result<std::chrono::milliseconds> Duration(std::string_view flag, const std::string& text, bool allow_zero) {
  Result<std::chrono::milliseconds> d = config::ParseDuration(text);
  if (!d.ok() || (!allow_zero && d->count() == 0)) {
    return Bad(flag, std::string(allow_zero ? "a duration" : "a positive duration") + " such as 500ms, 30s, 5m, 1h30m",
               text);
  }
  return *d;
}

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> out;
  size_t from = 0;
  while (true) {
    const size_t comma = text.find(',', from);
    out.push_back(text.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (comma == std::string::npos) return out;
    from = comma + 1;
  }
}

const std::string* Get(const Flags& flags, std::string_view name) {
  auto it = flags.find(std::string(name));
  return it == flags.end() ? nullptr : &it->second;
}

Status ParseUniverse(const Flags& flags, UniverseOptions* u) {
  if (const std::string* v = Get(flags, "tenants")) {
    ASSIGN_OR_RETURN(uint64_t n, Whole("tenants", *v, 1, kMaxTenants));
    u->tenants = static_cast<uint32_t>(n);
  }
  if (const std::string* v = Get(flags, "tenant-prefix")) u->tenant_prefix = *v;
  if (const std::string* v = Get(flags, "streams")) {
    ASSIGN_OR_RETURN(u->streams_per_tenant, Whole("streams", *v, 1, kMaxStreamsPerTenant));
  }
  if (const std::string* v = Get(flags, "policies")) u->policies = SplitCommas(*v);
  if (const std::string* v = Get(flags, "bytes")) {
    ASSIGN_OR_RETURN(u->bytes_per_stream, Whole("bytes", *v, 0, uint64_t{1} << 40));
  }
  if (const std::string* v = Get(flags, "seed")) {
    ASSIGN_OR_RETURN(u->seed, Whole("seed", *v, 0, UINT64_MAX));
  }
  return Status::OK();
}

Status ParseProduce(const Flags& flags, const config::Config* config, ProduceOptions* p) {
  if (config) {
    p->brokers = config->kafka.brokers;
    p->topic = config->kafka.topic;
    p->partitions = config->kafka.num_partitions;
    p->shared_properties = config->kafka.properties;
    p->producer_properties = config->kafka.producer_properties;
  }
  if (const std::string* v = Get(flags, "brokers")) p->brokers = *v;
  if (p->brokers.empty()) {
    return Status::InvalidArgument(
        "--brokers: the produce load needs the brokers (host:port,...); a node with no brokers configured logs its "
        "embedded cluster's address as \"bootstrap\"");
  }
  if (const std::string* v = Get(flags, "topic")) {
    if (v->empty()) return Bad("topic", "a topic name", *v);
    p->topic = *v;
  }
  if (const std::string* v = Get(flags, "partitions")) {
    ASSIGN_OR_RETURN(uint64_t n, Whole("partitions", *v, 1, config::kMaxNumPartitions));
    p->partitions = static_cast<int32_t>(n);
  }
  if (const std::string* v = Get(flags, "produce-rate")) {
    ASSIGN_OR_RETURN(p->rate, Real("produce-rate", *v, 0, 1e9, "records per second (0: unpaced)"));
  }
  if (const std::string* v = Get(flags, "records")) {
    ASSIGN_OR_RETURN(p->records, Whole("records", *v, 1, UINT64_MAX));
  }
  if (const std::string* v = Get(flags, "zone")) p->zone = *v;
  if (const std::string* v = Get(flags, "spread")) {
    ASSIGN_OR_RETURN(p->spread, Duration("spread", *v, true));
  }
  if (const std::string* v = Get(flags, "batch-size")) {
    Result<uint64_t> size = config::ParseSize(*v);
    if (!size.ok() || *size == 0 || *size > 2147483647) return Bad("batch-size", "a size such as 1MB or 64KiB", *v);
    p->batch_size = *size;
  }
  if (const std::string* v = Get(flags, "linger")) {
    ASSIGN_OR_RETURN(std::chrono::milliseconds d, Duration("linger", *v, true));
    if (d.count() > 900'000) return Bad("linger", "at most 15m (librdkafka's limit)", *v);
    p->linger = d;
  }
  if (const std::string* v = Get(flags, "compression")) {
    static const std::set<std::string> kCodecs = {"none", "gzip", "snappy", "lz4", "zstd"};
    if (!kCodecs.count(*v)) return Bad("compression", "none, gzip, snappy, lz4 or zstd", *v);
    p->compression = *v;
  }
  return Status::OK();
}

Status ParseExceeds(const Flags& flags, const config::Config* config, ExceedsOptions* e) {
  if (config) e->target = DialAddressOf(config->server.grpc_listen);
  if (const std::string* v = Get(flags, "grpc")) e->target = *v;
  if (e->target.empty()) return Status::InvalidArgument("--grpc: the ExceedsLimits load needs the node's host:port");
  if (const std::string* v = Get(flags, "request-rate")) {
    ASSIGN_OR_RETURN(e->rate, Real("request-rate", *v, 0, 1e7, "requests per second (0: unpaced)"));
  }
  if (const std::string* v = Get(flags, "streams-per-request")) {
    ASSIGN_OR_RETURN(uint64_t n, Whole("streams-per-request", *v, 1, 100'000));
    e->streams_per_request = static_cast<uint32_t>(n);
  }
  if (const std::string* v = Get(flags, "new-fraction")) {
    ASSIGN_OR_RETURN(e->new_fraction, Real("new-fraction", *v, 0, 1, "a fraction 0..1 of each request's streams"));
  }
  if (const std::string* v = Get(flags, "concurrency")) {
    ASSIGN_OR_RETURN(uint64_t n, Whole("concurrency", *v, 1, 1024));
    e->concurrency = static_cast<uint32_t>(n);
  }
  if (const std::string* v = Get(flags, "update-rate")) {
    ASSIGN_OR_RETURN(e->update_rate, Real("update-rate", *v, 0, 1e7, "UpdateRates requests per second (0: none)"));
  }
  if (const std::string* v = Get(flags, "timeout")) {
    ASSIGN_OR_RETURN(e->timeout, Duration("timeout", *v, false));
  }
  return Status::OK();
}

}  // namespace

const std::vector<std::string_view>& LoadgenFlags() {
  static const std::vector<std::string_view> all = [] {
    std::vector<std::string_view> f = {"mode",    "duration", "tenants", "tenant-prefix", "streams",
                                       "policies", "bytes",   "seed",    "brokers",       "grpc"};
    f.insert(f.end(), std::begin(kProduceFlags), std::end(kProduceFlags));
    f.insert(f.end(), std::begin(kExceedsFlags), std::end(kExceedsFlags));
    return f;
  }();
  return all;
}

std::string DialAddressOf(const std::string& listen) {
  for (const char* any : {"0.0.0.0:", "[::]:", ":"}) {
    const std::string prefix = any;
    if (listen.rfind(prefix, 0) == 0) return "127.0.0.1:" + listen.substr(prefix.size());
  }
  return listen;
}

Result<LoadgenOptions> ParseLoadgenOptions(const Flags& flags, const config::Config* config) {
  LoadgenOptions o;
  bool produce = Get(flags, "brokers") != nullptr;
  bool exceeds = Get(flags, "grpc") != nullptr;
  if (const std::string* mode = Get(flags, "mode")) {
    if (*mode != "produce" && *mode != "exceeds" && *mode != "both") {
      return Bad("mode", "produce, exceeds or both", *mode);
    }
    produce = *mode != "exceeds";
    exceeds = *mode != "produce";
    if (produce && Get(flags, "brokers") == nullptr && config == nullptr) {
      return Status::InvalidArgument("--mode " + *mode + ": the produce load needs --brokers (or limitsctl --config)");
    }
    if (exceeds && Get(flags, "grpc") == nullptr && config == nullptr) {
      return Status::InvalidArgument("--mode " + *mode +
                                     ": the ExceedsLimits load needs --grpc (or limitsctl --config)");
    }
    if (!produce && Get(flags, "brokers")) return Status::InvalidArgument("--brokers: --mode exceeds produces nothing");
    if (!exceeds && Get(flags, "grpc")) return Status::InvalidArgument("--grpc: --mode produce sends no requests");
  }
  if (!produce && !exceeds) {
    return Status::InvalidArgument(
        "nothing to do: give --brokers HOST:PORT to produce records and/or --grpc HOST:PORT to drive ExceedsLimits");
  }
  for (std::string_view f : kProduceFlags) {
    if (!produce && Get(flags, f)) {
      return Status::InvalidArgument("--" + std::string(f) + ": only for the produce load (--brokers)");
    }
  }
  for (std::string_view f : kExceedsFlags) {
    if (!exceeds && Get(flags, f)) {
      return Status::InvalidArgument("--" + std::string(f) + ": only for the ExceedsLimits load (--grpc)");
    }
  }
  if (const std::string* v = Get(flags, "duration")) {
    ASSIGN_OR_RETURN(o.duration, Duration("duration", *v, false));
  }
  RETURN_IF_ERROR(ParseUniverse(flags, &o.universe));
  if (produce) {
    o.produce.emplace();
    RETURN_IF_ERROR(ParseProduce(flags, config, &*o.produce));
    if (o.produce->spread.count() > 0 && o.produce->records == 0 && !o.duration) {
      return Status::InvalidArgument(
          "--spread: needs --records or --duration, to spread the timestamps over the run");
    }
  }
  if (exceeds) {
    o.exceeds.emplace();
    RETURN_IF_ERROR(ParseExceeds(flags, config, &*o.exceeds));
  }
  return o;
}

}  // namespace limits::loadgen
