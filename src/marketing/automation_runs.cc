#include "src/marketing/automation_runs.h"

#include <algorithm>

#include "src/core/log.h"
#include "src/crm/contacts.h"
#include "src/crm/contacts_repo.h"
#include "src/crm/events.h"
#include "src/crm/outbox_repo.h"
#include "src/marketing/email_events.h"
#include "src/marketing/sequences_repo.h"

namespace crmd::marketing {
namespace {

using nlohmann::json;
namespace runs = automation_runs_repo;
namespace seqs = sequence_runs_repo;

const governance::Actor kAutomationActor{.kind = "system", .subject = "automation"};

// The id of data[key] ({"id", "name"}) of a membership event, 0 when absent.
int64_t RefId(const json& data, const char* key) {
  if (!data.is_object() || !data.contains(key) || !data[key].is_object()) return 0;
  const auto& id = data[key]["id"];
  return id.is_number_integer() ? id.get<int64_t>() : 0;
}

// Whether an outbox event is the automation's trigger (automation_steps.h lists them).
// form_submitted matches a contact created by a form ("source": "form:<id>").
bool Matches(const json& trigger, const crm::outbox_repo::StoredEvent& ev, const json& data) {
  const std::string type = trigger.value("type", "");
  const std::string& e = ev.event_type;
  if (type == "contact_created") return e == crm::events::kContactCreated;
  if (type == "form_submitted") {
    if (e != crm::events::kContactCreated || !data.is_object()) return false;
    std::string source = data.value("source", "");
    if (source.rfind("form:", 0) != 0) return false;
    if (!trigger.contains("form_id")) return true;
    return source == "form:" + std::to_string(trigger["form_id"].get<int64_t>());
  }
  if (type == "tag_added" || type == "tag_removed") {
    if (e != (type == "tag_added" ? crm::events::kTagAdded : crm::events::kTagRemoved))
      return false;
    return RefId(data, "tag") == trigger.value("tag_id", int64_t{0});
  }
  if (type == "list_added" || type == "list_removed") {
    if (e != (type == "list_added" ? crm::events::kListAdded : crm::events::kListRemoved))
      return false;
    return RefId(data, "list") == trigger.value("list_id", int64_t{0});
  }
  if (type == "status_changed") {
    return e == crm::events::kStatusUpdated && data.is_object() &&
           data.value("to", "") == trigger.value("status", "");
  }
  return false;
}

// A hard bounce of an automation's or a sequence's email, as a campaign's is recorded: the
// contact becomes `bounced` (a complaint is not overwritten; a move the state machine
// refuses is left alone).
Status HardBounceIn(store::Conn& c, crm::ContactService& contacts, int64_t contact_id,
                    const std::string& detail) {
  static const governance::Actor kMailSystem{.kind = "system", .subject = "mail"};
  auto k = contacts.GetIn(c, contact_id);
  if (!k) return k.error().code == Errc::kNotFound ? Ok() : Fail(k.error());
  if (k->status == "bounced" || k->status == "complained") return Ok();
  auto moved =
      contacts.SetStatusIn(c, kMailSystem, contact_id, "bounced", false, "hard bounce: " + detail);
  if (!moved && moved.error().code != Errc::kInvalidTransition) return Fail(moved.error());
  return Ok();
}

// The email.sent or email.bounced event of an automation's or a sequence's message.
Status MessageEventIn(store::Conn& c, int64_t contact_id, const char* source, int64_t owner_id,
                      const StepOutcome& o, int64_t now) {
  const bool sent = o.kind == StepOutcome::Kind::kDone;
  if (!sent && !o.recipient_rejected) return Ok();
  auto k = crm::contacts_repo::FindContact(c, contact_id);
  if (!k) return Fail(k.error());
  if (!*k) return Ok();
  EmailEvent e{.type = sent ? crm::events::kEmailSent : crm::events::kEmailBounced,
               .contact_id = contact_id,
               .email = (*k)->email,
               .source = source,
               .source_id = owner_id,
               .message_id = o.message_id};
  if (!sent) e.detail = {{"bounce", "hard"}, {"via", "smtp"}, {"reason", o.detail}};
  return AppendEmailEvent(c, now, e);
}

// An email that went out (or was refused for good), kept as the contact's message; once,
// as the outcome it belongs to is recorded once.
Status KeepMessageIn(store::Conn& c, int64_t contact_id, const char* source, int64_t owner_id,
                     int64_t step, const nlohmann::json& email, const StepOutcome& o, int64_t now) {
  if (o.message_id.empty()) return Ok();
  const bool sent = o.kind == StepOutcome::Kind::kDone;
  auto n = c.Exec(
      "INSERT INTO run_messages (contact_id, source, owner_id, step, subject, message_id, "
      "outcome, detail, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      {contact_id, std::string(source), owner_id, step, email.value("subject", ""), o.message_id,
       std::string(sent ? "sent" : "failed"), sent ? store::Value(nullptr) : store::Value(o.detail),
       now});
  if (!n) return Fail(n.error());
  return MessageEventIn(c, contact_id, source, owner_id, o, now);
}

bool IsBusinessError(const Error& e) {
  return e.code == Errc::kNotFound || e.code == Errc::kInvalidArgument ||
         e.code == Errc::kInvalidTransition || e.code == Errc::kAlreadyExists;
}

tl::unexpected<Error> Moved() {
  return Fail(Errc::kRevisionConflict, "the run was moved by another worker");
}

int64_t WaitSeconds(const json& step) {
  if (step.contains("seconds")) return step["seconds"].get<int64_t>();
  return step.value("days", int64_t{0}) * 86400;
}

// Applies a step that only changes the database, through the contact service (status
// machine, outbox events, audit). A business refusal is the step's failure, not an error.
Result<std::optional<std::string>> ApplyDbStep(store::Conn& c, crm::ContactService& contacts,
                                               const runs::Run& r, const json& step) {
  const std::string type = step.value("type", "");
  Result<void> applied;
  if (type == "add_tag" || type == "remove_tag" || type == "add_list" || type == "remove_list") {
    bool tags = type.find("tag") != std::string::npos;
    bool add = type.rfind("add_", 0) == 0;
    int64_t id = step.value(tags ? "tag_id" : "list_id", int64_t{0});
    auto m =
        contacts.ApplyMembershipsIn(c, kAutomationActor, r.contact_id, tags, add, {crm::Ref(id)});
    if (!m) applied = Fail(m.error());
  } else if (type == "set_status") {
    auto m = contacts.SetStatusIn(c, kAutomationActor, r.contact_id, step.value("status", ""),
                                  false, "automation " + std::to_string(r.automation_id));
    if (!m) applied = Fail(m.error());
  } else {
    return std::optional<std::string>("unknown step type " + type);
  }
  if (applied) return std::optional<std::string>{};
  if (IsBusinessError(applied.error())) return std::optional<std::string>(applied.error().message);
  return Fail(applied.error());
}

// Moves r past step `index`: the next step due at `due_at`, or completed after the last.
Status Next(store::Conn& c, const runs::Run& r, int64_t index, int64_t due_at,
            const std::optional<std::string>& error, int64_t now) {
  int64_t next = index + 1;
  bool last = next >= static_cast<int64_t>(r.steps.size());
  auto moved = runs::Advance(c, r, next, due_at, 0, error, last ? "completed" : "active", now);
  if (!moved) return Fail(moved.error());
  if (!*moved) return Moved();
  if (last)
    if (auto s = runs::Count(c, r.automation_id, "completed"); !s) return s;
  return Ok();
}

}  // namespace

