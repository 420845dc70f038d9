// IcrcDelta: the ICRC of a copy of a frame that differs from it only in IP,
// UDP or BTH header fields (a result replicated to several children, each copy
// readdressed), from the base frame's ICRC and the headers alone.
//
// CRC-32 is linear: crc(copy) ^ crc(base) is the CRC register of the byte
// difference — nonzero only inside the headers — moved over the n bytes that
// follow the BTH up to the ICRC (crc32_combine.h). So a copy costs a CRC over
// the 60 (IPv6: 80) header bytes and one Crc32Shift::apply, whatever n is.
//
// Precondition of icrc_of(): the frame has the base's IP version, l3 offset and
// ICRC offset (matches()), and the same bytes from the end of the BTH to the
// ICRC. Hot path: no allocation; the object (about 220 bytes) lives on the
// caller's stack. Thread-safe: immutable after construction.
#pragma once

#include <array>
#include <cstdint>

#include "datapath/wire/crc32_combine.h"
#include "datapath/wire/icrc.h"

namespace epic::wire {

class IcrcDelta {
 public:
  // `base`: the base frame, read up to the end of its BTH; `base_icrc`: its ICRC, at icrc_off
  // (compute_icrc's arguments).
  IcrcDelta(const uint8_t* base, IpVersion ip, uint16_t l3_off, uint16_t icrc_off,
            uint32_t base_icrc);

  bool matches(IpVersion ip, uint16_t l3_off, uint16_t icrc_off) const {
    return ip == ip_ && l3_off == l3_off_ && icrc_off == icrc_off_;
  }
  // The ICRC of `frame` (see the precondition above), from its bytes up to the end of its BTH.
  uint32_t icrc_of(const uint8_t* frame) const;

 private:
  static constexpr size_t kSpan = 80;  // the compared bytes: IPv4 4 + 60, IPv6 80 (16-byte blocks)

  // The base's compared bytes, masked as the ICRC sees them.
  alignas(16) std::array<uint8_t, kSpan> base_{};
  const uint8_t* mask_ = nullptr;  // icrc_variant_mask(ip) + the start of the compared bytes in it
  uint16_t span_ = 0;              // 64 or 80
  uint16_t start_ = 0;             // the compared bytes start at frame + start_
  IpVersion ip_;
  uint16_t l3_off_, icrc_off_;
  uint32_t base_icrc_;
  Crc32Shift shift_;  // over the bytes after the BTH
};

}  // namespace epic::wire
