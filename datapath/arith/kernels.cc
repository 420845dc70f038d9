#include "datapath/arith/kernels.h"

#include <array>
#include <cstdlib>

namespace epic::arith {
namespace {

constexpr std::array<std::string_view, kNumIsas> kIsaNames = {"reference", "portable", "avx2",
                                                              "avx512"};

std::optional<Isa> cap_from_environment() {
  const char* value = std::getenv("EPIC_ARITH_ISA");
  return value != nullptr ? parse_isa(value) : std::nullopt;
}

}  // namespace

const Kernels* kernels_for(Isa isa) {
  switch (isa) {
    case Isa::kReference:
      return detail::reference_kernels();
    case Isa::kPortable:
      return detail::portable_kernels();
    case Isa::kAvx2:
      return detail::avx2_kernels();
    case Isa::kAvx512:
      return detail::avx512_kernels();
  }
  return nullptr;
}

Isa select_isa(std::optional<Isa> cap) {
  for (auto i = static_cast<int>(kNumIsas) - 1; i >= 0; --i) {
    const auto isa = static_cast<Isa>(i);
    if (cap && isa > *cap) continue;
    if (kernels_for(isa) != nullptr) return isa;
  }
  return Isa::kReference;
}

const Kernels& active_kernels() {
  static const Kernels* const active = kernels_for(select_isa(cap_from_environment()));
  return *active;
}

std::string_view to_string(Isa isa) {
  const auto i = static_cast<size_t>(isa);
  return i < kIsaNames.size() ? kIsaNames[i] : "invalid";
}

std::optional<Isa> parse_isa(std::string_view name) {
  for (size_t i = 0; i < kIsaNames.size(); ++i)
    if (kIsaNames[i] == name) return static_cast<Isa>(i);
  return std::nullopt;
}

}  // namespace epic::arith