MailRecipient RecipientOf(const runs::Run& r) {
  return {.contact_id = r.contact_id,
          .email = r.email,
          .first_name = r.first_name,
          .last_name = r.last_name,
          .phone = r.phone,
          .custom_fields_json = r.custom_fields_json};
}

int64_t AutomationRuns::Backoff(int64_t attempts) const {
  int64_t delay = std::max<int64_t>(policy_.retry_base_s, 1);
  for (int64_t i = 1; i < attempts && delay < policy_.retry_max_s; ++i) delay *= 2;
  return std::min(delay, std::max<int64_t>(policy_.retry_max_s, 1));
}

Result<int> AutomationRuns::ClaimEvents(int limit) {
  const int64_t now = clock_.NowUnix();
  return db_.Write([&](store::Conn& c) -> Result<int> {
    const std::string consumer(kAutomationConsumer);
    if (auto r = crm::outbox_repo::EnsureCursor(c, consumer); !r) return Fail(r.error());
    auto after = crm::outbox_repo::CursorPosition(c, consumer);
    if (!after) return Fail(after.error());
    // The window first (its count and last id only): an idle claim reads nothing more.
    auto window = crm::outbox_repo::WindowAfter(c, *after, limit);
    if (!window) return Fail(window.error());
    if (window->count == 0) return 0;
    auto active = runs::ListActive(c);
    if (!active) return Fail(active.error());
    // With no active automation only a list_added event can enrol (in a sequence): the
    // others are passed unread. Either way these are the window's events.
    auto events = active->empty()
                      ? crm::outbox_repo::StoredOfTypeIn(c, *after, window->last_id,
                                                         std::string(crm::events::kListAdded))
                      : crm::outbox_repo::StoredAfter(c, *after, limit);
    if (!events) return Fail(events.error());
    for (const auto& ev : *events) {
      if (!ev.contact_id) continue;
      json data = json::parse(ev.data, nullptr, false);
      // The runs it enrols continue the trace of the request that caused the event.
      const crm::TraceLink trace{.traceparent = ev.traceparent, .tracestate = ev.tracestate};
      for (const auto& a : *active) {
        // Only what happened while the automation was active.
        if (ev.occurred_at < a.activated_at || !Matches(a.trigger, ev, data)) continue;
        auto enrolled = runs::Enrol(c, a.id, "event:" + std::to_string(ev.id), *ev.contact_id,
                                    a.steps, now, trace);
        if (!enrolled) return Fail(enrolled.error());
      }
      if (ev.event_type == crm::events::kListAdded) {
        auto fed = seqs::FedBy(c, RefId(data, "list"));
        if (!fed) return Fail(fed.error());
        for (const auto& [sequence_id, activated_at] : *fed) {
          if (ev.occurred_at < activated_at) continue;
          auto s = sequences_repo::Find(c, sequence_id);
          if (!s) return Fail(s.error());
          if (!*s || (*s)->emails.empty()) continue;
          int64_t first = (*s)->emails[0].value("delay_seconds", int64_t{0});
          auto enrolled = seqs::Enrol(c, sequence_id, *ev.contact_id, now + first, now, trace);
          if (!enrolled) return Fail(enrolled.error());
        }
      }
    }
    if (auto r = crm::outbox_repo::AdvanceCursor(c, consumer, window->last_id); !r)
      return Fail(r.error());
    return window->count;
  });
}

