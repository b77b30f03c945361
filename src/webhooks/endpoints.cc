#include "src/webhooks/endpoints.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "src/core/text.h"
#include "src/crm/events.h"
#include "src/governance/audit_repo.h"
#include "src/http/client.h"  // IsPrivateAddress
#include "src/webhooks/deliveries_repo.h"
#include "src/webhooks/endpoints_repo.h"
#include "src/webhooks/signing.h"

namespace crmd::webhooks {
namespace {

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

nlohmann::json EndpointJson(const Endpoint& e) {
  return {{"id", e.id},
          {"url", e.url},
          {"events", e.events},
          {"description", e.description},
          {"enabled", e.enabled},
          {"consecutive_failures", e.consecutive_failures},
          {"failing_since",
           e.failing_since ? nlohmann::json(FormatRfc3339(*e.failing_since)) : nlohmann::json()},
          {"disabled_reason",
           e.disabled_reason ? nlohmann::json(*e.disabled_reason) : nlohmann::json()},
          {"disabled_at",
           e.disabled_at ? nlohmann::json(FormatRfc3339(*e.disabled_at)) : nlohmann::json()},
          {"created_at", FormatRfc3339(e.created_at)},
          {"updated_at", FormatRfc3339(e.updated_at)}};
}

Result<EndpointInput> EndpointInputFromJson(const nlohmann::json& j) {
  EndpointInput in;
  if (!j.is_object()) return Fail(Errc::kInvalidArgument, "body must be an object");
  for (const auto& [k, v] : j.items()) {
    if (k == "url") {
      if (!v.is_string()) return Fail(Errc::kInvalidArgument, "url: must be a string");
      in.url = v.get<std::string>();
    } else if (k == "events") {
      if (!v.is_array())
        return Fail(Errc::kInvalidArgument, "events: must be an array of event types");
      std::vector<std::string> events;
      for (const auto& e : v) {
        if (!e.is_string())
          return Fail(Errc::kInvalidArgument, "events: must be an array of event types");
        events.push_back(e.get<std::string>());
      }
      in.events = std::move(events);
    } else if (k == "description") {
      if (!v.is_string()) return Fail(Errc::kInvalidArgument, "description: must be a string");
      in.description = v.get<std::string>();
    } else if (k == "enabled") {
      if (!v.is_boolean()) return Fail(Errc::kInvalidArgument, "enabled: must be a boolean");
      in.enabled = v.get<bool>();
    } else {
      return Fail(Errc::kInvalidArgument, k + ": unknown member");
    }
  }
  return in;
}

Status ValidateTargetUrl(const std::string& url, bool allow_private) {
  std::string rest;
  if (url.rfind("https://", 0) == 0)
    rest = url.substr(8);
  else if (url.rfind("http://", 0) == 0)
    rest = url.substr(7);
  else
    return Fail(Errc::kInvalidArgument, "url: must be an http:// or https:// URL");
  if (url.size() > 2048) return Fail(Errc::kInvalidArgument, "url: longer than 2048 characters");
  std::string authority = rest.substr(0, rest.find_first_of("/?#"));
  if (authority.find('@') != std::string::npos)
    return Fail(Errc::kInvalidArgument, "url: must not contain credentials");
  std::string host;
  if (!authority.empty() && authority[0] == '[') {
    auto close = authority.find(']');
    if (close == std::string::npos) return Fail(Errc::kInvalidArgument, "url: bad IPv6 literal");
    host = authority.substr(1, close - 1);
  } else {
    host = authority.substr(0, authority.rfind(':'));
  }
  if (host.empty()) return Fail(Errc::kInvalidArgument, "url: has no host");
  if (allow_private) return Ok();
  host = text::AsciiLower(host);
  while (!host.empty() && host.back() == '.') host.pop_back();
  bool literal = host.find_first_not_of("0123456789.") == std::string::npos ||
                 host.find(':') != std::string::npos;
  bool internal_name = host == "localhost" || EndsWith(host, ".localhost") ||
                       EndsWith(host, ".local") || EndsWith(host, ".internal") ||
                       host.find('.') == std::string::npos;
  if ((literal && http::IsPrivateAddress(host)) || internal_name)
    return Fail(Errc::kPermissionDenied,
                "url: private, loopback and internal targets are not allowed "
                "(allow_private_network_targets)");
  return Ok();
}

Status Endpoints::Check(const EndpointInput& in, bool creating) const {
  if (creating && !in.url) return Fail(Errc::kInvalidArgument, "url: is required");
  if (creating && !in.events) return Fail(Errc::kInvalidArgument, "events: is required");
  if (in.url)
    if (auto st = ValidateTargetUrl(*in.url, allow_private_); !st) return st;
  if (in.events) {
    if (in.events->empty()) return Fail(Errc::kInvalidArgument, "events: name at least one event");
    for (const auto& e : *in.events)
      if (!crm::events::IsKnown(e))
        return Fail(Errc::kInvalidArgument, "events: unknown event type " + e);
  }
  if (in.description && in.description->size() > 500)
    return Fail(Errc::kInvalidArgument, "description: longer than 500 characters");
  return Ok();
}

Result<std::pair<Endpoint, std::string>> Endpoints::Create(const EndpointInput& in) {
  if (auto st = Check(in, true); !st) return Fail(st.error());
  std::string secret = NewSigningSecret(random_);
  const int64_t now = clock_.NowUnix();
  std::vector<std::string> events = *in.events;
  std::sort(events.begin(), events.end());
  events.erase(std::unique(events.begin(), events.end()), events.end());
  auto id = db_.Write([&](store::Conn& c) {
    return endpoints_repo::Insert(c, *in.url, secret, nlohmann::json(events).dump(),
                                  in.description.value_or(""), in.enabled.value_or(true), now);
  });
  if (!id) return Fail(id.error());
  auto e = Get(*id);
  if (!e) return Fail(e.error());
  return std::make_pair(std::move(*e), std::move(secret));
}

Result<std::vector<Endpoint>> Endpoints::List() {
  return db_.Read([](store::Conn& c) { return endpoints_repo::List(c); });
}

Result<std::optional<std::string>> Endpoints::SecretForUrl(const std::string& url) {
  return db_.Read([&](store::Conn& c) { return endpoints_repo::SecretForUrl(c, url); });
}

Result<Endpoint> Endpoints::Get(int64_t id) {
  return db_.Read([&](store::Conn& c) -> Result<Endpoint> {
    auto row = endpoints_repo::Find(c, id);
    if (!row) return Fail(row.error());
    if (!*row) return Fail(Errc::kNotFound, "no webhook endpoint " + std::to_string(id));
    return std::move(**row);
  });
}

Result<Endpoint> Endpoints::Update(int64_t id, const EndpointInput& in,
                                   const governance::Actor& actor) {
  if (auto st = Check(in, false); !st) return Fail(st.error());
  const int64_t now = clock_.NowUnix();
  auto changed = db_.Write([&](store::Conn& c) -> Status {
    auto before = endpoints_repo::Find(c, id);
    if (!before) return Fail(before.error());
    if (!*before) return Fail(Errc::kNotFound, "no webhook endpoint " + std::to_string(id));
    if (in.url)
      if (auto r = endpoints_repo::SetUrl(c, id, *in.url); !r) return r;
    if (in.events) {
      std::vector<std::string> events = *in.events;
      std::sort(events.begin(), events.end());
      events.erase(std::unique(events.begin(), events.end()), events.end());
      if (auto r = endpoints_repo::SetEvents(c, id, nlohmann::json(events).dump()); !r) return r;
    }
    if (in.description)
      if (auto r = endpoints_repo::SetDescription(c, id, *in.description); !r) return r;
    // Disabling an endpoint the worker disabled makes it an operator's decision (it then
    // stops queueing new events).
    const bool operator_disabled = (*before)->disabled_reason == kOperatorDisabled;
    if (in.enabled && (*in.enabled != (*before)->enabled || (!*in.enabled && !operator_disabled))) {
      if (auto r = endpoints_repo::SetEnabled(c, id, *in.enabled, now); !r) return r;
      nlohmann::json details = {{"enabled", *in.enabled}};
      int64_t resumed = 0;
      if (*in.enabled) {
        // The backlog kept while it was disabled goes out now, oldest first.
        auto n = deliveries_repo::ResumeBacklog(c, id, now, now + retry_horizon_s_);
        if (!n) return Fail(n.error());
        resumed = *n;
        details["previous_reason"] = (*before)->disabled_reason
                                         ? nlohmann::json(*(*before)->disabled_reason)
                                         : nlohmann::json();
        details["resumed_deliveries"] = resumed;
      } else {
        details["reason"] = kOperatorDisabled;
      }
      if (auto r = governance::audit_repo::Insert(
              c, now, actor,
              {.action = *in.enabled ? "enable_webhook_endpoint" : "disable_webhook_endpoint",
               .target_type = "webhook_endpoint",
               .target_ids = {id},
               .details = std::move(details)});
          !r)
        return r;
    }
    return endpoints_repo::SetUpdatedAt(c, id, now);
  });
  if (!changed) return Fail(changed.error());
  return Get(id);
}

Status Endpoints::Delete(int64_t id) {
  auto changed = db_.Write([&](store::Conn& c) { return endpoints_repo::Delete(c, id); });
  if (!changed) return Fail(changed.error());
  if (!*changed) return Fail(Errc::kNotFound, "no webhook endpoint " + std::to_string(id));
  return Ok();
}

Result<endpoints_repo::StateCounts> Endpoints::CountByState() const {
  return db_.Read([](store::Conn& c) { return endpoints_repo::CountByState(c); });
}

}  // namespace crmd::webhooks
