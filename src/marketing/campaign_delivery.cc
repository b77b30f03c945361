#include "src/marketing/campaign_delivery.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "src/core/log.h"
#include "src/crm/contacts.h"
#include "src/crm/contacts_repo.h"
#include "src/crm/email_validation.h"
#include "src/crm/events.h"
#include "src/marketing/campaign_activity.h"
#include "src/marketing/campaigns_repo.h"
#include "src/marketing/common.h"
#include "src/marketing/email_events.h"

namespace crmd::marketing {

namespace send_repo = campaign_sends_repo;

nlohmann::json ToJson(const send_repo::RecipientRow& r) {
  nlohmann::json j = {
      {"contact_id", r.contact_id},
      {"email", r.email},
      {"status", r.status},
      {"reason", r.reason ? nlohmann::json(*r.reason) : nlohmann::json(nullptr)},
      {"attempts", r.attempts},
      {"round", r.round},
      {"smtp_code", r.smtp_code ? nlohmann::json(*r.smtp_code) : nlohmann::json(nullptr)},
      {"message_id", r.message_id ? nlohmann::json(*r.message_id) : nlohmann::json(nullptr)},
      {"sent_at", TimeJson(r.sent_at)},
      {"opened_at", TimeJson(r.opened_at)},
      {"clicked_at", TimeJson(r.clicked_at)},
      {"bounced_at", TimeJson(r.bounced_at)},
      {"complained_at", TimeJson(r.complained_at)},
      {"unsubscribed_at", TimeJson(r.unsubscribed_at)},
      {"updated_at", TimeJson(r.updated_at)}};
  return j;
}

nlohmann::json ToJson(const send_repo::Stats& s) {
  return {{"queued", s.queued},         {"pending", s.pending()},         {"sent", s.sent},
          {"failed", s.failed},         {"skipped", s.skipped},           {"bounced", s.bounced},
          {"complained", s.complained}, {"unsubscribed", s.unsubscribed}, {"opened", s.opened},
          {"clicked", s.clicked}};
}

namespace {

const governance::Actor kSystem{.kind = "system", .subject = "mail"};

std::string ContactStatus(store::Conn& c, int64_t contact_id) {
  auto found = crm::contacts_repo::FindContact(c, contact_id);
  if (!found || !*found) return "";
  return (*found)->status;
}

}  // namespace

Result<int> CampaignDelivery::Advance() {
  int64_t now = clock_.NowUnix();
  return db_.Write([&](store::Conn& c) -> Result<int> {
    auto promoted = send_repo::PromoteDue(c, now);
    if (!promoted) return Fail(promoted.error());
    auto finished = send_repo::FinishDrained(c, now);
    if (!finished) return Fail(finished.error());
    return static_cast<int>(promoted->size() + finished->size());
  });
}

Result<std::vector<send_repo::QueuedRecipient>> CampaignDelivery::Lease(int limit) {
  int64_t now = clock_.NowUnix();
  return db_.Write([&](store::Conn& c) -> Result<std::vector<send_repo::QueuedRecipient>> {
    auto leased = send_repo::LeaseDue(c, now, policy_.lease_s, limit);
    if (!leased) return Fail(leased.error());
    std::vector<send_repo::QueuedRecipient> out;
    out.reserve(leased->size());
    for (auto& r : *leased) {
      // Re-checked at its turn: whoever unsubscribed, bounced or complained since the
      // activation, or whose address is suppressed whatever the row says, is never sent to.
      auto skip = WhyNotMailed(c, contacts_, r.contact_status, r.email);
      if (!skip) return Fail(skip.error());
      if (!skip->empty()) {
        auto st = send_repo::MarkSkipped(c, r.campaign_id, r.contact_id, *skip, now);
        if (!st) return Fail(st.error());
        continue;
      }
      out.push_back(std::move(r));
    }
    return out;
  });
}

Status CampaignDelivery::Bounce(store::Conn& c, const governance::Actor& actor, int64_t contact_id,
                                const char* status, const std::string& reason) {
  std::string now_status = ContactStatus(c, contact_id);
  if (now_status.empty() || now_status == status) return Ok();
  // A complaint outranks everything; a bounce does not overwrite a complaint.
  if (std::string_view(status) == "bounced" && now_status == "complained") return Ok();
  auto moved = contacts_.SetStatusIn(c, actor, contact_id, status, false, reason);
  if (!moved && moved.error().code != Errc::kInvalidTransition) return Fail(moved.error());
  return Ok();
}

Status CampaignDelivery::Record(const send_repo::QueuedRecipient& r, const SendReport& report) {
  int64_t now = clock_.NowUnix();
  auto done = db_.Write([&](store::Conn& c) -> Result<bool> {
    using K = SendReport::Kind;
    switch (report.kind) {
      case K::kSent: {
        auto marked = send_repo::MarkSent(c, r.campaign_id, r.contact_id, report.message_id, now);
        if (!marked || !*marked) return marked;
        if (auto e = AppendEmailEvent(c, now,
                                      {.type = crm::events::kEmailSent,
                                       .contact_id = r.contact_id,
                                       .email = r.email,
                                       .source_id = r.campaign_id,
                                       .message_id = report.message_id});
            !e)
          return Fail(e.error());
        return true;
      }
      case K::kRejected:
        return send_repo::MarkFailed(c, r.campaign_id, r.contact_id, report.reason,
                                     report.smtp_code, now);
      case K::kRecipientRejected: {
        auto marked = send_repo::MarkFailed(c, r.campaign_id, r.contact_id, report.reason,
                                            report.smtp_code, now);
        if (!marked) return Fail(marked.error());
        if (!*marked) return false;
        if (auto e = send_repo::MarkEvent(c, r.campaign_id, r.contact_id, "bounced", now); !e)
          return Fail(e.error());
        if (auto e = AppendEmailEvent(c, now,
                                      {.type = crm::events::kEmailBounced,
                                       .contact_id = r.contact_id,
                                       .email = r.email,
                                       .source_id = r.campaign_id,
                                       .detail = {{"bounce", "hard"},
                                                  {"via", "smtp"},
                                                  {"smtp_code", report.smtp_code},
                                                  {"reason", report.reason}}});
            !e)
          return Fail(e.error());
        if (auto s = Bounce(c, kSystem, r.contact_id, "bounced", "hard bounce: " + report.reason);
            !s)
          return Fail(s.error());
        return true;
      }
      case K::kTemporary: {
        int64_t attempts = r.attempts + 1;  // this one included
        if (attempts >= policy_.max_attempts) {
          return send_repo::MarkFailed(
              c, r.campaign_id, r.contact_id,
              "gave up after " + std::to_string(attempts) + " temporary failures: " + report.reason,
              report.smtp_code, now);
        }
        int64_t delay = policy_.retry_base_s;
        for (int64_t i = 1; i < attempts && delay < policy_.retry_max_s; ++i) delay *= 2;
        delay = std::min(delay, policy_.retry_max_s);
        if (auto s = send_repo::Retry(c, r.campaign_id, r.contact_id, r.lease_until, report.reason,
                                      report.smtp_code, now + delay, now);
            !s)
          return Fail(s.error());
        return true;
      }
      case K::kNotAttempted:
        if (auto s =
                send_repo::Release(c, r.campaign_id, r.contact_id, r.lease_until, report.retry_at);
            !s)
          return Fail(s.error());
        return true;
    }
    return false;
  });
  if (!done) return Fail(done.error());
  return Ok();
}

Status CampaignDelivery::Suspend(int64_t campaign_id, const std::string& reason) {
  int64_t now = clock_.NowUnix();
  auto done = db_.Write([&](store::Conn& c) { return send_repo::Suspend(c, campaign_id, now); });
  if (!done) return Fail(done.error());
  if (*done)
    spdlog::error(R"("event":"campaign_suspended","campaign_id":{},"reason":"{}")", campaign_id,
                  JsonEscape(reason));
  return Ok();
}

Result<send_repo::Stats> CampaignDelivery::Stats(int64_t campaign_id) const {
  return db_.Read([&](store::Conn& c) { return send_repo::LoadStats(c, campaign_id); });
}

Result<RecipientPage> CampaignDelivery::Recipients(int64_t campaign_id, const std::string& status,
                                                   std::string_view cursor, int limit) const {
  if (!status.empty() && status != "pending" && status != "sent" && status != "failed" &&
      status != "skipped") {
    return Fail(Errc::kInvalidArgument, "status must be one of pending, sent, failed, skipped");
  }
  auto after = DecodeIdCursor(cursor);
  if (!after) return Fail(after.error());
  limit = std::clamp(limit, 1, 500);
  return db_.Read([&](store::Conn& c) -> Result<RecipientPage> {
    auto k = campaigns_repo::Load(c, campaign_id);
    if (!k) return Fail(k.error());
    if (!*k) return Fail(Error::NotFound("campaign " + std::to_string(campaign_id) + " not found"));
    auto rows = send_repo::ListRecipients(c, campaign_id, status, *after, limit);
    if (!rows) return Fail(rows.error());
    RecipientPage page;
    page.items = std::move(*rows);
    if (static_cast<int>(page.items.size()) > limit) {
      page.items.resize(limit);
      page.next_cursor = EncodeIdCursor(page.items.back().contact_id);
    }
    return page;
  });
}

Result<std::string> CampaignDelivery::Unsubscribe(int64_t contact_id, int64_t campaign_id,
                                                  const std::string& request_id) {
  int64_t now = clock_.NowUnix();
  governance::Actor actor{
      .kind = "system", .subject = "unsubscribe_link", .request_id = request_id};
  return db_.Write([&](store::Conn& c) -> Result<std::string> {
    auto found = crm::contacts_repo::FindContact(c, contact_id);
    if (!found) return Fail(found.error());
    if (!*found) return Fail(Error::NotFound("this address is no longer on file"));
    std::string email = (*found)->email, status = (*found)->status;
    if (status == "subscribed" || status == "pending") {
      auto moved = contacts_.SetStatusIn(
          c, actor, contact_id, "unsubscribed", false,
          campaign_id > 0 ? "unsubscribe link of campaign " + std::to_string(campaign_id)
                          : "unsubscribe link");
      if (!moved) return Fail(moved.error());
    }
    if (campaign_id > 0) {
      auto first = send_repo::MarkEvent(c, campaign_id, contact_id, "unsubscribed", now);
      if (!first) return Fail(first.error());
      if (*first)
        if (auto e = AppendCampaignEmailEvent(c, now, crm::events::kEmailUnsubscribed, campaign_id,
                                              contact_id, {{"via", "link"}});
            !e)
          return Fail(e.error());
    }
    return email;
  });
}

Result<nlohmann::json> CampaignDelivery::Feedback(const governance::Actor& actor,
                                                  const std::string& email, const std::string& type,
                                                  const std::string& message_id) {
  if (type != "bounce" && type != "complaint")
    return Fail(Errc::kInvalidArgument, "type must be bounce or complaint");
  auto normalised = NormalizeEmail(email);
  if (!normalised) return Fail(Errc::kInvalidArgument, "email: not an email address");
  return db_.Write([&](store::Conn& c) -> Result<nlohmann::json> {
    return FeedbackIn(c, actor, *normalised, type, message_id);
  });
}

Result<std::optional<int64_t>> CampaignDelivery::CampaignOf(store::Conn& c, int64_t contact_id,
                                                            const std::string& message_id) {
  if (!message_id.empty()) {
    std::string mid = message_id;
    if (mid.front() != '<') mid = "<" + mid + ">";
    auto found = send_repo::FindByMessageId(c, mid);
    if (!found) return Fail(found.error());
    if (*found && (*found)->second == contact_id) return std::optional<int64_t>((*found)->first);
  }
  return send_repo::LastCampaignFor(c, contact_id);
}

Result<nlohmann::json> CampaignDelivery::FeedbackIn(store::Conn& c, const governance::Actor& actor,
                                                    const std::string& normalised,
                                                    const std::string& type,
                                                    const std::string& message_id) {
  int64_t now = clock_.NowUnix();
  auto found = crm::contacts_repo::FindContactByEmail(c, normalised);
  if (!found) return Fail(found.error());
  if (!*found) {
    // Nobody to move: the address is suppressed all the same, and stays so.
    std::string source = actor.kind;
    if (!actor.subject.empty()) source += ":" + actor.subject;
    source += ": " + type + " report for no contact";
    const char* reason = type == "bounce"        ? "hard_bounce"
                         : type == "unsubscribe" ? "unsubscribed"
                                                 : "complaint";
    if (auto s = contacts_.SuppressAddressIn(c, normalised, reason, source); !s)
      return Fail(s.error());
    return nlohmann::json{{"contact_id", nullptr},
                          {"status", nullptr},
                          {"campaign_id", nullptr},
                          {"counted", false},
                          {"suppressed", true}};
  }
  int64_t contact_id = (*found)->id;
  auto campaign_id = CampaignOf(c, contact_id, message_id);
  if (!campaign_id) return Fail(campaign_id.error());
  const char* event = type == "bounce"        ? "bounced"
                      : type == "unsubscribe" ? "unsubscribed"
                                              : "complained";
  bool counted = false;
  if (*campaign_id) {
    auto e = send_repo::MarkEvent(c, **campaign_id, contact_id, event, now);
    if (!e) return Fail(e.error());
    counted = *e;
  }
  if (auto s = FeedbackEvent(c, actor, contact_id, normalised, type, message_id, *campaign_id,
                             counted, now);
      !s)
    return Fail(s.error());
  if (type == "unsubscribe") {
    // As the unsubscribe link: only a subscribed or pending contact moves.
    std::string status = (*found)->status;
    if (status == "subscribed" || status == "pending") {
      auto moved = contacts_.SetStatusIn(c, actor, contact_id, "unsubscribed", false,
                                         "unsubscribed at the mail provider");
      if (!moved) return Fail(moved.error());
    }
  } else if (auto s = Bounce(c, actor, contact_id, event,
                             type == "bounce" ? "bounce report" : "complaint report");
             !s) {
    return Fail(s.error());
  }
  return nlohmann::json{
      {"contact_id", contact_id},
      {"status", ContactStatus(c, contact_id)},
      {"campaign_id", *campaign_id ? nlohmann::json(**campaign_id) : nlohmann::json(nullptr)},
      {"counted", counted}};
}

Status CampaignDelivery::FeedbackEvent(store::Conn& c, const governance::Actor& actor,
                                       int64_t contact_id, const std::string& email,
                                       const std::string& type, const std::string& message_id,
                                       std::optional<int64_t> campaign_id, bool counted,
                                       int64_t now) {
  // Once per campaign recipient, as the report counts; a report of no campaign's message
  // (a sequence's, an automation's, or one no longer known) each time it is applied.
  if (campaign_id && !counted) return Ok();
  std::string_view event = type == "bounce"        ? crm::events::kEmailBounced
                           : type == "unsubscribe" ? crm::events::kEmailUnsubscribed
                                                   : crm::events::kEmailComplained;
  std::string via = actor.subject.empty() ? actor.kind : actor.subject;
  nlohmann::json detail = {{"via", via}};
  if (type == "bounce") detail["bounce"] = "hard";
  if (campaign_id) return AppendCampaignEmailEvent(c, now, event, *campaign_id, contact_id, detail);
  return AppendEmailEvent(
      c, now,
      {.type = event,
       .contact_id = contact_id,
       .email = email,
       .source = "unknown",
       .message_id = message_id.empty() ? std::nullopt : std::optional<std::string>(message_id),
       .detail = std::move(detail)});
}

Status CampaignDelivery::Opened(int64_t contact_id, int64_t campaign_id) {
  int64_t now = clock_.NowUnix();
  auto r = db_.Write([&](store::Conn& c) -> Result<bool> {
    auto first = send_repo::MarkEvent(c, campaign_id, contact_id, "opened", now);
    if (!first || !*first) return first;
    if (auto e =
            AppendCampaignEmailEvent(c, now, crm::events::kEmailOpened, campaign_id, contact_id);
        !e)
      return Fail(e.error());
    return true;
  });
  if (!r) return Fail(r.error());
  return Ok();
}

Status CampaignDelivery::Clicked(int64_t contact_id, int64_t campaign_id, const std::string& url) {
  int64_t now = clock_.NowUnix();
  auto r = db_.Write([&](store::Conn& c) -> Result<bool> {
    // A click is also an open (the image may have been blocked).
    auto opened = send_repo::MarkEvent(c, campaign_id, contact_id, "opened", now);
    if (!opened) return Fail(opened.error());
    if (*opened)
      if (auto e =
              AppendCampaignEmailEvent(c, now, crm::events::kEmailOpened, campaign_id, contact_id);
          !e)
        return Fail(e.error());
    // Every click counts for its link; the recipient's first click is the event.
    if (auto l = RecordLinkClick(c, campaign_id, contact_id, url, now); !l) return Fail(l.error());
    auto clicked = send_repo::MarkEvent(c, campaign_id, contact_id, "clicked", now);
    if (!clicked || !*clicked) return clicked;
    if (auto e = AppendCampaignEmailEvent(c, now, crm::events::kEmailClicked, campaign_id,
                                          contact_id, {{"url", url}});
        !e)
      return Fail(e.error());
    return true;
  });
  if (!r) return Fail(r.error());
  return Ok();
}

namespace {

struct ResendPlan {
  Campaign campaign;
  int64_t recipients = 0;
};

Result<ResendPlan> PlanResend(store::Conn& c, int64_t id) {
  auto loaded = campaigns_repo::Load(c, id);
  if (!loaded) return Fail(loaded.error());
  if (!*loaded) return Fail(Error::NotFound("campaign " + std::to_string(id) + " not found"));
  ResendPlan plan{.campaign = std::move(**loaded)};
  CampaignStatus s = plan.campaign.status;
  if (s != CampaignStatus::kSent && s != CampaignStatus::kPaused && s != CampaignStatus::kSending) {
    return Fail(Errc::kInvalidTransition,
                std::string("only a sending, paused or sent campaign has undelivered recipients; "
                            "this one is ") +
                    ToString(s));
  }
  auto n = campaign_sends_repo::CountResendable(c, id);
  if (!n) return Fail(n.error());
  plan.recipients = *n;
  if (plan.recipients == 0) {
    return Fail(Errc::kInvalidArgument,
                "no undelivered recipient to resend to: none failed, or those who did are no "
                "longer subscribed");
  }
  return plan;
}

}  // namespace

Result<governance::Preview> CampaignDelivery::PreviewResend(store::Conn& c, int64_t id) const {
  auto plan = PlanResend(c, id);
  if (!plan) return Fail(plan.error());
  const Campaign& k = plan->campaign;
  governance::Preview p;
  p.preview = {
      {"campaign",
       {{"id", k.id}, {"name", k.name}, {"subject", k.subject}, {"status", ToString(k.status)}}},
      {"resend", "undelivered"},
      {"recipients", plan->recipients},
      {"count", plan->recipients},  // what assistant_may_confirm_up_to counts
      {"round", k.send_round + 1},
      {"new_status", k.status == CampaignStatus::kPaused ? "paused" : "sending"}};
  p.revisions["campaign:" + std::to_string(k.id)] = k.revision;
  return p;
}

Result<nlohmann::json> CampaignDelivery::Resend(store::Conn& c, const governance::Actor& actor,
                                                int64_t id) {
  (void)actor;
  int64_t now = clock_.NowUnix();
  auto plan = PlanResend(c, id);
  if (!plan) return Fail(plan.error());
  Campaign& k = plan->campaign;
  k.send_round += 1;
  auto n = campaign_sends_repo::RequeueFailed(c, id, k.send_round, now);
  if (!n) return Fail(n.error());
  if (k.status == CampaignStatus::kPaused)  // they wait for the campaign's resumption
    if (auto s = campaign_sends_repo::Park(c, id, now); !s) return Fail(s.error());
  if (k.status == CampaignStatus::kSent) k.status = CampaignStatus::kSending;
  k.finished_at.reset();
  k.updated_at = now;
  if (auto s = campaigns_repo::Save(c, k, k.revision); !s) return Fail(s.error());
  // The new round's sends continue the trace of the resend.
  if (auto s = campaign_sends_repo::SetTrace(c, id, crm::CurrentTraceLink()); !s)
    return Fail(s.error());
  return nlohmann::json{{"campaign", ToJson(k, false)}, {"requeued", *n}, {"round", k.send_round}};
}

Status CampaignDelivery::OnActivated(store::Conn& c, int64_t campaign_id, int64_t added) {
  return campaign_sends_repo::AddQueued(c, campaign_id, added);
}

}  // namespace crmd::marketing
