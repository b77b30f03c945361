#pragma once
// The contact status state machine: the ONE function every path (tools, REST, forms,
// webhooks, bulk upsert) goes through to change a contact's status. See docs/crm.md.
//
//   pending      -> subscribed | unsubscribed | bounced | complained
//   subscribed   -> unsubscribed | bounced | complained
//   unsubscribed -> subscribed (only with explicit consent) | bounced | complained
//   bounced      -> unsubscribed | complained          (never back to subscribed)
//   complained   -> unsubscribed                       (a complaint is final for mail)
//   X -> X is a no-op (allowed, no event). Nothing moves back to pending.
// Pure functions; thread-safe.
#include <string>
#include <string_view>
#include <vector>

#include "src/core/result.h"

namespace crmd::crm {

inline constexpr const char* kStatuses[] = {"pending", "subscribed", "unsubscribed", "bounced",
                                            "complained"};
inline constexpr const char* kContactTypes[] = {"lead", "customer"};

bool IsValidStatus(std::string_view s);
bool IsValidContactType(std::string_view t);

struct TransitionRequest {
  std::string_view from;
  std::string_view to;
  bool consent = false;  // explicit, recorded consent (double opt-in click, signed form)
};

// Ok when the move is allowed (including from == to); kInvalidTransition with a sentence
// saying which moves are allowed from `from` otherwise; kInvalidArgument for unknown names.
Status CheckTransition(const TransitionRequest& req);

// The statuses reachable from `from` (without and with consent), for error messages and
// docs.
std::vector<std::string> AllowedTargets(std::string_view from, bool consent);

}  // namespace crmd::crm
