#include "kafka/producer.h"

#include <prometheus/family.h>

#include "common/log.h"
#include "kafka/record_codec.h"
#include "limits/lifecycle/record_filter.h"

namespace limits::kafka {

class StreamProducer::DeliveryReports final : public RdKafka::DeliveryReportCb {
 public:
  DeliveryReports(ProducerStats& stats, prometheus::Histogram& latency) : stats_(stats), latency_(latency) {}
  void dr_cb(RdKafka::Message& message) override {
    try {
      const int64_t latency_us = message.latency();
      if (latency_us >= 0) latency_.Observe(static_cast<double>(latency_us) / 1e6);
      if (message.err() == RdKafka::ERR_NO_ERROR) {
        stats_.produced.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      // Log the first failure and then one in a thousand: a broker outage fails them all.
      if (stats_.failed.fetch_add(1, std::memory_order_relaxed) % 1000 == 0) {
        log::Warn("producer", "delivery failed").Kv("partition", message.partition()).Kv("error", message.errstr());
      }
    } catch (...) {
    }
  }

 private:
  ProducerStats& stats_;
  prometheus::Histogram& latency_;
};

StreamProducer::StreamProducer(Options options, const Clock& clock, prometheus::Histogram& latency)
    : options_(std::move(options)), clock_(clock), reports_(std::make_unique<DeliveryReports>(stats_, latency)) {}

Result<std::unique_ptr<StreamProducer>> StreamProducer::Create(const Options& options, const Clock& clock,
                                                               prometheus::Registry& registry) {
  prometheus::Histogram& latency =
      prometheus::BuildHistogram()
          .Name("limitsd_produce_latency_seconds")
          .Help("Time from queueing an accepted stream's record to its delivery report.")
          .Register(registry)
          .Add({}, prometheus::Histogram::BucketBoundaries{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                                           2.5, 5, 10});
  auto p = std::unique_ptr<StreamProducer>(new StreamProducer(options, clock, latency));
  ASSIGN_OR_RETURN(std::unique_ptr<RdKafka::Conf> conf,
                   MakeConf(ProducerDefaults(options.brokers, options.instance_id), options.properties));
  std::string err;
  if (conf->set("dr_cb", p->reports_.get(), err) != RdKafka::Conf::CONF_OK) return Status::Internal(err);
  p->producer_.reset(RdKafka::Producer::create(conf.get(), err));
  if (!p->producer_) return Status::InvalidArgument("producer: " + err);
  StreamProducer* self = p.get();
  p->poller_ = std::thread([self] {
    while (!self->stop_.load(std::memory_order_relaxed)) self->producer_->poll(100);
  });
  return p;
}

StreamProducer::~StreamProducer() {
  stop_ = true;
  if (poller_.joinable()) poller_.join();
}

void StreamProducer::Produce(const std::string& tenant, uint64_t stream_hash, uint64_t total_size,
                             const std::string& policy) {
  stats_.attempted.fetch_add(1, std::memory_order_relaxed);
  std::string value = EncodeRecordValue(options_.zone, tenant, stream_hash, total_size, policy);
  const auto partition = static_cast<int32_t>(stream_hash % static_cast<uint64_t>(options_.num_partitions));
  RdKafka::Headers* headers = RdKafka::Headers::create();
  headers->add(kInstanceHeader, options_.run_tag);
  const RdKafka::ErrorCode rc =
      producer_->produce(options_.topic, partition, RdKafka::Producer::RK_MSG_COPY, value.data(), value.size(),
                         tenant.data(), tenant.size(), clock_.NowMillis(), headers, nullptr);
  if (rc != RdKafka::ERR_NO_ERROR) {
    delete headers;  // produce() takes them only on success
    if (stats_.failed.fetch_add(1, std::memory_order_relaxed) % 1000 == 0) {
      log::Warn("producer", "record not queued").Kv("partition", partition).Kv("error", RdKafka::err2str(rc));
    }
  }
}

Status StreamProducer::Flush(std::chrono::milliseconds timeout) {
  return FromKafka(producer_->flush(static_cast<int>(timeout.count())), "flush producer");
}

}  // namespace limits::kafka
