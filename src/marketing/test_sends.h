#pragma once
// Test sends (activate_campaign with test_recipients, REST POST /campaigns/{id}/test, the
// console's Send test): the campaign as it will go out -- its template, merge tags filled
// from a real contact of its audience (or from the fields given), DKIM when configured --
// with "[Test] " before the subject, to one to five addresses and nobody else. The campaign
// does not change: no status, no recipients recorded, no confirmation. Only the addresses
// of console users and those listed in settings test_recipients_allowed may receive one, so
// an assistant cannot use a test send to mail strangers. Each send is audited
// (test_send_campaign); its links are signed for no contact, so following them neither
// unsubscribes nor counts anyone.
//
// Thread-safe; the mailer and the person lookup must be too.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/governance/actor.h"
#include "src/mail/message.h"
#include "src/marketing/common.h"
#include "src/store/db.h"

namespace crmd::governance {
class SettingsService;
}

namespace crmd::marketing {

struct MailContext;

// Sends one rendered test message now (DKIM-signed when a key is configured); the relay's
// refusal is an error (kUnavailable) whose message is safe to show.
using TestMailer = std::function<Status(const mail::Message&)>;
// Whether a normalised address is an active console user's.
using ConsoleUserKnown = std::function<Result<bool>(const std::string& email)>;

inline constexpr int kMaxTestRecipients = 5;

struct TestSendOptions {
  store::Database* db = nullptr;
  const Clock* clock = nullptr;
  const MailContext* mail = nullptr;  // null: test sends are refused (crmctl)
  governance::SettingsService* settings = nullptr;
  AuditSink audit;
  TestMailer mailer;              // empty: test sends are refused
  ConsoleUserKnown console_user;  // empty: only test_recipients_allowed
};

class CampaignTestSends {
 public:
  explicit CampaignTestSends(TestSendOptions options) : o_(std::move(options)) {}
  CampaignTestSends(const CampaignTestSends&) = delete;
  CampaignTestSends& operator=(const CampaignTestSends&) = delete;

  // `recipients`: a JSON array of 1..5 addresses. `fields`: null, or an object with any of
  // email, first_name, last_name, phone and custom (an object) that the merge tags take
  // instead of a contact's. Returns {"status":"test_sent","campaign_id","subject",
  // "sent_to":[...],"merged_from":{...}}. kInvalidArgument naming the field (an address that
  // is no console user's and not in test_recipients_allowed names that setting),
  // kNotFound, kUnavailable when the relay refuses.
  Result<nlohmann::json> Send(const governance::Actor& actor, int64_t campaign_id,
                              const nlohmann::json& recipients, const nlohmann::json& fields);

 private:
  const TestSendOptions o_;
};

// Whether settings test_recipients_allowed (`allowed`, an array of addresses and
// "@domain" entries) lets `email` (normalised) receive test sends.
bool TestRecipientAllowed(const nlohmann::json& allowed, const std::string& email);

}  // namespace crmd::marketing
