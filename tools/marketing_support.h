#pragma once
// Helpers shared by the marketing tools (campaigns, automations, sequences, reports):
// argument readers, confirmation requests and the record tools every
// marketing kind has. Errors reach the client through tools/common.h (FailWith), as for
// every other tool. Stateless; thread-safe.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "src/core/result.h"
#include "src/governance/actor.h"
#include "src/marketing/common.h"
#include "src/marketing/services.h"
#include "src/mcp/tool.h"
#include "tools/common.h"

namespace crmd::tools::marketing_support {

int64_t IntArg(const nlohmann::json& args, const char* key, int64_t fallback = 0);
std::string StrArg(const nlohmann::json& args, const char* key, const std::string& fallback = "");

// Tool arguments without the bookkeeping keys (id, expected_revision, idempotency_key), i.e.
// the record fields to apply.
nlohmann::json FieldsOf(const nlohmann::json& args);

// Step 1 of a confirmable action: {"status":"confirmation_required", preview, token, ...}
// or the preview's error (not_found, validation_failed, dependency_blocked with blockers).
mcp::ToolOutcome RequestConfirmation(marketing::Services& s, const mcp::ToolContext& ctx,
                                     const std::string& action, const nlohmann::json& args);

// A failed write; on revision_conflict `current` (the record as it is now) goes into the
// error details so the model can retry with its revision.
template <typename T, typename Current>
mcp::ToolOutcome WriteOutcome(Result<T> r, const char* key, Current current) {
  if (r) return mcp::ToolOutcome::Ok({{key, ToJson(*r, true)}});
  if (r.error().code == Errc::kRevisionConflict) {
    nlohmann::json details = {{"current", current()}};
    return FailWith(std::move(r.error()), std::move(details));
  }
  return FailWith(std::move(r.error()));
}

// --- the record tools every marketing kind has (campaigns, automations, sequences) ---

// The record as it is now (full JSON), or null when it is gone: the `current` of a
// revision_conflict.
template <typename Service>
nlohmann::json CurrentJson(Service& svc, int64_t id) {
  auto x = svc.Get(id);
  return x ? ToJson(*x, true) : nlohmann::json(nullptr);
}

// list_<kind>s: optional `status` (parsed by `parse`), `cursor`, `limit` ->
// {"<key>": [compact records], "next_cursor"}.
template <typename Service, typename ParseStatus>
mcp::ToolOutcome ListRecords(Service& svc, const nlohmann::json& args, ParseStatus parse,
                             const char* key) {
  decltype(parse(std::string())) status;
  if (args.contains("status")) status = parse(StrArg(args, "status"));
  auto page = svc.List(
      status, StrArg(args, "cursor"),
      marketing::ClampLimit(args.contains("limit") ? std::optional<int64_t>(IntArg(args, "limit"))
                                                   : std::nullopt));
  if (!page) return FailWith(page.error());
  nlohmann::json items = nlohmann::json::array();
  for (const auto& x : page->items) items.push_back(ToJson(x, false));
  return mcp::ToolOutcome::Ok(
      {{key, items},
       {"next_cursor",
        page->next_cursor ? nlohmann::json(*page->next_cursor) : nlohmann::json(nullptr)}});
}

// get_<kind>: {"<key>": full record}.
template <typename Service>
mcp::ToolOutcome GetRecord(Service& svc, const nlohmann::json& args, const char* key) {
  auto x = svc.Get(IntArg(args, "id"));
  if (!x) return FailWith(x.error());
  return mcp::ToolOutcome::Ok({{key, ToJson(*x, true)}});
}

// create_<kind>: the record fields of `args`; the service keeps `idempotency_key` (a repeat
// from the same client within 24 h answers the record first created).
template <typename Service>
mcp::ToolOutcome CreateRecord(Service& svc, const mcp::ToolContext& ctx, const nlohmann::json& args,
                              const char* key) {
  auto x = svc.Create(ActorFrom(ctx), FieldsOf(args), StrArg(args, "idempotency_key"));
  if (!x) return FailWith(x.error());
  return mcp::ToolOutcome::Ok({{key, ToJson(*x, true)}});
}

// update_<kind>: the record fields of `args` at `expected_revision`.
template <typename Service>
mcp::ToolOutcome UpdateRecord(Service& svc, const mcp::ToolContext& ctx, const nlohmann::json& args,
                              const char* key) {
  int64_t id = IntArg(args, "id");
  return WriteOutcome(
      svc.Update(ActorFrom(ctx), id, IntArg(args, "expected_revision"), FieldsOf(args)), key,
      [&] { return CurrentJson(svc, id); });
}

}  // namespace crmd::tools::marketing_support
