#include "ring/memberlist/broadcast_queue.h"

#include <algorithm>
#include <cmath>

namespace limits::ring::memberlist {

int BroadcastQueue::RetransmitLimit(int mult, int num_nodes) {
  const double scale = std::ceil(std::log10(static_cast<double>(num_nodes) + 1.0));
  return mult * static_cast<int>(scale);
}

uint64_t BroadcastQueue::Queue(std::string key, std::vector<std::string> content, uint64_t version,
                               std::string msg) {
  std::sort(content.begin(), content.end());
  std::lock_guard<std::mutex> lock(mu_);
  items_.erase(std::remove_if(items_.begin(), items_.end(),
                              [&](const Item& old) {
                                return old.key == key && version >= old.version &&
                                       std::includes(content.begin(), content.end(), old.content.begin(),
                                                     old.content.end());
                              }),
               items_.end());
  const uint64_t id = next_id_++;
  items_.push_back(Item{id, std::move(key), std::move(content), version, std::move(msg), 0});
  return id;
}

std::vector<std::string> BroadcastQueue::Take(int overhead, int64_t limit, int num_nodes) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  if (items_.empty()) return out;
  const int max_transmits = RetransmitLimit(retransmit_mult_, num_nodes);
  // Fewest transmissions first; among equals the newest.
  std::vector<size_t> order(items_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (items_[a].transmits != items_[b].transmits) return items_[a].transmits < items_[b].transmits;
    return items_[a].id > items_[b].id;
  });
  int64_t used = 0;
  std::vector<bool> drop(items_.size(), false);
  for (size_t idx : order) {
    Item& item = items_[idx];
    const int64_t cost = overhead + static_cast<int64_t>(item.msg.size());
    if (used + cost > limit) continue;
    used += cost;
    out.push_back(item.msg);
    if (++item.transmits >= max_transmits) drop[idx] = true;
  }
  size_t w = 0;
  for (size_t r = 0; r < items_.size(); ++r) {
    if (drop[r]) continue;
    if (w != r) items_[w] = std::move(items_[r]);
    ++w;
  }
  items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(w), items_.end());
  return out;
}

bool BroadcastQueue::Pending(uint64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::any_of(items_.begin(), items_.end(), [&](const Item& i) { return i.id == id; });
}

size_t BroadcastQueue::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return items_.size();
}

size_t BroadcastQueue::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& i : items_) n += i.msg.size();
  return n;
}

}  // namespace limits::ring::memberlist
