#include "src/governance/settings.h"

#include <set>

#include "src/core/email_address.h"
#include "src/core/header_text.h"
#include "src/governance/approval_policy.h"
#include "src/governance/audit.h"
#include "src/governance/settings_repo.h"

namespace crmd::governance {

using nlohmann::json;

const json& DefaultSettings() {
  static const json kDefaults = {
      {"business", {{"name", ""}, {"address", ""}, {"website", ""}, {"phone", ""}}},
      {"sender", {{"from_name", ""}, {"from_email", ""}, {"reply_to", ""}}},
      // The sender's postal address, in every template's footer ({{company_address}}).
      {"company_address", ""},
      {"double_opt_in", false},
      {"email_validation_mode", "syntax"},
      {"confirmation_ttl_seconds", 600},
      {"soft_bounce_limit", {{"count", 3}, {"days", 7}}},
      {"approval_policy", DefaultApprovalPolicy()},
      // Who may receive test sends besides console users: addresses and "@domain" entries.
      {"test_recipients_allowed", json::array()},
      // The pre-send check's audience shares, in percent: above `warning` a warning, above
      // `error` an error (100: never). marketing::DefaultPresendThresholds has the defaults.
      {"presend_thresholds", json::object()},
  };
  return kDefaults;
}

json ToJson(const SettingsDoc& s) {
  json j = s.document;
  j["revision"] = s.revision;
  return j;
}

namespace {

// The values of email_validation_mode; the contact book's validator reads them
// (crm::ParseValidationMode).
bool IsEmailValidationMode(const std::string& mode) {
  return mode == "off" || mode == "syntax" || mode == "dns";
}

// {"audience_role": {"warning": 10, "error": 50}, ...}: percentages 0..100.
Status ValidatePresendThresholds(const json& value) {
  static const std::set<std::string> kChecks = {"audience_role", "audience_disposable",
                                                "audience_unconfirmed", "audience_unengaged"};
  if (!value.is_object())
    return Fail(Errc::kInvalidArgument, "presend_thresholds must be an object");
  for (const auto& [check, t] : value.items()) {
    const std::string f = "presend_thresholds." + check;
    if (!kChecks.count(check))
      return Fail(Errc::kInvalidArgument,
                  f + " is not an audience check (audience_role, audience_disposable, "
                      "audience_unconfirmed, audience_unengaged)");
    if (!t.is_object()) return Fail(Errc::kInvalidArgument, f + " must be {warning, error}");
    for (const auto& [level, n] : t.items()) {
      if (level != "warning" && level != "error")
        return Fail(Errc::kInvalidArgument, f + "." + level + " is not warning or error");
      if (!n.is_number() || n.get<double>() < 0 || n.get<double>() > 100)
        return Fail(Errc::kInvalidArgument, f + "." + level + " must be a percentage 0..100");
    }
    if (t.contains("warning") && t.contains("error") &&
        t["warning"].get<double>() > t["error"].get<double>())
      return Fail(Errc::kInvalidArgument, f + ".warning must not be above its error threshold");
  }
  return Ok();
}

constexpr size_t kMaxTestRecipientsAllowed = 100;

// An array of at most 100 addresses or "@domain" entries.
Status ValidateTestRecipientsAllowed(const json& value) {
  if (!value.is_array() || value.size() > kMaxTestRecipientsAllowed)
    return Fail(Errc::kInvalidArgument,
                "test_recipients_allowed must be an array of at most 100 addresses or @domains");
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string field = "test_recipients_allowed." + std::to_string(i);
    if (!value[i].is_string()) return Fail(Errc::kInvalidArgument, field + " must be a string");
    const std::string& v = value[i].get_ref<const std::string&>();
    bool ok = !v.empty() && v.front() == '@' ? v.size() > 1 && NormalizeEmail("x" + v).has_value()
                                             : NormalizeEmail(v).has_value();
    if (!ok)
      return Fail(Errc::kInvalidArgument,
                  field + " must be an email address or @domain (e.g. @example.com)");
  }
  return Ok();
}

}  // namespace

