// LookupTable: (destination IPv4, destination QPN) of an arriving packet ->
// the group it belongs to and which edge it came on (a child index, or the
// parent). Built by the control side when a group is installed; the packet
// path only reads it. Threading: read-only while workers use it.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

namespace epic::engine {

struct GroupState;

struct Route {
  GroupState* group = nullptr;
  int16_t child = -1;  // index into the group's children; -1: the packet came from the parent
};

class LookupTable {
 public:
  void insert(uint32_t ipv4, uint32_t qpn, Route r) { table_[key(ipv4, qpn)] = r; }
  void erase(uint32_t ipv4, uint32_t qpn) { table_.erase(key(ipv4, qpn)); }
  const Route* find(uint32_t ipv4, uint32_t qpn) const {
    const auto it = table_.find(key(ipv4, qpn));
    return it == table_.end() ? nullptr : &it->second;
  }
  size_t size() const { return table_.size(); }

 private:
  static uint64_t key(uint32_t ipv4, uint32_t qpn) {
    return (uint64_t{ipv4} << 24) | (qpn & 0xFFFFFF);
  }
  std::unordered_map<uint64_t, Route> table_;
};

}  // namespace epic::engine
