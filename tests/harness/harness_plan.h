// A plan for the harness: the collectives every rank runs, and each rank's inputs to each
// (host::exact_inputs: sums that are exact in every type, so results compare bit for bit).
#pragma once

#include <cstdint>
#include <vector>

#include "host/collective/inputs.h"
#include "proto/vocab/collective.h"

namespace epic::harness {

struct Plan {
  std::vector<vocab::CollectiveDescriptor> plan;
  std::vector<std::vector<std::vector<uint8_t>>> inputs;  // [collective][rank] bytes
};

inline Plan make_plan(const std::vector<vocab::CollectiveDescriptor>& ds, int ranks,
                      uint64_t seed) {
  Plan p;
  for (size_t k = 0; k < ds.size(); ++k) {
    p.plan.push_back(ds[k]);
    p.inputs.push_back(host::exact_inputs(ds[k], static_cast<uint16_t>(ranks), seed, k));
  }
  return p;
}

}  // namespace epic::harness
