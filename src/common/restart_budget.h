// RestartBudget: how often a component may recover by restarting before it gives up — at
// most `max_restarts` within any `window`. A fault that restarting ends comes back rarely;
// one that it does not (a genuine duplicate instance id fencing us again and again, a
// consumer that stalls again right after its restart) exhausts the budget, and the caller
// reports itself dead instead (for the node: /live fails, Kubernetes restarts the pod).
// Not thread-safe: one owner thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>

namespace limits {

class RestartBudget {
 public:
  RestartBudget(int max_restarts, std::chrono::milliseconds window) : max_(max_restarts), window_ms_(window.count()) {}

  // A restart at `now_ms` (any monotonic or wall milliseconds): true when it is within the
  // budget (and is counted), false when it would be one too many in the window.
  bool TrySpend(int64_t now_ms) {
    while (!spent_.empty() && now_ms - spent_.front() >= window_ms_) spent_.pop_front();
    if (static_cast<int>(spent_.size()) >= max_) return false;
    spent_.push_back(now_ms);
    return true;
  }

  // Restarts counted within the window ending at `now_ms`.
  int Spent(int64_t now_ms) const {
    int n = 0;
    for (int64_t t : spent_) n += now_ms - t < window_ms_;
    return n;
  }

 private:
  const int max_;
  const int64_t window_ms_;
  std::deque<int64_t> spent_;
};

}  // namespace limits
