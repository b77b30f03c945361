#include "src/marketing/campaigns.h"

#include <array>
#include <utility>

#include "src/core/header_text.h"
#include "src/crm/contacts_repo.h"
#include "src/governance/settings.h"
#include "src/mail/merge.h"
#include "src/mail/message.h"
#include "src/marketing/campaign_delivery.h"
#include "src/marketing/campaign_render.h"
#include "src/marketing/campaign_sends_repo.h"
#include "src/marketing/campaigns_repo.h"
#include "src/marketing/presend_content.h"

namespace crmd::marketing {
namespace {

constexpr StatusNames<CampaignStatus, 6> kStatusNames{{{
    {CampaignStatus::kDraft, "draft"},
    {CampaignStatus::kScheduled, "scheduled"},
    {CampaignStatus::kSending, "sending"},
    {CampaignStatus::kSent, "sent"},
    {CampaignStatus::kPaused, "paused"},
    {CampaignStatus::kCancelled, "cancelled"},
}}};

nlohmann::json AudienceJson(const Audience& a) {
  return {{"lists", a.lists},
          {"tags", a.tags},
          {"exclude_lists", a.exclude_lists},
          {"exclude_tags", a.exclude_tags}};
}

// Text fields: name -> (member, max length).
struct TextField {
  const char* key;
  std::string Campaign::*member;
  size_t max;
};
constexpr std::array<TextField, 7> kTextFields{{
    {"name", &Campaign::name, 200},
    {"subject", &Campaign::subject, 300},
    {"preheader", &Campaign::preheader, 300},
    {"from_name", &Campaign::from_name, 200},
    {"from_email", &Campaign::from_email, 320},
    {"html_body", &Campaign::html_body, 512 * 1024},
    {"text_body", &Campaign::text_body, 256 * 1024},
}};

bool LooksLikeEmail(const std::string& s) {
  auto at = s.find('@');
  return at != std::string::npos && at > 0 && at + 1 < s.size() &&
         s.find('@', at + 1) == std::string::npos && s.find(' ') == std::string::npos &&
         s.find('.', at) != std::string::npos;
}

Error CampaignNotFound(int64_t id) {
  return Error::NotFound("campaign " + std::to_string(id) + " not found");
}

// Checks that every referenced list and tag exists.
Status CheckReferences(store::Conn& c, const Audience& a) {
  std::vector<int64_t> lists = a.lists, tags = a.tags;
  lists.insert(lists.end(), a.exclude_lists.begin(), a.exclude_lists.end());
  tags.insert(tags.end(), a.exclude_tags.begin(), a.exclude_tags.end());
  auto ml = campaigns_repo::MissingIds(c, "lists", lists);
  if (!ml) return Fail(ml.error());
  if (!ml->empty()) {
    return Fail(Errc::kInvalidArgument,
                "audience: list " + std::to_string(ml->front()) + " does not exist");
  }
  auto mt = campaigns_repo::MissingIds(c, "tags", tags);
  if (!mt) return Fail(mt.error());
  if (!mt->empty()) {
    return Fail(Errc::kInvalidArgument,
                "audience: tag " + std::to_string(mt->front()) + " does not exist");
  }
  return Ok();
}

std::string CampaignRevisionKey(int64_t id) { return "campaign:" + std::to_string(id); }

// The campaign's template, held until the transaction ends, and its body checked inside it
// (merge tags of the whole, as the sender will parse it).
Status CheckTemplate(store::Conn& c, Campaign& k) {
  if (!k.template_id) {
    k.layout.reset();
    return Ok();
  }
  auto t = UsableTemplate(c, *k.template_id, "template_id");
  if (!t) return Fail(t.error());
  k.layout = std::move(*t);
  if (auto parsed = CampaignTemplates::Parse(k); !parsed) return Fail(parsed.error());
  return Ok();
}

}  // namespace

const char* ToString(CampaignStatus s) { return kStatusNames.Name(s); }

std::optional<CampaignStatus> ParseCampaignStatus(std::string_view s) {
  return kStatusNames.Parse(s);
}

bool CanTransition(CampaignStatus from, CampaignStatus to) {
  using S = CampaignStatus;
  switch (from) {
    case S::kDraft:
    case S::kPaused:
      return to == S::kScheduled || to == S::kSending ||
             (from == S::kPaused && to == S::kCancelled);
    case S::kScheduled:
      return to == S::kSending || to == S::kPaused || to == S::kCancelled;
    case S::kSending:
      return to == S::kSent || to == S::kPaused || to == S::kCancelled;
    case S::kSent:
    case S::kCancelled:
      return false;
  }
  return false;
}

bool IsEditable(CampaignStatus s) {
  return s == CampaignStatus::kDraft || s == CampaignStatus::kPaused;
}
bool CanActivate(CampaignStatus s) { return IsEditable(s); }
bool CanDelete(CampaignStatus s) { return s != CampaignStatus::kSending; }

nlohmann::json ToJson(const Campaign& c, bool full) {
  nlohmann::json j = {{"id", c.id},
                      {"name", c.name},
                      {"subject", c.subject},
                      {"status", ToString(c.status)},
                      {"send_at", TimeJson(c.send_at)},
                      {"audience_size", c.audience_size},
                      {"revision", c.revision},
                      {"updated_at", TimeJson(c.updated_at)}};
  j["template_id"] = c.template_id ? nlohmann::json(*c.template_id) : nlohmann::json(nullptr);
  if (full) {
    j["preheader"] = c.preheader;
    j["from_name"] = c.from_name;
    j["from_email"] = c.from_email;
    j["html_body"] = c.html_body;
    j["text_body"] = c.text_body;
    j["audience"] = AudienceJson(c.audience);
    j["activated_at"] = TimeJson(c.activated_at);
    j["finished_at"] = TimeJson(c.finished_at);
    j["track_opens"] = c.track_opens;
    j["track_clicks"] = c.track_clicks;
    j["send_round"] = c.send_round;
    j["created_at"] = TimeJson(c.created_at);
  }
  return j;
}

Status ApplyCampaignFields(const nlohmann::json& j, Campaign& out) {
  Campaign c = out;  // all or nothing: `out` changes only when every field is valid
  for (const auto& f : kTextFields) {
    if (!j.contains(f.key)) continue;
    const auto& v = j[f.key];
    if (!v.is_string())
      return Fail(Errc::kInvalidArgument, std::string(f.key) + ": must be a string");
    auto s = v.get<std::string>();
    if (s.size() > f.max) {
      return Fail(Errc::kInvalidArgument,
                  std::string(f.key) + ": longer than " + std::to_string(f.max) + " bytes");
    }
    // The sender's name and the subject go into every message's header as they are.
    if (f.member == &Campaign::from_name || f.member == &Campaign::subject)
      if (auto problem = HeaderTextProblem(s); !problem.empty())
        return Fail(Errc::kInvalidArgument, std::string(f.key) + ": " + problem);
    c.*f.member = std::move(s);
  }
  if (c.name.empty()) return Fail(Errc::kInvalidArgument, "name: must not be empty");
  // Also what a message's From accepts: an address it refuses would fail every message.
  if (!c.from_email.empty() &&
      (!LooksLikeEmail(c.from_email) || !mail::IsPlainAddress(c.from_email, /*utf8=*/true))) {
    return Fail(Errc::kInvalidArgument, "from_email: not an email address");
  }
  if (j.contains("send_at")) {
    const auto& v = j["send_at"];
    if (v.is_null()) {
      c.send_at.reset();
    } else {
      auto t = v.is_string() ? ParseRfc3339(v.get<std::string>()) : std::nullopt;
      if (!t) return Fail(Errc::kInvalidArgument, "send_at: not an RFC 3339 date-time");
      c.send_at = *t;
    }
  }
  if (j.contains("template_id")) {
    auto id = TemplateIdOf(j, "template_id");
    if (!id) return Fail(id.error());
    if (*id != c.template_id) c.layout.reset();  // the service loads the new one
    c.template_id = *id;
  }
  for (auto [key, dst] :
       {std::pair{"track_opens", &c.track_opens}, std::pair{"track_clicks", &c.track_clicks}}) {
    if (!j.contains(key)) continue;
    if (!j[key].is_boolean())
      return Fail(Errc::kInvalidArgument, std::string(key) + ": must be a boolean");
    *dst = j[key].get<bool>();
  }
  // Merge tags are checked when saved, so that a typo is an error now, not a blank later.
  for (auto [key, text] :
       {std::pair{"subject", &c.subject}, std::pair{"preheader", &c.preheader},
        std::pair{"html_body", &c.html_body}, std::pair{"text_body", &c.text_body}}) {
    if (!j.contains(key)) continue;
    if (auto t = mail::MergeTemplate::Parse(*text); !t) {
      return Fail(Errc::kInvalidArgument, std::string(key) + ": " + t.error().message);
    }
  }
  if (j.contains("audience")) {
    const auto& a = j["audience"];
    if (!a.is_object()) return Fail(Errc::kInvalidArgument, "audience: must be an object");
    Audience aud;
    for (auto [key, dst] : {std::pair{"lists", &aud.lists}, std::pair{"tags", &aud.tags},
                            std::pair{"exclude_lists", &aud.exclude_lists},
                            std::pair{"exclude_tags", &aud.exclude_tags}}) {
      auto ids = IdArray(a, key);
      if (!ids) return Fail(Errc::kInvalidArgument, "audience." + ids.error().message);
      if (ids->size() > 100) {
        return Fail(Errc::kInvalidArgument, std::string("audience.") + key + ": at most 100 ids");
      }
      *dst = std::move(*ids);
    }
    c.audience = std::move(aud);
  }
  out = std::move(c);
  return Ok();
}

Status CheckReadyToSend(const Campaign& c) {
  if (c.subject.empty()) return Fail(Errc::kInvalidArgument, "subject: required before activation");
  if (c.html_body.empty() && c.text_body.empty()) {
    return Fail(Errc::kInvalidArgument, "html_body or text_body: required before activation");
  }
  if (c.audience.Empty()) {
    return Fail(Errc::kInvalidArgument, "audience: needs at least one list or tag");
  }
  return Ok();
}

CampaignService::CampaignService(store::Database& db, const Clock& clock, AuditSink audit,
                                 governance::Idempotency* idempotency, const MailContext* mail,
                                 governance::SettingsService* settings,
                                 const PresendChecker* presend)
    : db_(db),
      clock_(clock),
      rows_(
          "campaign", campaigns_repo::Load, [](const Campaign& k) { return ToString(k.status); },
          db, std::move(audit), idempotency),
      mail_(mail),
      settings_(settings),
      presend_(presend) {}

Result<CampaignPage> CampaignService::List(std::optional<CampaignStatus> status,
                                           std::string_view cursor, int limit) const {
  auto after = DecodeIdCursor(cursor);
  if (!after) return Fail(after.error());
  return db_.Read([&](store::Conn& c) -> Result<CampaignPage> {
    auto rows = campaigns_repo::List(c, status, *after, limit);
    if (!rows) return Fail(rows.error());
    CampaignPage page;
    page.items = std::move(*rows);
    if (static_cast<int>(page.items.size()) > limit) {
      page.items.resize(limit);
      page.next_cursor = EncodeIdCursor(page.items.back().id);
    }
    return page;
  });
}

Result<Campaign> CampaignService::Get(int64_t id) const { return rows_.Get(id); }

Result<Campaign> CampaignService::CreateIn(store::Conn& c, const governance::Actor& actor,
                                           const nlohmann::json& fields) {
  Campaign k;
  if (auto s = ApplyCampaignFields(fields, k); !s) return Fail(s.error());
  k.created_at = k.updated_at = clock_.NowUnix();
  if (auto s = CheckReferences(c, k.audience); !s) return Fail(s.error());
  if (auto s = CheckTemplate(c, k); !s) return Fail(s.error());
  auto id = campaigns_repo::Insert(c, k);
  if (!id) return Fail(id.error());
  k.id = *id;
  if (auto s = rows_.Audit(c, actor, "create_campaign", k, std::nullopt); !s)
    return Fail(s.error());
  return k;
}

Result<Campaign> CampaignService::Create(const governance::Actor& actor,
                                         const nlohmann::json& fields,
                                         const std::string& idempotency_key) {
  return rows_.Create(actor, "create_campaign", idempotency_key,
                      [&](store::Conn& c) { return CreateIn(c, actor, fields); });
}

Result<Campaign> CampaignService::Update(const governance::Actor& actor, int64_t id,
                                         int64_t expected_revision, const nlohmann::json& fields) {
  return db_.Write([&](store::Conn& c) -> Result<Campaign> {
    auto loaded = rows_.LoadOr404(c, id);
    if (!loaded) return Fail(loaded.error());
    Campaign k = std::move(*loaded);
    if (k.revision != expected_revision) {
      return Fail(Errc::kRevisionConflict,
                  "expected_revision " + std::to_string(expected_revision) +
                      " is stale; the campaign is at revision " + std::to_string(k.revision));
    }
    if (!IsEditable(k.status)) {
      return Fail(Errc::kInvalidTransition, std::string("a ") + ToString(k.status) +
                                                " campaign cannot be edited; pause it first");
    }
    if (auto s = ApplyCampaignFields(fields, k); !s) return Fail(s.error());
    if (auto s = CheckReferences(c, k.audience); !s) return Fail(s.error());
    if (auto s = CheckTemplate(c, k); !s) return Fail(s.error());
    k.updated_at = clock_.NowUnix();
    if (auto s = campaigns_repo::Save(c, k, expected_revision); !s) return Fail(s.error());
    if (auto s = rows_.Audit(c, actor, "update_campaign", k, expected_revision); !s)
      return Fail(s.error());
    return k;
  });
}

Result<Campaign> CampaignService::Pause(const governance::Actor& actor, int64_t id,
                                        int64_t expected_revision) {
  return db_.Write([&](store::Conn& c) -> Result<Campaign> {
    auto loaded = rows_.LoadOr404(c, id);
    if (!loaded) return Fail(loaded.error());
    Campaign k = std::move(*loaded);
    if (expected_revision != 0 && k.revision != expected_revision) {
      return Fail(
          Errc::kRevisionConflict,
          "expected_revision is stale; the campaign is at revision " + std::to_string(k.revision));
    }
    if (!CanTransition(k.status, CampaignStatus::kPaused)) {
      return Fail(Errc::kInvalidTransition,
                  std::string("only a scheduled or sending campaign can be "
                              "paused; this one is ") +
                      ToString(k.status));
    }
    int64_t before = k.revision;
    k.status = CampaignStatus::kPaused;
    k.updated_at = clock_.NowUnix();
    if (auto s = campaigns_repo::Save(c, k, k.revision); !s) return Fail(s.error());
    // Out of the queue's way until it is activated again (leased ones finish their turn).
    if (auto s = campaign_sends_repo::Park(c, id, k.updated_at); !s) return Fail(s.error());
    if (auto s = rows_.Audit(c, actor, "pause_campaign", k, before); !s) return Fail(s.error());
    return k;
  });
}

namespace {

// Everything an activation needs, computed identically by the preview and the confirm.
struct ActivationPlan {
  Campaign campaign;
  int64_t audience = 0;
  CampaignStatus next = CampaignStatus::kSending;
};

Result<ActivationPlan> PlanActivation(store::Conn& c, int64_t id, int64_t now) {
  auto loaded = campaigns_repo::Load(c, id);
  if (!loaded) return Fail(loaded.error());
  if (!*loaded) return Fail(CampaignNotFound(id));
  ActivationPlan plan{.campaign = std::move(**loaded)};
  const Campaign& k = plan.campaign;
  if (!CanActivate(k.status)) {
    return Fail(Errc::kInvalidTransition, std::string("only a draft or paused campaign can be "
                                                      "activated; this one is ") +
                                              ToString(k.status));
  }
  if (auto s = CheckReadyToSend(k); !s) return Fail(s.error());
  if (auto s = CheckReferences(c, k.audience); !s) return Fail(s.error());
  auto n = campaigns_repo::CountAudience(c, id);
  if (!n) return Fail(n.error());
  plan.audience = *n;
  if (plan.audience == 0 && k.audience_size == 0) {
    return Fail(Errc::kInvalidArgument,
                "audience: resolves to 0 subscribed contacts; change the lists or tags");
  }
  plan.next = k.send_at && *k.send_at > now ? CampaignStatus::kScheduled : CampaignStatus::kSending;
  return plan;
}

constexpr int kRecipientSample = 5;

// id, email and names of each contact, in the order given.
Result<nlohmann::json> RecipientSampleJson(store::Conn& c, const std::vector<int64_t>& ids) {
  nlohmann::json out = nlohmann::json::array();
  for (int64_t contact_id : ids) {
    auto contact = crm::contacts_repo::FindContact(c, contact_id);
    if (!contact) return Fail(contact.error());
    if (!*contact) continue;
    out.push_back({{"id", (*contact)->id},
                   {"email", (*contact)->email},
                   {"first_name", (*contact)->first_name},
                   {"last_name", (*contact)->last_name}});
  }
  return out;
}

}  // namespace

Result<governance::Preview> CampaignService::PreviewActivate(store::Conn& c, int64_t id) const {
  auto plan = PlanActivation(c, id, clock_.NowUnix());
  if (!plan) return Fail(plan.error());
  const Campaign& k = plan->campaign;
  auto suppressed = campaigns_repo::CountSuppressedAudience(c, id);
  if (!suppressed) return Fail(suppressed.error());
  governance::Preview p;
  p.preview = {
      {"campaign",
       {{"id", k.id}, {"name", k.name}, {"subject", k.subject}, {"status", ToString(k.status)}}},
      {"audience_size", plan->audience},
      // Counted in audience_size, recorded as recipients and skipped at their turn.
      {"suppressed_recipients", *suppressed},
      {"audience", AudienceJson(k.audience)},
      {"sender", {{"name", k.from_name}, {"email", k.from_email}}},
      {"schedule", plan->next == CampaignStatus::kScheduled
                       ? nlohmann::json{{"mode", "scheduled"}, {"send_at", TimeJson(k.send_at)}}
                       : nlohmann::json{{"mode", "immediately"}, {"send_at", nullptr}}},
      {"new_status", ToString(plan->next)},
  };
  // A few of the people it goes to, as the person deciding sees them (the approval page,
  // the assistant's confirm view); the first also gets the sample message.
  auto sample = campaigns_repo::SampleAudience(c, id, kRecipientSample);
  if (!sample) return Fail(sample.error());
  auto recipients = RecipientSampleJson(c, *sample);
  if (!recipients) return Fail(recipients.error());
  p.preview["recipient_sample"] = std::move(*recipients);
  if (auto st = PreviewMessage(c, k, p); !st) return Fail(st.error());
  // The approval policy's assistant_may_confirm_up_to counts recipients.
  p.preview["count"] = plan->audience;
  p.revisions[CampaignRevisionKey(k.id)] = k.revision;
  return p;
}

Status CampaignService::PreviewMessage(store::Conn& c, const Campaign& k,
                                       governance::Preview& p) const {
  if (!mail_ || !mail_->links) return Ok();
  // The message as the first recipient will get it (what is confirmed is what is sent),
  // except that its links are signed for no contact (id 0): whoever reviews the preview
  // can follow them, and neither unsubscribes that person nor counts an open or a click.
  auto sample = campaigns_repo::SampleAudience(c, k.id, 1);
  if (!sample) return Fail(sample.error());
  if (sample->empty()) return Ok();
  auto contact = crm::contacts_repo::FindContact(c, sample->front());
  if (!contact) return Fail(contact.error());
  auto templates = CampaignTemplates::Parse(k);
  if (!templates) return Fail(templates.error());
  if (!*contact) return Ok();
  MailContext ctx = *mail_;
  nlohmann::json settings = nlohmann::json::object();
  if (settings_) {
    auto doc = settings_->GetIn(c);
    if (doc) {
      ApplySettings(ctx, doc->document);
      settings = doc->document;
    }
  }
  MailRecipient to{.contact_id = 0,
                   .email = (*contact)->email,
                   .first_name = (*contact)->first_name,
                   .last_name = (*contact)->last_name,
                   .phone = (*contact)->phone,
                   .custom_fields_json = (*contact)->custom_fields.dump()};
  auto message = templates->Build(to, k.send_round, ctx);
  if (!message) return Fail(message.error());
  p.preview["sample_message"] = MessagePreviewJson(*message);
  p.preview["sender"] = {{"name", message->from.name}, {"email", message->from.address}};
  if (!presend_) return Ok();
  auto checks = presend_->ForCampaign(c, k, *message, ctx, settings, clock_.NowUnix());
  if (!checks) return Fail(checks.error());
  p.preview["checks"] = ToJson(*checks);
  p.overridable = OverridableErrors(*checks);
  return Ok();
}

Result<nlohmann::json> CampaignService::Activate(store::Conn& c, const governance::Actor& actor,
                                                 int64_t id) {
  int64_t now = clock_.NowUnix();
  auto plan = PlanActivation(c, id, now);
  if (!plan) return Fail(plan.error());
  Campaign& k = plan->campaign;
  auto recorded = campaigns_repo::RecordRecipients(c, id, now);
  if (!recorded) return Fail(recorded.error());
  if (auto s = CampaignDelivery::OnActivated(c, id, recorded->added); !s) return Fail(s.error());
  // Scheduled: parked until its time (Advance unparks). Sending: due now, including the
  // recipients a pause parked.
  if (auto s = plan->next == CampaignStatus::kScheduled ? campaign_sends_repo::Park(c, id, now)
                                                        : campaign_sends_repo::Unpark(c, id);
      !s)
    return Fail(s.error());
  int64_t before = k.revision;
  k.status = plan->next;
  k.audience_size = recorded->total;
  k.activated_at = now;
  k.updated_at = now;
  if (auto s = campaigns_repo::Save(c, k, k.revision); !s) return Fail(s.error());
  // Its sends continue the trace of the request that activated it (a confirm_action
  // call, or a person's approval).
  if (auto s = campaign_sends_repo::SetTrace(c, id, crm::CurrentTraceLink()); !s)
    return Fail(s.error());
  if (auto s = rows_.Audit(c, actor, "activate_campaign", k, before); !s) return Fail(s.error());
  return nlohmann::json{{"campaign", ToJson(k, false)}, {"recipients_recorded", recorded->total}};
}

Result<governance::Preview> CampaignService::PreviewDelete(store::Conn& c, int64_t id) const {
  auto loaded = rows_.LoadOr404(c, id);
  if (!loaded) return Fail(loaded.error());
  const Campaign& k = *loaded;
  auto recipients = campaigns_repo::CountRecipients(c, id);
  if (!recipients) return Fail(recipients.error());
  governance::Preview p;
  p.preview = {
      {"campaign", ToJson(k, false)}, {"recipients_deleted", *recipients}, {"irreversible", true}};
  p.revisions[CampaignRevisionKey(k.id)] = k.revision;
  if (!CanDelete(k.status)) {
    p.blockers.push_back({.kind = "campaign",
                          .id = k.id,
                          .name = k.name,
                          .reason = "the campaign is sending; pause it before deleting"});
  }
  return p;
}

Result<nlohmann::json> CampaignService::Delete(store::Conn& c, const governance::Actor& actor,
                                               int64_t id) {
  auto loaded = rows_.LoadOr404(c, id);
  if (!loaded) return Fail(loaded.error());
  const Campaign& k = *loaded;
  if (!CanDelete(k.status)) {
    return Fail(Errc::kDependencyBlocked,
                "campaign " + std::to_string(id) + " is sending; pause it before deleting");
  }
  if (auto s = campaigns_repo::Remove(c, id); !s) return Fail(s.error());
  if (auto s = rows_.Audit(c, actor, "delete_campaign", k, k.revision); !s) return Fail(s.error());
  return nlohmann::json{{"deleted", {{"id", id}, {"name", k.name}}}};
}

}  // namespace crmd::marketing
