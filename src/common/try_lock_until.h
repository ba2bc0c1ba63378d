// TryLockUntil: takes a lock if it becomes free before a deadline, spinning meanwhile. For a
// thread that must not block (gRPC's) but may wait a few microseconds for a short hold by
// another request, instead of handing its call to another thread at once.
#pragma once

#include <chrono>

namespace limits {

template <typename Lockable>
bool TryLockUntil(Lockable& lock, std::chrono::steady_clock::time_point deadline) {
  for (unsigned i = 0;; ++i) {
    if (lock.try_lock()) return true;
    if (i % 16 == 0 && std::chrono::steady_clock::now() >= deadline) return false;  // a past deadline: one try
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

}  // namespace limits
