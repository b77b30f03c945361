#pragma once
// The public links inside messages (docs/mail.md), served without any login:
//   GET  /u/<token>        a small page: "Unsubscribe <address>?" with one button
//   POST /u/<token>        unsubscribes at once: the page's button, and the RFC 8058
//                          one-click POST (body List-Unsubscribe=One-Click) of mail clients
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
#include "src/mail/unsubscribe.h"
#include "src/marketing/campaign_delivery.h"

namespace crmd::console {

struct LinkDeps {
  marketing::CampaignDelivery* delivery = nullptr;
  crm::ContactService* contacts = nullptr;
  const mail::LinkTokens* tokens = nullptr;
  std::string business_name;  // shown on the pages; may be empty
};

// The paths of the links: each prefix is followed by a token, which the access log
// redacts (http::ServerOptions::secret_path_prefixes).
inline constexpr std::string_view kUnsubscribePrefix = "/u/";
inline constexpr std::string_view kOpenPrefix = "/t/o/";
inline constexpr std::string_view kClickPrefix = "/t/c/";
inline constexpr std::string_view kConfirmPrefix = "/confirm/";
inline constexpr std::string_view kLinkPrefixes[] = {kUnsubscribePrefix, kOpenPrefix, kClickPrefix,
                                                     kConfirmPrefix};

// (path prefix, handler) pairs for the router's Prefix().
std::vector<std::pair<std::string, http::Handler>> LinkRoutes(LinkDeps deps);

}  // namespace crmd::console
