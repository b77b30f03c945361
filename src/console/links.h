#pragma once
// The public links inside messages (docs/mail.md), served without any login:
//   GET  /u/<token>        the preference page: the contact's public lists (lists.public),
//                          each with a switch, and "Unsubscribe from everything"
//   POST /u/<token>        the page's form (with its CSRF value): saves the switches (a list
//                          switched off is left, crm::ListPreferences) or, with
//                          action=all, unsubscribes globally; the RFC 8058 one-click POST
//                          (body List-Unsubscribe=One-Click) of mail clients unsubscribes
//                          globally at once, without a CSRF value; action=download (with the
//                          CSRF value) answers "Download my data": everything kept about the
//                          contact as JSON (marketing::ContactHistory), rate limited
//   GET  /t/o/<token>      open tracking: a 1x1 GIF, the open counted once
//   GET  /t/c/<token>?u=   click tracking: 302 to u when the token was signed for u
//   GET  /confirm/<token>  double opt-in: the pending contact becomes subscribed
// Tokens are mail::LinkTokens (signed, nothing stored). A bad or expired link gets an HTML
// page saying so (400/410), never a stack trace or the token back.
// Thread-safe; handlers block on the database (they run on the worker pool).
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/core/http_types.h"
#include "src/crm/contacts.h"
#include "src/crm/list_preferences.h"
#include "src/mail/unsubscribe.h"
#include "src/marketing/campaign_delivery.h"
#include "src/marketing/contact_history.h"

namespace crmd::console {

struct LinkDeps {
  marketing::CampaignDelivery* delivery = nullptr;
  crm::ContactService* contacts = nullptr;
  crm::ListPreferences* preferences = nullptr;  // null: the page shows no lists
  const mail::LinkTokens* tokens = nullptr;
  std::string business_name;  // shown on the pages; may be empty
  // The preference page's "Download my data"; null: the page does not offer it.
  marketing::ContactHistory* history = nullptr;
  // Counts one download for a key (the contact, the client address): 0 when allowed, else
  // the seconds to wait (Retry-After). Empty: no limit.
  std::function<int(const std::string& key)> download_limit;
};

// The paths of the links: each prefix is followed by a token, which the access log
// redacts (http::ServerOptions::secret_path_prefixes).
inline constexpr std::string_view kUnsubscribePrefix = "/u/";
inline constexpr std::string_view kOpenPrefix = "/t/o/";
inline constexpr std::string_view kClickPrefix = "/t/c/";
inline constexpr std::string_view kConfirmPrefix = "/confirm/";

// The preference page's CSRF value: a link token of this purpose, bound to the page's
// unsubscribe token (its MAC covers it), valid for a day.
inline constexpr std::string_view kPreferencesCsrfPurpose = "prefs-csrf";
inline constexpr int64_t kPreferencesCsrfTtlSeconds = 86400;
inline constexpr std::string_view kLinkPrefixes[] = {kUnsubscribePrefix, kOpenPrefix, kClickPrefix,
                                                     kConfirmPrefix};

// (path prefix, handler) pairs for the router's Prefix().
std::vector<std::pair<std::string, http::Handler>> LinkRoutes(LinkDeps deps);

}  // namespace crmd::console
