// RingLinks on verbs in a build without libibverbs.
#include "host/fallback/ring_links.h"

namespace epic::host::fallback {

std::unique_ptr<RingLinks> open_verbs_links(const RingOptions&, std::string& error) {
  error = "verbs transport not built (libibverbs-dev missing); use transport \"soft\"";
  return nullptr;
}

}  // namespace epic::host::fallback
