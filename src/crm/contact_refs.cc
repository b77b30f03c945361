// ParseRefs (contacts.h) on its own, so that what parses tags and lists from JSON can be
// linked without the contact service (the incoming-webhook mapping fuzzer does).
#include <nlohmann/json.hpp>

#include "src/crm/contacts.h"

namespace crmd::crm {

using nlohmann::json;

Result<std::vector<Ref>> ParseRefs(const json& j, const std::string& field) {
  std::vector<Ref> out;
  if (j.is_null()) return out;
  if (!j.is_array()) return Fail(Errc::kInvalidArgument, field + " must be an array");
  for (const auto& x : j) {
    if (x.is_number_integer())
      out.emplace_back(x.get<int64_t>());
    else if (x.is_string() && !x.get_ref<const std::string&>().empty())
      out.emplace_back(x.get<std::string>());
    else
      return Fail(Errc::kInvalidArgument, field + " items must be ids or non-empty names");
  }
  return out;
}

}  // namespace crmd::crm
