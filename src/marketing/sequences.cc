#include "src/marketing/sequences.h"

#include <array>
#include <utility>

#include "src/core/header_text.h"
#include "src/mail/merge.h"
#include "src/marketing/campaigns_repo.h"
#include "src/marketing/sequence_runs_repo.h"
#include "src/marketing/sequences_repo.h"
#include "src/marketing/templates.h"

namespace crmd::marketing {
namespace {

using nlohmann::json;

constexpr StatusNames<SequenceStatus, 3> kSequenceStatusNames{{{
    {SequenceStatus::kDraft, "draft"},
    {SequenceStatus::kActive, "active"},
    {SequenceStatus::kPaused, "paused"},
}}};

// The sequence with its enrolment counts; nullopt when there is none.
Result<std::optional<Sequence>> FindWithEnrolments(store::Conn& c, int64_t id) {
  auto row = sequences_repo::Find(c, id);
  if (!row || !*row) return row;
  auto stats = sequence_runs_repo::LoadStats(c, id);
  if (!stats) return Fail(stats.error());
  (*row)->enrolments = {{"enrolled", stats->enrolled},
                        {"active", stats->enrolled - stats->completed - stats->exited},
                        {"sent", stats->sent},
                        {"failed", stats->failed},
                        {"completed", stats->completed},
                        {"exited", stats->exited}};
  return row;
}

Status CheckList(store::Conn& c, const Sequence& s) {
  if (!s.list_id) return Ok();
  auto missing = campaigns_repo::MissingIds(c, "lists", {*s.list_id});
  if (!missing) return Fail(missing.error());
  if (!missing->empty())
    return Fail(Errc::kInvalidArgument,
                "list_id: list " + std::to_string(*s.list_id) + " does not exist");
  return Ok();
}

// The contact ids of enroll_contact_ids; empty when absent.
Result<std::vector<int64_t>> EnrolIds(const json& j) {
  std::vector<int64_t> ids;
  if (!j.contains("enroll_contact_ids")) return ids;
  const auto& a = j["enroll_contact_ids"];
  if (!a.is_array() || a.size() > kMaxSequenceEnrol)
    return Fail(Errc::kInvalidArgument, "enroll_contact_ids: an array of at most " +
                                            std::to_string(kMaxSequenceEnrol) + " contact ids");
  for (const auto& v : a) {
    if (!v.is_number_integer() || v.get<int64_t>() <= 0)
      return Fail(Errc::kInvalidArgument, "enroll_contact_ids: must be positive integer ids");
    ids.push_back(v.get<int64_t>());
  }
  return ids;
}

bool HasEdits(const json& j) {
  for (const char* k : {"name", "description", "emails", "list_id"})
    if (j.contains(k)) return true;
  return false;
}

Status SaveSequence(store::Conn& c, Sequence& s) {
  auto n = sequences_repo::Update(c, s);
  if (!n) return Fail(n.error());
  if (!*n) return Fail(Errc::kRevisionConflict, "the sequence was changed by someone else");
  s.revision += 1;
  return Ok();
}

Status ApplySequenceFields(const json& j, Sequence& s) {
  if (j.contains("name")) {
    if (!j["name"].is_string()) return Fail(Errc::kInvalidArgument, "name: must be a string");
    s.name = j["name"].get<std::string>();
    if (s.name.size() > 200) return Fail(Errc::kInvalidArgument, "name: longer than 200");
  }
  if (s.name.empty()) return Fail(Errc::kInvalidArgument, "name: must not be empty");
  if (j.contains("description")) {
    if (!j["description"].is_string()) {
      return Fail(Errc::kInvalidArgument, "description: must be a string");
    }
    s.description = j["description"].get<std::string>();
    if (s.description.size() > 2000) return Fail(Errc::kInvalidArgument, "description: too long");
  }
  if (j.contains("emails")) {
    auto e = ValidateSequenceEmails(j["emails"]);
    if (!e) return Fail(e.error());
    s.emails = std::move(*e);
  }
  if (j.contains("list_id")) {
    const auto& v = j["list_id"];
    if (v.is_null())
      s.list_id.reset();
    else if (v.is_number_integer() && v.get<int64_t>() > 0)
      s.list_id = v.get<int64_t>();
    else
      return Fail(Errc::kInvalidArgument, "list_id: must be a list id or null");
  }
  return Ok();
}

}  // namespace

const char* ToString(SequenceStatus s) { return kSequenceStatusNames.Name(s); }

std::optional<SequenceStatus> ParseSequenceStatus(std::string_view s) {
  return kSequenceStatusNames.Parse(s);
}

bool CanTransition(SequenceStatus from, SequenceStatus to) {
  using S = SequenceStatus;
  return (from == S::kDraft && to == S::kActive) || (from == S::kActive && to == S::kPaused) ||
         (from == S::kPaused && (to == S::kActive || to == S::kDraft));
}

json ToJson(const Sequence& s, bool full) {
  int64_t total = 0;
  for (const auto& e : s.emails) total += e.value("delay_seconds", int64_t{0});
  json j = {{"id", s.id},
            {"name", s.name},
            {"status", ToString(s.status)},
            {"email_count", s.emails.size()},
            {"total_delay_seconds", total},
            {"revision", s.revision},
            {"updated_at", TimeJson(s.updated_at)}};
  j["list_id"] = s.list_id ? json(*s.list_id) : json(nullptr);
  if (full) {
    j["description"] = s.description;
    j["emails"] = s.emails;
    j["enrolments"] = s.enrolments;
    j["created_at"] = TimeJson(s.created_at);
  }
  return j;
}

Result<json> ValidateSequenceEmails(const json& emails) {
  if (!emails.is_array()) return Fail(Errc::kInvalidArgument, "emails: must be an array");
  if (emails.size() > kMaxSequenceEmails) {
    return Fail(Errc::kInvalidArgument, "emails: at most 50 emails");
  }
  json out = json::array();
  for (size_t i = 0; i < emails.size(); ++i) {
    std::string where = "emails[" + std::to_string(i) + "]";
    const auto& e = emails[i];
    if (!e.is_object()) return Fail(Errc::kInvalidArgument, where + ": must be an object");
    json o;
    for (auto [key, max, required] : {std::tuple{"subject", size_t{300}, true},
                                      std::tuple{"html_body", size_t{512 * 1024}, false},
                                      std::tuple{"text_body", size_t{256 * 1024}, false}}) {
      if (!e.contains(key) || e[key].is_null()) {
        if (required) return Fail(Errc::kInvalidArgument, where + "." + key + ": required");
        o[key] = "";
        continue;
      }
      if (!e[key].is_string() || e[key].get<std::string>().size() > max ||
          (required && e[key].get<std::string>().empty())) {
        return Fail(Errc::kInvalidArgument, where + "." + key +
                                                ": must be a non-empty string of at most " +
                                                std::to_string(max) + " bytes");
      }
      o[key] = e[key];
    }
    if (o["html_body"].get<std::string>().empty() && o["text_body"].get<std::string>().empty()) {
      return Fail(Errc::kInvalidArgument, where + ": needs html_body or text_body");
    }
    // The subject goes into every message's header as it is.
    if (auto problem = HeaderTextProblem(o["subject"].get<std::string>()); !problem.empty())
      return Fail(Errc::kInvalidArgument, where + ".subject: " + problem);
    // Merge tags are checked when saved: a typo is an error now, not a blank at send time.
    for (const char* key : {"subject", "html_body", "text_body"}) {
      if (auto t = mail::MergeTemplate::Parse(o[key].get<std::string>()); !t)
        return Fail(Errc::kInvalidArgument, where + "." + key + ": " + t.error().message);
    }
    if (e.contains("delay_days") && e.contains("delay_seconds")) {
      return Fail(Errc::kInvalidArgument, where + ": give delay_days or delay_seconds, not both");
    }
    int64_t delay = 0;
    for (auto [key, unit] :
         {std::pair{"delay_days", int64_t{86400}}, std::pair{"delay_seconds", int64_t{1}}}) {
      if (!e.contains(key)) continue;
      const auto& v = e[key];
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() * unit > 365 * 86400) {
        return Fail(Errc::kInvalidArgument, where + "." + key + ": must be 0 to 365 days");
      }
      delay = v.get<int64_t>() * unit;
    }
    o["delay_seconds"] = delay;
    auto template_id = TemplateIdOf(e, where + ".template_id");
    if (!template_id) return Fail(template_id.error());
    if (*template_id) o["template_id"] = **template_id;
    for (const auto& [k, v] : e.items()) {
      if (k != "subject" && k != "html_body" && k != "text_body" && k != "delay_days" &&
          k != "delay_seconds" && k != "template_id") {
        return Fail(Errc::kInvalidArgument, where + "." + k + ": unknown field");
      }
    }
    out.push_back(std::move(o));
  }
  return out;
}

