// StateDirLock: one inc-manager per --state-dir. An exclusive flock(2) on DIR/manager.lock,
// held for the process's life (the kernel drops it when the process dies, SIGKILL included),
// so a second manager on the same directory is refused at start instead of overwriting the
// first one's store.
// Threading: construct and destroy on one thread.
#pragma once

#include <memory>
#include <string>

#include "manager/core/error.h"

namespace epic::manager::service {

class StateDirLock {
 public:
  // FAILED_PRECONDITION when another process holds it, INTERNAL when the file cannot be opened.
  static Result<std::unique_ptr<StateDirLock>> acquire(const std::string& dir);
  ~StateDirLock();
  StateDirLock(const StateDirLock&) = delete;
  StateDirLock& operator=(const StateDirLock&) = delete;

 private:
  explicit StateDirLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace epic::manager::service