Result<std::optional<LeasedStep>> AutomationRuns::RunOne(int64_t run_id, int* handled) {
  const int64_t now = clock_.NowUnix();
  // Counted once the step is committed: the callback may run twice (store/db.h).
  int counted = 0;
  auto out = db_.Write([&](store::Conn& c) -> Result<std::optional<LeasedStep>> {
    counted = 0;
    auto loaded = runs::Load(c, run_id, true);
    if (!loaded) return Fail(loaded.error());
    if (!*loaded) return std::optional<LeasedStep>{};
    runs::Run& r = **loaded;
    if (r.status != "active" || r.automation_status != "active" || r.due_at > now)
      return std::optional<LeasedStep>{};
    const int64_t index = r.current_step;
    if (index >= static_cast<int64_t>(r.steps.size())) {
      auto moved = runs::Advance(c, r, index, now, 0, std::nullopt, "completed", now);
      if (!moved) return Fail(moved.error());
      if (!*moved) return Moved();
      if (auto s = runs::Count(c, r.automation_id, "completed"); !s) return Fail(s.error());
      ++counted;
      return std::optional<LeasedStep>{};
    }
    const json& step = r.steps[index];
    const std::string type = step.value("type", "");
    if (type == "wait") {
      if (auto s = runs::CountStep(c, r.automation_id, index, "done"); !s) return Fail(s.error());
      if (auto s = Next(c, r, index, now + WaitSeconds(step), std::nullopt, now); !s)
        return Fail(s.error());
      ++counted;
      return std::optional<LeasedStep>{};
    }
    if (type == "send_email") {
      auto skip = WhyNotMailed(c, contacts_, r.contact_status, r.email);
      if (!skip) return Fail(skip.error());
      if (!skip->empty()) {
        if (auto s = runs::CountStep(c, r.automation_id, index, "skipped"); !s)
          return Fail(s.error());
        if (auto s = Next(c, r, index, now, "skipped: " + *skip, now); !s) return Fail(s.error());
        ++counted;
        return std::optional<LeasedStep>{};
      }
    }
    if (type == "send_email" || type == "call_webhook") {
      // Leased: due again after the lease unless the outcome is recorded first.
      auto moved = runs::Advance(c, r, index, now + policy_.lease_s, r.attempts, std::nullopt,
                                 "active", now);
      if (!moved) return Fail(moved.error());
      if (!*moved) return Moved();
      r.due_at = now + policy_.lease_s;
      return std::optional<LeasedStep>(LeasedStep{.run = r, .step_index = index, .step = step});
    }
    auto failure = ApplyDbStep(c, contacts_, r, step);
    if (!failure) return Fail(failure.error());
    if (auto s = runs::CountStep(c, r.automation_id, index, *failure ? "failed" : "done"); !s)
      return Fail(s.error());
    if (auto s = Next(c, r, index, now, *failure, now); !s) return Fail(s.error());
    ++counted;
    return std::optional<LeasedStep>{};
  });
  if (out) *handled += counted;
  return out;
}

