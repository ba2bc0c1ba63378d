// AskStripes: turns for the urgent asks of a bucket at its home, one at a time per stripe (by
// the bucket's hash), from the calls an ask needs to its answer (ZoneAgent::Exchange). A turn
// is waited for until the asker's deadline. A flag and a condition variable, not a timed
// mutex: ThreadSanitizer does not see pthread_mutex_clocklock, which libstdc++'s
// timed_mutex::try_lock_until takes.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "common/deadline.h"

namespace limits::zone {

class AskStripes {
  struct Stripe {
    std::mutex mu;
    std::condition_variable freed;
    bool taken = false;  // GUARDED_BY(mu)
  };

 public:
  // A stripe's turn, until it is destroyed.
  class Turn {
   public:
    explicit Turn(Stripe* stripe) : stripe_(stripe) {}
    Turn(Turn&& other) noexcept : stripe_(std::exchange(other.stripe_, nullptr)) {}
    Turn& operator=(Turn&&) = delete;
    ~Turn() {
      if (stripe_ == nullptr) return;
      {
        std::lock_guard lock(stripe_->mu);
        stripe_->taken = false;
      }
      stripe_->freed.notify_one();
    }

   private:
    Stripe* stripe_;
  };

  // The turns of the stripes `hashes` fall on, taken in stripe order (two askers never wait on
  // each other); nullopt when `deadline` came first (the turns taken are given back).
  std::optional<std::vector<Turn>> Take(const std::vector<uint64_t>& hashes, Deadline deadline) {
    std::set<size_t> indices;
    for (uint64_t h : hashes) indices.insert(h % stripes_.size());
    std::vector<Turn> turns;
    for (size_t i : indices) {
      Stripe& s = stripes_[i];
      std::unique_lock lock(s.mu);
      auto free = [&] { return !s.taken; };
      if (deadline == kNoDeadline) {
        s.freed.wait(lock, free);
      } else if (!s.freed.wait_until(lock, deadline, free)) {
        return std::nullopt;
      }
      s.taken = true;
      turns.emplace_back(&s);
    }
    return turns;
  }

 private:
  std::array<Stripe, 256> stripes_;
};

}  // namespace limits::zone
