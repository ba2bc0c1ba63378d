// The crash loop's loads and their models (see crash_loop_loads.h).
#include "crash_loop_loads.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <random>

#include "kafka/record_codec.h"
#include "loadgen/universe.h"
#include "proto/limits.grpc.pb.h"

namespace limits::bench {

using Steady = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// ExceedsModel

ExceedsModel::ExceedsModel(const ExceedsOptions& o) : o_(o) {
  for (uint32_t t = 0; t < o_.tenants; ++t) {
    tenants_.emplace_back();
    tenants_.back().name = o_.tenant_prefix + std::to_string(t);
    tenant_mu_.push_back(std::make_unique<std::mutex>());
  }
  for (int c = 0; c < o_.callers; ++c) threads_.emplace_back([this, c] { Caller(c); });
}

ExceedsModel::~ExceedsModel() { Stop(); }

uint64_t ExceedsModel::StreamHash(uint32_t t, uint64_t i) const {
  // (t, i) packs into distinct integers; the seed's offset and Mix64 are bijections.
  return loadgen::Mix64(((static_cast<uint64_t>(t) << 40) | i) + loadgen::Mix64(o_.seed) * 0x9e3779b97f4a7c15ULL);
}

void ExceedsModel::Serve(int grpc_port) {
  std::lock_guard<std::mutex> l(mu_);
  port_ = grpc_port;
  ++generation_;
  cv_.notify_all();
}

void ExceedsModel::Pause() {
  std::lock_guard<std::mutex> l(mu_);
  port_ = 0;
}

void ExceedsModel::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  for (auto& t : threads_) t.join();
  threads_.clear();
}

bool ExceedsModel::WaitForAdmission(std::chrono::milliseconds timeout, std::chrono::microseconds* since_answer) {
  std::unique_lock<std::mutex> l(mu_);
  const uint64_t seen = admissions_;
  if (!cv_.wait_for(l, timeout, [&] { return stop_ || admissions_ != seen; }) || stop_) return false;
  *since_answer = std::chrono::duration_cast<std::chrono::microseconds>(Steady::now() - last_admission_);
  return true;
}

std::vector<size_t> ExceedsModel::AdmittedCounts() {
  std::vector<size_t> out;
  for (uint32_t t = 0; t < o_.tenants; ++t) {
    std::lock_guard<std::mutex> l(*tenant_mu_[t]);
    out.push_back(tenants_[t].admitted.size());
  }
  return out;
}

