// W3C Trace Context end to end: a traceparent sent with a tool call (HTTP header, or the
// MCP _meta of the message) is in crmd's log lines for that request, in the log line of
// the webhook delivery the call caused, and in the traceparent header the receiver got:
// the same trace id, with crmd's own span as the parent.
#include "src/core/trace.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "src/app/app.h"
#include "src/app/services.h"
#include "src/core/log.h"
#include "tests/integration/webhooks/receiver.h"
#include "tests/support/mcp_client.h"
#include "tests/support/test_server.h"
#include "tests/support/tokens.h"

namespace crmd::opstest {
namespace {

using nlohmann::json;
using testing::McpClient;
using testing::McpClientOptions;
using testing::TestServer;

constexpr char kTraceId[] = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr char kCallerSpan[] = "00f067aa0ba902b7";

// Keeps every formatted line, for reading while crmd's threads keep logging.
class LineSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::vector<std::string> Lines() {
    std::lock_guard lock(lines_mu_);
    return lines_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t buf;
    formatter_->format(msg, buf);
    std::string line(buf.data(), buf.size());
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    std::lock_guard lock(lines_mu_);
    lines_.push_back(std::move(line));
  }
  void flush_() override {}

 private:
  std::mutex lines_mu_;
  std::vector<std::string> lines_;
};

// crmd's log, in its production JSON format, captured for the life of the object.
class CapturedLog {
 public:
  CapturedLog() : sink_(std::make_shared<LineSink>()), previous_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("capture", sink_);
    UseLogFormat(*logger, "json");
    logger->set_level(spdlog::level::info);  // the access log is written at info
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }

