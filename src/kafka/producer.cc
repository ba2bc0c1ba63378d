#include "kafka/producer.h"

#include "common/log.h"
#include "kafka/record_codec.h"
#include "limits/record_filter.h"

namespace limits::kafka {

class StreamProducer::DeliveryReports final : public RdKafka::DeliveryReportCb {
 public:
  explicit DeliveryReports(ProducerStats& stats) : stats_(stats) {}
  void dr_cb(RdKafka::Message& message) override {
    try {
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
};

StreamProducer::StreamProducer(Options options, const Clock& clock)
    : options_(std::move(options)), clock_(clock), reports_(std::make_unique<DeliveryReports>(stats_)) {}

Result<std::unique_ptr<StreamProducer>> StreamProducer::Create(const Options& options, const Clock& clock) {
  auto p = std::unique_ptr<StreamProducer>(new StreamProducer(options, clock));
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
  std::string value = EncodeRecordValue(options_.zone, tenant, stream_hash, total_size, policy);
  const auto partition = static_cast<int32_t>(stream_hash % static_cast<uint64_t>(options_.num_partitions));
  RdKafka::Headers* headers = RdKafka::Headers::create();
  headers->add(kInstanceHeader, options_.instance_id);
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
