#include "src/marketing/automation_steps.h"

#include <algorithm>
#include <set>

#include "src/core/header_text.h"
#include "src/crm/contact_status.h"
#include "src/mail/merge.h"
#include "src/mail/message.h"
#include "src/marketing/automations_repo.h"
#include "src/marketing/campaigns_repo.h"
#include "src/marketing/templates.h"

namespace crmd::marketing {
namespace {

using nlohmann::json;

tl::unexpected<Error> Bad(const std::string& field, const std::string& why) {
  return Fail(Errc::kInvalidArgument, field + ": " + why);
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Copies a positive integer id param; `field` names it in errors.
Status TakeId(const json& in, const char* key, const std::string& where, json& out) {
  if (!in.contains(key)) return Bad(where + "." + key, "required");
  const auto& v = in[key];
  if (!v.is_number_integer() || v.get<int64_t>() <= 0) {
    return Bad(where + "." + key, "must be a positive integer id");
  }
  out[key] = v.get<int64_t>();
  return Ok();
}

Status TakeString(const json& in, const char* key, const std::string& where, size_t max,
                  bool required, json& out) {
  if (!in.contains(key) || in[key].is_null()) {
    if (required) return Bad(where + "." + key, "required");
    return Ok();
  }
  if (!in[key].is_string()) return Bad(where + "." + key, "must be a string");
  auto s = in[key].get<std::string>();
  if (required && s.empty()) return Bad(where + "." + key, "must not be empty");
  if (s.size() > max) return Bad(where + "." + key, "longer than " + std::to_string(max));
  out[key] = std::move(s);
  return Ok();
}

Status CheckKnownKeys(const json& in, const std::string& where, std::set<std::string> allowed) {
  allowed.insert("type");
  for (const auto& [k, v] : in.items()) {
    if (!allowed.count(k)) return Bad(where + "." + k, "not a parameter of this type");
  }
  return Ok();
}

Status TakeStatus(const json& in, const std::string& where, json& out) {
  if (auto s = TakeString(in, "status", where, 40, true, out); !s) return s;
  if (!Contains(ContactStatuses(), out["status"].get<std::string>())) {
    return Bad(where + ".status", "not a contact status");
  }
  return Ok();
}

Result<json> ValidateStep(const json& in, const std::string& where) {
  if (!in.is_object()) return Bad(where, "must be an object");
  if (!in.contains("type") || !in["type"].is_string()) return Bad(where + ".type", "required");
  std::string type = in["type"].get<std::string>();
  if (!Contains(StepTypes(), type)) return Bad(where + ".type", "unknown step type " + type);
  json out = {{"type", type}};
  Status st;
  if (type == "wait") {
    st = CheckKnownKeys(in, where, {"seconds", "days"});
    if (st) {
      bool has_s = in.contains("seconds"), has_d = in.contains("days");
      if (has_s == has_d) {
        st = Bad(where, "wait takes exactly one of seconds or days");
      } else {
        const char* key = has_s ? "seconds" : "days";
        const auto& v = in[key];
        int64_t max = has_s ? 365 * 86400 : 365;
        if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > max) {
          st = Bad(where + "." + key, "must be an integer from 1 to " + std::to_string(max));
        } else {
          out[key] = v.get<int64_t>();
        }
      }
    }
  } else if (type == "add_tag" || type == "remove_tag") {
    st = CheckKnownKeys(in, where, {"tag_id"});
    if (st) st = TakeId(in, "tag_id", where, out);
  } else if (type == "add_list" || type == "remove_list") {
    st = CheckKnownKeys(in, where, {"list_id"});
    if (st) st = TakeId(in, "list_id", where, out);
  } else if (type == "set_status") {
    st = CheckKnownKeys(in, where, {"status"});
    if (st) st = TakeStatus(in, where, out);
  } else if (type == "send_email") {
    st = CheckKnownKeys(
        in, where, {"subject", "html_body", "text_body", "from_name", "from_email", "template_id"});
    if (st) st = TakeString(in, "subject", where, 300, true, out);
    if (st) st = TakeString(in, "html_body", where, 512 * 1024, false, out);
    if (st) st = TakeString(in, "text_body", where, 256 * 1024, false, out);
    if (st) st = TakeString(in, "from_name", where, 200, false, out);
    if (st) st = TakeString(in, "from_email", where, 320, false, out);
    if (st) {  // the template itself is checked by the service (it needs the database)
      auto id = TemplateIdOf(in, where + ".template_id");
      if (!id) st = Fail(id.error());
      if (st && *id) out["template_id"] = **id;
    }
    // The sender's name and the subject go into every message's header as they are.
    for (const char* key : {"subject", "from_name"}) {
      if (!st || !out.contains(key)) continue;
      if (auto problem = HeaderTextProblem(out[key].get<std::string>()); !problem.empty())
        st = Bad(where + "." + key, problem);
    }
    if (st && !out.value("from_email", "").empty() &&
        !mail::IsPlainAddress(out["from_email"].get<std::string>(), /*utf8=*/true))
      st = Bad(where + ".from_email", "not an email address");
    if (st && out.value("html_body", "").empty() && out.value("text_body", "").empty()) {
      st = Bad(where, "send_email needs html_body or text_body");
    }
    // Merge tags are checked when saved: a typo is an error now, not a blank at send time.
    for (const char* key : {"subject", "html_body", "text_body"}) {
      if (!st || !out.contains(key)) continue;
      if (auto t = mail::MergeTemplate::Parse(out[key].get<std::string>()); !t)
        st = Bad(where + "." + key, t.error().message);
    }
  } else if (type == "call_webhook") {
    st = CheckKnownKeys(in, where, {"url"});
    if (st) st = TakeString(in, "url", where, 2000, true, out);
    if (st) {
      auto url = out["url"].get<std::string>();
      if (url.rfind("https://", 0) != 0 && url.rfind("http://", 0) != 0) {
        st = Bad(where + ".url", "must be an http(s) URL");
      } else if (url.find_first_of(" \t\r\n") != std::string::npos) {
        st = Bad(where + ".url", "must not contain whitespace");
      }
    }
  }
  if (!st) return Fail(st.error());
  return out;
}

}  // namespace

const std::vector<std::string>& ContactStatuses() {
  static const std::vector<std::string> k(std::begin(crm::kStatuses), std::end(crm::kStatuses));
  return k;
}

const std::vector<std::string>& TriggerTypes() {
  static const std::vector<std::string> k{"contact_created", "tag_added",    "tag_removed",
                                          "list_added",      "list_removed", "status_changed",
                                          "form_submitted"};
  return k;
}

const std::vector<std::string>& StepTypes() {
  static const std::vector<std::string> k{"wait",       "add_tag",     "remove_tag",
                                          "add_list",   "remove_list", "set_status",
                                          "send_email", "call_webhook"};
  return k;
}

Result<json> ValidateTrigger(const json& in) {
  if (!in.is_object()) return Bad("trigger", "must be an object");
  if (!in.contains("type") || !in["type"].is_string()) return Bad("trigger.type", "required");
  std::string type = in["type"].get<std::string>();
  if (!Contains(TriggerTypes(), type)) return Bad("trigger.type", "unknown trigger " + type);
  json out = {{"type", type}};
  Status st;
  if (type == "contact_created") {
    st = CheckKnownKeys(in, "trigger", {});
  } else if (type == "tag_added" || type == "tag_removed") {
    st = CheckKnownKeys(in, "trigger", {"tag_id"});
    if (st) st = TakeId(in, "tag_id", "trigger", out);
  } else if (type == "list_added" || type == "list_removed") {
    st = CheckKnownKeys(in, "trigger", {"list_id"});
    if (st) st = TakeId(in, "list_id", "trigger", out);
  } else if (type == "status_changed") {
    st = CheckKnownKeys(in, "trigger", {"status"});
    if (st) st = TakeStatus(in, "trigger", out);
  } else if (type == "form_submitted") {
    st = CheckKnownKeys(in, "trigger", {"form_id"});
    if (st && in.contains("form_id")) st = TakeId(in, "form_id", "trigger", out);
  }
  if (!st) return Fail(st.error());
  return out;
}

Result<json> ValidateSteps(const json& steps) {
  if (!steps.is_array()) return Bad("steps", "must be an array");
  if (steps.size() > kMaxAutomationSteps) {
    return Bad("steps", "at most " + std::to_string(kMaxAutomationSteps) + " steps");
  }
  json out = json::array();
  for (size_t i = 0; i < steps.size(); ++i) {
    auto step = ValidateStep(steps[i], "steps[" + std::to_string(i) + "]");
    if (!step) return Fail(step.error());
    out.push_back(std::move(*step));
  }
  return out;
}

std::vector<AutomationRef> CollectRefs(const json& trigger, const json& steps) {
  std::vector<AutomationRef> refs;
  auto add = [&](AutomationRef r) {
    if (std::find(refs.begin(), refs.end(), r) == refs.end()) refs.push_back(std::move(r));
  };
  if (trigger.contains("tag_id")) add({"tag", trigger["tag_id"].get<int64_t>(), "trigger"});
  if (trigger.contains("list_id")) add({"list", trigger["list_id"].get<int64_t>(), "trigger"});
  for (const auto& s : steps) {
    if (s.contains("tag_id")) add({"tag", s["tag_id"].get<int64_t>(), "step"});
    if (s.contains("list_id")) add({"list", s["list_id"].get<int64_t>(), "step"});
  }
  return refs;
}

Status CheckRefsExist(store::Conn& c, const std::vector<AutomationRef>& refs, const json& trigger) {
  for (const auto& r : refs) {
    auto missing = campaigns_repo::MissingIds(c, r.kind == "list" ? "lists" : "tags", {r.id});
    if (!missing) return Fail(missing.error());
    if (!missing->empty()) {
      return Fail(Errc::kInvalidArgument, (r.role == "trigger" ? "trigger." : "steps: ") + r.kind +
                                              "_id " + std::to_string(r.id) + " does not exist");
    }
  }
  if (trigger.contains("form_id")) {
    auto form = automations_repo::FormExistsOrNoForms(c, trigger["form_id"].get<int64_t>());
    if (!form) return Fail(form.error());
    if (!*form) return Bad("trigger.form_id", "form does not exist");
  }
  return Ok();
}

}  // namespace crmd::marketing
