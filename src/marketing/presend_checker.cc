// PresendChecker: the whole pre-send check of a campaign's activation (presend_content.h).
#include <optional>
#include <set>

#include "src/marketing/presend_content.h"
#include "src/marketing/templates.h"
#include "src/marketing/templates_repo.h"

namespace crmd::marketing {

Result<std::vector<PresendCheck>> PresendChecker::ForCampaign(store::Conn& c, const Campaign& k,
                                                              const mail::Message& message,
                                                              const MailContext& ctx,
                                                              const nlohmann::json& settings,
                                                              int64_t now) const {
  std::vector<PresendCheck> out;
  auto add = [&out](std::vector<PresendCheck> more) {
    for (auto& m : more) out.push_back(std::move(m));
  };
  if (o_.auth) add(o_.auth->Check(message.from.address));
  add(ContentChecks({.message = &message,
                     .company_address = ctx.company_address,
                     .public_base_url = ctx.public_base_url}));
  auto members = presend_repo::SampleMembers(c, k.id, o_.sample);
  if (!members) return Fail(members.error());
  std::vector<MailRecipient> sample;
  sample.reserve(members->size());
  for (const auto& m : *members) sample.push_back(m.fields);
  std::vector<std::string> sources = {k.subject, k.preheader};
  if (auto bodies = WrapInLayout(k.layout ? &*k.layout : nullptr, k.html_body, k.text_body)) {
    sources.push_back(bodies->html);
    if (bodies->text) sources.push_back(*bodies->text);
  }
  add(MergeEmptyCheck(sources, sample));
  const nlohmann::json thresholds =
      settings.is_object() ? settings.value("presend_thresholds", nlohmann::json::object())
                           : nlohmann::json::object();
  add(AudienceChecks(SharesOf(*members, o_.validator, k.track_opens || k.track_clicks, now),
                     thresholds));
  return out;
}

Result<std::vector<PresendCheck>> PresendChecker::ForAutomationSteps(store::Conn& c,
                                                                     const nlohmann::json& steps,
                                                                     const MailContext& ctx) const {
  std::vector<PresendCheck> out;
  if (!steps.is_array()) return out;
  std::set<std::string> senders;  // each sender's DNS once
  for (size_t i = 0; i < steps.size(); ++i) {
    const nlohmann::json& step = steps[i];
    if (!step.is_object() || step.value("type", "") != "send_email") continue;
    std::optional<EmailTemplate> layout;
    auto id = TemplateIdOf(step, "template_id");
    if (!id) return Fail(id.error());
    if (*id) {
      auto found = templates_repo::Find(c, **id);
      if (!found) return Fail(found.error());
      if (*found) ResolveBuiltin(layout.emplace(std::move(**found)));
    }
    SimpleEmail e{.subject = step.value("subject", ""),
                  .html_body = step.value("html_body", ""),
                  .text_body = step.value("text_body", ""),
                  .from = {step.value("from_name", ""), step.value("from_email", "")},
                  .send_id = "presend",
                  .layout = layout ? &*layout : nullptr};
    auto message = BuildSimpleMessage(e, MailRecipient{}, ctx);
    if (!message) continue;  // saved steps render; nothing to check in one that does not
    auto checks = ContentChecks({.message = &*message,
                                 .company_address = ctx.company_address,
                                 .public_base_url = ctx.public_base_url});
    if (o_.auth && senders.insert(message->from.address).second)
      for (auto& a : o_.auth->Check(message->from.address)) checks.push_back(std::move(a));
    for (auto& k : checks) {
      k.detail["step"] = i + 1;
      out.push_back(std::move(k));
    }
  }
  return out;
}

std::vector<governance::Blocker> OverridableErrors(const std::vector<PresendCheck>& checks) {
  std::vector<governance::Blocker> out;
  for (const auto& c : checks)
    if (c.severity == "error") out.push_back({.kind = "check", .name = c.id, .reason = c.message});
  return out;
}

}  // namespace crmd::marketing
