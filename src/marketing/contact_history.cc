#include "src/marketing/contact_history.h"

#include <algorithm>
#include <charconv>
#include <tuple>
#include <utility>
#include <vector>

#include "src/crm/contact_records_repo.h"
#include "src/governance/audit_repo.h"
#include "src/marketing/contact_history_repo.h"

namespace crmd::marketing {
namespace {

using nlohmann::json;
namespace records = crm::contact_records_repo;
namespace sends = contact_history_repo;

// Everything kept about one contact, read in one snapshot.
struct Records {
  crm::Contact contact;
  std::vector<records::ListMembership> lists;
  std::vector<records::TagMembership> tags;
  std::vector<records::ContactEvent> events;
  std::optional<records::OptinEmail> optin;
  std::vector<records::ConsentRecord> consents;
  std::vector<governance::AuditRecord> audit;
  std::vector<sends::CampaignMessage> messages;
  std::vector<sends::RunMessage> run_messages;
  std::vector<sends::Enrolment> automations;
  std::vector<sends::Enrolment> sequences;
};

template <typename T>
Status Into(Result<T> r, T& out) {
  if (!r) return Fail(r.error());
  out = std::move(*r);
  return Ok();
}

Result<Records> ReadRecords(const ContactHistoryOptions& o, int64_t id) {
  return o.db->Read([&](store::Conn& c) -> Result<Records> {
    Records r;
    auto k = o.contacts->GetIn(c, id);
    if (!k) return Fail(k.error());
    r.contact = std::move(*k);
    for (Status st :
         {Into(records::Lists(c, id), r.lists), Into(records::Tags(c, id), r.tags),
          Into(records::ContactEvents(c, id), r.events), Into(records::Optin(c, id), r.optin),
          Into(records::ConsentRecords(c, id), r.consents),
          Into(governance::audit_repo::AboutTarget(c, "contact", id), r.audit),
          Into(sends::CampaignMessages(c, id), r.messages),
          Into(sends::RunMessages(c, id), r.run_messages),
          Into(sends::AutomationRuns(c, id), r.automations),
          Into(sends::SequenceRuns(c, id), r.sequences)})
      if (!st) return Fail(st.error());
    return r;
  });
}

json Time(std::optional<int64_t> t) { return t ? json(FormatRfc3339(*t)) : json(nullptr); }
json Text(const std::optional<std::string>& s) { return s ? json(*s) : json(nullptr); }

json ActorJson(const governance::AuditRecord& a) {
  return {{"face", FaceOfActor(a.actor.kind)}, {"actor_kind", a.actor.kind},
          {"subject", a.actor.subject},        {"client_id", a.actor.client_id},
          {"action", a.entry.action},          {"audit_id", a.id}};
}

// The id after `prefix` in a contact's source ("form:3", "import:12"), if it is one.
std::optional<int64_t> SourceId(const std::string& source, std::string_view prefix) {
  if (source.rfind(prefix, 0) != 0) return std::nullopt;
  int64_t id = 0;
  const char* b = source.data() + prefix.size();
  const char* e = source.data() + source.size();
  auto [end, ec] = std::from_chars(b, e, id);
  if (ec != std::errc() || end != e || id <= 0) return std::nullopt;
  return id;
}

// The audit row written in the same transaction as a status event: at the event's second
// or the next (the clock is read for each), and saying the same change: the contact's
// creation (no revision before), set_contact_status with the same from and to, or an
// update whose status changed. Each row answers one event, taken in order.
bool SaysChange(const governance::AuditRecord& a, const std::string& type, const json& data) {
  const json& d = a.entry.details;
  if (type == "contact.created") return !a.entry.revision_before.has_value();
  if (a.entry.action == "set_contact_status")
    return d.is_object() && d.value("from", "") == data.value("from", "") &&
           d.value("to", "") == data.value("to", "");
  return d.is_object() && d.value("status_changed", false);
}

const governance::AuditRecord* AuditOf(const Records& r, const records::ContactEvent& e,
                                       const json& data, std::vector<bool>& used) {
  for (size_t i = 0; i < r.audit.size(); ++i) {
    const auto& a = r.audit[i];
    if (used[i] || a.occurred_at < e.occurred_at || a.occurred_at > e.occurred_at + 1) continue;
    if (!SaysChange(a, e.type, data)) continue;
    used[i] = true;
    return &a;
  }
  return nullptr;
}

json StatusChanges(const Records& r) {
  json out = json::array();
  std::vector<bool> used(r.audit.size(), false);
  for (const auto& e : r.events) {
    if (e.type != "contact.created" && e.type != "contact.status_updated") continue;
    json data = json::parse(e.data, nullptr, false);
    if (!data.is_object()) continue;
    json change = {{"at", FormatRfc3339(e.occurred_at)}, {"event_id", e.id}};
    if (e.type == "contact.created") {
      change["from"] = nullptr;
      change["to"] = data.value("status", "");
    } else {
      change["from"] = data.value("from", "");
      change["to"] = data.value("to", "");
    }
    change["reason"] = data.contains("reason") ? data["reason"] : json(nullptr);
    const auto* a = AuditOf(r, e, data, used);
    change["by"] = a ? ActorJson(*a) : json(nullptr);
    out.push_back(std::move(change));
  }
  return out;
}

json ConfirmedAt(const Records& r) {
  for (const auto& e : r.events) {
    if (e.type != "contact.status_updated") continue;
    json data = json::parse(e.data, nullptr, false);
    if (data.is_object() && data.value("from", "") == "pending" &&
        data.value("to", "") == "subscribed")
      return FormatRfc3339(e.occurred_at);
  }
  return nullptr;
}

json Consent(const ContactHistoryOptions& o, const Records& r) {
  const crm::Contact& k = r.contact;
  json c = {{"source", k.source},        {"form_id", nullptr},    {"import_id", nullptr},
            {"import_consent", nullptr}, {"ip_address", nullptr}, {"user_agent", nullptr},
            {"records", json::array()}};
  // The address and user agent of the latest form submission; every record listed.
  for (const auto& e : r.consents) {
    c["records"].push_back({{"kind", e.kind},
                            {"form_id", e.form_id ? json(*e.form_id) : json(nullptr)},
                            {"ip_address", e.ip_address},
                            {"user_agent", e.user_agent},
                            {"at", FormatRfc3339(e.at)}});
    if (e.kind == "form_submission") {
      c["ip_address"] = e.ip_address;
      c["user_agent"] = e.user_agent;
    }
  }
  if (auto form = SourceId(k.source, "form:")) c["form_id"] = *form;
  if (auto import = SourceId(k.source, "import:")) {
    c["import_id"] = *import;
    if (o.imports)
      if (auto job = o.imports->Get(*import); job && !job->options.consent.empty())
        c["import_consent"] = job->options.consent;
  }
  json optin = nullptr;
  if (r.optin)
    optin = {{"email_status", r.optin->status},
             {"message_id", Text(r.optin->message_id)},
             {"queued_at", FormatRfc3339(r.optin->created_at)},
             {"sent_at", Time(r.optin->sent_at)}};
  json confirmed = ConfirmedAt(r);
  if (!confirmed.is_null()) {
    if (optin.is_null()) optin = json::object();
    optin["confirmed_at"] = confirmed;
  } else if (!optin.is_null()) {
    optin["confirmed_at"] = nullptr;
  }
  if (!optin.is_null()) {
    optin["confirmed_ip_address"] = nullptr;
    optin["confirmed_user_agent"] = nullptr;
    for (const auto& e : r.consents)
      if (e.kind == "optin_confirmation") {
        optin["confirmed_ip_address"] = e.ip_address;
        optin["confirmed_user_agent"] = e.user_agent;
      }
  }
  c["double_opt_in"] = std::move(optin);
  return c;
}

json CampaignMessageJson(const sends::CampaignMessage& m) {
  return {{"source", "campaign"},
          {"campaign_id", m.campaign_id},
          {"campaign_name", m.campaign_name},
          {"subject", m.subject},
          {"message_id", Text(m.message_id)},
          {"status", m.status},
          {"reason", Text(m.reason)},
          {"sent_at", Time(m.sent_at)},
          {"opened_at", Time(m.opened_at)},
          {"clicked_at", Time(m.clicked_at)},
          {"bounced_at", Time(m.bounced_at)},
          {"complained_at", Time(m.complained_at)},
          {"unsubscribed_at", Time(m.unsubscribed_at)}};
}

json RunMessageJson(const sends::RunMessage& m) {
  return {{"source", m.source},
          {m.source == "automation" ? "automation_id" : "sequence_id", m.owner_id},
          {m.source == "automation" ? "automation_name" : "sequence_name", m.owner_name},
          {m.source == "automation" ? "step" : "email", m.step},
          {"subject", m.subject},
          {"message_id", Text(m.message_id)},
          {"status", m.outcome},
          {"reason", Text(m.detail)},
          {"sent_at", FormatRfc3339(m.at)}};
}

json OptinMessageJson(const records::OptinEmail& e) {
  return {{"source", "double_opt_in"},
          {"message_id", Text(e.message_id)},
          {"status", e.status},
          {"reason", Text(e.reason)},
          {"sent_at", Time(e.sent_at)}};
}

json EnrolmentJson(const sends::Enrolment& e, bool automation) {
  json j = {{automation ? "automation_id" : "sequence_id", e.owner_id},
            {"name", e.name},
            {"run_id", e.id},
            {"status", e.status},
            {"enrolled_at", FormatRfc3339(e.enrolled_at)},
            {"updated_at", FormatRfc3339(e.updated_at)},
            {"last_error", Text(e.last_error)}};
  if (automation) {
    json steps = json::parse(e.steps, nullptr, false);
    j["steps_passed"] = e.position;
    j["steps"] = steps.is_array() ? steps.size() : 0;
  } else {
    j["emails_passed"] = e.position;
  }
  return j;
}

json Engagement(const Records& r) {
  json opens = json::array(), clicks = json::array();
  for (const auto& m : r.messages) {
    if (m.opened_at)
      opens.push_back({{"campaign_id", m.campaign_id}, {"at", FormatRfc3339(*m.opened_at)}});
    if (m.clicked_at)
      clicks.push_back({{"campaign_id", m.campaign_id}, {"at", FormatRfc3339(*m.clicked_at)}});
  }
  return {{"opens", std::move(opens)}, {"clicks", std::move(clicks)}};
}

json Memberships(const Records& r) {
  json lists = json::array(), tags = json::array();
  for (const auto& l : r.lists)
    lists.push_back({{"id", l.list_id},
                     {"name", l.name},
                     {"state", l.state},
                     {"since", FormatRfc3339(l.since)},
                     {"updated_at", Time(l.updated_at)}});
  for (const auto& t : r.tags)
    tags.push_back({{"id", t.tag_id}, {"name", t.name}, {"since", FormatRfc3339(t.since)}});
  return {{"lists", std::move(lists)}, {"tags", std::move(tags)}};
}

json Document(const ContactHistoryOptions& o, const Records& r, const json& suppression) {
  json messages = json::array(), automations = json::array(), sequences = json::array(),
       events = json::array(), audit = json::array();
  for (const auto& m : r.messages) messages.push_back(CampaignMessageJson(m));
  for (const auto& m : r.run_messages) messages.push_back(RunMessageJson(m));
  if (r.optin) messages.push_back(OptinMessageJson(*r.optin));
  for (const auto& e : r.automations) automations.push_back(EnrolmentJson(e, true));
  for (const auto& e : r.sequences) sequences.push_back(EnrolmentJson(e, false));
  for (const auto& e : r.events)
    events.push_back({{"id", e.id},
                      {"type", e.type},
                      {"at", FormatRfc3339(e.occurred_at)},
                      {"data", json::parse(e.data, nullptr, false)}});
  for (const auto& a : r.audit) audit.push_back(governance::ToJson(a));
  json m = Memberships(r);
  return {{"format", "crmd.contact_export.v1"}, {"generated_at", FormatRfc3339(o.clock->NowUnix())},
          {"contact", crm::ToJson(r.contact)},  {"lists", std::move(m["lists"])},
          {"tags", std::move(m["tags"])},       {"suppression", suppression},
          {"consent", Consent(o, r)},           {"status_changes", StatusChanges(r)},
          {"messages", std::move(messages)},    {"automations", std::move(automations)},
          {"sequences", std::move(sequences)},  {"engagement", Engagement(r)},
          {"events", std::move(events)},        {"audit", std::move(audit)}};
}

// One timeline entry and its place: newest first by (at, rank, id), a total order.
struct Entry {
  int64_t at = 0;
  int rank = 0;
  int64_t id = 0;
  json item;
  auto Key() const { return std::tie(at, rank, id); }
};

void AddEntry(std::vector<Entry>& out, int64_t at, int rank, int64_t id, const char* kind,
              json item) {
  item["at"] = FormatRfc3339(at);
  item["kind"] = kind;
  out.push_back({.at = at, .rank = rank, .id = id, .item = std::move(item)});
}

void CampaignEntries(const Records& r, std::vector<Entry>& out) {
  for (const auto& m : r.messages) {
    json base = {{"campaign_id", m.campaign_id}, {"campaign_name", m.campaign_name}};
    json msg = base;
    msg["source"] = "campaign";
    msg["message_id"] = Text(m.message_id);
    msg["status"] = m.status;
    msg["reason"] = Text(m.reason);
    AddEntry(out, m.sent_at.value_or(m.updated_at), 3, m.campaign_id, "message", std::move(msg));
    if (m.opened_at) AddEntry(out, *m.opened_at, 4, m.campaign_id, "open", base);
    if (m.clicked_at) AddEntry(out, *m.clicked_at, 5, m.campaign_id, "click", base);
  }
}

std::vector<Entry> Entries(const Records& r) {
  std::vector<Entry> out;
  for (const auto& e : r.events)
    AddEntry(out, e.occurred_at, 1, e.id, "event",
             {{"event", e.type}, {"data", json::parse(e.data, nullptr, false)}});
  for (const auto& a : r.audit)
    AddEntry(out, a.occurred_at, 2, a.id, "audit",
             {{"action", a.entry.action}, {"by", ActorJson(a)}, {"details", a.entry.details}});
  CampaignEntries(r, out);
  if (r.optin) {
    json msg = OptinMessageJson(*r.optin);
    msg.erase("sent_at");
    AddEntry(out, r.optin->sent_at.value_or(r.optin->created_at), 6, 0, "message", std::move(msg));
  }
  for (const auto& m : r.run_messages) {
    json msg = RunMessageJson(m);
    msg.erase("sent_at");
    AddEntry(out, m.at, 9, m.id, "message", std::move(msg));
  }
  for (const auto& e : r.automations)
    AddEntry(out, e.enrolled_at, 7, e.id, "automation", EnrolmentJson(e, true));
  for (const auto& e : r.sequences)
    AddEntry(out, e.enrolled_at, 8, e.id, "sequence", EnrolmentJson(e, false));
  std::sort(out.begin(), out.end(),
            [](const Entry& a, const Entry& b) { return a.Key() > b.Key(); });
  return out;
}

std::string CursorOf(const Entry& e) {
  return std::to_string(e.at) + "." + std::to_string(e.rank) + "." + std::to_string(e.id);
}

// (at, rank, id) from a cursor CursorOf made; nullopt for anything else.
std::optional<std::tuple<int64_t, int, int64_t>> ParseCursor(const std::string& s) {
  int64_t parts[3] = {0, 0, 0};
  const char* p = s.data();
  const char* end = s.data() + s.size();
  for (int i = 0; i < 3; ++i) {
    auto [next, ec] = std::from_chars(p, end, parts[i]);
    if (ec != std::errc() || parts[i] < 0) return std::nullopt;
    if (i < 2 && (next == end || *next != '.')) return std::nullopt;
    p = i < 2 ? next + 1 : next;
  }
  if (p != end) return std::nullopt;
  return std::make_tuple(parts[0], static_cast<int>(parts[1]), parts[2]);
}

}  // namespace

std::string FaceOfActor(std::string_view kind) {
  if (kind == "oauth") return "mcp";
  if (kind == "api_key") return "rest";
  if (kind == "cli") return "crmctl";
  if (kind == "user") return "console";
  return std::string(kind);  // form, webhook, system
}

Result<json> ContactHistory::Export(int64_t contact_id) {
  auto r = ReadRecords(o_, contact_id);
  if (!r) return Fail(r.error());
  json suppression = nullptr;
  if (o_.suppressions) {
    auto s = o_.suppressions->Check(r->contact.email);
    if (!s) return Fail(s.error());
    if (*s) suppression = crm::ToJson(**s);
  }
  return Document(o_, *r, suppression);
}

Result<json> ContactHistory::ExportByEmail(std::string_view email) {
  auto k = o_.contacts->GetByEmail(email);
  if (!k) return Fail(k.error());
  return Export(k->id);
}

Result<HistoryPage> ContactHistory::Timeline(int64_t contact_id, const std::string& cursor,
                                             int limit) {
  std::optional<std::tuple<int64_t, int, int64_t>> after;
  if (!cursor.empty()) {
    after = ParseCursor(cursor);
    if (!after) return Fail(Error::Invalid("history_cursor is not a cursor this gave"));
  }
  limit = std::clamp(limit, 1, kHistoryMaxLimit);
  auto r = ReadRecords(o_, contact_id);
  if (!r) return Fail(r.error());
  std::vector<Entry> entries = Entries(*r);
  HistoryPage page;
  size_t i = 0;
  if (after)
    while (i < entries.size() && entries[i].Key() >= *after) ++i;
  for (; i < entries.size() && page.items.size() < static_cast<size_t>(limit); ++i)
    page.items.push_back(entries[i].item);
  if (i < entries.size() && i > 0) page.next_cursor = CursorOf(entries[i - 1]);
  return page;
}

}  // namespace crmd::marketing
