#pragma once
// The console's Campaigns (everyone signed in reads; editors and administrators act):
//   GET  /console/campaigns[?status=S&cursor=C]
//                                    the campaigns, 50 a page, with status and progress
//   GET  /console/campaigns/view?id=N[&contact=EMAIL]
//                                    a campaign: its facts, its actions, the message in a
//                                    sandboxed frame, and once activated its report with
//                                    charts (server-rendered SVG, charts.h) of sent,
//                                    delivered, bounced, opened and clicked over time and of
//                                    clicks per link, each with its numbers as a table;
//                                    reloads itself every 10 s while sending
//   POST /console/campaigns/view     action=activate | resend: the confirmation service's
//                                    preview (activate_campaign, resend_campaign: the
//                                    assistant's own) with a Confirm button; action=confirm
//                                    (confirmation_token, approval_id): the person's approval
//                                    when the policy asks for one (ConfirmationService::
//                                    Decide, by its own rules) and the confirmation;
//                                    action=pause (revision); action=test (test_recipients:
//                                    1 to 5 addresses, by comma or space): the campaign as
//                                    it will go out, to those addresses only (the tools'
//                                    test_recipients, marketing::CampaignTestSends)
//   GET  /console/campaigns/preview?id=N[&contact=EMAIL]
//                                    the message for a real contact (the first of the book,
//                                    or EMAIL's), links signed for nobody, with a policy of
//                                    its own (as the template preview's)
// Changes are made as the signed-in person (actor kind "user", client "console"), so the
// audit log and the approval pages name them. Every POST carries the session's CSRF
// token (shell.h). Thread-safe; handlers block on the database (worker pool).
#include "src/console/shell.h"
#include "src/core/clock.h"
#include "src/crm/contacts.h"
#include "src/crm/lists.h"
#include "src/governance/confirmations.h"
#include "src/governance/settings.h"
#include "src/marketing/campaign_render.h"
#include "src/marketing/campaigns.h"
#include "src/marketing/reports.h"
#include "src/marketing/test_sends.h"

namespace crmd::console {

struct CampaignPagesDeps {
  marketing::CampaignService* campaigns = nullptr;
  marketing::ReportService* reports = nullptr;
  governance::ConfirmationService* confirmations = nullptr;
  crm::ContactService* contacts = nullptr;  // the preview's contact
  crm::GroupService* lists = nullptr;       // the audience's names (null: ids)
  crm::GroupService* tags = nullptr;
  governance::SettingsService* settings = nullptr;     // sender and company_address
  const marketing::MailContext* mail = nullptr;        // links of the preview (for nobody)
  marketing::CampaignTestSends* test_sends = nullptr;  // Send test (null: not offered)
  const Clock* clock = nullptr;
  ConsolePeople people;
};

ConsoleRoutes CampaignRoutes(CampaignPagesDeps deps);

}  // namespace crmd::console