void ExceedsModel::Caller(int c) {
  std::mt19937_64 rng(loadgen::Mix64(o_.seed * 1000 + static_cast<uint64_t>(c)));
  std::unique_ptr<proto::IngestLimits::Stub> stub;
  uint64_t connected_generation = 0;
  const auto period = std::chrono::duration_cast<Steady::duration>(
      std::chrono::duration<double>(static_cast<double>(o_.callers) / std::max(o_.rate, 0.001)));
  auto next = Steady::now();
  for (;;) {
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [&] { return stop_ || port_ != 0; });
      if (stop_) return;
      if (generation_ != connected_generation) {
        grpc::ChannelArguments args;
        args.SetInt("grpc.channel_id", c);  // one connection per caller, as several frontends
        stub = proto::IngestLimits::NewStub(grpc::CreateCustomChannel(
            "127.0.0.1:" + std::to_string(port_), grpc::InsecureChannelCredentials(), args));
        connected_generation = generation_;
      }
    }
    // Open loop while serving; a pause (the node down) does not turn into a burst afterwards.
    next += period;
    const auto now = Steady::now();
    if (next < now - std::chrono::seconds(1)) next = now;
    std::this_thread::sleep_until(next);

    const auto t = static_cast<uint32_t>(rng() % o_.tenants);
    TenantModel& m = tenants_[t];
    proto::ExceedsLimitsRequest req;
    req.set_tenant(m.name);
    std::vector<uint64_t> fresh;
    {
      std::lock_guard<std::mutex> l(*tenant_mu_[t]);
      for (uint32_t i = 0; i < o_.new_per_request; ++i) fresh.push_back(StreamHash(t, m.next_new++));
      // Known streams: live admitted ones, distinct within the request.
      std::unordered_set<uint64_t> picked(fresh.begin(), fresh.end());
      const size_t live = std::min<size_t>(o_.live, m.admitted_order.size());
      const size_t first = m.admitted_order.size() - live;
      const size_t want = std::min<size_t>(o_.per_request - std::min<size_t>(o_.per_request, fresh.size()), live);
      for (size_t tries = 0; picked.size() < fresh.size() + want && tries < 4 * want; ++tries) {
        picked.insert(m.admitted_order[first + rng() % live]);
      }
      for (uint64_t h : picked) {
        proto::StreamMetadata* s = req.add_streams();
        s->set_streamhash(h);
        s->set_totalsize(100);
      }
    }
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + o_.deadline);
    proto::ExceedsLimitsResponse resp;
    const grpc::Status st = stub->ExceedsLimits(&ctx, req, &resp);
    const auto answered = Steady::now();

    bool admitted_new = false;
    {
      std::lock_guard<std::mutex> l(*tenant_mu_[t]);
      if (!st.ok()) {
        counters_.failed.fetch_add(1, std::memory_order_relaxed);
        for (const auto& s : req.streams()) {
          if (!m.admitted.count(s.streamhash())) m.maybe.insert(s.streamhash());
        }
      } else {
        counters_.ok.fetch_add(1, std::memory_order_relaxed);
        std::unordered_map<uint64_t, uint32_t> rejected;
        for (const auto& r : resp.results()) rejected[r.streamhash()] = r.reason();
        for (const auto& s : req.streams()) {
          const uint64_t h = s.streamhash();
          const auto it = rejected.find(h);
          if (it == rejected.end()) {
            counters_.streams_accepted.fetch_add(1, std::memory_order_relaxed);
            if (m.admitted.insert(h).second) {
              m.admitted_order.push_back(h);
              m.maybe.erase(h);
              admitted_new = true;
              counters_.streams_new_admitted.fetch_add(1, std::memory_order_relaxed);
            }
          } else if (it->second == 1) {
            ++m.reason1;
          } else if (it->second == 2) {
            ++m.reason2;
            if (m.admitted.count(h)) m.rejected_after_admit.insert(h);
          } else {
            ++m.reason_other;
          }
        }
      }
    }
    if (admitted_new) {
      std::lock_guard<std::mutex> l(mu_);
      ++admissions_;
      last_admission_ = answered;
      cv_.notify_all();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// ProduceModel

namespace {

// A record's (tenant, stream) as librdkafka's per-message opaque, so the delivery report
// names the stream it acknowledges.
void* Opaque(uint32_t t, uint64_t i) { return reinterpret_cast<void*>((static_cast<uintptr_t>(t) << 40) | i); }
uint64_t OpaqueId(void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }

}  // namespace

class ProduceModel::Reports final : public RdKafka::DeliveryReportCb {
 public:
  explicit Reports(ProduceModel& m) : m_(m) {}
  void dr_cb(RdKafka::Message& message) override {
    try {
      const uint64_t id = OpaqueId(message.msg_opaque());
      const auto t = static_cast<uint32_t>(id >> 40);
      const uint64_t i = id & ((uint64_t{1} << 40) - 1);
      const uint64_t hash = m_.StreamHash(t, i);
      std::lock_guard<std::mutex> l(m_.mu_);
      auto p = m_.pending_.find(id);
      if (p != m_.pending_.end() && --p->second == 0) m_.pending_.erase(p);
      if (message.err() == RdKafka::ERR_NO_ERROR) {
        m_.delivered_records_.fetch_add(1, std::memory_order_relaxed);
        m_.tenants_[t].delivered.insert(hash);
        m_.tenants_[t].failed.erase(hash);
      } else {
        m_.failed_records_.fetch_add(1, std::memory_order_relaxed);
        if (!m_.tenants_[t].delivered.count(hash)) m_.tenants_[t].failed.insert(hash);
      }
    } catch (...) {
    }
  }

 private:
  ProduceModel& m_;
};

ProduceModel::ProduceModel(const ProduceOptions& o) : o_(o), reports_(std::make_unique<Reports>(*this)) {
  for (uint32_t t = 0; t < o_.tenants; ++t) {
    tenants_.emplace_back();
    tenants_.back().name = o_.tenant_prefix + std::to_string(t);
  }
}

ProduceModel::~ProduceModel() { Stop(std::chrono::seconds(0)); }

uint64_t ProduceModel::StreamHash(uint32_t t, uint64_t i) const {
  return loadgen::Mix64(((static_cast<uint64_t>(t) << 40) | i) + loadgen::Mix64(o_.seed + 7) * 0x9e3779b97f4a7c15ULL);
}

Result<std::unique_ptr<ProduceModel>> ProduceModel::Start(const ProduceOptions& o) {
  auto m = std::unique_ptr<ProduceModel>(new ProduceModel(o));
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string err;
  for (const auto& [k, v] : std::map<std::string, std::string>{{"bootstrap.servers", o.brokers},
                                                               {"client.id", "crash-loop-producer"},
                                                               {"linger.ms", "50"},
                                                               {"compression.type", "lz4"},
                                                               {"acks", "all"}}) {
    if (conf->set(k, v, err) != RdKafka::Conf::CONF_OK) return Status::InvalidArgument(k + ": " + err);
  }
  if (conf->set("dr_cb", m->reports_.get(), err) != RdKafka::Conf::CONF_OK) return Status::Internal(err);
  m->producer_.reset(RdKafka::Producer::create(conf.get(), err));
  if (!m->producer_) return Status::InvalidArgument("producer: " + err);
  ProduceModel* self = m.get();
  m->thread_ = std::thread([self] { self->Run(); });
  return m;
}

void ProduceModel::Run() {
  std::mt19937_64 rng(loadgen::Mix64(o_.seed + 99));
  std::vector<uint64_t> next_new(o_.tenants, 0);
  const auto start = Steady::now();
  uint64_t n = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    const double elapsed = std::chrono::duration<double>(Steady::now() - start).count();
    const auto due = static_cast<uint64_t>(elapsed * o_.rate);
    while (n < due && !stop_.load(std::memory_order_relaxed)) {
      const auto t = static_cast<uint32_t>(n % o_.tenants);
      const bool fresh = next_new[t] == 0 || std::uniform_real_distribution<double>(0, 1)(rng) < o_.new_fraction;
      const uint64_t i = fresh ? next_new[t]++ : rng() % next_new[t];
      const uint64_t hash = StreamHash(t, i);
      const std::string& tenant = tenants_[t].name;
      std::string value = kafka::EncodeRecordValue(o_.zone, tenant, hash, 100, "");
      const auto partition = static_cast<int32_t>(hash % static_cast<uint64_t>(o_.partitions));
      const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch()).count();
      {
        std::lock_guard<std::mutex> l(mu_);
        ++pending_[OpaqueId(Opaque(t, i))];
      }
      const RdKafka::ErrorCode rc =
          producer_->produce(o_.topic, partition, RdKafka::Producer::RK_MSG_COPY, value.data(), value.size(),
                             tenant.data(), tenant.size(), now_ms, Opaque(t, i));
      if (rc == RdKafka::ERR__QUEUE_FULL) {
        std::lock_guard<std::mutex> l(mu_);
        if (--pending_[OpaqueId(Opaque(t, i))] == 0) pending_.erase(OpaqueId(Opaque(t, i)));
        producer_->poll(10);
        if (fresh) --next_new[t];
        continue;
      }
      ++n;
      queued_.fetch_add(1, std::memory_order_relaxed);
      if (rc != RdKafka::ERR_NO_ERROR) {
        std::lock_guard<std::mutex> l(mu_);
        if (--pending_[OpaqueId(Opaque(t, i))] == 0) pending_.erase(OpaqueId(Opaque(t, i)));
        failed_records_.fetch_add(1, std::memory_order_relaxed);
        if (!tenants_[t].delivered.count(hash)) tenants_[t].failed.insert(hash);
      }
    }
    producer_->poll(10);  // delivery reports; also the pacing tick
  }
}

void ProduceModel::Stop(std::chrono::milliseconds timeout) {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (!producer_) return;
  producer_->flush(static_cast<int>(timeout.count()));
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& [id, count] : pending_) {  // never reported: may or may not be on the topic
    const auto t = static_cast<uint32_t>(id >> 40);
    const uint64_t hash = StreamHash(t, id & ((uint64_t{1} << 40) - 1));
    if (!tenants_[t].delivered.count(hash)) tenants_[t].failed.insert(hash);
  }
  pending_.clear();
}

}  // namespace limits::bench
