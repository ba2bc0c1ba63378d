#include "kafka/fetch_waker.h"

#include <memory>
#include <utility>

namespace limits::kafka {
namespace {

// At most one wake-up per this interval: a kick is a round trip per broker.
constexpr std::chrono::milliseconds kMinInterval{2};

struct ListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* l) const { rd_kafka_topic_partition_list_destroy(l); }
};

}  // namespace

FetchWaker::FetchWaker(rd_kafka_t* rk, std::string topic, int32_t partitions, size_t threshold,
                       std::atomic<uint64_t>& wakes)
    : rk_(rk), topic_(std::move(topic)), partitions_(partitions), threshold_(threshold), wakes_(wakes) {}

FetchWaker::~FetchWaker() { Stop(); }

void FetchWaker::Start() { thread_ = std::thread([this] { Run(); }); }

void FetchWaker::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void FetchWaker::Observe(size_t queued) {
  // The broker thread compares the queue with the threshold when it handles a response, and
  // the consumer drains up to 1000 records between two reports: a queue at half the threshold
  // may already have stopped the fetching. A needless wake-up costs one round trip.
  if (queued >= threshold_ / 2) armed_ = true;
  if (!armed_ || queued >= threshold_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_request_ < kMinInterval) return;
  last_request_ = now;
  armed_ = false;
  {
    std::lock_guard lock(mu_);
    requested_ = true;
  }
  cv_.notify_one();
}

void FetchWaker::Run() {
  // Every partition, not only the assigned ones: librdkafka sends one request per leader,
  // and the assignment may change under us. The answers are not needed.
  std::unique_ptr<rd_kafka_topic_partition_list_t, ListDeleter> list(rd_kafka_topic_partition_list_new(partitions_));
  for (int32_t p = 0; p < partitions_; ++p) rd_kafka_topic_partition_list_add(list.get(), topic_.c_str(), p);
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || requested_; });
    if (stop_) return;
    requested_ = false;
    lock.unlock();
    for (int i = 0; i < list->cnt; ++i) {
      list->elems[i].offset = RD_KAFKA_OFFSET_END;  // as a timestamp: the latest offset
      list->elems[i].err = RD_KAFKA_RESP_ERR_NO_ERROR;
    }
    (void)rd_kafka_offsets_for_times(rk_, list.get(), 1000);
    wakes_.fetch_add(1, std::memory_order_relaxed);
    lock.lock();
  }
}

}  // namespace limits::kafka
