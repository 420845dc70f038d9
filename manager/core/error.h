// Errors of IncManager's core: a code that maps one-to-one onto a gRPC status code (the
// numeric values are gRPC's, so the service can cast), and a message a person can act on
// ("rank 2 (10.77.0.9): no switch port is known for this address"). Status is "ok or an Error";
// Result<T> is "a T or an Error". No exceptions cross the core's API.
// Threading: plain values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace epic::manager {

// Values are gRPC's status codes (grpc::StatusCode).
enum class ErrorCode : int {
  kInvalidArgument = 3,     // the request is malformed whatever the state of the system
  kDeadlineExceeded = 4,    // a rendezvous did not complete in time
  kNotFound = 5,            // unknown switch, port, tenant, group or rank address
  kAlreadyExists = 6,       // duplicate switch, address, link, group name, rank endpoint
  kResourceExhausted = 8,   // no INC memory now (the rank library falls back to the host)
  kFailedPrecondition = 9,  // cannot be admitted until the topology, quotas or state change
  kInternal = 13,           // the store file could not be written
  kUnavailable = 14,        // an IncAgent refused or did not apply an action
  kDataLoss = 15,           // the store file is corrupted
};

// "INVALID_ARGUMENT", "RESOURCE_EXHAUSTED", ... (gRPC's names).
std::string_view error_code_name(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message{};
  std::string to_string() const;  // "RESOURCE_EXHAUSTED: no INC memory: ..."
  friend bool operator==(const Error&, const Error&) = default;
};

inline Error make_error(ErrorCode code, std::string message) { return {code, std::move(message)}; }

class Status {
 public:
  Status() = default;                        // ok
  Status(Error e) : error_(std::move(e)) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return !error_.has_value(); }
  const Error& error() const { return *error_; }

 private:
  std::optional<Error> error_{};
};

template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Error e) : v_(std::move(e)) {}      // NOLINT(google-explicit-constructor)
  bool ok() const { return v_.index() == 0; }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  const Error& error() const { return std::get<1>(v_); }
  Status status() const { return ok() ? Status() : Status(error()); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace epic::manager
