#include "manager/service/listen_address.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace epic::manager::service {

namespace {

// Whether a process accepts connections on the unix socket at `path`.
bool unix_socket_served(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return false;
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool served = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return served;
}

}  // namespace

std::string check_listen_address(const std::string& listen) {
  const std::string where = "--listen " + listen + ": ";
  if (listen.rfind("unix-abstract:", 0) == 0) return "";
  if (listen.rfind("unix:", 0) == 0) {
    const std::string path = listen.substr(5);
    if (path.empty()) return where + "the unix socket path is empty";
    if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
      return where + "the unix socket path is longer than " +
             std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + " bytes";
    }
    if (unix_socket_served(path)) {
      return where +
             "another process is serving this socket (a second inc-manager?); stop it "
             "or choose another path";
    }
    return "";
  }
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size()) {
    return where + "expected host:port, [ipv6]:port or unix:/path";
  }
  const std::string host = listen.substr(0, colon), port = listen.substr(colon + 1);
  if (host.empty()) return where + "the host is empty (0.0.0.0 listens on every address)";
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) > 65535) {
    return where + "the port must be a number in 0..65535 (0: any free port)";
  }
  return "";
}

}  // namespace epic::manager::service
