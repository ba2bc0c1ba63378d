// PartitionSet: a set of partition numbers (e.g. the partitions this node serves), as a bitmap.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace limits {

class PartitionSet {
 public:
  PartitionSet() = default;
  PartitionSet(std::initializer_list<int32_t> partitions) {
    for (int32_t p : partitions) Add(p);
  }
  static PartitionSet All(int32_t num_partitions) {
    PartitionSet s;
    for (int32_t p = 0; p < num_partitions; ++p) s.Add(p);
    return s;
  }

  void Add(int32_t p) {
    const auto word = static_cast<size_t>(p) / 64;
    if (word >= words_.size()) words_.resize(word + 1, 0);
    if (!Contains(p)) ++count_;
    words_[word] |= uint64_t{1} << (p % 64);
  }
  void Remove(int32_t p) {
    if (!Contains(p)) return;
    words_[static_cast<size_t>(p) / 64] &= ~(uint64_t{1} << (p % 64));
    --count_;
  }
  bool Contains(int32_t p) const {
    const auto word = static_cast<size_t>(p) / 64;
    return p >= 0 && word < words_.size() && (words_[word] >> (p % 64)) & 1;
  }
  uint32_t Count() const { return count_; }
  bool empty() const { return count_ == 0; }

  std::vector<int32_t> ToVector() const {
    std::vector<int32_t> out;
    for (size_t w = 0; w < words_.size(); ++w) {
      for (int b = 0; b < 64; ++b) {
        if ((words_[w] >> b) & 1) out.push_back(static_cast<int32_t>(w * 64 + b));
      }
    }
    return out;
  }

 private:
  std::vector<uint64_t> words_;
  uint32_t count_ = 0;
};

}  // namespace limits
