// How libinc (and inc-rank, for verbs) splits a call into collectives: elements per
// collective ("piece"; split_call.h makes the pieces). Each collective moves its whole buffer
// (ranks x piece for ReduceScatter's input and AllGather's result) within max_collective_bytes,
// never above vocab::kMaxCollectiveBytes (the switch refuses larger ones), and each of its RC
// messages within max_message_bytes.
//
// Why the message bound: a verbs NIC segments a message itself and sends all its packets,
// whatever the group's window MW. A rank posting one 79-packet message against a window of
// 64 (an 80 KB AllReduce at path MTU 1024) exceeds what the switch's 2·MW slots and its RNR
// parking assume, and under loss rxe restarts the whole message after an RNR NAK
// (docs/libinc.md, "Messages and the window"). So for verbs libinc keeps every message within
// MW packets: max_message_bytes = MW x path MTU. The soft transport paces packets itself and
// passes no bound (SIZE_MAX).
// Thread-safety: pure function.
#pragma once

#include <cstddef>

#include "proto/vocab/collective.h"

namespace epic::host {

// Elements of `esz` bytes per collective of `type` for a group of `ranks`; at least 1.
size_t piece_elements(vocab::CollectiveType type, size_t esz, size_t ranks,
                      size_t max_collective_bytes, size_t max_message_bytes);

}  // namespace epic::host
