#include "src/console/api_pages.h"

#include <memory>
#include <nlohmann/json.hpp>

#include "src/core/clock.h"
#include "src/crm/events.h"

namespace crmd::console {
namespace {

std::string When(std::optional<int64_t> t) { return t ? FormatRfc3339(*t) : "never"; }

// --- API keys ---

ViewMap KeyNode(const governance::ApiKey& k) {
  return ViewMap{{"id", std::to_string(k.id)},
                 {"name", k.name},
                 {"prefix", k.prefix},
                 {"role", std::string(governance::ApiKeyRoleName(k.role))},
                 {"enabled", k.enabled},
                 {"status", std::string(k.enabled ? "enabled" : "disabled")},
                 {"created_at", FormatRfc3339(k.created_at)},
                 {"last_used_at", When(k.last_used_at)}};
}

http::Response KeysPage(const ApiPagesDeps& d, const Person& p, int status,
                        const std::string& error, const std::string& name) {
  auto keys = d.api_keys->List();
  if (!keys) return InternalError(keys.error(), ChromeFor(p, "api"));
  ViewList list;
  for (const auto& k : *keys) list.emplace_back(KeyNode(k));
  ViewMap ctx{{"keys", std::move(list)},
              {"has_keys", !keys->empty()},
              {"csrf_token", p.csrf_token},
              {"name", name},
              {"rest_base_url", d.rest_base_url}};
  if (!error.empty()) ctx.emplace("error", error);
  return RenderPage(status, "API keys", "api_keys.mustache", ctx, ChromeFor(p, "api"));
}

http::Response PostKeys(const ApiPagesDeps& d, const http::Request& req, const Person& p) {
  auto form = http::ParseForm(req.body);
  if (auto refused = RefuseForgedPost(d.people, req, p, form)) return *refused;
  const PageChrome chrome = ChromeFor(p, "api");
  std::string action = http::FormValue(form, "action").value_or("");
  if (action == "create") {
    std::string name = http::FormValue(form, "name").value_or("");
    auto role = governance::ParseApiKeyRole(http::FormValue(form, "role").value_or("integration"));
    if (!role) return KeysPage(d, p, 400, "Choose a role: integration or admin.", name);
    auto created = d.api_keys->Create(name, *role);
    if (!created) {
      auto status = PersonFacingStatus(created.error());
      if (!status) return InternalError(created.error(), chrome);
      return KeysPage(d, p, *status, created.error().message, name);
    }
    ViewMap ctx = KeyNode(created->key);
    ctx.emplace("secret", created->secret);
    ctx.emplace("rest_base_url", d.rest_base_url);
    return RenderPage(201, "API key created", "api_key_created.mustache", ctx, chrome);
  }
  auto id = IdField(form, "id");
  if (!id || (action != "enable" && action != "disable" && action != "delete"))
    return MessagePage(400, "Bad request", "Use the buttons on the API keys page.", chrome,
                       "/console/api-keys", "API keys");
  Status st = Ok();
  if (action == "delete") {
    st = d.api_keys->Delete(*id);
  } else {
    auto k = d.api_keys->SetEnabled(*id, action == "enable");
    if (!k) st = Fail(k.error());
  }
  if (!st) return ServiceErrorPage(st.error(), chrome, "/console/api-keys");
  return SeeOther("/console/api-keys");
}

// --- outgoing webhooks ---

ViewMap EndpointNode(const webhooks::Endpoint& e) {
  ViewList events;
  for (const auto& ev : e.events) events.emplace_back(ev);
  ViewMap m{{"id", std::to_string(e.id)},
            {"url", e.url},
            {"description", e.description},
            {"events", std::move(events)},
            {"enabled", e.enabled},
            {"status", std::string(e.enabled ? "enabled" : "disabled")},
            {"failures", std::to_string(e.consecutive_failures)},
            {"created_at", FormatRfc3339(e.created_at)}};
  if (e.disabled_reason) m.emplace("disabled_reason", *e.disabled_reason);
  return m;
}

// The 8 contact events, then the opt-in email.* events.
ViewList EventOptions(const std::vector<std::string>& checked) {
  ViewList out;
  auto add = [&](const crm::events::EventType& ev) {
    std::string name(ev.name);
    bool on = std::find(checked.begin(), checked.end(), name) != checked.end();
    out.emplace_back(ViewMap{{"name", name},
                             {"display_name", std::string(ev.display_name)},
                             {"id", "event-" + std::to_string(out.size())},
                             {"checked", on}});
  };
  for (const auto& ev : crm::events::kAll) add(ev);
  for (const auto& ev : crm::events::kEmail) add(ev);
  return out;
}

struct EndpointForm {
  std::string url, description;
  std::vector<std::string> events;
};

http::Response WebhooksPage(const ApiPagesDeps& d, const Person& p, int status,
                            const std::string& error, const EndpointForm& in) {
  auto eps = d.endpoints->List();
  if (!eps) return InternalError(eps.error(), ChromeFor(p, "api"));
  ViewList list;
  for (const auto& e : *eps) list.emplace_back(EndpointNode(e));
  ViewMap ctx{{"endpoints", std::move(list)},  {"has_endpoints", !eps->empty()},
              {"csrf_token", p.csrf_token},    {"url", in.url},
              {"description", in.description}, {"event_options", EventOptions(in.events)}};
  if (!error.empty()) ctx.emplace("error", error);
  return RenderPage(status, "Outgoing webhooks", "webhooks.mustache", ctx, ChromeFor(p, "api"));
}

http::Response PostWebhooks(const ApiPagesDeps& d, const http::Request& req, const Person& p) {
  auto form = http::ParseForm(req.body);
  if (auto refused = RefuseForgedPost(d.people, req, p, form)) return *refused;
  const PageChrome chrome = ChromeFor(p, "api");
  std::string action = http::FormValue(form, "action").value_or("");
  if (action == "create") {
    EndpointForm in{.url = http::FormValue(form, "url").value_or(""),
                    .description = http::FormValue(form, "description").value_or("")};
    for (const auto& [k, v] : form)
      if (k == "events") in.events.push_back(v);
    if (in.events.empty()) return WebhooksPage(d, p, 400, "Choose at least one event.", in);
    auto created = d.endpoints->Create(webhooks::EndpointInput{
        .url = in.url, .events = in.events, .description = in.description, .enabled = true});
    if (!created) {
      auto status = PersonFacingStatus(created.error());
      if (!status) return InternalError(created.error(), chrome);
      return WebhooksPage(d, p, *status, created.error().message, in);
    }
    ViewMap ctx = EndpointNode(created->first);
    ctx.emplace("secret", created->second);
    return RenderPage(201, "Webhook created", "webhook_created.mustache", ctx, chrome);
  }
  auto id = IdField(form, "id");
  if (!id || (action != "enable" && action != "disable" && action != "delete"))
    return MessagePage(400, "Bad request", "Use the buttons on the webhooks page.", chrome,
                       "/console/webhooks", "Outgoing webhooks");
  Status st = Ok();
  if (action == "delete") {
    st = d.endpoints->Delete(*id);
  } else {
    auto e = d.endpoints->Update(*id, webhooks::EndpointInput{.enabled = action == "enable"});
    if (!e) st = Fail(e.error());
  }
  if (!st) return ServiceErrorPage(st.error(), chrome, "/console/webhooks");
  return SeeOther("/console/webhooks");
}

ViewMap DeliveryNode(const webhooks::Delivery& x) {
  ViewMap m{{"id", std::to_string(x.id)},
            {"endpoint_id", std::to_string(x.endpoint_id)},
            {"event_type", x.event_type},
            {"contact_id", x.contact_id ? std::to_string(*x.contact_id) : std::string("—")},
            {"status", x.status},
            {"attempts", std::to_string(x.attempts)},
            {"last_status_code",
             x.last_status_code ? std::to_string(*x.last_status_code) : std::string("—")},
            {"last_error", x.last_error.value_or("")},
            {"created_at", FormatRfc3339(x.created_at)},
            {"updated_at", FormatRfc3339(x.updated_at)},
            {"pending", x.status == "pending"}};
  if (x.status == "pending") m.emplace("next_attempt_at", FormatRfc3339(x.next_attempt_at));
  return m;
}

http::Response DeliveryLog(const ApiPagesDeps& d, const http::Request& req, const Person& p) {
  const PageChrome chrome = ChromeFor(p, "api");
  auto id = IdField(http::ParseForm(req.query), "endpoint_id");
  if (!id) return NotFoundPage(chrome);
  auto e = d.endpoints->Get(*id);
  if (!e) return ServiceErrorPage(e.error(), chrome, "/console/webhooks");
  auto list = d.deliveries->List({.endpoint_id = *id, .limit = 100});
  if (!list) return InternalError(list.error(), chrome);
  ViewList rows;
  for (const auto& x : *list) rows.emplace_back(DeliveryNode(x));
  ViewMap ctx = EndpointNode(*e);
  ctx.emplace("deliveries", std::move(rows));
  ctx.emplace("has_deliveries", !list->empty());
  return RenderPage(200, "Delivery log", "deliveries.mustache", ctx, chrome);
}

http::Response DeliveryPage(const ApiPagesDeps& d, const http::Request& req, const Person& p) {
  const PageChrome chrome = ChromeFor(p, "api");
  if (req.method == "POST") {
    auto form = http::ParseForm(req.body);
    if (auto refused = RefuseForgedPost(d.people, req, p, form)) return *refused;
    auto id = IdField(form, "id");
    if (!id) return MessagePage(400, "Bad request", "Use the Redeliver button.", chrome);
    auto again = d.deliveries->Redeliver(*id);
    if (!again) return ServiceErrorPage(again.error(), chrome, "/console/webhooks");
    return SeeOther("/console/webhooks/delivery?id=" + std::to_string(*id));
  }
  auto id = IdField(http::ParseForm(req.query), "id");
  if (!id) return NotFoundPage(chrome);
  auto x = d.deliveries->Get(*id);
  if (!x) return ServiceErrorPage(x.error(), chrome, "/console/webhooks");
  auto attempts = d.deliveries->Attempts(*id);
  if (!attempts) return InternalError(attempts.error(), chrome);
  ViewList rows;
  for (const auto& a : *attempts)
    rows.emplace_back(
        ViewMap{{"attempt", std::to_string(a.attempt)},
                {"started_at", FormatRfc3339(a.started_at)},
                {"status_code", a.status_code ? std::to_string(*a.status_code) : std::string("—")},
                {"error", a.error.value_or("")},
                {"duration_ms", std::to_string(a.duration_ms)}});
  ViewMap ctx = DeliveryNode(*x);
  ctx.emplace("attempt_rows", std::move(rows));
  ctx.emplace("has_attempts", !attempts->empty());
  ctx.emplace("csrf_token", p.csrf_token);
  return RenderPage(200, "Delivery " + std::to_string(*id), "delivery.mustache", ctx, chrome);
}

}  // namespace

ConsoleRoutes ApiRoutes(ApiPagesDeps deps) {
  auto d = std::make_shared<ApiPagesDeps>(std::move(deps));
  ConsoleRoutes routes;
  auto page =
      [d](std::string allowed,
          std::function<http::Response(const ApiPagesDeps&, const http::Request&, const Person&)>
              handle) {
        return [d, allowed, handle](const http::Request& r) {
          return WithAdmin(d->people, r, "api", [&](const Person& p) {
            if (auto refused = OnlyMethods(r, allowed, ChromeFor(p, "api"))) return *refused;
            return handle(*d, r, p);
          });
        };
      };
  routes.exact.emplace_back(
      "/console/api-keys",
      page("GET, HEAD, POST", [](const ApiPagesDeps& d, const http::Request& r, const Person& p) {
        if (r.method == "POST") return PostKeys(d, r, p);
        return KeysPage(d, p, 200, "", "");
      }));
  routes.exact.emplace_back(
      "/console/webhooks",
      page("GET, HEAD, POST", [](const ApiPagesDeps& d, const http::Request& r, const Person& p) {
        if (r.method == "POST") return PostWebhooks(d, r, p);
        return WebhooksPage(d, p, 200, "", {});
      }));
  routes.exact.emplace_back("/console/webhooks/deliveries", page("GET, HEAD", DeliveryLog));
  routes.exact.emplace_back("/console/webhooks/delivery", page("GET, HEAD, POST", DeliveryPage));
  return routes;
}

}  // namespace crmd::console
