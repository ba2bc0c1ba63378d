// FetchWaker: restarts librdkafka's fetching as soon as the consumer has drained its queue.
//
// librdkafka 2.0.2 stops fetching a partition while the consumer's queue holds
// queued.min.messages records (or queued.max.messages.kbytes) and decides again only when its
// broker thread next wakes: on a response, an op, or after up to 1 s idle (2.1 added
// fetch.queue.backoff.ms for this). With a queue small enough to bound a replay's memory,
// those idle seconds made replays several times slower; with a large queue, a cold replay
// held hundreds of MiB of prefetched records. A request to every partition's leader wakes
// each broker thread, which then fetches again at once: the consumer reports the queue's
// length after each drain, and once it was near the threshold and is below it again, a
// thread of its own sends ListOffsets (latest) for the topic's partitions — one request per
// leader, answered from the broker's memory.
#pragma once

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace limits::kafka {

class FetchWaker {
 public:
  // `rk` (the consumer's handle) must outlive Stop(); `threshold` is its queued.min.messages;
  // `wakes` counts the wake-ups sent and must outlive it too.
  FetchWaker(rd_kafka_t* rk, std::string topic, int32_t partitions, size_t threshold, std::atomic<uint64_t>& wakes);
  ~FetchWaker();
  FetchWaker(const FetchWaker&) = delete;
  FetchWaker& operator=(const FetchWaker&) = delete;

  void Start();
  void Stop();

  // The consumer thread, after a drain: librdkafka's queue holds `queued` records.
  void Observe(size_t queued);

 private:
  void Run();

  rd_kafka_t* const rk_;
  const std::string topic_;
  const int32_t partitions_;
  const size_t threshold_;
  std::atomic<uint64_t>& wakes_;
  // Consumer thread only.
  bool armed_ = false;
  std::chrono::steady_clock::time_point last_request_{};

  std::mutex mu_;
  std::condition_variable cv_;
  bool requested_ = false;  // GUARDED_BY(mu_)
  bool stop_ = false;       // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace limits::kafka
