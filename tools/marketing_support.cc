#include "tools/marketing_support.h"

namespace crmd::tools::marketing_support {

using nlohmann::json;

int64_t IntArg(const json& args, const char* key, int64_t fallback) {
  if (!args.is_object() || !args.contains(key) || !args[key].is_number_integer()) return fallback;
  return args[key].get<int64_t>();
}

std::string StrArg(const json& args, const char* key, const std::string& fallback) {
  if (!args.is_object() || !args.contains(key) || !args[key].is_string()) return fallback;
  return args[key].get<std::string>();
}

json FieldsOf(const json& args) {
  json f = args.is_object() ? args : json::object();
  for (const char* k : {"id", "expected_revision", "idempotency_key"}) f.erase(k);
  return f;
}

mcp::ToolOutcome RequestConfirmation(marketing::Services& s, const mcp::ToolContext& ctx,
                                     const std::string& action, const json& args) {
  return FromConfirm(s.governance.confirmations->Request(ActorFrom(ctx), action, args));
}

}  // namespace crmd::tools::marketing_support
