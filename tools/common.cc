#include "tools/common.h"

#include <ctime>

namespace crmd::tools {

using nlohmann::json;

governance::Actor ActorFrom(const mcp::ToolContext& ctx) {
  return governance::Actor{.kind = "oauth",
                           .subject = ctx.principal.subject,
                           .client_id = ctx.principal.client_id,
                           .request_id = ctx.request_id};
}

Error ForClient(Error e) {
  if (e.code == Errc::kAlreadyExists) e.code = Errc::kInvalidArgument;
  return e;
}

json ErrorJson(const Error& e) {
  return {{"code", ErrcCode(ForClient(e).code)}, {"message", e.message}};
}

mcp::ToolOutcome FailWith(Error e, json details) {
  return mcp::ToolOutcome::Fail(ForClient(std::move(e)), std::move(details));
}

mcp::ToolOutcome FailDuplicate(Error e, std::optional<int64_t> existing_id,
                               const std::string& update_tool) {
  json details;
  if (e.code == Errc::kAlreadyExists && existing_id)
    details = {{"existing_id", *existing_id}, {"hint", "use " + update_tool + " to change it"}};
  return FailWith(std::move(e), std::move(details));
}

mcp::ToolOutcome FromResult(Result<json> r) {
  if (r) return mcp::ToolOutcome::Ok(std::move(*r));
  return FailWith(std::move(r.error()));
}

mcp::ToolOutcome FromConfirm(governance::ConfirmOutcome r) {
  if (r.result) return mcp::ToolOutcome::Ok(std::move(*r.result));
  return FailWith(std::move(r.result.error()), std::move(r.error_details));
}

std::optional<std::string> OptString(const json& args, const char* key) {
  auto it = args.find(key);
  if (it == args.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<int64_t> OptInt(const json& args, const char* key) {
  auto it = args.find(key);
  if (it == args.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

int Limit(const json& args) {
  auto l = OptInt(args, "limit");
  if (!l || *l <= 0) return 25;
  return static_cast<int>(std::min<int64_t>(*l, 100));
}

std::optional<crm::Ref> OptRef(const json& args, const char* key) {
  auto it = args.find(key);
  if (it == args.end()) return std::nullopt;
  if (it->is_number_integer()) return crm::Ref{it->get<int64_t>()};
  if (it->is_string()) return crm::Ref{it->get<std::string>()};
  return std::nullopt;
}

std::vector<int64_t> Ids(const json& args, const char* key) {
  std::vector<int64_t> out;
  auto it = args.find(key);
  if (it == args.end() || !it->is_array()) return out;
  for (const auto& x : *it)
    if (x.is_number_integer()) out.push_back(x.get<int64_t>());
  return out;
}

Result<int64_t> ParseRfc3339(const std::string& s) {
  auto bad = [&] {
    return Fail(Errc::kInvalidArgument,
                "\"" + s + "\" is not a date (YYYY-MM-DD) or RFC 3339 date-time");
  };
  std::tm tm{};
  int y, mo, d, h = 0, mi = 0, sec = 0;
  char rest[16] = {0};
  if (s.size() == 10) {
    if (std::sscanf(s.c_str(), "%4d-%2d-%2d", &y, &mo, &d) != 3) return bad();
  } else {
    int n = std::sscanf(s.c_str(), "%4d-%2d-%2d%*[Tt ]%2d:%2d:%2d%15s", &y, &mo, &d, &h, &mi, &sec,
                        rest);
    if (n < 6) return bad();
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return bad();
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  int64_t t = timegm(&tm);
  std::string r = rest;
  // Skip fractional seconds.
  if (!r.empty() && r[0] == '.') {
    size_t i = 1;
    while (i < r.size() && std::isdigit(static_cast<unsigned char>(r[i]))) ++i;
    r = r.substr(i);
  }
  if (r.empty() || r == "Z" || r == "z") return t;
  int oh, om;
  if ((r[0] == '+' || r[0] == '-') && std::sscanf(r.c_str() + 1, "%2d:%2d", &oh, &om) == 2) {
    int64_t off = oh * 3600 + om * 60;
    return r[0] == '+' ? t - off : t + off;
  }
  return bad();
}

json PageJson(json items, const std::optional<std::string>& next_cursor) {
  return {{"items", std::move(items)},
          {"next_cursor", next_cursor ? json(*next_cursor) : json(nullptr)}};
}

}  // namespace crmd::tools
