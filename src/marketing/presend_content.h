#pragma once
// The content and audience checks of the pre-send check (presend.h). Pure functions.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/governance/confirmations.h"
#include "src/mail/message.h"
#include "src/marketing/campaign_render.h"
#include "src/marketing/presend.h"
#include "src/marketing/presend_repo.h"

namespace crmd::crm {
class EmailValidator;
}

namespace crmd::marketing {

struct ContentInput {
  const mail::Message* message = nullptr;  // as the first recipient gets it
  std::string company_address;             // settings' postal address
  std::string public_base_url;             // crmd's own links start with it
};

// unsubscribe (error: no unsubscribe link in the body), postal_address (error: none set;
// warning: not shown), links (relative, or to localhost or a private address), size (HTML of
// 102 KB or more), alt_text (images without alt), subject (empty, all capitals, 150
// characters or more).
std::vector<PresendCheck> ContentChecks(const ContentInput& in);

// merge_empty: a merge tag without a fallback in `sources` (subject, bodies, template)
// that renders empty for more than 10 % of `sample` (contacts of the audience).
std::vector<PresendCheck> MergeEmptyCheck(const std::vector<std::string>& sources,
                                          const std::vector<MailRecipient>& sample);

// How many of a sample of the audience are role addresses, disposable, never confirmed, and
// without an open or click in 180 days (counted only when tracking is on).
struct AudienceShares {
  int64_t sampled = 0;
  int64_t role = 0, disposable = 0, unconfirmed = 0, unengaged = 0;
  bool tracking = false;
};

// settings presend_thresholds: {"audience_role": {"warning": 10, "error": 50}, ...} in
// percent of the audience; a share above `warning` is a warning, above `error` an error.
nlohmann::json DefaultPresendThresholds();
// The shares of `members` (validator null: disposable addresses are not counted).
AudienceShares SharesOf(const std::vector<presend_repo::AudienceMember>& members,
                        const crm::EmailValidator* validator, bool tracking, int64_t now);
std::vector<PresendCheck> AudienceChecks(const AudienceShares& shares,
                                         const nlohmann::json& thresholds);

struct PresendCheckerOptions {
  SenderAuthChecks* auth = nullptr;                // null: sender authentication is not checked
  const crm::EmailValidator* validator = nullptr;  // null: disposable addresses not counted
  int sample = 500;  // audience contacts read for merge_empty and the audience checks
};

// The pre-send check of a campaign's activation, run by its preview (and again at
// confirm). Thread-safe.
class PresendChecker {
 public:
  explicit PresendChecker(PresendCheckerOptions options) : o_(options) {}
  PresendChecker(const PresendChecker&) = delete;
  PresendChecker& operator=(const PresendChecker&) = delete;

  // `message`: as the first recipient gets it; `settings`: the settings document.
  Result<std::vector<PresendCheck>> ForCampaign(store::Conn& c, const Campaign& k,
                                                const mail::Message& message,
                                                const MailContext& ctx,
                                                const nlohmann::json& settings, int64_t now) const;

  // The checks of an automation's send_email steps (sender authentication and content of
  // each message, rendered for nobody; detail.step is the 1-based step), for its
  // activation preview. Steps that send nothing are not looked at.
  Result<std::vector<PresendCheck>> ForAutomationSteps(store::Conn& c, const nlohmann::json& steps,
                                                       const MailContext& ctx) const;

 private:
  const PresendCheckerOptions o_;
};

// The errors among `checks`, as problems only a person may override (Preview::overridable).
std::vector<governance::Blocker> OverridableErrors(const std::vector<PresendCheck>& checks);

}  // namespace crmd::marketing
