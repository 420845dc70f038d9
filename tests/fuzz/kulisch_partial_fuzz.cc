// libFuzzer target for the exact partials one switch sends another (AUTO wire form,
// proto/vocab/partial.h; datapath/arith/kulisch.h merge_partial): the bytes come from the
// network, so whatever they are, a merge either refuses them and leaves the accumulator
// untouched, or takes them, and then the accumulator is a state the codec can write again.
//
// Input: byte 0 picks the float type, byte 1 the contributors R (2, 3, 256, 9000) and whether
// the merge is a slot's first contribution, byte 2 the element count when the partial's own
// header does not say; then up to 64 plain values per element seed the accumulator with a
// load; the rest is the partial.
//
// Invariants (abort on violation):
//   - merge_partial false: the accumulator bytes are unchanged;
//   - merge_partial true: encode_partial writes a partial of at most max_partial_bytes;
//     merging it into an empty accumulator and storing gives the same result bits as storing
//     the merged accumulator; encoding that copy gives the same bytes (one encoding per state).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "datapath/arith/kulisch.h"

namespace {

using epic::vocab::DType;
namespace kulisch = epic::arith::kulisch;

void require(bool ok) {
  if (!ok) std::abort();
}

constexpr DType kTypes[] = {DType::kFp32, DType::kBf16, DType::kFp16, DType::kFp8E5M2,
                            DType::kFp8E4M3};
constexpr uint32_t kContributors[] = {2, 3, 256, 9000};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const DType t = kTypes[data[0] % 5];
  const uint32_t R = kContributors[data[1] & 3];
  const bool first = (data[1] & 4) != 0;
  const size_t w = epic::vocab::wire_bytes(t);
  const size_t max_n = 4096 / w;
  const uint8_t* rest = data + 3;
  size_t left = size - 3;
  const int said = kulisch::partial_elements(t, rest, left);
  size_t n =
      said > 0 && static_cast<size_t>(said) <= max_n ? static_cast<size_t>(said) : 1 + data[2] % 64;
  // Seed the accumulator with plain values (taken from the input when there are enough).
  std::vector<uint8_t> acc(kulisch::accum_bytes(t, R, n) + 64, 0xA5);
  std::vector<uint8_t> plain(n * w, 0);
  if (!first && left >= plain.size() + epic::vocab::kPartialHeaderBytes) {
    std::memcpy(plain.data(), rest, plain.size());
    rest += plain.size();
    left -= plain.size();
  }
  kulisch::load(t, R, acc.data(), plain.data(), n);
  const std::vector<uint8_t> before = acc;
  const bool taken = kulisch::merge_partial(t, R, acc.data(), n, rest, left, first);
  if (!taken) {
    require(acc == before);
    return 0;
  }
  require(std::memcmp(acc.data() + kulisch::accum_bytes(t, R, n),
                      before.data() + kulisch::accum_bytes(t, R, n), 64) == 0);
  std::vector<uint8_t> out(epic::vocab::max_partial_bytes(static_cast<uint32_t>(max_n * w), t, R));
  const size_t len = kulisch::encode_partial(t, R, acc.data(), n, out.data(), out.size());
  require(len > 0 && len <= epic::vocab::max_partial_bytes(static_cast<uint32_t>(n * w), t, R));
  std::vector<uint8_t> copy(kulisch::accum_bytes(t, R, n), 0x5A);
  require(kulisch::merge_partial(t, R, copy.data(), n, out.data(), len, true));
  std::vector<uint8_t> a(n * w), b(n * w);
  kulisch::store(t, R, a.data(), acc.data(), n);
  kulisch::store(t, R, b.data(), copy.data(), n);
  require(a == b);
  std::vector<uint8_t> again(out.size());
  const size_t len2 = kulisch::encode_partial(t, R, copy.data(), n, again.data(), again.size());
  require(len2 == len && std::memcmp(out.data(), again.data(), len) == 0);
  return 0;
}
