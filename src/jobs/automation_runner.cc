#include "src/jobs/automation_runner.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "src/core/log.h"
#include "src/mail/message.h"
#include "src/mail/unsubscribe.h"
#include "src/webhooks/signing.h"

namespace crmd::jobs {
namespace {

using marketing::StepOutcome;
using K = StepOutcome::Kind;

std::string RunSendId(const marketing::automation_runs_repo::Run& r, int64_t step) {
  return "a" + std::to_string(r.automation_id) + "r" + std::to_string(r.id) + "s" +
         std::to_string(step);
}

const char* OutcomeName(K kind) {
  switch (kind) {
    case K::kDone:
      return "done";
    case K::kFailed:
      return "failed";
    case K::kTemporary:
      return "retry";
    case K::kNotAttempted:
      return "not_attempted";
  }
  return "unknown";
}

void Warn(const char* event, const Error& e) {
  spdlog::warn(R"("event":"{}","detail":"{}")", event, JsonEscape(e.message + " " + e.detail));
}

}  // namespace

void AutomationRunner::Start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void AutomationRunner::Stop() {
  std::thread t;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    t.swap(thread_);
  }
  cv_.notify_all();
  if (t.joinable() && t.get_id() != std::this_thread::get_id()) t.join();
}

bool AutomationRunner::Stopping() {
  std::lock_guard lock(mu_);
  return stop_;
}

void AutomationRunner::Loop() {
  auto transport = runtime_.NewTransport();
  while (true) {
    int handled = RunOnce(*transport);
    std::unique_lock lock(mu_);
    if (stop_) return;
    if (handled > 0) continue;  // more may be due right away
    cv_.wait_for(lock, std::chrono::milliseconds(options_.poll_interval_ms),
                 [this] { return stop_; });
    if (stop_) return;
  }
}

marketing::MailContext AutomationRunner::Context() const {
  marketing::MailContext ctx = runtime_.context();
  if (auto doc = settings_.Get(); doc) marketing::ApplySettings(ctx, doc->document);
  return ctx;
}

Result<std::optional<marketing::EmailTemplate>> AutomationRunner::LayoutOf(
    const nlohmann::json& item) const {
  auto id = marketing::TemplateIdOf(item, "template_id");
  if (!id) return Fail(id.error());
  if (!*id) return std::optional<marketing::EmailTemplate>{};
  if (!options_.templates) return Fail(Errc::kUnavailable, "templates are not available here");
  auto t = options_.templates->Get(**id);
  if (!t) return Fail(t.error());
  return std::optional<marketing::EmailTemplate>(std::move(*t));
}

int AutomationRunner::RunOnce(mail::Transport& transport) {
  int handled = 0;
  for (int more = 1; more > 0 && !Stopping();) {
    auto claimed = runs_.ClaimEvents(100);
    if (!claimed) {
      Warn("automation_claim_failed", claimed.error());
      break;
    }
    more = *claimed;
    handled += *claimed;
  }
  marketing::MailContext ctx = Context();
  handled += RunSteps(transport, ctx);
  if (runtime_.PausedUntil() == 0) {
    handled += RunSequences(transport, ctx);
    handled += RunOptins(transport, ctx);
  }
  return handled;
}

