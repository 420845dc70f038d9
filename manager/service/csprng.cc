#include "manager/service/csprng.h"

#include <sys/random.h>

#include <cerrno>
#include <system_error>

namespace epic::manager::service {

uint64_t csprng_bits() {
  uint64_t v = 0;
  for (;;) {
    const ssize_t n = getrandom(&v, sizeof v, 0);
    if (n == static_cast<ssize_t>(sizeof v)) return v;
    if (n < 0 && errno == EINTR) continue;
    throw std::system_error(n < 0 ? errno : EIO, std::generic_category(), "getrandom");
  }
}

}  // namespace epic::manager::service
