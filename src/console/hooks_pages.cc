#include "src/console/hooks_pages.h"

#include <memory>
#include <nlohmann/json.hpp>

#include "src/core/clock.h"
#include "src/webhooks/incoming_mapping.h"

namespace crmd::console {
namespace {

using nlohmann::json;

constexpr int kMappingRows = 6;

json MappingOf(const FormFields& in) {
  json m = json::object();
  for (int i = 0; i < kMappingRows; ++i) {
    std::string p = "m" + std::to_string(i) + "_";
    std::string target = FieldValue(in, p + "target"), path = FieldValue(in, p + "path");
    if (target.empty() && path.empty()) continue;
    if (FieldValue(in, p + "required") == "on")
      m[target] = json{{"path", path}, {"required", true}};
    else
      m[target] = path;
  }
  return m;
}

json AppliesOf(const FormFields& in) {
  json a = json::object();
  if (auto tags = SplitList(FieldValue(in, "applies_tags"), ","); !tags.empty()) a["tags"] = tags;
  if (auto lists = SplitList(FieldValue(in, "applies_lists"), ","); !lists.empty())
    a["lists"] = lists;
  if (!FieldValue(in, "applies_status").empty()) a["status"] = FieldValue(in, "applies_status");
  if (!FieldValue(in, "applies_type").empty()) a["type"] = FieldValue(in, "applies_type");
  return a;
}

std::string RefText(const crm::Ref& r) {
  return std::holds_alternative<int64_t>(r) ? "#" + std::to_string(std::get<int64_t>(r))
                                            : std::get<std::string>(r);
}

struct Preview {
  bool ok = false;
  std::vector<std::pair<std::string, std::string>> rows;    // field, value
  std::vector<std::pair<std::string, std::string>> errors;  // path, message
};

// What the sample payload would become under the editor's mapping (src/webhooks' own
// functions; nothing is written).
Preview PreviewOf(const FormFields& in) {
  Preview out;
  auto mapping = webhooks::ParseMapping(MappingOf(in));
  if (!mapping) {
    out.errors.push_back({"mapping", mapping.error().message});
    return out;
  }
  auto applies = webhooks::ParseApplies(AppliesOf(in));
  if (!applies) {
    out.errors.push_back({"applies", applies.error().message});
    return out;
  }
  std::string sample = FieldValue(in, "sample");
  auto payload = json::parse(sample, nullptr, false);
  if (sample.find_first_not_of(" \t\r\n") == std::string::npos) {
    out.errors.push_back({"sample", "paste a sample payload (JSON) to see what it becomes"});
    return out;
  }
  if (payload.is_discarded() || !payload.is_object()) {
    out.errors.push_back({"sample", "the sample is not a JSON object"});
    return out;
  }
  auto mapped = webhooks::MapPayload(*mapping, *applies, payload);
  if (!mapped) {
    for (const auto& e : mapped.error()) out.errors.push_back({e.path, e.message});
    return out;
  }
  const crm::ContactInput& c = *mapped;
  auto add = [&](const char* label, const std::optional<std::string>& v) {
    if (v) out.rows.push_back({label, *v});
  };
  add("email", c.email);
  add("first_name", c.first_name);
  add("last_name", c.last_name);
  add("phone", c.phone);
  add("status", c.status);
  add("type", c.type);
  if (c.custom_fields && c.custom_fields->is_object())
    for (const auto& [k, v] : c.custom_fields->items())
      out.rows.push_back({"custom_fields." + k, v.is_string() ? v.get<std::string>() : v.dump()});
  std::string tags, lists;
  for (const auto& t : c.tags) tags += (tags.empty() ? "" : ", ") + RefText(t);
  for (const auto& l : c.lists) lists += (lists.empty() ? "" : ", ") + RefText(l);
  if (!tags.empty()) out.rows.push_back({"tags", tags});
  if (!lists.empty()) out.rows.push_back({"lists", lists});
  out.ok = true;
  return out;
}

ViewMap EditorNode(const FormFields& in) {
  ViewList rows;
  for (int i = 0; i < kMappingRows; ++i) {
    std::string p = "m" + std::to_string(i) + "_";
    bool first = in.empty() && i == 0;
    rows.emplace_back(
        ViewMap{{"i", std::to_string(i)},
                {"n", std::to_string(i + 1)},
                {"target", first ? std::string("email") : FieldValue(in, p + "target")},
                {"path", first ? std::string("email") : FieldValue(in, p + "path")},
                {"required", FieldValue(in, p + "required") == "on"}});
  }
  return ViewMap{{"rows", std::move(rows)},
                 {"hook_name", FieldValue(in, "name")},
                 {"applies_tags", FieldValue(in, "applies_tags")},
                 {"applies_lists", FieldValue(in, "applies_lists")},
                 {"applies_status", FieldValue(in, "applies_status")},
                 {"applies_type", FieldValue(in, "applies_type")},
                 {"sample", FieldValue(in, "sample")}};
}

ViewMap PreviewNode(const Preview& p) {
  ViewList rows, errors;
  for (const auto& [k, v] : p.rows) rows.emplace_back(ViewMap{{"label", k}, {"value", v}});
  for (const auto& [k, v] : p.errors) errors.emplace_back(ViewMap{{"path", k}, {"message", v}});
  return ViewMap{{"ok", p.ok}, {"rows", std::move(rows)}, {"errors", std::move(errors)}};
}

http::Response HooksPage(const HooksPagesDeps& d, const Person& p, int status,
                         const std::string& error, const FormFields& in, bool with_preview) {
  const PageChrome chrome = ChromeFor(p, "api");
  auto hooks = d.hooks->List();
  if (!hooks) return InternalError(hooks.error(), chrome);
  ViewList list;
  for (const auto& h : *hooks)
    list.emplace_back(
        ViewMap{{"id", std::to_string(h.id)},
                {"name", h.name},
                {"prefix", h.token_prefix},
                {"hmac", h.has_hmac_secret},
                {"enabled", h.enabled},
                {"status", std::string(h.enabled ? "enabled" : "disabled")},
                {"received", std::to_string(h.received_count)},
                {"last_received_at",
                 h.last_received_at ? FormatRfc3339(*h.last_received_at) : std::string("never")}});
  ViewMap ctx = EditorNode(in);
  ctx.emplace("hooks", std::move(list));
  ctx.emplace("has_hooks", !hooks->empty());
  ctx.emplace("csrf_token", p.csrf_token);
  ctx.emplace("preview", with_preview ? View(PreviewNode(PreviewOf(in))) : View(false));
  if (!error.empty()) ctx.emplace("error", error);
  return RenderPage(status, "Incoming webhooks", "hooks.mustache", ctx, chrome);
}

http::Response PostHooks(const HooksPagesDeps& d, const http::Request& req, const Person& p) {
  auto in = http::ParseForm(req.body);
  if (auto refused = RefuseForgedPost(d.people, req, p, in)) return *refused;
  const PageChrome chrome = ChromeFor(p, "api");
  std::string action = FieldValue(in, "action");
  if (action == "preview") return HooksPage(d, p, 200, "", in, true);
  if (action == "create") {
    webhooks::IncomingHookInput hook{
        .name = FieldValue(in, "name"), .mapping = MappingOf(in), .applies = AppliesOf(in)};
    if (!FieldValue(in, "hmac_secret").empty()) hook.hmac_secret = FieldValue(in, "hmac_secret");
    auto made = d.hooks->Create(hook);
    if (!made) {
      auto status = PersonFacingStatus(made.error());
      if (!status) return InternalError(made.error(), chrome);
      return HooksPage(d, p, *status, made.error().message, in, false);
    }
    return RenderPage(201, "Incoming webhook created", "hook_created.mustache",
                      ViewMap{{"name", made->hook.name},
                              {"url", d.rest_base_url + "/hooks/" + made->token},
                              {"hmac", made->hook.has_hmac_secret}},
                      chrome);
  }
  std::string id_text = FieldValue(in, "id");
  if (id_text.empty() || id_text.size() > 18 ||
      id_text.find_first_not_of("0123456789") != std::string::npos ||
      (action != "enable" && action != "disable" && action != "delete"))
    return MessagePage(400, "Bad request", "Use the buttons on the incoming webhooks page.", chrome,
                       "/console/hooks", "Incoming webhooks");
  int64_t id = std::stoll(id_text);
  Status st = Ok();
  if (action == "delete") {
    st = d.hooks->Delete(id);
  } else {
    auto h = d.hooks->Update(id, webhooks::IncomingHookInput{.enabled = action == "enable"});
    if (!h) st = Fail(h.error());
  }
  if (!st) return ServiceErrorPage(st.error(), chrome);
  return SeeOther("/console/hooks");
}

http::Response PreviewJson(const HooksPagesDeps& d, const http::Request& req, const Person& p) {
  auto in = http::ParseForm(req.body);
  if (auto refused = RefuseForgedPost(d.people, req, p, in)) return *refused;
  Preview pv = PreviewOf(in);
  json rows = json::array(), errors = json::array();
  for (const auto& [k, v] : pv.rows) rows.push_back({{"label", k}, {"value", v}});
  for (const auto& [k, v] : pv.errors) errors.push_back({{"path", k}, {"message", v}});
  http::Response r = http::Response::Json(200, {{"ok", pv.ok}, {"rows", rows}, {"errors", errors}});
  r.Set("Cache-Control", "no-store");
  return r;
}

}  // namespace

ConsoleRoutes HooksRoutes(HooksPagesDeps deps) {
  auto d = std::make_shared<HooksPagesDeps>(std::move(deps));
  ConsoleRoutes routes;
  routes.exact.emplace_back("/console/hooks", [d](const http::Request& r) {
    return WithAdmin(d->people, r, "api", [&](const Person& p) {
      if (auto refused = OnlyMethods(r, "GET, HEAD, POST", ChromeFor(p, "api"))) return *refused;
      if (r.method == "POST") return PostHooks(*d, r, p);
      return HooksPage(*d, p, 200, "", {}, false);
    });
  });
  routes.exact.emplace_back("/console/hooks/preview", [d](const http::Request& r) {
    return WithAdmin(d->people, r, "api", [&](const Person& p) {
      if (auto refused = OnlyMethods(r, "POST", ChromeFor(p, "api"))) return *refused;
      return PreviewJson(*d, r, p);
    });
  });
  return routes;
}

}  // namespace crmd::console
