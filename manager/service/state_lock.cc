#include "manager/service/state_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace epic::manager::service {

Result<std::unique_ptr<StateDirLock>> StateDirLock::acquire(const std::string& dir) {
  const std::string path = dir + "/manager.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return make_error(ErrorCode::kInternal,
                      "--state-dir " + dir + ": cannot open " + path + ": " + std::strerror(errno));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    ::close(fd);
    if (e == EWOULDBLOCK) {
      return make_error(ErrorCode::kFailedPrecondition,
                        "--state-dir " + dir + " is in use by another inc-manager (" + path +
                            " is locked); one manager per state directory");
    }
    return make_error(ErrorCode::kInternal,
                      "--state-dir " + dir + ": cannot lock " + path + ": " + std::strerror(e));
  }
  return std::unique_ptr<StateDirLock>(new StateDirLock(fd));
}

StateDirLock::~StateDirLock() { ::close(fd_); }

}  // namespace epic::manager::service
