#include "src/marketing/test_sends.h"

#include <algorithm>

#include "src/core/email_address.h"
#include "src/crm/contacts_repo.h"
#include "src/governance/settings.h"
#include "src/marketing/campaign_render.h"
#include "src/marketing/campaigns.h"
#include "src/marketing/campaigns_repo.h"

namespace crmd::marketing {

using nlohmann::json;

bool TestRecipientAllowed(const json& allowed, const std::string& email) {
  if (!allowed.is_array()) return false;
  const std::string domain = email.substr(email.rfind('@'));  // "@example.com"
  for (const auto& entry : allowed) {
    if (!entry.is_string()) continue;
    auto normalised = NormalizeEmail(entry.get<std::string>());
    if (normalised && *normalised == email) return true;
    std::string e = entry.get<std::string>();
    std::transform(e.begin(), e.end(), e.begin(),
                   [](unsigned char ch) { return std::tolower(ch); });
    if (e.size() > 1 && e.front() == '@' && e == domain) return true;
  }
  return false;
}

namespace {

// 1..5 distinct addresses, normalised; errors name test_recipients.N.
Result<std::vector<std::string>> ParseRecipients(const json& recipients) {
  if (!recipients.is_array() || recipients.empty() ||
      recipients.size() > static_cast<size_t>(kMaxTestRecipients))
    return Fail(Errc::kInvalidArgument, "test_recipients: give 1 to 5 email addresses");
  std::vector<std::string> out;
  for (size_t i = 0; i < recipients.size(); ++i) {
    const std::string field = "test_recipients." + std::to_string(i);
    if (!recipients[i].is_string()) return Fail(Errc::kInvalidArgument, field + ": not a string");
    auto normalised = NormalizeEmail(recipients[i].get<std::string>());
    if (!normalised) return Fail(Errc::kInvalidArgument, field + ": not an email address");
    if (std::find(out.begin(), out.end(), *normalised) == out.end())
      out.push_back(std::move(*normalised));
  }
  return out;
}

// The merge fields given instead of a contact's.
Result<MailRecipient> RecipientFromFields(const json& fields) {
  if (!fields.is_object()) return Fail(Errc::kInvalidArgument, "test_fields: must be an object");
  MailRecipient to;
  for (const auto& [key, value] : fields.items()) {
    const std::string field = "test_fields." + key;
    if (key == "custom") {
      if (!value.is_object()) return Fail(Errc::kInvalidArgument, field + ": must be an object");
      to.custom_fields_json = value.dump();
      continue;
    }
    std::string* dst = key == "email"        ? &to.email
                       : key == "first_name" ? &to.first_name
                       : key == "last_name"  ? &to.last_name
                       : key == "phone"      ? &to.phone
                                             : nullptr;
    if (!dst) return Fail(Errc::kInvalidArgument, field + ": not a merge field");
    if (!value.is_string() || value.get_ref<const std::string&>().size() > 500)
      return Fail(Errc::kInvalidArgument, field + ": must be a string (<= 500)");
    *dst = value.get<std::string>();
  }
  return to;
}

// Whose fields fill the merge tags: the given ones, else the audience's first contact, else
// nobody's (every tag renders empty).
Result<std::pair<MailRecipient, json>> MergeSource(store::Conn& c, int64_t campaign_id,
                                                   const json& fields) {
  if (!fields.is_null()) {
    auto to = RecipientFromFields(fields);
    if (!to) return Fail(to.error());
    return std::pair{std::move(*to), json{{"kind", "fields"}}};
  }
  auto sample = campaigns_repo::SampleAudience(c, campaign_id, 1);
  if (!sample) return Fail(sample.error());
  if (sample->empty()) return std::pair{MailRecipient{}, json{{"kind", "none"}}};
  auto contact = crm::contacts_repo::FindContact(c, sample->front());
  if (!contact) return Fail(contact.error());
  if (!*contact) return std::pair{MailRecipient{}, json{{"kind", "none"}}};
  const auto& k = **contact;
  MailRecipient to{.contact_id = 0,  // links for no contact, as in the activation preview
                   .email = k.email,
                   .first_name = k.first_name,
                   .last_name = k.last_name,
                   .phone = k.phone,
                   .custom_fields_json = k.custom_fields.dump()};
  return std::pair{std::move(to),
                   json{{"kind", "contact"}, {"contact_id", k.id}, {"email", k.email}}};
}

struct Prepared {
  mail::Message message;  // addressed to the merge source; readdressed per recipient
  json merged_from;
  std::vector<std::string> refused;  // addresses neither a person's nor allowed
};

Status AuditTestSend(const TestSendOptions& o, const governance::Actor& actor, int64_t campaign_id,
                     const json& sent_to) {
  if (!o.audit) return Ok();
  auto done = o.db->Write([&](store::Conn& c) -> Result<bool> {
    auto s = o.audit(c, actor,
                     governance::AuditEntry{.action = "test_send_campaign",
                                            .target_type = "campaign",
                                            .target_ids = {campaign_id},
                                            .details = {{"test_recipients", sent_to}}});
    if (!s) return Fail(s.error());
    return true;
  });
  if (!done) return Fail(done.error());
  return Ok();
}

// One message per address, each with its own To and Message-ID; stops at the first refusal
// (the ones sent before it are reported in the error and audited).
Result<json> Deliver(const TestSendOptions& o, const governance::Actor& actor, int64_t campaign_id,
                     const std::vector<std::string>& to, Prepared p) {
  mail::Message& m = p.message;
  m.subject = "[Test] " + m.subject;
  std::erase_if(m.extra_headers, [](const auto& h) { return h.first == "Feedback-ID"; });
  m.extra_headers.emplace_back("X-Crmd-Test", "yes");
  const std::string domain = m.from.address.substr(m.from.address.rfind('@') + 1);
  // Unique per test, unlike a campaign's ids, which are stable for de-duplication.
  const std::string send_id = "c" + std::to_string(campaign_id) + "test" +
                              std::to_string(o.clock->Monotonic().time_since_epoch().count());
  json sent = json::array();
  Status failed = Ok();
  for (const auto& address : to) {
    m.to = {"", address};
    m.message_id = mail::MakeMessageId(send_id, address, domain);
    if (failed = o.mailer(m); !failed) break;
    sent.push_back(address);
  }
  if (!sent.empty())
    if (auto s = AuditTestSend(o, actor, campaign_id, sent); !s) return Fail(s.error());
  if (!failed) {
    Error e = failed.error();
    if (!sent.empty()) e.message += " (sent before it: " + sent.dump() + ")";
    return tl::unexpected(std::move(e));
  }
  return json{{"status", "test_sent"},
              {"campaign_id", campaign_id},
              {"subject", m.subject},
              {"sent_to", sent},
              {"merged_from", p.merged_from}};
}

}  // namespace

Result<json> CampaignTestSends::Send(const governance::Actor& actor, int64_t campaign_id,
                                     const json& recipients, const json& fields) {
  auto to = ParseRecipients(recipients);
  if (!to) return Fail(to.error());
  if (!o_.mail || !o_.mailer)
    return Fail(Errc::kUnavailable, "test sends need the server's mail set-up");
  auto prepared = o_.db->Read([&](store::Conn& c) -> Result<Prepared> {
    auto loaded = campaigns_repo::Load(c, campaign_id);
    if (!loaded) return Fail(loaded.error());
    if (!*loaded)
      return Fail(Error::NotFound("campaign " + std::to_string(campaign_id) + " not found"));
    const Campaign& k = **loaded;
    if (k.subject.empty()) return Fail(Errc::kInvalidArgument, "subject: required for a test");
    if (k.html_body.empty() && k.text_body.empty())
      return Fail(Errc::kInvalidArgument, "html_body or text_body: required for a test");
    MailContext ctx = *o_.mail;
    json allowed = json::array();
    if (o_.settings) {
      auto doc = o_.settings->GetIn(c);
      if (!doc) return Fail(doc.error());
      ApplySettings(ctx, doc->document);
      allowed = doc->document.value("test_recipients_allowed", json::array());
    }
    Prepared p;
    for (const auto& address : *to) {
      if (TestRecipientAllowed(allowed, address)) continue;
      bool person = false;
      if (o_.console_user) {
        auto known = o_.console_user(address);
        if (!known) return Fail(known.error());
        person = *known;
      }
      if (!person) p.refused.push_back(address);
    }
    if (!p.refused.empty()) return p;
    auto source = MergeSource(c, campaign_id, fields);
    if (!source) return Fail(source.error());
    auto templates = CampaignTemplates::Parse(k);
    if (!templates) return Fail(templates.error());
    auto message = templates->Build(source->first, k.send_round, ctx);
    if (!message) return Fail(message.error());
    p.message = std::move(*message);
    p.merged_from = std::move(source->second);
    return p;
  });
  if (!prepared) return Fail(prepared.error());
  if (!prepared->refused.empty())
    return Fail(Errc::kInvalidArgument,
                "test_recipients: " + prepared->refused.front() +
                    " is neither a console user's address nor listed in settings "
                    "test_recipients_allowed (a person adds addresses there: crmctl settings "
                    "test-recipients)");
  return Deliver(o_, actor, campaign_id, *to, std::move(*prepared));
}

}  // namespace crmd::marketing
