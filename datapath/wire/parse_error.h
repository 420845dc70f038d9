// Why the parser rejected a frame. Every rejection has its own code so that
// a switch can count drops per reason; names are stable (they appear in
// metrics and in `inc-wire decode` output).
#pragma once

#include <cstdint>
#include <string_view>

namespace epic::wire {

#define EPIC_PARSE_ERRORS(X)                                                    \
  X(kOk, "ok")                                                                  \
  X(kTruncatedEthernet, "truncated_ethernet")                                   \
  X(kTruncatedVlan, "truncated_vlan")                                           \
  X(kNotIp, "not_ip") /* EtherType is neither IPv4 nor IPv6 */                  \
  X(kTruncatedIpv4, "truncated_ipv4")                                           \
  X(kBadIpVersion, "bad_ip_version")                                            \
  X(kIpv4Options, "ipv4_options")                                               \
  X(kIpv4Fragment, "ipv4_fragment")                                             \
  X(kIpv4BadTotalLength, "ipv4_bad_total_length")    /* shorter than IP+UDP */  \
  X(kIpv4TruncatedPayload, "ipv4_truncated_payload") /* frame < total length */ \
  X(kIpv4BadChecksum, "ipv4_bad_checksum")                                      \
  X(kTruncatedIpv6, "truncated_ipv6")                                           \
  X(kIpv6TruncatedPayload, "ipv6_truncated_payload")                            \
  X(kNotUdp, "not_udp") /* includes IPv6 extension headers */                   \
  X(kUdpLengthMismatch, "udp_length_mismatch")                                  \
  X(kNotRoceV2Port, "not_rocev2_port")                                          \
  X(kTruncatedBth, "truncated_bth")                                             \
  X(kBadTransportVersion, "bad_transport_version")                              \
  X(kUnknownOpcode, "unknown_opcode")                                           \
  X(kTruncatedExtHeaders, "truncated_ext_headers")                              \
  X(kMissingIcrc, "missing_icrc")                                               \
  X(kUnexpectedPayload, "unexpected_payload")                                   \
  X(kPadExceedsPayload, "pad_exceeds_payload")                                  \
  X(kPadNotAllowed, "pad_not_allowed") /* pad on FIRST/MIDDLE or no payload */  \
  X(kPayloadTooLarge, "payload_too_large")                                      \
  X(kBadIcrc, "bad_icrc")

enum class ParseError : uint8_t {
#define EPIC_X(code, name) code,
  EPIC_PARSE_ERRORS(EPIC_X)
#undef EPIC_X
      kCount
};

inline constexpr int kParseErrorCount = static_cast<int>(ParseError::kCount);

std::string_view to_string(ParseError e);

}  // namespace epic::wire
