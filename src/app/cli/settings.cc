// crmctl settings: the settings document, and the one key an assistant may never change,
// approval_policy (docs/mcp.md "Human approval").
#include "src/governance/settings.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "src/app/cli/commands.h"
#include "src/governance/approval_policy.h"

namespace crmd::app::cli {

namespace {

constexpr const char* kUsage =
    "settings show | settings approval-policy show | settings approval-policy set JSON | "
    "settings approval-policy reset | settings company-address [TEXT] | "
    "settings test-recipients [ADDRESS|@DOMAIN ...] | settings presend-thresholds [JSON]";

// settings company-address [TEXT]: shows, or sets, the postal address of email footers.
int CompanyAddress(governance::SettingsService& settings, const governance::SettingsDoc& cur,
                   const Args& args) {
  if (args.size() == 1) {
    std::printf("%s\n", cur.document.value("company_address", "").c_str());
    return 0;
  }
  governance::Actor actor{.kind = "cli", .subject = "crmctl"};
  auto next = settings.Update(actor, cur.revision, {{"company_address", args[1]}});
  if (!next) return PrintError(next.error(), "crmctl settings company-address");
  std::printf("%s\n", next->document.value("company_address", "").c_str());
  return 0;
}

// settings test-recipients [ADDRESS|@DOMAIN ...]: shows, or replaces, who besides console
// users may receive test sends (a lone "-" empties the list).
int TestRecipients(governance::SettingsService& settings, const governance::SettingsDoc& cur,
                   const Args& args) {
  if (args.size() > 1) {
    nlohmann::json allowed = nlohmann::json::array();
    if (!(args.size() == 2 && args[1] == "-"))
      for (size_t i = 1; i < args.size(); ++i) allowed.push_back(args[i]);
    governance::Actor actor{.kind = "cli", .subject = "crmctl"};
    auto next = settings.Update(actor, cur.revision, {{"test_recipients_allowed", allowed}});
    if (!next) return PrintError(next.error(), "crmctl settings test-recipients");
    PrintJson(next->document["test_recipients_allowed"]);
    return 0;
  }
  PrintJson(cur.document.value("test_recipients_allowed", nlohmann::json::array()));
  return 0;
}

// settings presend-thresholds [JSON]: shows, or replaces, the pre-send check's audience
// thresholds ({"audience_role": {"warning": 10, "error": 50}, ...}).
int Thresholds(governance::SettingsService& settings, const governance::SettingsDoc& cur,
               const Args& args) {
  if (args.size() == 2) {
    auto value = nlohmann::json::parse(args[1], nullptr, false);
    if (value.is_discarded()) return Usage("settings presend-thresholds: JSON expected");
    governance::Actor actor{.kind = "cli", .subject = "crmctl"};
    auto next = settings.Update(actor, cur.revision, {{"presend_thresholds", value}});
    if (!next) return PrintError(next.error(), "crmctl settings presend-thresholds");
    PrintJson(next->document["presend_thresholds"]);
    return 0;
  }
  PrintJson(cur.document.value("presend_thresholds", nlohmann::json::object()));
  return 0;
}

}  // namespace

int SettingsCommand(Context& ctx, const Args& args) {
  if (args.empty()) return Usage(kUsage);
  auto s = ctx.services();
  if (!s) return PrintError(s.error());
  governance::SettingsService& settings = *(*s)->governance->settings;
  auto cur = settings.Get();
  if (!cur) return PrintError(cur.error(), "crmctl settings");
  if (args[0] == "show" && args.size() == 1) {
    PrintJson(governance::ToJson(*cur));
    return 0;
  }
  if (args[0] == "company-address" && args.size() <= 2) return CompanyAddress(settings, *cur, args);
  if (args[0] == "test-recipients") return TestRecipients(settings, *cur, args);
  if (args[0] == "presend-thresholds" && args.size() <= 2) return Thresholds(settings, *cur, args);
  if (args[0] != "approval-policy" || args.size() < 2) return Usage(kUsage);
  const std::string& verb = args[1];
  if (verb == "show" && args.size() == 2) {
    PrintJson(cur->document.value("approval_policy", governance::DefaultApprovalPolicy()));
    return 0;
  }
  nlohmann::json policy;
  if (verb == "reset" && args.size() == 2) {
    policy = governance::DefaultApprovalPolicy();
  } else if (verb == "set" && args.size() == 3) {
    policy = nlohmann::json::parse(args[2], nullptr, false);
    if (policy.is_discarded()) return Usage("settings approval-policy set: JSON expected");
    // A whole policy: what is not said takes the default's place, so nothing is left over
    // from an earlier one by accident.
    if (policy.is_object() && !policy.contains("require_person"))
      policy["require_person"] = governance::DefaultApprovalPolicy()["require_person"];
    if (policy.is_object() && !policy.contains("thresholds"))
      policy["thresholds"] = nlohmann::json::object();
  } else {
    return Usage(kUsage);
  }
  governance::Actor actor{.kind = "cli", .subject = "crmctl"};
  auto next = settings.Update(actor, cur->revision, {{"approval_policy", policy}});
  if (!next) return PrintError(next.error(), "crmctl settings approval-policy");
  PrintJson(next->document["approval_policy"]);
  return 0;
}

}  // namespace crmd::app::cli