Status ValidateSettingsPatch(const json& patch) {
  if (!patch.is_object()) return Fail(Errc::kInvalidArgument, "settings must be an object");
  const json& d = DefaultSettings();
  for (const auto& [key, value] : patch.items()) {
    if (!d.contains(key)) return Fail(Errc::kInvalidArgument, "unknown setting: " + key);
    if (key == "approval_policy") {
      if (auto st = ValidateApprovalPolicy(value); !st) return st;
      continue;
    }
    if (key == "presend_thresholds") {
      if (auto st = ValidatePresendThresholds(value); !st) return st;
      continue;
    }
    if (key == "test_recipients_allowed") {
      if (auto st = ValidateTestRecipientsAllowed(value); !st) return st;
      continue;
    }
    if (key == "soft_bounce_limit") {
      if (!value.is_object())
        return Fail(Errc::kInvalidArgument, "soft_bounce_limit must be an object {count, days}");
      for (const auto& [sub, v] : value.items()) {
        if (sub != "count" && sub != "days")
          return Fail(Errc::kInvalidArgument, "soft_bounce_limit." + sub + " is not a setting");
        const int64_t max = sub == "count" ? 100 : 365;
        if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > max)
          return Fail(
              Errc::kInvalidArgument,
              "soft_bounce_limit." + sub + " must be an integer from 1 to " + std::to_string(max));
      }
      continue;
    }
    if (d[key].is_object()) {
      if (!value.is_object()) return Fail(Errc::kInvalidArgument, key + " must be an object");
      for (const auto& [sub, v] : value.items()) {
        if (!d[key].contains(sub))
          return Fail(Errc::kInvalidArgument, "unknown setting: " + key + "." + sub);
        if (!v.is_string() || v.get_ref<const std::string&>().size() > 500)
          return Fail(Errc::kInvalidArgument, key + "." + sub + " must be a string (<= 500)");
        if (sub == "from_name")
          if (auto problem = HeaderTextProblem(v.get<std::string>()); !problem.empty())
            return Fail(Errc::kInvalidArgument, key + "." + sub + " " + problem);
        if ((sub == "from_email" || sub == "reply_to") && !v.get<std::string>().empty() &&
            !NormalizeEmail(v.get<std::string>()))
          return Fail(Errc::kInvalidArgument, key + "." + sub + " is not a valid email address");
      }
      continue;
    }
    if (key == "company_address" &&
        (!value.is_string() || value.get_ref<const std::string&>().size() > 1000))
      return Fail(Errc::kInvalidArgument,
                  "company_address must be a string of at most 1000 bytes (a postal address)");
    if (key == "double_opt_in" && !value.is_boolean())
      return Fail(Errc::kInvalidArgument, "double_opt_in must be a boolean");
    if (key == "email_validation_mode" &&
        (!value.is_string() || !IsEmailValidationMode(value.get<std::string>())))
      return Fail(Errc::kInvalidArgument, "email_validation_mode must be off, syntax or dns");
    if (key == "confirmation_ttl_seconds" &&
        (!value.is_number_integer() || value.get<int64_t>() < 60 || value.get<int64_t>() > 86400))
      return Fail(Errc::kInvalidArgument,
                  "confirmation_ttl_seconds must be an integer from 60 to 86400");
  }
  return Ok();
}

namespace {

json Merge(json base, const json& patch) {
  for (const auto& [key, value] : patch.items()) {
    if (value.is_object() && base.contains(key) && base[key].is_object()) {
      for (const auto& [sub, v] : value.items()) base[key][sub] = v;
    } else {
      base[key] = value;
    }
  }
  return base;
}

}  // namespace

bool MayChangeApprovalPolicy(const Actor& actor) {
  return actor.kind == "cli" || actor.kind == "user";
}

SettingsService::SettingsService(SettingsOptions options) : o_(options) {}

Result<SettingsDoc> SettingsService::GetIn(store::Conn& conn) {
  auto shared = SharedIn(conn);
  if (!shared) return Fail(shared.error());
  return **shared;
}

Result<std::shared_ptr<const SettingsDoc>> SettingsService::SharedIn(store::Conn& conn) {
  auto row = settings_repo::Find(conn);
  if (!row) return Fail(row.error());
  if (!*row) {  // never written: the defaults
    static const auto kDefaults =
        std::make_shared<const SettingsDoc>(SettingsDoc{.document = DefaultSettings()});
    return kDefaults;
  }
  {
    // The parsed document of the same revision, when Recent() holds it (no parse).
    std::lock_guard lock(recent_mu_);
    if (recent_ && recent_->revision == (*row)->revision &&
        recent_->updated_at == (*row)->updated_at)
      return recent_;
  }
  auto parsed = std::make_shared<SettingsDoc>();
  SettingsDoc& s = *parsed;
  s.document = DefaultSettings();
  auto stored = json::parse((*row)->document, nullptr, false);
  if (stored.is_object()) s.document = Merge(s.document, stored);
  s.revision = (*row)->revision;
  s.updated_at = (*row)->updated_at;
  return std::shared_ptr<const SettingsDoc>(std::move(parsed));
}

