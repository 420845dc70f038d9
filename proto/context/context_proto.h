// The GroupContext message → the context value (group_context.h), checked. The one reader of a
// context message, for every component that accepts one: incd's config loader (a `groups[]`
// entry, paths "groups[0]…"), the IncAgent (what inc-manager sends, paths "context…") and
// inc-manager (what it is about to send). Reading and checking are one pass, so every error is
// reported once, by field path, with the rule's message from context_validate.h: required fields,
// text forms (IPv4, MAC), port names resolved to port ids against the SwitchView, then the
// rules of check_context, and every local and remote (ipv4, qpn) used once across all the
// switch's groups.
// Threading: a plain object; one per validation.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "proto/context/context_validate.h"
#include "proto/context/group_context.h"
#include "proto/inc/v1/context.pb.h"

namespace epic::vocab {

using GroupContextMsg = inc::v1::GroupContext;

// A unicast host IPv4 address in dotted-quad text (host order).
std::optional<uint32_t> check_ipv4(const std::string& s, const std::string& path,
                                   ContextErrors& errors);
// A unicast, non-zero MAC "02:00:00:00:00:01".
std::optional<MacAddr> check_mac(const std::string& s, const std::string& path,
                                 ContextErrors& errors);
// The id of the port named `name`; an error listing the known names when there is none.
std::optional<uint16_t> port_ref(const SwitchView& sw, const std::string& name,
                                 const std::string& path, ContextErrors& errors);

// The mode of a GroupMode message value: unset and GROUP_MODE_2 are Mode-II, GROUP_MODE_3
// Mode-III; nullopt for any other number (proto3 keeps an unknown enum value as a number).
std::optional<GroupMode> mode_from_proto(int value);
// "mode" of a message: "" when `value` is a mode, else the message (the caller adds the path).
std::string proto_mode_error(int value);

// Writes the mode fields of a context message: a Mode-III context sets mode and hop_timeout_us;
// a Mode-II one leaves both unset, so that its message is the one writers sent before the
// fields existed (an agent compares installed contexts field by field).
void write_mode(const GroupContext& g, GroupContextMsg& out);
// Writes pkey when the context has one (and leaves it unset otherwise, as above).
void write_pkey(const GroupContext& g, GroupContextMsg& out);
// Writes the group's traffic class (dscp; 0, best effort, leaves the field at its default).
void write_dscp(const GroupContext& g, GroupContextMsg& out);

// The accumulator profile and element type of AccumProfile / ElementType message values
// (ElementType = dtype code + 1; 0 = none named); nullopt (or an error message) for a number
// outside either enum. proto_arith_error is "" when both are valid.
std::optional<AccumProfile> profile_from_proto(int value);
std::optional<std::optional<DType>> dtype_from_proto(int value);
int dtype_to_proto(std::optional<DType> t);
std::string proto_profile_error(int value);
std::string proto_dtype_error(int value);
// Writes accumulator and dtype (both unset for the default arithmetic, as above).
void write_arith(const GroupContext& g, GroupContextMsg& out);

class ContextReader {
 public:
  // `sw` and `errors` must outlive the reader; errors are appended to `errors`.
  ContextReader(const SwitchView& sw, ContextErrors& errors) : sw_(sw), errors_(errors) {}

  // Marks the endpoints of a group already installed as used; `name` ("group 7") says whose
  // they are in messages.
  void reserve(const GroupContext& g, const std::string& name);

  // Reads and checks `g`, whose fields are named from `path` ("groups[0]", "context"). The
  // context without any error, or nullopt (and the errors appended). Its endpoints count as
  // used by later reads either way.
  std::optional<GroupContext> read(const GroupContextMsg& g, const std::string& path);

 private:
  void fail(std::string path, std::string message) {
    if (!message.empty()) errors_.push_back({std::move(path), std::move(message)});
  }
  std::optional<Endpoint> endpoint(bool present, const GroupContextMsg::Endpoint& e,
                                   const std::string& path, bool local);

  const SwitchView& sw_;
  ContextErrors& errors_;
  std::map<std::pair<uint32_t, uint32_t>, std::string> local_keys_;   // (ipv4, qpn) → path
  std::map<std::pair<uint32_t, uint32_t>, std::string> remote_keys_;  // (ipv4, qpn) → path
};

}  // namespace epic::vocab
