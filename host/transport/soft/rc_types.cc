#include "host/transport/soft/rc_types.h"

namespace epic::soft {

std::string_view to_string(WcStatus s) {
  switch (s) {
    case WcStatus::kSuccess:
      return "success";
    case WcStatus::kLocLenErr:
      return "local_length_error";
    case WcStatus::kRemInvReqErr:
      return "remote_invalid_request";
    case WcStatus::kRemAccessErr:
      return "remote_access_error";
    case WcStatus::kRemOpErr:
      return "remote_operational_error";
    case WcStatus::kRetryExcErr:
      return "retry_exceeded";
    case WcStatus::kRnrRetryExcErr:
      return "rnr_retry_exceeded";
    case WcStatus::kWrFlushErr:
      return "flushed";
  }
  return "invalid";
}

}  // namespace epic::soft
