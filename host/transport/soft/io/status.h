// Status and Result: the outcome of a setup or control-path operation of the
// soft transport's I/O (open an interface, resolve an address, a TCP
// exchange), with an actionable message when it failed. Not for the packet
// path. Thread-safety: plain values.
#pragma once

#include <string>
#include <utility>

namespace epic::soft::io {

struct Status {
  std::string error;  // empty: success
  bool ok() const { return error.empty(); }
  static Status success() { return {}; }
  static Status failure(std::string message) { return {std::move(message)}; }
};

template <typename T>
struct Result {
  T value{};
  std::string error;  // empty: `value` is meaningful
  bool ok() const { return error.empty(); }
};

template <typename T>
Result<T> make_error(std::string message) {
  Result<T> r;
  r.error = std::move(message);
  return r;
}

}  // namespace epic::soft::io
