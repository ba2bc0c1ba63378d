// BroadcastQueue: messages waiting to be gossiped, each sent up to a retransmit limit that grows
// with the cluster (memberlist's TransmitLimitedQueue: mult * ceil(log10(n + 1))); the least
// transmitted go first. A new message supersedes queued ones of the same key whose content it
// covers (dskit's ringBroadcast.Invalidates; memberlist's alive/suspect/dead about one node).
// Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace limits::ring::memberlist {

class BroadcastQueue {
 public:
  explicit BroadcastQueue(int retransmit_mult) : retransmit_mult_(retransmit_mult) {}

  // Queues `msg`; returns its id. Queued messages with the same key whose content is a subset
  // of `content` and whose version is not newer are dropped.
  uint64_t Queue(std::string key, std::vector<std::string> content, uint64_t version, std::string msg);

  // Messages to send now, each costing `overhead` + its size, within `limit` bytes; counts a
  // transmission of each and drops those that reached the limit for `num_nodes` members.
  std::vector<std::string> Take(int overhead, int64_t limit, int num_nodes);

  // Whether message `id` is still queued (neither sent out fully nor superseded).
  bool Pending(uint64_t id) const;
  size_t size() const;
  size_t bytes() const;

  static int RetransmitLimit(int mult, int num_nodes);

 private:
  struct Item {
    uint64_t id;
    std::string key;
    std::vector<std::string> content;  // sorted
    uint64_t version;
    std::string msg;
    int transmits;
  };

  const int retransmit_mult_;
  mutable std::mutex mu_;
  std::vector<Item> items_;  // GUARDED_BY(mu_)
  uint64_t next_id_ = 1;     // GUARDED_BY(mu_)
};

}  // namespace limits::ring::memberlist
