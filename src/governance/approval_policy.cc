#include "src/governance/approval_policy.h"

#include <algorithm>

namespace crmd::governance {

using nlohmann::json;

const std::vector<std::string>& ApprovableActions() {
  static const std::vector<std::string> kActions = {
      "delete_contacts",   "delete_list",       "delete_tag",          "delete_campaign",
      "delete_automation", "activate_campaign", "activate_automation", "resend_campaign"};
  return kActions;
}

json DefaultApprovalPolicy() {
  return {{"require_person", ApprovableActions()}, {"thresholds", json::object()}};
}

namespace {

bool Known(const std::string& action) {
  const auto& a = ApprovableActions();
  return std::find(a.begin(), a.end(), action) != a.end();
}

constexpr int64_t kMaxThreshold = 100;  // delete_contacts takes at most 100 ids
// activate_campaign and resend_campaign count recipients.
constexpr int64_t kMaxRecipientsThreshold = 100'000'000;

int64_t MaxThreshold(const std::string& action) {
  return action == "activate_campaign" || action == "resend_campaign" ? kMaxRecipientsThreshold
                                                                      : kMaxThreshold;
}

}  // namespace

Status ValidateApprovalPolicy(const json& policy) {
  if (!policy.is_object()) return Fail(Errc::kInvalidArgument, "approval_policy must be an object");
  for (const auto& [key, value] : policy.items()) {
    const std::string field = "approval_policy." + key;
    if (key == "require_person") {
      if (!value.is_array()) return Fail(Errc::kInvalidArgument, field + " must be an array");
      for (size_t i = 0; i < value.size(); ++i) {
        if (!value[i].is_string() || !Known(value[i].get<std::string>()))
          return Fail(Errc::kInvalidArgument,
                      field + "." + std::to_string(i) + " must name a confirmable action");
      }
    } else if (key == "thresholds") {
      if (!value.is_object()) return Fail(Errc::kInvalidArgument, field + " must be an object");
      for (const auto& [action, t] : value.items()) {
        const std::string f = field + "." + action;
        if (!Known(action)) return Fail(Errc::kInvalidArgument, f + " is not a confirmable action");
        const int64_t max = MaxThreshold(action);
        if (!t.is_object() || t.size() != 1 || !t.contains("assistant_may_confirm_up_to"))
          return Fail(
              Errc::kInvalidArgument,
              f + " must be {\"assistant_may_confirm_up_to\": <0.." + std::to_string(max) + ">}");
        const json& n = t["assistant_may_confirm_up_to"];
        if (!n.is_number_integer() || n.get<int64_t>() < 0 || n.get<int64_t>() > max)
          return Fail(Errc::kInvalidArgument,
                      f + ".assistant_may_confirm_up_to must be an integer from 0 to " +
                          std::to_string(max));
      }
    } else if (key == "approved_by") {
      if (value != "administrator" && value != "person")
        return Fail(Errc::kInvalidArgument, field + " must be \"administrator\" or \"person\"");
    } else {
      return Fail(Errc::kInvalidArgument, "unknown setting: " + field);
    }
  }
  return Ok();
}

bool PersonMayApproveOwn(const json& policy) {
  if (!ValidateApprovalPolicy(policy)) return false;
  return policy.value("approved_by", std::string("administrator")) == "person";
}

bool NeedsPerson(const json& policy, const std::string& action, const json& preview) {
  const json p = ValidateApprovalPolicy(policy) ? policy : DefaultApprovalPolicy();
  const json required = p.value("require_person", DefaultApprovalPolicy()["require_person"]);
  if (std::find(required.begin(), required.end(), json(action)) == required.end()) return false;
  const json thresholds = p.value("thresholds", json::object());
  auto t = thresholds.find(action);
  if (t == thresholds.end()) return true;
  // Without a count the size of the action is unknown: the person decides.
  if (!preview.is_object() || !preview.contains("count") || !preview["count"].is_number_integer())
    return true;
  return preview["count"].get<int64_t>() > (*t)["assistant_may_confirm_up_to"].get<int64_t>();
}

}  // namespace crmd::governance
