// Audience checks of the pre-send check: audience_role, audience_disposable,
// audience_unconfirmed, audience_unengaged (presend_content.h).
#include "src/crm/email_validation.h"
#include "src/marketing/presend_content.h"

namespace crmd::marketing {

using nlohmann::json;

namespace {

constexpr int64_t kUnengagedAfterS = 180 * 24 * 3600;

struct AudienceRule {
  const char* id;
  int64_t AudienceShares::*count;
  const char* what;  // "... of the audience <what>"
};

constexpr AudienceRule kRules[] = {
    {"audience_role", &AudienceShares::role, "are role addresses (info@, sales@, ...)"},
    {"audience_disposable", &AudienceShares::disposable, "are disposable addresses"},
    {"audience_unconfirmed", &AudienceShares::unconfirmed,
     "never confirmed their address (double opt-in)"},
    {"audience_unengaged", &AudienceShares::unengaged, "opened or clicked nothing in 180 days"},
};

}  // namespace

json DefaultPresendThresholds() {
  // Percent of the audience; an error threshold of 100 never fires.
  return {{"audience_role", {{"warning", 10}, {"error", 50}}},
          {"audience_disposable", {{"warning", 5}, {"error", 25}}},
          {"audience_unconfirmed", {{"warning", 50}, {"error", 100}}},
          {"audience_unengaged", {{"warning", 50}, {"error", 100}}}};
}

AudienceShares SharesOf(const std::vector<presend_repo::AudienceMember>& members,
                        const crm::EmailValidator* validator, bool tracking, int64_t now) {
  AudienceShares s{.sampled = static_cast<int64_t>(members.size()), .tracking = tracking};
  for (const auto& m : members) {
    const std::string& email = m.fields.email;
    auto at = email.rfind('@');
    if (at == std::string::npos) continue;
    s.role += crm::EmailValidator::IsRoleLocalPart(email.substr(0, at));
    if (validator) s.disposable += validator->IsDisposableDomain(email.substr(at + 1));
    s.unconfirmed += !m.confirmed;
    s.unengaged += !m.last_engaged_at || *m.last_engaged_at < now - kUnengagedAfterS;
  }
  return s;
}

std::vector<PresendCheck> AudienceChecks(const AudienceShares& shares, const json& thresholds) {
  std::vector<PresendCheck> out;
  if (shares.sampled == 0) return out;
  const json defaults = DefaultPresendThresholds();
  for (const auto& rule : kRules) {
    if (std::string_view(rule.id) == "audience_unengaged" && !shares.tracking) continue;
    json t = defaults[rule.id];
    if (thresholds.is_object() && thresholds.contains(rule.id) && thresholds[rule.id].is_object())
      for (const auto& [k, v] : thresholds[rule.id].items()) t[k] = v;
    const int64_t n = shares.*rule.count;
    const double percent = 100.0 * static_cast<double>(n) / static_cast<double>(shares.sampled);
    const char* severity = percent > t.value("error", 100.0)     ? "error"
                           : percent > t.value("warning", 100.0) ? "warning"
                                                                 : nullptr;
    if (!severity) continue;
    out.push_back(
        {.id = rule.id,
         .severity = severity,
         .message =
             std::to_string(static_cast<int>(percent + 0.5)) + "% of the audience " + rule.what,
         .detail = {
             {"count", n}, {"sampled", shares.sampled}, {"percent", percent}, {"thresholds", t}}});
  }
  return out;
}

}  // namespace crmd::marketing
