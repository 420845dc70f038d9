// Frames an engine emits during one process() call: (output port, bytes),
// written into a reusable arena so the packet path does not allocate once the
// arena has grown to its working size. The arena is never zero-filled: each
// frame's bytes are written once, by whoever reserved them (TranslateHeader).
// The FrameSink of tests, tools and the switching pipeline's replies.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "datapath/engine/frame_sink.h"

namespace epic::engine {

class TxBatch final : public FrameSink {
 public:
  struct Frame {
    uint16_t port;
    uint32_t offset;
    uint16_t length;
  };
  TxBatch() {
    grow(1 << 20);
    frames_.reserve(1024);
  }
  // Space for a frame of at most `max_len` bytes on `port`, uninitialised; commit() with its
  // real length.
  uint8_t* reserve(size_t max_len) override {
    if (used_ + max_len > capacity_) grow(2 * (used_ + max_len));
    pending_ = used_;
    used_ += max_len;
    return arena_.get() + pending_;
  }
  void commit(uint16_t port, size_t len) override {
    used_ = pending_ + len;
    frames_.push_back({port, static_cast<uint32_t>(pending_), static_cast<uint16_t>(len)});
  }
  // Gives back the space of the last reserve() without committing a frame.
  void cancel() override { used_ = pending_; }
  void clear() {
    used_ = 0;
    frames_.clear();
  }
  size_t size() const { return frames_.size(); }
  const Frame& frame(size_t i) const { return frames_[i]; }
  const uint8_t* data(size_t i) const { return arena_.get() + frames_[i].offset; }

 private:
  void grow(size_t capacity) {
    auto bigger = std::make_unique_for_overwrite<uint8_t[]>(capacity);
    if (used_ > 0) std::memcpy(bigger.get(), arena_.get(), used_);
    arena_ = std::move(bigger);
    capacity_ = capacity;
  }

  std::unique_ptr<uint8_t[]> arena_;
  size_t capacity_ = 0;
  size_t used_ = 0;  // bytes of committed frames (and of a pending reserve())
  std::vector<Frame> frames_;
  size_t pending_ = 0;
};

}  // namespace epic::engine
