#include "host/transport/verbs/verbs_util.h"

#include <cstdio>
#include <cstring>

namespace epic::verbs {

std::optional<ibv_mtu> mtu_enum(uint32_t bytes) {
  switch (bytes) {
    case 256:
      return IBV_MTU_256;
    case 512:
      return IBV_MTU_512;
    case 1024:
      return IBV_MTU_1024;
    case 2048:
      return IBV_MTU_2048;
    case 4096:
      return IBV_MTU_4096;
    default:
      return std::nullopt;
  }
}

uint32_t mtu_bytes(ibv_mtu mtu) {
  switch (mtu) {
    case IBV_MTU_256:
      return 256;
    case IBV_MTU_512:
      return 512;
    case IBV_MTU_1024:
      return 1024;
    case IBV_MTU_2048:
      return 2048;
    case IBV_MTU_4096:
      return 4096;
  }
  return 0;
}

ibv_gid gid_of_ipv4(uint32_t ipv4) {
  ibv_gid g{};
  g.raw[10] = 0xff;
  g.raw[11] = 0xff;
  for (int i = 0; i < 4; ++i) g.raw[12 + i] = static_cast<uint8_t>(ipv4 >> (24 - 8 * i));
  return g;
}

std::optional<uint32_t> ipv4_of_gid(const ibv_gid& gid) {
  for (int i = 0; i < 10; ++i) {
    if (gid.raw[i] != 0) return std::nullopt;
  }
  if (gid.raw[10] != 0xff || gid.raw[11] != 0xff) return std::nullopt;
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = v << 8 | gid.raw[12 + i];
  return v;
}

std::string format_gid(const ibv_gid& gid) {
  char b[48];
  int n = 0;
  for (int i = 0; i < 16; i += 2) {
    n += std::snprintf(b + n, sizeof b - static_cast<size_t>(n), "%s%02x%02x", i ? ":" : "",
                       gid.raw[i], gid.raw[i + 1]);
  }
  return std::string(b, static_cast<size_t>(n));
}

soft::WcStatus map_status(ibv_wc_status s) {
  using W = soft::WcStatus;
  switch (s) {
    case IBV_WC_SUCCESS:
      return W::kSuccess;
    case IBV_WC_LOC_LEN_ERR:
      return W::kLocLenErr;
    case IBV_WC_REM_INV_REQ_ERR:
      return W::kRemInvReqErr;
    case IBV_WC_REM_ACCESS_ERR:
      return W::kRemAccessErr;
    case IBV_WC_REM_OP_ERR:
      return W::kRemOpErr;
    case IBV_WC_RETRY_EXC_ERR:
      return W::kRetryExcErr;
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return W::kRnrRetryExcErr;
    case IBV_WC_WR_FLUSH_ERR:
      return W::kWrFlushErr;
    default:
      return W::kRemOpErr;
  }
}

const char* qp_state_name(ibv_qp_state s) {
  switch (s) {
    case IBV_QPS_RESET:
      return "RESET";
    case IBV_QPS_INIT:
      return "INIT";
    case IBV_QPS_RTR:
      return "RTR";
    case IBV_QPS_RTS:
      return "RTS";
    case IBV_QPS_SQD:
      return "SQD";
    case IBV_QPS_SQE:
      return "SQE";
    case IBV_QPS_ERR:
      return "ERR";
    default:
      return "UNKNOWN";
  }
}

std::string port_state_name(ibv_port_state s) {
  switch (s) {
    case IBV_PORT_NOP:
      return "NOP";
    case IBV_PORT_DOWN:
      return "DOWN";
    case IBV_PORT_INIT:
      return "INIT";
    case IBV_PORT_ARMED:
      return "ARMED";
    case IBV_PORT_ACTIVE:
      return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER:
      return "ACTIVE_DEFER";
  }
  return "state " + std::to_string(static_cast<int>(s));
}

}  // namespace epic::verbs
