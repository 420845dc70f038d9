// libFuzzer target for the RoCEv2 parser. Beyond "no crash, no overread"
// (ASan/UBSan), it checks properties every accepted frame must have:
//   - the view's offsets are ordered and inside the buffer;
//   - rebuilding the frame from its parsed fields gives a frame that parses
//     again to the same fields (encode/decode are inverse on accepted input);
//   - with checks on, the rebuilt frame's bytes equal the input's.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "datapath/wire/parser.h"
#include "datapath/wire/roce_packet.h"

namespace w = epic::wire;

static void require(bool cond) {
  if (!cond) std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Lenient first (reaches the deeper checks on random bytes), then strict.
  const w::ParseOptions lenient{.verify_ipv4_checksum = false, .verify_icrc = false};
  const auto r = w::parse(data, size, lenient);
  if (!r.ok()) return 0;
  const w::PacketView& v = r.view;
  require(v.l3_off < v.l4_off && v.l4_off < v.bth_off);
  require(v.bth_off + 12u + v.op->ext_len == v.payload_off);
  require(v.payload_off + v.payload_len == v.icrc_off);
  require(v.icrc_off + 4u == v.frame_len && v.frame_len <= size);
  require(v.pad_count() <= v.payload_len);

  const w::RocePacket p = w::decode(v);
  const auto rebuilt = w::encode(p);
  const auto again = w::parse(rebuilt.data(), rebuilt.size());
  require(again.ok());  // encode derives valid checksum and ICRC
  require(w::decode(again.view) == p);

  const auto strict = w::parse(data, size);
  if (strict.ok()) {
    require(rebuilt.size() == v.frame_len);
    for (size_t i = 0; i < rebuilt.size(); ++i) require(rebuilt[i] == data[i]);
  }
  return 0;
}
