// FrameSink: where an engine writes the frames it emits, one at a time — a
// buffer of at most `max_len` bytes, then its real length and output port.
// The engine stays DPDK-free: the worker's sink hands out fresh mbufs, so a
// frame is built once, in the buffer it leaves in (datapath/dpdk/worker.cc);
// TxBatch (tx_batch.h) collects frames in an arena for tests and tools.
// Hot path: one virtual call per reserve and per commit.
#pragma once

#include <cstddef>
#include <cstdint>

namespace epic::engine {

class FrameSink {
 public:
  // Space for a frame of at most `max_len` bytes, uninitialised, valid until commit() or
  // cancel(); exactly one of them follows every reserve().
  virtual uint8_t* reserve(size_t max_len) = 0;
  // The reserved frame, `len` bytes of it, goes out on `port`.
  virtual void commit(uint16_t port, size_t len) = 0;
  // The reserved frame is not sent.
  virtual void cancel() = 0;

 protected:
  FrameSink() = default;
  FrameSink(const FrameSink&) = default;
  FrameSink& operator=(const FrameSink&) = default;
  ~FrameSink() = default;
};

}  // namespace epic::engine