SequenceService::SequenceService(store::Database& db, const Clock& clock, AuditSink audit,
                                 governance::Idempotency* idempotency)
    : db_(db),
      clock_(clock),
      rows_(
          "sequence", FindWithEnrolments, [](const Sequence& s) { return ToString(s.status); }, db,
          std::move(audit), idempotency) {}

Result<SequencePage> SequenceService::List(std::optional<SequenceStatus> status,
                                           std::string_view cursor, int limit) const {
  return ListPageAfterCursor<SequencePage>(db_, cursor, limit,
                                           [&](store::Conn& c, int64_t after, int64_t n) {
                                             return sequences_repo::ListAfter(c, after, status, n);
                                           });
}

Result<Sequence> SequenceService::Get(int64_t id) const { return rows_.Get(id); }

Result<Sequence> SequenceService::CreateIn(store::Conn& c, const governance::Actor& actor,
                                           const json& fields) {
  Sequence s;
  if (auto st = ApplySequenceFields(fields, s); !st) return Fail(st.error());
  if (auto st = CheckList(c, s); !st) return Fail(st.error());
  if (auto st = CheckTemplateRefs(c, s.emails, "emails"); !st) return Fail(st.error());
  s.created_at = s.updated_at = clock_.NowUnix();
  auto id = sequences_repo::Insert(c, s);
  if (!id) return Fail(id.error());
  s.id = *id;
  if (auto st = rows_.Audit(c, actor, "create_sequence", s, std::nullopt); !st)
    return Fail(st.error());
  return s;
}

