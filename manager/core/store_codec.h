// The store's records as JSON (nlohmann): one function pair per record kind. Decoders check
// every field's presence, type and range and throw CodecError naming the field; semantic
// checks are IncManager's (restore path). Internal to epic_manager_core (store.cc).
// Threading: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "manager/core/group.h"
#include "manager/core/tenant.h"
#include "manager/core/topology.h"

namespace epic::manager::store_codec {

struct CodecError {
  std::string message{};
};

nlohmann::ordered_json encode(const SwitchSpec& s);
nlohmann::ordered_json encode(const Link& l);
nlohmann::ordered_json encode(const RankAttachment& r);
nlohmann::ordered_json encode(const Tenant& t);
nlohmann::ordered_json encode(const Group& g);

SwitchSpec decode_switch(const nlohmann::ordered_json& j);
Link decode_link(const nlohmann::ordered_json& j);
RankAttachment decode_rank(const nlohmann::ordered_json& j);
Tenant decode_tenant(const nlohmann::ordered_json& j);
Group decode_group(const nlohmann::ordered_json& j);

// Field access with precise errors (also used for the header and trailer).
uint64_t get_uint(const nlohmann::ordered_json& j, const char* key, uint64_t max);
std::string get_string(const nlohmann::ordered_json& j, const char* key);

}  // namespace epic::manager::store_codec