Result<std::vector<LeasedStep>> AutomationRuns::RunDue(int limit, int* handled) {
  const int64_t now = clock_.NowUnix();
  auto due = db_.Read([&](store::Conn& c) { return runs::DueRuns(c, now, limit); });
  if (!due) return Fail(due.error());
  std::vector<LeasedStep> out;
  for (const auto& run : *due) {
    // The step is a child span of the run's trace: its log lines, and the outbox events a
    // step like add_tag appends (and so their webhook deliveries), carry it.
    LogScope scope(LogContext{.trace = crm::ContinueTrace(run.traceparent, run.tracestate)});
    auto one = RunOne(run.id, handled);
    if (!one) {
      if (one.error().code == Errc::kRevisionConflict) continue;  // another worker had it
      return Fail(one.error());
    }
    if (*one) out.push_back(std::move(**one));
  }
  return out;
}

Status AutomationRuns::RecordStep(const LeasedStep& s, const StepOutcome& o) {
  const int64_t now = clock_.NowUnix();
  auto done = db_.Write([&](store::Conn& c) -> Result<bool> {
    auto loaded = runs::Load(c, s.run.id, false);
    if (!loaded) return Fail(loaded.error());
    // Cancelled, or leased again by another worker after this lease ran out: not ours.
    if (!*loaded || (*loaded)->status != "active" || (*loaded)->current_step != s.step_index ||
        (*loaded)->due_at != s.run.due_at)
      return false;
    const runs::Run& r = **loaded;
    using K = StepOutcome::Kind;
    switch (o.kind) {
      case K::kDone:
      case K::kFailed: {
        bool ok = o.kind == K::kDone;
        if (auto st = runs::CountStep(c, r.automation_id, s.step_index, ok ? "done" : "failed");
            !st)
          return Fail(st.error());
        if (auto st =
                Next(c, r, s.step_index, now, ok ? std::nullopt : std::optional(o.detail), now);
            !st)
          return Fail(st.error());
        if (auto st = KeepMessageIn(c, r.contact_id, "automation", r.automation_id, s.step_index,
                                    s.step, o, now);
            !st)
          return Fail(st.error());
        if (o.recipient_rejected)
          if (auto st = HardBounceIn(c, contacts_, r.contact_id, o.detail); !st)
            return Fail(st.error());
        return true;
      }
      case K::kTemporary: {
        int64_t attempts = r.attempts + 1;
        if (attempts >= policy_.max_attempts) {
          if (auto st = runs::CountStep(c, r.automation_id, s.step_index, "failed"); !st)
            return Fail(st.error());
          if (auto st =
                  Next(c, r, s.step_index, now,
                       "gave up after " + std::to_string(attempts) + " attempts: " + o.detail, now);
              !st)
            return Fail(st.error());
          return true;
        }
        return runs::Advance(c, r, s.step_index, now + Backoff(attempts), attempts, o.detail,
                             "active", now);
      }
      case K::kNotAttempted:
        return runs::Advance(c, r, s.step_index, std::max(o.retry_at, now), r.attempts,
                             std::nullopt, "active", now);
    }
    return false;
  });
  if (!done) return Fail(done.error());
  return Ok();
}

