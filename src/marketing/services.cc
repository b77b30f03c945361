#include "src/marketing/services.h"

#include <memory>

#include "src/crm/groups_repo.h"
#include "src/crm/services.h"
#include "src/marketing/automations.h"
#include "src/marketing/automations_repo.h"
#include "src/marketing/campaigns.h"
#include "src/marketing/campaigns_repo.h"
#include "src/marketing/reports.h"
#include "src/marketing/sequences.h"
#include "src/marketing/sequences_repo.h"
#include "src/marketing/usage.h"

namespace crmd::marketing {
namespace {

using nlohmann::json;

int64_t IdArg(const json& args) {
  return args.is_object() && args.contains("id") && args["id"].is_number_integer()
             ? args["id"].get<int64_t>()
             : 0;
}

AuditSink AuditSinkOf(governance::AuditLog* audit) {
  return [audit](store::Conn& c, const governance::Actor& actor, const governance::AuditEntry& e) {
    return audit->Record(c, actor, e);
  };
}

// The pre-send check of an automation's send_email steps, added to its activation preview
// (presend.h): "checks", and its errors as what only a person may override.
std::function<Status(store::Conn&, governance::Preview&)> StepChecker(Services& s,
                                                                      const ServicesOptions& o) {
  return [presend = s.presend.get(), mail = o.mail, settings = s.governance.settings.get()](
             store::Conn& c, governance::Preview& p) -> Status {
    const json& steps = p.preview.value("steps", json::array());
    bool sends = false;
    for (const auto& step : steps)
      sends |= step.is_object() && step.value("type", "") == "send_email";
    if (!mail || !mail->links || !sends) return Ok();
    MailContext ctx = *mail;
    if (auto doc = settings->GetIn(c); doc) ApplySettings(ctx, doc->document);
    auto checks = presend->ForAutomationSteps(c, steps, ctx);
    if (!checks) return Fail(checks.error());
    p.preview["checks"] = ToJson(*checks);
    p.overridable = OverridableErrors(*checks);
    return Ok();
  };
}

}  // namespace

Services::Services(governance::Services& g, crm::Services& c, ServicesOptions o)
    : governance(g),
      crm(c),
      sender_auth(std::make_unique<SenderAuthChecks>(o.sender_auth, *g.options.clock)),
      presend(std::make_unique<PresendChecker>(
          PresendCheckerOptions{.auth = sender_auth.get(), .validator = c.email_validator.get()})),
      campaigns(std::make_unique<CampaignService>(
          *g.options.db, *g.options.clock, AuditSinkOf(g.audit.get()), g.idempotency.get(), o.mail,
          o.mail ? g.settings.get() : nullptr, presend.get())),
      delivery(std::make_unique<CampaignDelivery>(*g.options.db, *g.options.clock, *c.contacts,
                                                  o.send_policy)),
      test_sends(
          std::make_unique<CampaignTestSends>(TestSendOptions{.db = g.options.db,
                                                              .clock = g.options.clock,
                                                              .mail = o.mail,
                                                              .settings = g.settings.get(),
                                                              .audit = AuditSinkOf(g.audit.get()),
                                                              .mailer = o.test_mailer,
                                                              .console_user = o.console_user})),
      receivers(std::make_unique<MailReceivers>(*g.options.db, *g.options.clock, *delivery,
                                                o.receiver_policy, o.http, g.settings.get())),
      automations(std::make_unique<AutomationService>(*g.options.db, *g.options.clock,
                                                      AuditSinkOf(g.audit.get()),
                                                      g.idempotency.get(), o.webhook_target_known)),
      sequences(std::make_unique<SequenceService>(*g.options.db, *g.options.clock,
                                                  AuditSinkOf(g.audit.get()), g.idempotency.get())),
      templates(std::make_unique<TemplateService>(*g.options.db, *g.options.clock,
                                                  AuditSinkOf(g.audit.get()))),
      reports(std::make_unique<ReportService>(g.options.LagTolerantDb(), *g.options.clock)),
      recipients_csv(std::make_unique<RecipientsExporter>(g.options.LagTolerantDb())),
      contact_history(std::make_unique<ContactHistory>(
          ContactHistoryOptions{.db = g.options.db,
                                .clock = g.options.clock,
                                .contacts = c.contacts.get(),
                                .suppressions = c.suppressions.get(),
                                .imports = c.imports.get()})) {}

Services::~Services() = default;

Result<std::unique_ptr<Services>> MakeServices(governance::Services& governance, crm::Services& crm,
                                               ServicesOptions options) {
  auto owned = std::make_unique<Services>(governance, crm, options);
  Services& s = *owned;
  CampaignService* campaigns = s.campaigns.get();
  AutomationService* automations = s.automations.get();
  CampaignDelivery* delivery = s.delivery.get();
  governance::ActionSpec specs[] = {
      {.name = "activate_campaign",
       .scope = "campaigns:activate",
       .preview = [campaigns](store::Conn& c,
                              const json& a) { return campaigns->PreviewActivate(c, IdArg(a)); },
       .execute =
           [campaigns](store::Conn& c, const json& a, const governance::Actor& actor) {
             return campaigns->Activate(c, actor, IdArg(a));
           }},
      {.name = "resend_campaign",
       .scope = "campaigns:activate",
       .preview = [delivery](store::Conn& c,
                             const json& a) { return delivery->PreviewResend(c, IdArg(a)); },
       .execute =
           [delivery](store::Conn& c, const json& a, const governance::Actor& actor) {
             return delivery->Resend(c, actor, IdArg(a));
           }},
      {.name = "delete_campaign",
       .scope = "campaigns:delete",
       .preview = [campaigns](store::Conn& c,
                              const json& a) { return campaigns->PreviewDelete(c, IdArg(a)); },
       .execute =
           [campaigns](store::Conn& c, const json& a, const governance::Actor& actor) {
             return campaigns->Delete(c, actor, IdArg(a));
           }},
      {.name = "activate_automation",
       .scope = "automations:activate",
       .preview = [automations, checker = StepChecker(s, options)](
                      store::Conn& c, const json& a) -> Result<governance::Preview> {
         auto p = automations->PreviewActivate(c, IdArg(a));
         if (!p) return p;
         if (auto st = checker(c, *p); !st) return Fail(st.error());
         return p;
       },
       .execute =
           [automations](store::Conn& c, const json& a, const governance::Actor& actor) {
             return automations->Activate(c, actor, IdArg(a));
           }},
      {.name = "delete_automation",
       .scope = "automations:delete",
       .preview = [automations](store::Conn& c,
                                const json& a) { return automations->PreviewDelete(c, IdArg(a)); },
       .execute =
           [automations](store::Conn& c, const json& a, const governance::Actor& actor) {
             return automations->Delete(c, actor, IdArg(a));
           }},
  };
  for (auto& spec : specs) {
    if (auto st = governance.confirmations->RegisterAction(std::move(spec)); !st)
      return Fail(st.error());
  }
  return owned;
}

Result<nlohmann::json> RunCampaignAction(Services& s, CampaignAction action,
                                         const governance::Actor& actor, int64_t id,
                                         bool confirmed) {
  const bool resend = action == CampaignAction::kResend;
  return s.governance.options.db->Write([&](store::Conn& c) -> Result<json> {
    auto preview = resend ? s.delivery->PreviewResend(c, id) : s.campaigns->PreviewActivate(c, id);
    if (!preview) return Fail(preview.error());
    if (!preview->blockers.empty())
      return Fail(Errc::kDependencyBlocked, preview->blockers.front().reason);
    if (!confirmed) return json{{"preview", preview->preview}};
    return resend ? s.delivery->Resend(c, actor, id) : s.campaigns->Activate(c, actor, id);
  });
}

namespace {

// The id of the list/tag called `name`, created when missing.
Result<int64_t> EnsureNamed(store::Conn& c, crm::GroupKind kind, const std::string& name,
                            int64_t now) {
  auto row = crm::groups_repo::FindRefByName(c, kind, name);
  if (!row) return Fail(row.error());
  if (*row) return (*row)->id;
  return crm::groups_repo::Insert(c, kind, name, "", now);
}

}  // namespace

Status SeedMarketing(Services& s, const governance::Actor& actor) {
  int64_t now = s.governance.options.clock->NowUnix();
  auto r = s.governance.options.db->Write([&](store::Conn& c) -> Result<bool> {
    auto news = EnsureNamed(c, crm::GroupKind::kList, "Newsletter", now);
    if (!news) return Fail(news.error());
    auto welcome = EnsureNamed(c, crm::GroupKind::kTag, "welcome", now);
    if (!welcome) return Fail(welcome.error());
    auto unsub = EnsureNamed(c, crm::GroupKind::kTag, "do-not-email", now);
    if (!unsub) return Fail(unsub.error());

    auto have = campaigns_repo::NameTaken(c, "Monthly newsletter");
    if (!have) return Fail(have.error());
    if (!*have) {
      auto k = s.campaigns->CreateIn(
          c, actor,
          {{"name", "Monthly newsletter"},
           {"subject", "What's new this month"},
           {"preheader", "Three things worth your time"},
           {"from_name", "The Team"},
           {"from_email", "news@example.com"},
           {"html_body",
            "<h1>Hello {{first_name}}</h1><p>Here is our news.</p>"
            "<p>{{company_address}} <a href=\"{{unsubscribe_url}}\">Unsubscribe</a></p>"},
           {"text_body",
            "Hello {{first_name}}, here is our news.\n\n{{company_address}}\n"
            "Unsubscribe: {{unsubscribe_url}}"},
           {"audience", {{"lists", {*news}}, {"exclude_tags", {*unsub}}}}});
      if (!k) return Fail(k.error());
    }
    have = campaigns_repo::NameTaken(c, "Spring sale");
    if (!have) return Fail(have.error());
    if (!*have) {
      auto k = s.campaigns->CreateIn(c, actor,
                                     {{"name", "Spring sale"},
                                      {"subject", "20% off until Sunday"},
                                      {"from_email", "offers@example.com"},
                                      {"text_body",
                                       "Our spring sale has started.\n\nUnsubscribe: "
                                       "{{unsubscribe_url}}"},
                                      {"audience", {{"tags", {*welcome}}}}});
      if (!k) return Fail(k.error());
    }
    have = automations_repo::NameTaken(c, "Welcome series");
    if (!have) return Fail(have.error());
    if (!*have) {
      auto a = s.automations->CreateIn(
          c, actor,
          {{"name", "Welcome series"},
           {"description", "Greets new subscribers and adds them to the newsletter."},
           {"trigger", {{"type", "tag_added"}, {"tag_id", *welcome}}},
           {"steps",
            json::array({{{"type", "send_email"},
                          {"subject", "Welcome!"},
                          {"text_body", "Thanks for joining.\n\nUnsubscribe: {{unsubscribe_url}}"}},
                         {{"type", "wait"}, {"days", 3}},
                         {{"type", "add_list"}, {"list_id", *news}}})}});
      if (!a) return Fail(a.error());
    }
    have = sequences_repo::NameTaken(c, "Onboarding drip");
    if (!have) return Fail(have.error());
    if (!*have) {
      auto q = s.sequences->CreateIn(
          c, actor,
          {{"name", "Onboarding drip"},
           {"emails",
            json::array({{{"subject", "Getting started"}, {"text_body", "Step one."}},
                         {{"subject", "Tips"}, {"text_body", "Step two."}, {"delay_days", 2}}})}});
      if (!q) return Fail(q.error());
    }
    return true;
  });
  if (!r) return Fail(r.error());
  return Ok();
}

}  // namespace crmd::marketing
