#include "src/marketing/bounce_mailbox.h"

#include "src/crm/contacts_repo.h"
#include "src/mail/bounce_reports.h"
#include "src/marketing/campaign_sends_repo.h"
#include "src/marketing/common.h"
#include "src/marketing/mail_receivers.h"

namespace crmd::marketing {
namespace {

using nlohmann::json;

// The message the report is about, from its VERP reference: the contact's address now and
// the Message-ID crmd gave it (a campaign's from its send queue; else the one the report
// quotes).
struct Attributed {
  std::string email;
  std::string message_id;
};

Result<std::optional<Attributed>> AttributedIn(store::Conn& c, const mail::VerpRef& ref,
                                               const mail::BounceReport& report) {
  if (ref.kind == 'c') {
    auto sent = campaign_sends_repo::MessageOf(c, ref.owner_id, ref.contact_id);
    if (!sent) return Fail(sent.error());
    if (*sent)
      return std::optional<Attributed>(
          Attributed{(*sent)->email, (*sent)->message_id.value_or(report.original_message_id)});
  }
  auto k = crm::contacts_repo::FindContact(c, ref.contact_id);
  if (!k) return Fail(k.error());
  if (!*k) return std::optional<Attributed>();
  return std::optional<Attributed>(Attributed{(*k)->email, report.original_message_id});
}

}  // namespace

const char* ToString(MailboxOutcome::Kind kind) {
  switch (kind) {
    case MailboxOutcome::Kind::kApplied:
      return "applied";
    case MailboxOutcome::Kind::kDuplicate:
      return "duplicate";
    case MailboxOutcome::Kind::kUnattributed:
      return "unattributed";
  }
  return "unattributed";
}

json ToJson(const bounce_mailbox_repo::Unattributed& u) {
  return {{"report_id", u.report_id},
          {"subject", u.subject},
          {"from", u.sender},
          {"reason", u.reason},
          {"first_seen_at", FormatRfc3339(u.first_seen_at)},
          {"last_seen_at", FormatRfc3339(u.last_seen_at)}};
}

Result<MailboxOutcome> BounceMailbox::Unattributable(std::string_view raw, std::string reason) {
  mail::MailSummary m = mail::SummaryOf(raw);
  const int64_t now = clock_.NowUnix();
  auto recorded = db_.Write([&](store::Conn& c) {
    return bounce_mailbox_repo::Record(c, {.report_id = m.id,
                                           .subject = m.subject,
                                           .sender = m.from,
                                           .reason = reason,
                                           .first_seen_at = now,
                                           .last_seen_at = now});
  });
  if (!recorded) return Fail(recorded.error());
  return MailboxOutcome{
      .kind = MailboxOutcome::Kind::kUnattributed, .report_id = m.id, .reason = std::move(reason)};
}

Result<MailboxOutcome> BounceMailbox::Process(std::string_view raw, const std::string& request_id) {
  auto report = mail::ParseBounceReport(raw);
  if (!report) return Unattributable(raw, report.error().message);
  std::optional<mail::VerpRef> ref;
  for (const auto& a : report->return_path_candidates)
    if (!ref) ref = verp_.Parse(a);
  if (!ref) return Unattributable(raw, "no return path of this server (missing or not signed)");
  auto who = db_.Read([&](store::Conn& c) { return AttributedIn(c, *ref, *report); });
  if (!who) return Fail(who.error());
  if (!*who) return Unattributable(raw, "the contact of its return path no longer exists");
  mail::ProviderEvent event{.event_id = report->report_id,
                            .kind = report->kind,
                            .provider_type = report->report_type,
                            .email = (*who)->email,
                            .message_id = (*who)->message_id};
  auto applied = receivers_.ApplyFromMailbox({event}, request_id);
  if (!applied) return Fail(applied.error());
  json result = (*applied)["results"].empty() ? json::object() : (*applied)["results"][0];
  (void)db_.Write(
      [&](store::Conn& c) { return bounce_mailbox_repo::Forget(c, report->report_id); });
  return MailboxOutcome{.kind = result.value("duplicate", false) ? MailboxOutcome::Kind::kDuplicate
                                                                 : MailboxOutcome::Kind::kApplied,
                        .report_id = report->report_id,
                        .result = std::move(result)};
}

Result<int64_t> BounceMailbox::UnattributedCount() const {
  return db_.Read([](store::Conn& c) { return bounce_mailbox_repo::Count(c); });
}

Result<std::vector<bounce_mailbox_repo::Unattributed>> BounceMailbox::Unattributed(
    int limit) const {
  return db_.Read([&](store::Conn& c) { return bounce_mailbox_repo::List(c, limit); });
}

}  // namespace crmd::marketing
