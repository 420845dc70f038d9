#include "manager/core/store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "manager/core/store_codec.h"

namespace epic::manager {

using json = nlohmann::ordered_json;
namespace codec = store_codec;

namespace {

constexpr const char* kMagic = "epic-manager-store";

Error data_loss(size_t line, const std::string& m) {
  return make_error(ErrorCode::kDataLoss, "line " + std::to_string(line) + ": " + m);
}

Error system_error(const std::string& what, const std::string& path) {
  return make_error(ErrorCode::kInternal, what + " " + path + ": " + std::strerror(errno));
}

// Writes all of `data` to `fd`.
bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

std::string encode_store(const IncManager& m) {
  std::string out;
  size_t records = 0;
  auto line = [&](const json& j) {
    out += j.dump();
    out += '\n';
    ++records;
  };
  json header = {
      {"record", kMagic}, {"version", kStoreVersion}, {"next_group_id", m.next_group_id()}};
  if (!m.foreign().empty()) {
    json ids = json::array();
    for (const auto& [id, on] : m.foreign()) ids.push_back(id);
    header["foreign_group_ids"] = ids;  // absent in stores written before foreign groups
  }
  line(header);
  for (const auto& [id, s] : m.topology().switches()) line(codec::encode(s));
  for (const auto& l : m.topology().links()) line(codec::encode(l));
  for (const auto& [ip, r] : m.topology().ranks()) line(codec::encode(r));
  for (const auto& [name, t] : m.tenants()) line(codec::encode(t));
  for (const auto& [id, g] : m.groups()) {
    if (g.state != GroupState::kQueued) line(codec::encode(g));
  }
  line({{"record", "end"}, {"records", records}});
  return out;
}

Result<LoadedStore> decode_store(std::string_view text, const Policy& policy, Millis now) {
  IncManager m(policy);
  size_t line_no = 0;
  size_t records = 0;
  bool ended = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    const std::string_view raw = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (ended) return data_loss(line_no, "a record after the end record");
    json j;
    try {
      j = json::parse(raw);
    } catch (const json::parse_error& e) {
      std::string what = e.what();  // "[json.exception.parse_error.101] parse error at ..."
      if (const size_t close = what.find("] "); close != std::string::npos) {
        what = what.substr(close + 2);
      }
      return data_loss(line_no, "JSON " + what);
    }
    if (!j.is_object() || !j.contains("record") || !j["record"].is_string()) {
      return data_loss(line_no, "not a record (an object with a \"record\" string)");
    }
    const std::string kind = j["record"].get<std::string>();
    try {
      if (line_no == 1) {
        if (kind != kMagic) {
          return data_loss(line_no,
                           "not an inc-manager store (no \"" + std::string(kMagic) + "\" header)");
        }
        const uint64_t version = codec::get_uint(j, "version", INT32_MAX);
        if (version != kStoreVersion) {
          return data_loss(line_no, "store version " + std::to_string(version) +
                                        "; this manager reads version " +
                                        std::to_string(kStoreVersion));
        }
        Status s = m.restore_next_group_id(
            static_cast<uint32_t>(codec::get_uint(j, "next_group_id", UINT32_MAX)));
        if (!s.ok()) return data_loss(line_no, s.error().message);
        if (j.contains("foreign_group_ids")) {
          const json& ids = j["foreign_group_ids"];
          if (!ids.is_array()) return data_loss(line_no, "foreign_group_ids: not an array");
          for (const json& id : ids) {
            if (!id.is_number_unsigned() || id.get<uint64_t>() == 0 ||
                id.get<uint64_t>() > UINT32_MAX) {
              return data_loss(line_no, "foreign_group_ids: " + id.dump() + " is not a group id");
            }
            m.keep_foreign(static_cast<uint32_t>(id.get<uint64_t>()), {}, {});
          }
        }
        ++records;
        continue;
      }
      Status s;
      if (kind == "switch") {
        s = m.add_switch(codec::decode_switch(j));
      } else if (kind == "link") {
        s = m.add_link(codec::decode_link(j));
      } else if (kind == "rank") {
        s = m.attach_rank(codec::decode_rank(j));
      } else if (kind == "tenant") {
        s = m.set_tenant(codec::decode_tenant(j));
      } else if (kind == "group") {
        s = m.restore_group(codec::decode_group(j));
      } else if (kind == "end") {
        const uint64_t n = codec::get_uint(j, "records", UINT64_MAX);
        if (n != records) {
          return data_loss(line_no, "the end record counts " + std::to_string(n) +
                                        " records but the file holds " + std::to_string(records));
        }
        ended = true;
        continue;
      } else {
        return data_loss(line_no, "unknown record \"" + kind + "\"");
      }
      if (!s.ok()) return data_loss(line_no, kind + ": " + s.error().message);
      ++records;
    } catch (const codec::CodecError& e) {
      return data_loss(line_no, kind + ": " + e.message);
    }
  }
  if (line_no == 0) return data_loss(1, "empty store (no header)");
  if (!ended) {
    return data_loss(line_no, "the store ends without its end record (cut short?)");
  }
  Effects reconcile = m.finish_restore(now);
  return LoadedStore{std::move(m), std::move(reconcile)};
}

Status save_store(const std::string& path, const IncManager& manager) {
  const std::string data = encode_store(manager);
  const std::string tmp = path + ".tmp";
  // A fresh file, never one that is there already: a stale temp file (or a link someone put
  // in its place) is removed, and the new one is created exclusively, not through a link.
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return system_error("cannot create", tmp);
  if (!write_all(fd, data) || ::fsync(fd) != 0) {
    Error e = system_error("cannot write", tmp);
    ::close(fd);
    ::unlink(tmp.c_str());
    return e;
  }
  if (::close(fd) != 0) return system_error("cannot close", tmp);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Error e = system_error("cannot rename " + tmp + " to", path);
    ::unlink(tmp.c_str());
    return e;
  }
  // The rename is durable only once the directory entry is.
  const std::string dir = directory_of(path);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return system_error("cannot open directory", dir);
  const int rc = ::fsync(dfd);
  ::close(dfd);
  if (rc != 0) return system_error("cannot sync directory", dir);
  return {};
}

Result<LoadedStore> load_store(const std::string& path, const Policy& policy, Millis now) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) {
      return make_error(ErrorCode::kNotFound, "store " + path + " does not exist");
    }
    return system_error("cannot read store", path);
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return system_error("cannot read store", path);
  auto loaded = decode_store(buf.str(), policy, now);
  if (!loaded.ok()) {
    return make_error(loaded.error().code, "store " + path + " " + loaded.error().message);
  }
  return loaded;
}

}  // namespace epic::manager
