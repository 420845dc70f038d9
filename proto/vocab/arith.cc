#include "proto/vocab/arith.h"

#include <array>

namespace epic::vocab {
namespace {

constexpr std::array<std::string_view, kNumAccumProfiles> kProfileNames = {"fp32_arrival",
                                                                           "kulisch_fixed"};

}  // namespace

std::string_view to_string(AccumProfile p) {
  const auto i = static_cast<size_t>(p);
  return i < kProfileNames.size() ? kProfileNames[i] : "invalid";
}

std::optional<AccumProfile> parse_profile(std::string_view name) {
  for (size_t i = 0; i < kProfileNames.size(); ++i)
    if (kProfileNames[i] == name) return static_cast<AccumProfile>(i);
  return std::nullopt;
}

}  // namespace epic::vocab