Result<Sequence> SequenceService::Create(const governance::Actor& actor, const json& fields,
                                         const std::string& idempotency_key) {
  return rows_.Create(actor, "create_sequence", idempotency_key,
                      [&](store::Conn& c) { return CreateIn(c, actor, fields); });
}

Result<Sequence> SequenceService::Update(const governance::Actor& actor, int64_t id,
                                         int64_t expected_revision, const json& fields) {
  return db_.Write([&](store::Conn& c) -> Result<Sequence> {
    auto s = rows_.LoadOr404(c, id);
    if (!s) return Fail(s.error());
    if (auto st = rows_.CheckRevision(*s, expected_revision); !st) return Fail(st.error());
    auto enrol = EnrolIds(fields);
    if (!enrol) return Fail(enrol.error());
    const bool edits = HasEdits(fields);
    if (edits && s->status == SequenceStatus::kActive) {
      return Fail(Errc::kInvalidTransition, "an active sequence cannot be edited; pause it first");
    }
    if (auto st = ApplySequenceFields(fields, *s); !st) return Fail(st.error());
    if (auto st = CheckList(c, *s); !st) return Fail(st.error());
    if (fields.contains("emails"))
      if (auto st = CheckTemplateRefs(c, s->emails, "emails"); !st) return Fail(st.error());
    const int64_t now = clock_.NowUnix();
    if (!enrol->empty()) {
      if (s->emails.empty())
        return Fail(Errc::kInvalidArgument, "enroll_contact_ids: add emails before enrolling");
      auto missing = sequence_runs_repo::FirstMissingContact(c, *enrol);
      if (!missing) return Fail(missing.error());
      if (*missing)
        return Fail(Error::NotFound("enroll_contact_ids: contact " + std::to_string(**missing) +
                                    " not found"));
      const int64_t first = s->emails[0].value("delay_seconds", int64_t{0});
      for (int64_t contact : *enrol) {
        auto n =
            sequence_runs_repo::Enrol(c, id, contact, now + first, now, crm::CurrentTraceLink());
        if (!n) return Fail(n.error());
      }
    }
    int64_t before = s->revision;
    if (edits) {
      s->updated_at = now;
      if (auto st = SaveSequence(c, *s); !st) return Fail(st.error());
      if (auto st = rows_.Audit(c, actor, "update_sequence", *s, before); !st)
        return Fail(st.error());
    } else if (!enrol->empty()) {
      if (auto st = rows_.Audit(c, actor, "enroll_sequence", *s, before); !st)
        return Fail(st.error());
    }
    return rows_.LoadOr404(c, id);
  });
}

Result<Sequence> SequenceService::SetStatus(const governance::Actor& actor, int64_t id,
                                            SequenceStatus to, int64_t expected_revision) {
  return db_.Write([&](store::Conn& c) -> Result<Sequence> {
    auto s = rows_.LoadOr404(c, id);
    if (!s) return Fail(s.error());
    if (auto st = rows_.CheckRevision(*s, expected_revision); !st) return Fail(st.error());
    if (!CanTransition(s->status, to)) {
      return Fail(Errc::kInvalidTransition, std::string("a ") + ToString(s->status) +
                                                " sequence cannot become " + ToString(to));
    }
    if (to == SequenceStatus::kActive && s->emails.empty()) {
      return Fail(Errc::kInvalidArgument, "emails: add at least one email before activating");
    }
    int64_t before = s->revision;
    if (s->status == SequenceStatus::kDraft && to == SequenceStatus::kActive)
      s->activated_at = clock_.NowUnix();  // list members from now on are enrolled
    s->status = to;
    s->updated_at = clock_.NowUnix();
    if (auto st = SaveSequence(c, *s); !st) return Fail(st.error());
    if (auto st = rows_.Audit(c, actor, "set_sequence_status", *s, before); !st)
      return Fail(st.error());
    return s;
  });
}

}  // namespace crmd::marketing
