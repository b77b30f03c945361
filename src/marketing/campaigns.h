#pragma once
// Email campaigns: the record, its status machine and CampaignService (create, update,
// pause, and the confirmable activate and delete). Sending is a later worker; activation
// resolves the audience in SQL and records it in campaign_recipients.
//
// Status machine (docs/marketing.md):
//   draft     -> scheduled | sending          (activate: send_at in the future | now)
//   paused    -> scheduled | sending          (activate again)
//   scheduled -> sending | paused | cancelled
//   sending   -> sent | paused | cancelled
//   sent, cancelled: final
// Editable only in draft and paused. Deletion refused while sending.
//
// CampaignService is thread-safe (all state is in the database).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/governance/actor.h"
#include "src/governance/audit.h"
#include "src/governance/confirmations.h"
#include "src/marketing/aggregate.h"
#include "src/marketing/common.h"
#include "src/marketing/templates.h"
#include "src/store/db.h"

namespace crmd::governance {
class Idempotency;
}  // namespace crmd::governance
namespace crmd::governance {
class SettingsService;
}  // namespace crmd::governance

namespace crmd::marketing {

struct MailContext;    // src/marketing/campaign_render.h
class PresendChecker;  // src/marketing/presend_content.h

enum class CampaignStatus { kDraft, kScheduled, kSending, kSent, kPaused, kCancelled };

const char* ToString(CampaignStatus s);
std::optional<CampaignStatus> ParseCampaignStatus(std::string_view s);
bool CanTransition(CampaignStatus from, CampaignStatus to);
bool IsEditable(CampaignStatus s);   // draft, paused
bool CanActivate(CampaignStatus s);  // draft, paused
bool CanDelete(CampaignStatus s);    // anything but sending

struct Audience {
  std::vector<int64_t> lists, tags, exclude_lists, exclude_tags;
  bool Empty() const { return lists.empty() && tags.empty(); }
};

struct Campaign {
  int64_t id = 0;
  std::string name, subject, preheader, from_name, from_email, html_body, text_body;
  Audience audience;
  std::optional<int64_t> send_at;
  CampaignStatus status = CampaignStatus::kDraft;
  int64_t audience_size = 0;
  std::optional<int64_t> activated_at;
  bool track_opens = false;   // a 1x1 image per message (docs/mail.md)
  bool track_clicks = false;  // links through a signed redirect
  int64_t send_round = 1;     // bumped by each resend of the undelivered; part of Message-IDs
  std::optional<int64_t> template_id;   // the layout its body fills (templates.h)
  std::optional<EmailTemplate> layout;  // that template, as loaded with the campaign
  std::optional<int64_t> finished_at;   // when the last recipient reached a final state
  int64_t revision = 1;
  int64_t created_at = 0, updated_at = 0;
};

// Compact form for lists, or the full record (bodies and audience) for get.
nlohmann::json ToJson(const Campaign& c, bool full);

// Applies the fields present in `j` (tool arguments) onto `c`. Checks shapes and lengths;
// references to lists, tags and the template are checked by the service (they need the
// database).
Status ApplyCampaignFields(const nlohmann::json& j, Campaign& c);
// What activation requires of the content: subject, sender address, a body, an audience.
Status CheckReadyToSend(const Campaign& c);

struct CampaignPage {
  std::vector<Campaign> items;
  std::optional<std::string> next_cursor;
};

class CampaignService {
 public:
  // `audit` may be empty (unit tests); otherwise every write records an audit row in its
  // own transaction.
  // `idempotency` may be null (unit tests): idempotency keys are then ignored.
  // With a mail context (and the settings it reads the sender from), the activation
  // preview shows the message rendered for one real recipient; both must outlive the
  // service. With a pre-send checker too, the preview lists its checks, and their errors
  // block the activation unless a person overrides them (presend.h).
  CampaignService(store::Database& db, const Clock& clock, AuditSink audit = {},
                  governance::Idempotency* idempotency = nullptr, const MailContext* mail = nullptr,
                  governance::SettingsService* settings = nullptr,
                  const PresendChecker* presend = nullptr);
  CampaignService(const CampaignService&) = delete;
  CampaignService& operator=(const CampaignService&) = delete;

  Result<CampaignPage> List(std::optional<CampaignStatus> status, std::string_view cursor,
                            int limit) const;
  Result<Campaign> Get(int64_t id) const;
  // In its own transaction. With a non-empty idempotency_key, a repeat from the same
  // client within 24 hours returns the campaign first created (as it is now).
  Result<Campaign> Create(const governance::Actor& actor, const nlohmann::json& fields,
                          const std::string& idempotency_key = "");
  // The same in the caller's transaction, for another service composing one (the seed).
  Result<Campaign> CreateIn(store::Conn& c, const governance::Actor& actor,
                            const nlohmann::json& fields);
  // kRevisionConflict when expected_revision is stale; kInvalidTransition unless editable.
  Result<Campaign> Update(const governance::Actor& actor, int64_t id, int64_t expected_revision,
                          const nlohmann::json& fields);
  // scheduled | sending -> paused. expected_revision is optional (0 = any).
  Result<Campaign> Pause(const governance::Actor& actor, int64_t id, int64_t expected_revision);

  // Confirmable actions (ConfirmationService runs them inside its transaction). Previews
  // only read; a sending campaign's delete preview carries a blocker. Execute functions
  // redo every check, so a confirm never acts on a state the preview did not allow.
  Result<governance::Preview> PreviewActivate(store::Conn& c, int64_t id) const;
  Result<nlohmann::json> Activate(store::Conn& c, const governance::Actor& actor, int64_t id);
  Result<governance::Preview> PreviewDelete(store::Conn& c, int64_t id) const;
  Result<nlohmann::json> Delete(store::Conn& c, const governance::Actor& actor, int64_t id);

 private:
  // The preview's sample_message, sender and pre-send checks (with a mail context).
  Status PreviewMessage(store::Conn& c, const Campaign& k, governance::Preview& p) const;

  store::Database& db_;
  const Clock& clock_;
  RevisionedRows<Campaign> rows_;
  const MailContext* const mail_;
  governance::SettingsService* const settings_;
  const PresendChecker* const presend_;
};

}  // namespace crmd::marketing
