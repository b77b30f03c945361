#pragma once
// What an incoming webhook does with a payload, as pure functions (no I/O):
//  - a Mapping from contact fields to dotted paths in the payload (json_path.h), e.g.
//      {"email": "data.customer.emails[0].address",
//       "first_name": {"path": "data.customer.name.first", "required": true},
//       "custom_fields.plan": "data.plan.id"}
//    A plain string is an optional path, except for email, which is always required and
//    must be mapped. Targets: email, first_name, last_name, phone, custom_fields.<key>.
//  - Applies: what every accepted payload also gets: {"tags":[...], "lists":[...],
//    "status": "...", "type": "..."} (tags/lists by id or name; status goes through the
//    contact status machine when applied).
// Both are parsed when a hook is configured, so a bad path is refused then (422), not on
// every delivery. MapPayload() turns a payload into the ContactInput for the contact
// service, or into the list of everything wrong with the payload, each naming its path.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/crm/contacts.h"
#include "src/webhooks/json_path.h"

namespace crmd::webhooks {

inline constexpr size_t kMaxMappingEntries = 50;

struct MappingEntry {
  std::string target;  // "email", "first_name", ..., "custom_fields.<key>"
  JsonPath path;
  bool required = false;
};

struct Mapping {
  std::vector<MappingEntry> entries;
  // The path the email comes from (for error messages about the email's value).
  const MappingEntry& email() const;
};

// kInvalidArgument "mapping.<target>: <what is wrong>" (or "mapping: ...").
Result<Mapping> ParseMapping(const nlohmann::json& j);

struct Applies {
  std::vector<crm::Ref> tags;
  std::vector<crm::Ref> lists;
  std::optional<std::string> status;
  std::optional<std::string> type;
};
// kInvalidArgument "applies.<member>: <what is wrong>" (or "applies: ...").
Result<Applies> ParseApplies(const nlohmann::json& j);

// One thing wrong with a payload. `path` is the mapped path ("data.customer.emails[0].address").
struct PayloadError {
  std::string path;
  std::string code;  // "required" | "invalid_type"
  std::string message;
};

// The contact input for a payload: mapped fields plus the applied tags, lists, status and
// type. Every missing required path and every value of the wrong kind is reported.
tl::expected<crm::ContactInput, std::vector<PayloadError>> MapPayload(
    const Mapping& mapping, const Applies& applies, const nlohmann::json& payload);

}  // namespace crmd::webhooks