Result<std::vector<seqs::DueEmail>> AutomationRuns::LeaseSequenceEmails(int limit) {
  const int64_t now = clock_.NowUnix();
  return db_.Write([&](store::Conn& c) -> Result<std::vector<seqs::DueEmail>> {
    auto due = seqs::Due(c, now, limit);
    if (!due) return Fail(due.error());
    std::vector<seqs::DueEmail> out;
    for (auto& e : *due) {
      const int64_t n = static_cast<int64_t>(e.emails.size());
      std::optional<std::string> end;
      const char* counter = nullptr;
      if (e.next_email >= n) {
        counter = "completed";
      } else {
        // Unsubscribed, bounced, complained or suppressed: the sequence ends.
        auto skip = WhyNotMailed(c, contacts_, e.contact_status, e.email);
        if (!skip) return Fail(skip.error());
        if (!skip->empty()) {
          counter = "exited";
          end = std::move(*skip);
        }
      }
      if (counter) {
        auto moved = seqs::Advance(c, e, e.next_email, e.due_at, e.attempts, end, counter, now);
        if (!moved) return Fail(moved.error());
        if (*moved)
          if (auto s = seqs::Count(c, e.sequence_id, counter); !s) return Fail(s.error());
        continue;
      }
      auto moved = seqs::Advance(c, e, e.next_email, now + policy_.lease_s, e.attempts,
                                 std::nullopt, "active", now);
      if (!moved) return Fail(moved.error());
      if (!*moved) continue;
      e.due_at = now + policy_.lease_s;
      out.push_back(std::move(e));
    }
    return out;
  });
}

