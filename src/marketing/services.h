#pragma once
// marketing::Services: campaigns and their send queue, automations, sequences and reports,
// built once by the composition root (src/app) on top of governance::Services and
// crm::Services, and handed to tools, REST, jobs and the console. Owns its services;
// borrows the two below it (they must outlive it). Thread-safe once built.
//
// The contact book learns what marketing does with its rows through MarketingUsage
// (src/marketing/usage.h), which the composition root builds first and hands to
// crm::MakeServices.
#include <memory>

#include "src/core/result.h"
#include "src/crm/services.h"
#include "src/governance/actor.h"
#include "src/governance/services.h"
#include "src/marketing/automations.h"
#include "src/marketing/campaign_delivery.h"
#include "src/marketing/campaign_render.h"
#include "src/marketing/campaigns.h"
#include "src/marketing/contact_history.h"
#include "src/marketing/mail_receivers.h"
#include "src/marketing/presend.h"
#include "src/marketing/presend_content.h"
#include "src/marketing/recipients_export.h"
#include "src/marketing/reports.h"
#include "src/marketing/sequences.h"
#include "src/marketing/templates.h"
#include "src/marketing/test_sends.h"

namespace crmd::marketing {

struct ServicesOptions {
  // This site's mail context (links, default sender), for the activation preview's
  // rendered message; null: previews without one (crmctl). Must outlive the services.
  const MailContext* mail = nullptr;
  SendPolicy send_policy;          // the send queue's leases and retries
  ReceiverPolicy receiver_policy;  // provider event receivers: signed-time window, retention
  // Fetches SNS signing certificates and confirms SNS subscriptions (the SES receiver);
  // null: that receiver answers 503. Must outlive the services.
  http::HttpClient* http = nullptr;
  // Whether a call_webhook step's URL is an outgoing webhook endpoint's (AutomationService);
  // empty: not checked when saved.
  WebhookTargetKnown webhook_target_known;
  // Test sends (test_sends.h): how a test message goes out now, and whether an address is a
  // console user's. Empty mailer: test sends are refused.
  TestMailer test_mailer;
  ConsoleUserKnown console_user;
  // The pre-send check's DNS lookups (resolver null: sender authentication not checked).
  SenderAuthOptions sender_auth;
};

struct Services {
  Services(governance::Services& governance, crm::Services& crm, ServicesOptions options = {});
  ~Services();
  Services(const Services&) = delete;
  Services& operator=(const Services&) = delete;

  governance::Services& governance;
  crm::Services& crm;
  const std::unique_ptr<SenderAuthChecks> sender_auth;  // the pre-send check's DNS part
  const std::unique_ptr<PresendChecker> presend;        // the pre-send check (presend.h)
  const std::unique_ptr<CampaignService> campaigns;
  const std::unique_ptr<CampaignDelivery> delivery;     // the send queue and delivery events
  const std::unique_ptr<CampaignTestSends> test_sends;  // a campaign to a few test addresses
  const std::unique_ptr<MailReceivers> receivers;       // provider event receivers
  const std::unique_ptr<AutomationService> automations;
  const std::unique_ptr<SequenceService> sequences;
  const std::unique_ptr<TemplateService> templates;  // email layouts (templates.h)
  const std::unique_ptr<ReportService> reports;
  const std::unique_ptr<RecipientsExporter> recipients_csv;
  // One person's data and history, from the contact book and marketing's rows.
  const std::unique_ptr<ContactHistory> contact_history;
};

// Builds Services and registers marketing's confirmable actions (activate_campaign,
// resend_campaign, delete_campaign, activate_automation, delete_automation) with
// governance's confirmation service.
Result<std::unique_ptr<Services>> MakeServices(governance::Services& governance, crm::Services& crm,
                                               ServicesOptions options = {});

// The operator's two steps for `crmctl campaign activate|resend`, in one transaction: the
// preview ({"preview": ...}), and with `confirmed` the action itself (activate, or
// resend to the recipients that failed). kDependencyBlocked naming the first blocker.
enum class CampaignAction { kActivate, kResend };
Result<nlohmann::json> RunCampaignAction(Services& s, CampaignAction action,
                                         const governance::Actor& actor, int64_t id,
                                         bool confirmed);

// `crmctl seed`: a few campaigns, automations and a sequence over the lists and tags that
// exist (creates "Newsletter" / "welcome" when there are none). Idempotent by name.
Status SeedMarketing(Services& s, const governance::Actor& actor);

}  // namespace crmd::marketing
