#include "src/crm/contact_status.h"

#include <algorithm>

namespace crmd::crm {
namespace {

struct Edge {
  std::string_view from;
  std::string_view to;
  bool needs_consent;
};

// The whole state machine. Keep docs/crm.md in sync.
constexpr Edge kEdges[] = {
    {"pending", "subscribed", false},      {"pending", "unsubscribed", false},
    {"pending", "bounced", false},         {"pending", "complained", false},
    {"subscribed", "unsubscribed", false}, {"subscribed", "bounced", false},
    {"subscribed", "complained", false},   {"unsubscribed", "subscribed", true},
    {"unsubscribed", "bounced", false},    {"unsubscribed", "complained", false},
    {"bounced", "unsubscribed", false},    {"bounced", "complained", false},
    {"complained", "unsubscribed", false},
};

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "none" : out;
}

}  // namespace

bool IsValidStatus(std::string_view s) {
  return std::any_of(std::begin(kStatuses), std::end(kStatuses),
                     [&](const char* k) { return s == k; });
}

bool IsValidContactType(std::string_view t) {
  return std::any_of(std::begin(kContactTypes), std::end(kContactTypes),
                     [&](const char* k) { return t == k; });
}

std::vector<std::string> AllowedTargets(std::string_view from, bool consent) {
  std::vector<std::string> out;
  for (const auto& e : kEdges)
    if (e.from == from && (consent || !e.needs_consent)) out.emplace_back(e.to);
  return out;
}

Status CheckTransition(const TransitionRequest& req) {
  if (!IsValidStatus(req.from) || !IsValidStatus(req.to)) {
    return Fail(Errc::kInvalidArgument,
                "status must be one of pending, subscribed, unsubscribed, bounced, complained");
  }
  if (req.from == req.to) return Ok();
  for (const auto& e : kEdges) {
    if (e.from != req.from || e.to != req.to) continue;
    if (e.needs_consent && !req.consent) {
      return Fail(Errc::kInvalidTransition,
                  "moving a contact from " + std::string(req.from) + " to " + std::string(req.to) +
                      " needs explicit consent from the person (set consent: true only when "
                      "they asked to be subscribed again)");
    }
    return Ok();
  }
  return Fail(Errc::kInvalidTransition, "a contact cannot move from " + std::string(req.from) +
                                            " to " + std::string(req.to) + "; allowed from " +
                                            std::string(req.from) + ": " +
                                            Join(AllowedTargets(req.from, true)));
}

}  // namespace crmd::crm