Result<SettingsDoc> SettingsService::Get() {
  return o_.db->Read([&](store::Conn& c) { return GetIn(c); });
}

Result<SettingsDoc> SettingsService::Update(const Actor& actor, int64_t expected_revision,
                                            const json& patch) {
  if (auto st = ValidateSettingsPatch(patch); !st) return Fail(st.error());
  if (patch.contains("approval_policy") && !MayChangeApprovalPolicy(actor))
    return Fail(Errc::kPermissionDenied,
                "approval_policy can only be changed by a person: an operator with `crmctl "
                "settings approval-policy`, not an assistant (the policy decides what the "
                "assistant may do alone)");
  if (patch.contains("test_recipients_allowed") && !MayChangeApprovalPolicy(actor))
    return Fail(Errc::kPermissionDenied,
                "test_recipients_allowed can only be changed by a person (`crmctl settings "
                "test-recipients`), not an assistant: it says who besides console users may "
                "receive test sends");
  if (patch.contains("presend_thresholds") && !MayChangeApprovalPolicy(actor))
    return Fail(Errc::kPermissionDenied,
                "presend_thresholds can only be changed by a person (`crmctl settings "
                "presend-thresholds`), not an assistant: its errors are the person's to "
                "override");
  auto updated = o_.db->Write([&](store::Conn& c) -> Result<SettingsDoc> {
    auto cur = GetIn(c);
    if (!cur) return cur;
    if (cur->revision != expected_revision)
      return Fail(Errc::kRevisionConflict,
                  "settings changed since revision " + std::to_string(expected_revision) +
                      " (now " + std::to_string(cur->revision) + "); read them again");
    SettingsDoc next = *cur;
    next.document = Merge(cur->document, patch);
    next.revision = cur->revision + 1;
    next.updated_at = o_.clock->NowUnix();
    auto n = settings_repo::Update(c, next.document.dump(), next.revision, next.updated_at,
                                   cur->revision);
    if (!n) return Fail(n.error());
    if (!*n) return Fail(Errc::kRevisionConflict, "settings changed; read them again");
    if (o_.audit) {
      json keys = json::array();
      for (const auto& [k, v] : patch.items()) keys.push_back(k);
      auto st = o_.audit->Record(c, actor,
                                 {.action = "update_settings",
                                  .target_type = "settings",
                                  .target_ids = {1},
                                  .revision_before = cur->revision,
                                  .revision_after = next.revision,
                                  .details = {{"keys", keys}}});
      if (!st) return Fail(st.error());
    }
    return next;
  });
  if (updated) Remember(std::make_shared<const SettingsDoc>(*updated));
  return updated;
}

std::shared_ptr<const SettingsDoc> SettingsService::Recent() {
  const auto now = o_.clock->Monotonic();
  {
    std::lock_guard lock(recent_mu_);
    if (recent_ && now - recent_at_ < std::chrono::milliseconds(kRecentMillis)) return recent_;
  }
  auto s = Get();
  if (!s) return nullptr;
  auto doc = std::make_shared<const SettingsDoc>(std::move(*s));
  Remember(doc);
  return doc;
}

void SettingsService::Remember(std::shared_ptr<const SettingsDoc> doc) {
  std::lock_guard lock(recent_mu_);
  // A newer revision (this node's Update() meanwhile) is not replaced by an older read.
  if (recent_ && recent_->revision > doc->revision) return;
  recent_ = std::move(doc);
  recent_at_ = o_.clock->Monotonic();
}

std::string SettingsService::EmailValidationMode() {
  auto s = Recent();
  if (!s) return DefaultSettings()["email_validation_mode"];
  return s->document.value("email_validation_mode", "syntax");
}

int64_t SettingsService::ConfirmationTtlSeconds() {
  auto s = Recent();
  if (!s) return 600;
  return s->document.value("confirmation_ttl_seconds", int64_t{600});
}

bool SettingsService::DoubleOptIn() {
  auto s = Recent();
  if (!s) return false;
  return s->document.value("double_opt_in", false);
}

}  // namespace crmd::governance