StepOutcome AutomationRunner::Deliver(mail::Transport& transport,
                                      const Result<mail::Message>& message, int64_t lease_until,
                                      const mail::VerpRef& ref) {
  if (!message)
    return {.kind = K::kFailed, .detail = "message could not be built: " + message.error().message};
  auto bytes = runtime_.Render(*message);
  if (!bytes)
    return {.kind = K::kFailed,
            .detail = "message could not be rendered: " + bytes.error().message};
  if (int64_t until = runtime_.PausedUntil(); until != 0)
    return {.kind = K::kNotAttempted, .retry_at = until};
  if (!runtime_.Throttle(stop_, mu_, cv_)) return {.kind = K::kNotAttempted};
  if (!runtime_.MayStart(lease_until, runs_.policy().lease_s)) {
    runtime_.ReturnTurn();
    return {.kind = K::kNotAttempted};
  }
  mail::Envelope envelope{.mail_from = runtime_.EnvelopeSender(ref, message->from.address),
                          .recipients = {message->to.address}};
  mail::SendResult sent = transport.Send(envelope, *bytes);
  if (options_.metrics) {
    const char* outcome = sent.ok() ? "sent"
                          : (!sent.permanent() && (sent.stage == mail::SendStage::kConnection ||
                                                   sent.stage == mail::SendStage::kSender))
                              ? "relay_unavailable"
                          : sent.permanent() ? "failed"
                                             : "deferred";
    options_.metrics
        ->Counter("crmd_mail_messages_total",
                  "Messages handed to the relay, by source and outcome.",
                  {{"source", "automation"}, {"outcome", outcome}})
        .Inc();
  }
  if (sent.ok()) {
    runtime_.RelayUp();
    return {.kind = K::kDone, .message_id = message->message_id};
  }
  if (!sent.permanent() &&
      (sent.stage == mail::SendStage::kConnection || sent.stage == mail::SendStage::kSender)) {
    spdlog::warn(R"("event":"mail_relay_unavailable","code":{},"detail":"{}")", sent.smtp_code,
                 JsonEscape(sent.detail));
    return {.kind = K::kNotAttempted, .detail = sent.detail, .retry_at = runtime_.RelayDown()};
  }
  runtime_.RelayUp();
  return {.kind = sent.permanent() ? K::kFailed : K::kTemporary,
          .detail = std::to_string(sent.smtp_code) + " " + sent.detail,
          .recipient_rejected = sent.permanent() && sent.stage == mail::SendStage::kRecipient,
          .message_id = message->message_id};
}

StepOutcome AutomationRunner::SendEmail(mail::Transport& transport, const marketing::LeasedStep& s,
                                        const marketing::MailContext& ctx) {
  const auto& step = s.step;
  auto layout = LayoutOf(step);
  if (!layout)
    return {.kind = K::kFailed, .detail = "message could not be built: " + layout.error().message};
  marketing::SimpleEmail e{
      .subject = step.value("subject", ""),
      .html_body = step.value("html_body", ""),
      .text_body = step.value("text_body", ""),
      .from = {step.value("from_name", ""), step.value("from_email", "")},
      .send_id = RunSendId(s.run, s.step_index),
      .extra_headers = {{"X-Crmd-Automation", std::to_string(s.run.automation_id)}},
      .layout = *layout ? &**layout : nullptr};
  return Deliver(transport, marketing::BuildSimpleMessage(e, marketing::RecipientOf(s.run), ctx),
                 s.run.due_at,
                 {.kind = 'a', .owner_id = s.run.automation_id, .contact_id = s.run.contact_id});
}