  // Every captured line, each of which must be a JSON object.
  std::vector<json> Lines() {
    std::vector<json> lines;
    for (const auto& line : sink_->Lines()) {
      auto j = json::parse(line, nullptr, false);
      EXPECT_TRUE(j.is_object()) << "not a JSON log line: " << line;
      if (j.is_object()) lines.push_back(std::move(j));
    }
    return lines;
  }
  // Waits (bounded) for a line with this event, returns the lines with it.
  std::vector<json> WaitForEvent(const std::string& event, int seconds = 30) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (true) {
      std::vector<json> found;
      for (auto& l : Lines())
        if (l.value("event", "") == event) found.push_back(l);
      if (!found.empty() || std::chrono::steady_clock::now() > until) return found;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

 private:
  std::shared_ptr<LineSink> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

void FastWebhooks(Config& c) {
  c.webhook_poll_interval_ms = 100;
  c.webhook_timeout_ms = 3000;
}

struct Seen {
  std::vector<json> request_lines;   // "request" lines for /mcp with the trace id
  std::vector<json> tool_lines;      // "tool_call" lines with the trace id
  std::vector<json> webhook_lines;   // "webhook_attempt" lines with the trace id
  std::string receiver_traceparent;  // what the receiver got
};

// Creates a contact through `call` with a webhook endpoint on contact.created, and
// collects what carries kTraceId.
template <typename Call>
Seen RunTracedCreate(Call call) {
  CapturedLog log;
  Seen seen;
  {
    webhooktest::Receiver receiver;
    TestServer server(
        {.configure = FastWebhooks, .approval_policy = testing::AssistantMayConfirmAlone()});
    auto ep = server.app().services().webhook_endpoints->Create(
        {.url = receiver.url(), .events = std::vector<std::string>{"contact.created"}});
    EXPECT_TRUE(ep.has_value());
    call(server);
    EXPECT_TRUE(receiver.WaitFor([](const auto& reqs) { return reqs.size() == 1; }));
    auto reqs = receiver.requests();
    if (!reqs.empty())
      seen.receiver_traceparent = std::string(reqs[0].Header("traceparent").value_or(""));
    log.WaitForEvent("webhook_attempt");
  }
  for (auto& l : log.Lines()) {
    if (l.value("trace_id", "") != kTraceId) continue;
    std::string event = l.value("event", "");
    if (event == "request" && l.value("path", "") == "/mcp") seen.request_lines.push_back(l);
    if (event == "tool_call") seen.tool_lines.push_back(l);
    if (event == "webhook_attempt") seen.webhook_lines.push_back(l);
  }
  return seen;
}

void ExpectOneTrace(const Seen& seen) {
  // The request: its tool_call line, and its access-log line with the same request id.
  ASSERT_EQ(seen.tool_lines.size(), 1u);
  const std::string request_id = seen.tool_lines[0].value("request_id", "");
  EXPECT_FALSE(request_id.empty());
  int access_lines = 0;
  for (const auto& l : seen.request_lines) access_lines += l.value("request_id", "") == request_id;
  EXPECT_EQ(access_lines, 1);
  const std::string crmd_span = seen.tool_lines[0].value("span_id", "");
  EXPECT_EQ(crmd_span.size(), 16u);
  EXPECT_NE(crmd_span, kCallerSpan) << "crmd's span is its own, the caller's is its parent";
  // The delivery: a child span of the request's, in its log line and its header.
  auto parent = trace::ParseTraceparent(seen.receiver_traceparent);
  ASSERT_TRUE(parent.has_value()) << "receiver got traceparent '" << seen.receiver_traceparent
                                  << "'";
  EXPECT_EQ(parent->trace_id, kTraceId);
  EXPECT_NE(parent->parent_id, kCallerSpan);
  EXPECT_NE(parent->parent_id, crmd_span);
  ASSERT_EQ(seen.webhook_lines.size(), 1u);
  EXPECT_EQ(seen.webhook_lines[0].value("span_id", ""), parent->parent_id)
      << "the delivery's log line names the span the receiver was told about";
  EXPECT_EQ(parent->flags, 1) << "the sampled flag is passed on";
}

TEST(TraceContext, TraceparentHeaderReachesLogsAndTheWebhookReceiver) {
  Seen seen = RunTracedCreate([](TestServer& server) {
    McpClient mcp(server, {.token = testing::MintTestToken(server),
                           .extra_headers = {{"traceparent", std::string("00-") + kTraceId + "-" +
                                                                 kCallerSpan + "-01"}}});
    ASSERT_TRUE(mcp.Initialize().ok());
    ASSERT_TRUE(mcp.CallToolOk("create_contact", {{"email", "trace@example.com"}}).is_object());
  });
  // initialize and notifications/initialized carried the header too: three /mcp requests.
  EXPECT_EQ(seen.request_lines.size(), 3u);
  ExpectOneTrace(seen);
}

TEST(TraceContext, TraceparentInMcpMetaReachesLogsAndTheWebhookReceiver) {
  Seen seen = RunTracedCreate([](TestServer& server) {
    McpClient mcp(server, {.token = testing::MintTestToken(server)});
    ASSERT_TRUE(mcp.Initialize().ok());
    // 2026-07-28 basic/index: _meta.traceparent (W3C Trace Context).
    auto reply = mcp.Request(
        "tools/call",
        {{"name", "create_contact"},
         {"arguments", {{"email", "meta@example.com"}}},
         {"_meta", {{"traceparent", std::string("00-") + kTraceId + "-" + kCallerSpan + "-01"}}}});
    ASSERT_TRUE(reply.ok()) << reply.raw;
    ASSERT_FALSE(reply.is_tool_error()) << reply.raw;
  });
  EXPECT_EQ(seen.request_lines.size(), 1u);
  ExpectOneTrace(seen);
}

TEST(TraceContext, InvalidTraceparentStartsANewTrace) {
  CapturedLog log;
  std::string trace_id;
  {
    TestServer server;
    // Upper-case hex is invalid (W3C Trace Context §3.2.2.3): ignored, a new trace begins.
    auto r = server.Get(
        "/healthz", {{"traceparent", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01"}});
    EXPECT_EQ(r.status, 200);
    auto lines = log.WaitForEvent("request");
    ASSERT_EQ(lines.size(), 1u);
    trace_id = lines[0].value("trace_id", "");
  }
  EXPECT_EQ(trace_id.size(), 32u);
  EXPECT_NE(trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(trace_id.find_first_not_of("0123456789abcdef"), std::string::npos);
}

// The span ids of `event` lines carrying kTraceId, after waiting (bounded) for `count` of them.
std::vector<json> TracedLines(CapturedLog& log, const std::string& event, size_t count) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (true) {
    std::vector<json> found;
    for (auto& l : log.Lines())
      if (l.value("event", "") == event && l.value("trace_id", "") == kTraceId) found.push_back(l);
    if (found.size() >= count || std::chrono::steady_clock::now() > until) return found;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// The span crmd handled the traced call of `tool` in (its tool_call line).
std::string ToolSpan(CapturedLog& log, const std::string& tool) {
  for (auto& l : log.Lines())
    if (l.value("event", "") == "tool_call" && l.value("tool", "") == tool &&
        l.value("trace_id", "") == kTraceId)
      return l.value("span_id", "");
  return "";
}

void FastMail(Config& c) {
  c.mail_poll_interval_ms = 100;
  c.mail_rate_per_second = 0;
}

McpClientOptions Traced(TestServer& server) {
  return {.token = testing::MintTestToken(server),
          .extra_headers = {
              {"traceparent", std::string("00-") + kTraceId + "-" + kCallerSpan + "-01"}}};
}

TEST(TraceContext, CampaignActivationTraceReachesTheLogLineOfEachMessage) {
  CapturedLog log;
  TestServer server({.configure = FastMail,
                     .approval_policy = testing::AssistantMayConfirmAlone(),
                     .company_address = "1 Test Street, Testville"});
  // Set up without a trace; only the activation carries one.
  McpClient setup(server, {.token = testing::MintTestToken(server)});
  ASSERT_TRUE(setup.Initialize().ok());
  int64_t list = setup.CallToolOk("create_list", {{"name", "News"}})["list"]["id"];
  for (const char* email : {"ada@example.com", "bob@example.com", "cy@example.com"})
    setup.CallToolOk("create_contact",
                     {{"email", email}, {"status", "subscribed"}, {"lists", {list}}});
  int64_t id =
      setup.CallToolOk("create_campaign", {{"name", "Launch"},
                                           {"subject", "Hello"},
                                           {"from_email", "team@example.com"},
                                           {"text_body", "Hi {{first_name}} {{unsubscribe_url}}"},
                                           {"audience", {{"lists", {list}}}}})["campaign"]["id"];
  McpClient traced(server, Traced(server));
  ASSERT_TRUE(traced.Initialize().ok());
  json preview = traced.CallToolOk("activate_campaign", {{"id", id}});
  ASSERT_EQ(preview.value("status", ""), "confirmation_required") << preview.dump();
  json done =
      traced.CallToolOk("confirm_action", {{"confirmation_token", preview["confirmation_token"]}});
  ASSERT_EQ(done.value("status", ""), "done") << done.dump();

  auto lines = TracedLines(log, "campaign_message", 3);
  ASSERT_EQ(lines.size(), 3u) << "each message's log line carries the activation's trace id";
  const std::string confirm_span = ToolSpan(log, "confirm_action");
  ASSERT_EQ(confirm_span.size(), 16u);
  std::set<std::string> spans;
  std::set<int64_t> contacts;
  for (const auto& l : lines) {
    EXPECT_EQ(l.value("campaign_id", int64_t{0}), id);
    EXPECT_EQ(l.value("outcome", ""), "sent") << l.dump();
    std::string span = l.value("span_id", "");
    EXPECT_EQ(span.size(), 16u);
    EXPECT_NE(span, confirm_span)
        << "each message is a span of its own, a child of the activation's";
    EXPECT_NE(span, kCallerSpan);
    spans.insert(span);
    contacts.insert(l.value("contact_id", int64_t{0}));
  }
  EXPECT_EQ(spans.size(), 3u);
  EXPECT_EQ(contacts.size(), 3u);
  // Nothing in the log of the untraced setup calls has the trace id.
  for (auto& l : log.Lines()) {
    if (l.value("event", "") == "tool_call" && l.value("trace_id", "") == kTraceId) {
      EXPECT_TRUE(l.value("tool", "") == "activate_campaign" ||
                  l.value("tool", "") == "confirm_action")
          << l.dump();
    }
  }
}

TEST(TraceContext,
     TheTriggeringRequestsTraceReachesAutomationStepsTheirWebhookAndTheEventsTheyCause) {
  CapturedLog log;
  webhooktest::Receiver step_receiver;   // the automation's call_webhook target
  webhooktest::Receiver event_receiver;  // an outgoing webhook on contact.tag_added
  TestServer server({.configure =
                         [](Config& c) {
                           FastMail(c);
                           FastWebhooks(c);
                         },
                     .approval_policy = testing::AssistantMayConfirmAlone(),
                     .company_address = "1 Test Street, Testville"});
  McpClient setup(server, {.token = testing::MintTestToken(server)});
  ASSERT_TRUE(setup.Initialize().ok());
  int64_t vip = setup.CallToolOk("create_tag", {{"name", "vip"}})["tag"]["id"];
  int64_t welcomed = setup.CallToolOk("create_tag", {{"name", "welcomed"}})["tag"]["id"];
  auto ep = server.app().services().webhook_endpoints->Create(
      {.url = event_receiver.url(), .events = std::vector<std::string>{"contact.tag_added"}});
  ASSERT_TRUE(ep.has_value());
  // A call_webhook step posts only to an outgoing endpoint's URL (an administrator's); this
  // one is disabled, so it receives no events of its own.
  auto step_ep = server.app().services().webhook_endpoints->Create(
      {.url = step_receiver.url(),
       .events = std::vector<std::string>{"contact.deleted"},
       .enabled = false});
  ASSERT_TRUE(step_ep.has_value());
  int64_t automation = setup.CallToolOk(
      "create_automation",
      {{"name", "Welcome"},
       {"trigger", {{"type", "tag_added"}, {"tag_id", vip}}},
       {"steps", json::array({{{"type", "send_email"},
                               {"subject", "Welcome"},
                               {"text_body", "Hi {{unsubscribe_url}}"}},
                              {{"type", "call_webhook"}, {"url", step_receiver.url()}},
                              {{"type", "add_tag"}, {"tag_id", welcomed}}})}})["automation"]["id"];
  json preview = setup.CallToolOk("activate_automation", {{"id", automation}});
  ASSERT_EQ(preview.value("status", ""), "confirmation_required") << preview.dump();
  setup.CallToolOk("confirm_action", {{"confirmation_token", preview["confirmation_token"]}});

  // The traced request: a new contact tagged vip enrols it.
  McpClient traced(server, Traced(server));
  ASSERT_TRUE(traced.Initialize().ok());
  traced.CallToolOk("create_contact",
                    {{"email", "ada@example.com"}, {"status", "subscribed"}, {"tags", {vip}}});
  const std::string request_span = ToolSpan(log, "create_contact");
  ASSERT_EQ(request_span.size(), 16u);

  // send_email and call_webhook: each logged as a child span of the request.
  auto steps = TracedLines(log, "automation_step", 2);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].value("type", ""), "send_email");
  EXPECT_EQ(steps[1].value("type", ""), "call_webhook");
  for (const auto& l : steps) {
    EXPECT_EQ(l.value("outcome", ""), "done") << l.dump();
    EXPECT_EQ(l.value("automation_id", int64_t{0}), automation);
    EXPECT_NE(l.value("span_id", ""), request_span);
  }
  EXPECT_NE(steps[0].value("span_id", ""), steps[1].value("span_id", ""));
  // The step's webhook carried the step's span to its receiver.
  ASSERT_TRUE(step_receiver.WaitFor([](const auto& reqs) { return reqs.size() == 1; }));
  auto step_parent = trace::ParseTraceparent(
      std::string(step_receiver.requests()[0].Header("traceparent").value_or("")));
  ASSERT_TRUE(step_parent.has_value());
  EXPECT_EQ(step_parent->trace_id, kTraceId);
  EXPECT_EQ(step_parent->parent_id, steps[1].value("span_id", ""));
  // add_tag (a database step) tagged the contact in the run's trace, so the contact.tag_added
  // webhook for "welcomed" continues it too, as the one for "vip" (the request's own) does.
  ASSERT_TRUE(event_receiver.WaitFor([](const auto& reqs) { return reqs.size() == 2; }));
  int traced_deliveries = 0;
  for (const auto& r : event_receiver.requests()) {
    auto parent = trace::ParseTraceparent(std::string(r.Header("traceparent").value_or("")));
    ASSERT_TRUE(parent.has_value());
    traced_deliveries += parent->trace_id == kTraceId;
  }
  EXPECT_EQ(traced_deliveries, 2);
}

TEST(TraceContext, TheEnrollingRequestsTraceReachesEachSequenceEmail) {
  CapturedLog log;
  TestServer server(
      {.configure = FastMail, .approval_policy = testing::AssistantMayConfirmAlone()});
  McpClient setup(server, {.token = testing::MintTestToken(server)});
  ASSERT_TRUE(setup.Initialize().ok());
  int64_t drip = setup.CallToolOk("create_list", {{"name", "Drip"}})["list"]["id"];
  int64_t id = setup.CallToolOk(
      "create_sequence",
      {{"name", "Onboarding"},
       {"list_id", drip},
       {"emails", json::array({{{"subject", "One"}, {"text_body", "1"}},
                               {{"subject", "Two"}, {"text_body", "2"}}})}})["sequence"]["id"];
  json on = setup.CallToolOk("set_sequence_status", {{"id", id}, {"status", "active"}});
  ASSERT_EQ(on["sequence"]["status"], "active") << on.dump();
  McpClient traced(server, Traced(server));
  ASSERT_TRUE(traced.Initialize().ok());
  traced.CallToolOk("create_contact",
                    {{"email", "ada@example.com"}, {"status", "subscribed"}, {"lists", {drip}}});
  const std::string request_span = ToolSpan(log, "create_contact");
  ASSERT_EQ(request_span.size(), 16u);
  // Both emails (no delay), each in a span of its own within the request's trace.
  auto lines = TracedLines(log, "sequence_email", 2);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].value("email", int64_t{-1}), 0);
  EXPECT_EQ(lines[1].value("email", int64_t{-1}), 1);
  for (const auto& l : lines) {
    EXPECT_EQ(l.value("sequence_id", int64_t{0}), id);
    EXPECT_EQ(l.value("outcome", ""), "done") << l.dump();
    EXPECT_NE(l.value("span_id", ""), request_span);
  }
  EXPECT_NE(lines[0].value("span_id", ""), lines[1].value("span_id", ""));
}

}  // namespace
}  // namespace crmd::opstest