Status AutomationRuns::RecordSequence(const seqs::DueEmail& e, const StepOutcome& o) {
  const int64_t now = clock_.NowUnix();
  auto done = db_.Write([&](store::Conn& c) -> Result<bool> {
    using K = StepOutcome::Kind;
    auto next = [&](const char* counter, const std::optional<std::string>& error) -> Result<bool> {
      const int64_t following = e.next_email + 1;
      const bool last = following >= static_cast<int64_t>(e.emails.size());
      int64_t due = now;
      if (!last) due = now + e.emails[following].value("delay_seconds", int64_t{0});
      auto moved =
          seqs::Advance(c, e, following, due, 0, error, last ? "completed" : "active", now);
      if (!moved || !*moved) return moved;
      if (auto s = seqs::Count(c, e.sequence_id, counter); !s) return Fail(s.error());
      if (last)
        if (auto s = seqs::Count(c, e.sequence_id, "completed"); !s) return Fail(s.error());
      return true;
    };
    switch (o.kind) {
      case K::kDone:
      case K::kFailed: {
        const bool sent = o.kind == K::kDone;
        auto moved = sent ? next("sent", std::nullopt) : next("failed", o.detail);
        if (!moved || !*moved) return moved;
        if (auto st = KeepMessageIn(c, e.contact_id, "sequence", e.sequence_id, e.next_email,
                                    e.emails[e.next_email], o, now);
            !st)
          return Fail(st.error());
        if (!o.recipient_rejected) return true;
        if (auto st = HardBounceIn(c, contacts_, e.contact_id, o.detail); !st)
          return Fail(st.error());
        return true;
      }
      case K::kTemporary: {
        int64_t attempts = e.attempts + 1;
        if (attempts >= policy_.max_attempts) return next("failed", o.detail);
        return seqs::Advance(c, e, e.next_email, now + Backoff(attempts), attempts, o.detail,
                             "active", now);
      }
      case K::kNotAttempted:
        return seqs::Advance(c, e, e.next_email, std::max(o.retry_at, now), e.attempts,
                             std::nullopt, "active", now);
    }
    return false;
  });
  if (!done) return Fail(done.error());
  return Ok();
}

Result<std::vector<crm::optin_emails_repo::DueOptin>> AutomationRuns::LeaseOptins(int limit) {
  const int64_t now = clock_.NowUnix();
  return db_.Write([&](store::Conn& c) -> Result<std::vector<crm::optin_emails_repo::DueOptin>> {
    auto due = crm::optin_emails_repo::Due(c, now, limit);
    if (!due) return Fail(due.error());
    std::vector<crm::optin_emails_repo::DueOptin> out;
    for (auto& o : *due) {
      std::string skip;
      // A pending signup, or a subscribed contact rejoining lists it left.
      if (o.contact_status != "pending" && !(o.contact_status == "subscribed" && o.rejoin)) {
        skip = "contact is " + o.contact_status;
      } else {
        // The confirmation is what lifts an address's own entry, so it goes out; a
        // domain's entry no confirmation lifts.
        auto hit = contacts_.SuppressedIn(c, o.email);
        if (!hit) return Fail(hit.error());
        if (*hit && (*hit)->is_domain()) skip = crm::SuppressedSkip(**hit);
      }
      if (!skip.empty()) {
        auto f = crm::optin_emails_repo::Finish(c, o, "skipped", std::nullopt, skip, now);
        if (!f) return Fail(f.error());
        continue;
      }
      auto moved =
          crm::optin_emails_repo::Reschedule(c, o, now + policy_.lease_s, o.attempts, std::nullopt);
      if (!moved) return Fail(moved.error());
      if (!*moved) continue;
      o.due_at = now + policy_.lease_s;
      out.push_back(std::move(o));
    }
    return out;
  });
}

Status AutomationRuns::RecordOptin(const crm::optin_emails_repo::DueOptin& e, const StepOutcome& o,
                                   const std::string& message_id) {
  const int64_t now = clock_.NowUnix();
  auto done = db_.Write([&](store::Conn& c) -> Result<bool> {
    using K = StepOutcome::Kind;
    switch (o.kind) {
      case K::kDone:
        return crm::optin_emails_repo::Finish(c, e, "sent", message_id, std::nullopt, now);
      case K::kFailed:
        return crm::optin_emails_repo::Finish(c, e, "failed", message_id, o.detail, now);
      case K::kTemporary: {
        int64_t attempts = e.attempts + 1;
        if (attempts >= policy_.max_attempts)
          return crm::optin_emails_repo::Finish(c, e, "failed", message_id, o.detail, now);
        return crm::optin_emails_repo::Reschedule(c, e, now + Backoff(attempts), attempts,
                                                  o.detail);
      }
      case K::kNotAttempted:
        return crm::optin_emails_repo::Reschedule(c, e, std::max(o.retry_at, now), e.attempts,
                                                  std::nullopt);
    }
    return false;
  });
  if (!done) return Fail(done.error());
  return Ok();
}

}  // namespace crmd::marketing
