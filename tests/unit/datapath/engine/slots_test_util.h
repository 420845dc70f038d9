// Helpers for the slot modules' packet tables (check_duplicate, aggregate_data, recycle_buffer)
// and classify(): a slot written out field by field, so that a table row's expected slot is
// compared whole and a mismatch names the field; and a group with rank children, a switch
// child and a parent.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

#include "datapath/engine/group.h"
#include "datapath/engine/slot.h"

namespace epic::engine::slots_test {

inline const char* name(SlotState s) {
  switch (s) {
    case SlotState::kEmpty:
      return "empty";
    case SlotState::kAggregating:
      return "aggregating";
    case SlotState::kSentUp:
      return "sent_up";
    case SlotState::kComplete:
      return "complete";
  }
  return "?";
}

// Every field of `s`, as "psn=… used=… state=… …".
inline std::string describe(const Slot& s) {
  std::ostringstream o;
  o << std::hex << "psn=0x" << s.psn << std::dec << " used=" << s.used << " state=" << name(s.state)
    << " control=" << s.control << " opcode=" << int{s.opcode} << " len=" << s.payload_len
    << " degree=" << s.degree << " bitmap=0x" << std::hex << s.bitmap << " immdt=0x" << s.immdt
    << std::dec << " dtype=" << int{static_cast<uint8_t>(s.dtype)}
    << " op=" << int{static_cast<uint8_t>(s.op)};
  return o.str();
}

// A slot as a row writes it: the fields check_duplicate and the recycle rules read.
inline Slot slot(bool used, uint32_t psn, SlotState state, uint64_t bitmap = 0,
                 uint16_t degree = 0) {
  Slot s;
  s.used = used;
  s.psn = psn;
  s.state = state;
  s.bitmap = bitmap;
  s.degree = degree;
  return s;
}

// A group of four ranks at a non-root switch: child 0 and child 1 are ranks 0 and 1 (first
// hop), child 2 is a lower switch with ranks 2 and 3 below it; the parent is the switch above.
inline GroupConfig three_child_group(uint32_t window = 4) {
  GroupConfig cfg;
  cfg.group_id = 9;
  cfg.num_ranks = 4;
  cfg.window = window;
  cfg.pmtu = 256;
  cfg.initial_psn = 100;
  const vocab::MacAddr local_mac{2, 0xEE, 0, 0, 0, 1};
  for (uint16_t c = 0; c < 3; ++c) {
    ChildLink l;
    l.local = {local_mac, 0x0AC80001, 0x4000u + c};
    l.remote = {{2, 0xAA, 0, 0, 0, static_cast<uint8_t>(c)}, 0x0A640000u + c, 0x100u + c};
    l.port = c;
    l.is_rank = c < 2;
    l.first_rank = c;
    l.rank_count = c < 2 ? 1 : 2;
    cfg.children.push_back(l);
  }
  ParentLink p;
  p.local = {local_mac, 0x0AC80001, 0x4010};
  p.remote = {{2, 0xBB, 0, 0, 0, 1}, 0x0AC80002, 0x5000};
  p.port = 3;
  cfg.parent = p;
  return cfg;
}

}  // namespace epic::engine::slots_test