StepOutcome AutomationRunner::CallWebhook(const marketing::LeasedStep& s) {
  const std::string url = s.step.value("url", "");
  const std::string msg_id = "aut_" + RunSendId(s.run, s.step_index);
  const int64_t ts = clock_.NowUnix();
  nlohmann::json body = {{"id", msg_id},
                         {"type", "automation.step"},
                         {"timestamp", ts},
                         {"data",
                          {{"automation_id", s.run.automation_id},
                           {"run_id", s.run.id},
                           {"step_index", s.step_index},
                           {"contact",
                            {{"id", s.run.contact_id},
                             {"email", s.run.email},
                             {"first_name", s.run.first_name},
                             {"last_name", s.run.last_name},
                             {"status", s.run.contact_status}}}}}};
  std::string payload = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  auto secret = secret_for_(url);
  if (!secret) {
    // Not an outgoing webhook endpoint's URL: nothing is posted, now or later.
    if (secret.error().code == Errc::kPermissionDenied)
      return {.kind = K::kFailed, .detail = secret.error().message};
    return {.kind = K::kTemporary, .detail = "no signing secret: " + secret.error().message};
  }
  auto signature = webhooks::Sign(*secret, msg_id, ts, payload);
  if (!signature) return {.kind = K::kFailed, .detail = "invalid signing secret"};
  http::ClientRequest req{.method = "POST",
                          .url = url,
                          .headers = {{"Content-Type", "application/json"},
                                      {"User-Agent", "crmd-automations/1"},
                                      {"webhook-id", msg_id},
                                      {"webhook-timestamp", std::to_string(ts)},
                                      {"webhook-signature", *signature}},
                          .body = payload,
                          .timeout_ms = options_.webhook_timeout_ms,
                          .max_response_bytes = 64 * 1024,
                          .allow_private = options_.allow_private};
  // The step's span (RunSteps' log scope) goes to the receiver, as outgoing webhooks do.
  if (const LogContext* log = CurrentLogContext(); log && !log->trace.empty()) {
    req.headers.emplace_back("traceparent", log->trace.Traceparent());
    if (!log->trace.tracestate.empty())
      req.headers.emplace_back("tracestate", log->trace.tracestate);
  }
  auto res = http_.Send(req);
  if (!res) {
    // A target the address guard refuses, or a malformed URL, will not get better.
    bool permanent =
        res.error().code == Errc::kPermissionDenied || res.error().code == Errc::kInvalidArgument;
    return {.kind = permanent ? K::kFailed : K::kTemporary, .detail = res.error().message};
  }
  if (res->status >= 200 && res->status < 300) return {.kind = K::kDone};
  bool retry = res->status == 408 || res->status == 429 || res->status >= 500;
  return {.kind = retry ? K::kTemporary : K::kFailed,
          .detail = "HTTP " + std::to_string(res->status)};
}

int AutomationRunner::RunSteps(mail::Transport& transport, const marketing::MailContext& ctx) {
  int handled = 0;
  auto leased = runs_.RunDue(options_.batch, &handled);
  if (!leased) {
    Warn("automation_run_failed", leased.error());
    return handled;
  }
  for (const auto& s : *leased) {
    // A child span of the run's trace (the request whose change enrolled the contact).
    LogScope scope(LogContext{.trace = crm::ContinueTrace(s.run.traceparent, s.run.tracestate)});
    StepOutcome o;
    if (Stopping()) {
      o = {.kind = K::kNotAttempted};
    } else if (s.step.value("type", "") == "send_email") {
      o = SendEmail(transport, s, ctx);
    } else {
      o = CallWebhook(s);
    }
    if (o.kind == K::kFailed || o.kind == K::kTemporary)
      spdlog::warn(
          R"("event":"automation_step_failed","automation_id":{},"run_id":{},"step":{},"detail":"{}")",
          s.run.automation_id, s.run.id, s.step_index, JsonEscape(o.detail));
    spdlog::info(
        R"("event":"automation_step","automation_id":{},"run_id":{},"contact_id":{},"step":{},"type":"{}","outcome":"{}")",
        s.run.automation_id, s.run.id, s.run.contact_id, s.step_index,
        JsonEscape(s.step.value("type", "")), OutcomeName(o.kind));
    if (auto st = runs_.RecordStep(s, o); !st) Warn("automation_record_failed", st.error());
    ++handled;
  }
  return handled;
}

