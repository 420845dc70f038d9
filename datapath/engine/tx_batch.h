// Frames an engine emits during one process() call: (output port, bytes),
// written into a reusable arena so the packet path does not allocate once the
// arena has grown to its working size.
#pragma once

#include <cstdint>
#include <vector>

namespace epic::engine {

class TxBatch {
 public:
  struct Frame {
    uint16_t port;
    uint32_t offset;
    uint16_t length;
  };
  TxBatch() {
    arena_.reserve(1 << 20);
    frames_.reserve(1024);
  }
  // Space for a frame of at most `max_len` bytes on `port`; commit() with its real length.
  uint8_t* reserve(size_t max_len) {
    if (arena_.size() + max_len > arena_.capacity()) arena_.reserve(2 * (arena_.size() + max_len));
    pending_ = arena_.size();
    arena_.resize(arena_.size() + max_len);
    return arena_.data() + pending_;
  }
  void commit(uint16_t port, size_t len) {
    arena_.resize(pending_ + len);
    frames_.push_back({port, static_cast<uint32_t>(pending_), static_cast<uint16_t>(len)});
  }
  // Gives back the space of the last reserve() without committing a frame.
  void cancel() { arena_.resize(pending_); }
  void clear() {
    arena_.clear();
    frames_.clear();
  }
  size_t size() const { return frames_.size(); }
  const Frame& frame(size_t i) const { return frames_[i]; }
  const uint8_t* data(size_t i) const { return arena_.data() + frames_[i].offset; }

 private:
  std::vector<uint8_t> arena_;
  std::vector<Frame> frames_;
  size_t pending_ = 0;
};

}  // namespace epic::engine
