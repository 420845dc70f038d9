// One RoCEv2 frame as a line of `key=value` fields, the text format of
// `inc-wire` (and of the scapy oracle test that drives it).
//
// Integers are decimal or 0x-hex; MAC/IP addresses in their usual text form;
// payload is hex. decode output lists every field of the frame; encode input
// may omit any field (RocePacket defaults apply). Unknown keys are an error.
#pragma once

#include <string>
#include <string_view>

#include "datapath/wire/parser.h"
#include "datapath/wire/roce_packet.h"

namespace epic::tools {

// Fields of a parsed frame, including `opname`, `icrc` and `icrc_ok`.
std::string format_fields(const wire::PacketView& v);

struct KvParse {
  wire::RocePacket packet;
  std::string error;  // empty on success, else names the bad field
};
KvParse parse_fields(std::string_view line);

std::string to_hex(const uint8_t* data, size_t len);
bool from_hex(std::string_view hex, std::vector<uint8_t>& out);

}  // namespace epic::tools