int AutomationRunner::RunSequences(mail::Transport& transport, const marketing::MailContext& ctx) {
  auto due = runs_.LeaseSequenceEmails(runtime_.LeaseBatch(options_.batch, runs_.policy().lease_s));
  if (!due) {
    Warn("sequence_lease_failed", due.error());
    return 0;
  }
  int handled = 0;
  for (const auto& e : *due) {
    // A child span of the enrolment's trace.
    LogScope scope(LogContext{.trace = crm::ContinueTrace(e.traceparent, e.tracestate)});
    StepOutcome o{.kind = K::kNotAttempted};
    if (!Stopping()) {
      const auto& email = e.emails[e.next_email];
      auto layout = LayoutOf(email);
      marketing::SimpleEmail m{
          .subject = email.value("subject", ""),
          .html_body = email.value("html_body", ""),
          .text_body = email.value("text_body", ""),
          .send_id = "q" + std::to_string(e.sequence_id) + "r" + std::to_string(e.run_id) + "e" +
                     std::to_string(e.next_email),
          .extra_headers = {{"X-Crmd-Sequence", std::to_string(e.sequence_id)}},
          .layout = layout && *layout ? &**layout : nullptr};
      marketing::MailRecipient to{.contact_id = e.contact_id,
                                  .email = e.email,
                                  .first_name = e.first_name,
                                  .last_name = e.last_name,
                                  .phone = e.phone,
                                  .custom_fields_json = e.custom_fields_json};
      o = Deliver(transport,
                  layout ? marketing::BuildSimpleMessage(m, to, ctx)
                         : Result<mail::Message>(Fail(layout.error())),
                  e.due_at, {.kind = 's', .owner_id = e.sequence_id, .contact_id = e.contact_id});
    }
    spdlog::info(
        R"("event":"sequence_email","sequence_id":{},"run_id":{},"contact_id":{},"email":{},"outcome":"{}")",
        e.sequence_id, e.run_id, e.contact_id, e.next_email, OutcomeName(o.kind));
    if (auto st = runs_.RecordSequence(e, o); !st) Warn("sequence_record_failed", st.error());
    ++handled;
  }
  return handled;
}

int AutomationRunner::RunOptins(mail::Transport& transport, const marketing::MailContext& ctx) {
  auto due = runs_.LeaseOptins(runtime_.LeaseBatch(options_.batch, runs_.policy().lease_s));
  if (!due) {
    Warn("optin_lease_failed", due.error());
    return 0;
  }
  std::string business;
  if (auto doc = settings_.Get();
      doc && doc->document.contains("business") && doc->document["business"].is_object())
    business = doc->document["business"].value("name", "");
  if (business.empty()) business = "us";
  int handled = 0;
  for (const auto& e : *due) {
    StepOutcome o{.kind = K::kNotAttempted};
    std::string message_id;
    if (!Stopping()) {
      std::string link =
          ctx.public_base_url + "/confirm/" +
          ctx.links->Issue(e.contact_id, mail::kConfirmPurpose, options_.confirm_link_ttl_s);
      std::string who = mail::HtmlEscape(business);
      marketing::SimpleEmail m{
          .subject = "Please confirm your subscription",
          .html_body = "<p>Hello,</p><p>Please confirm that you want to receive emails from " +
                       who + ":</p><p><a href=\"" + mail::HtmlEscape(link) +
                       "\">Confirm my subscription</a></p><p>If you did not sign up, ignore this "
                       "message and you will not hear from us again.</p>",
          .text_body = "Hello,\n\nPlease confirm that you want to receive emails from " + business +
                       ":\n\n" + link +
                       "\n\nIf you did not sign up, ignore this message and you will not hear "
                       "from us again.\n",
          .send_id = "optin" + std::to_string(e.contact_id),
          .unsubscribe = false,
          .merge = false};  // fixed text: braces in a business name stay literal
      marketing::MailRecipient to{.contact_id = e.contact_id,
                                  .email = e.email,
                                  .first_name = e.first_name,
                                  .last_name = e.last_name};
      auto built = marketing::BuildSimpleMessage(m, to, ctx);
      if (built) message_id = built->message_id;
      o = Deliver(transport, built, e.due_at, {.kind = 'o', .contact_id = e.contact_id});
    }
    if (auto st = runs_.RecordOptin(e, o, message_id); !st) Warn("optin_record_failed", st.error());
    ++handled;
  }
  return handled;
}

}  // namespace crmd::jobs
