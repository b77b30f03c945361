#pragma once
// Logging setup: spdlog with JSON lines (default) or plain text. Never log secrets:
// tokens, codes, passwords, client secrets and API keys must not reach any log call.
//
// Every line written while a LogScope is active on the thread carries that scope's
// request id and trace id (`"request_id":"…","trace_id":"…","span_id":"…"` in JSON), so
// the lines of one request, and of the background work it caused, can be found together.
// A call that writes "request_id" itself is not given a second one.
#include <string>

#include "src/core/trace.h"

namespace spdlog {
class logger;
}

namespace crmd {

void SetupLogging(const std::string& level, const std::string& format);
// Gives `logger` crmd's line format ("json" or "text"), the scope's ids included: what
// SetupLogging uses, and what tests that capture the log use.
void UseLogFormat(spdlog::logger& logger, const std::string& format);

// Escapes a string for embedding inside a JSON string in a log line.
std::string JsonEscape(const std::string& s);

// What the lines written on this thread belong to.
struct LogContext {
  std::string request_id;  // empty for background work
  trace::Context trace;
};

// Makes `context` this thread's log context until destroyed (then the previous one again).
// Not copyable; lives on the stack of the code that handles the request or job.
class LogScope {
 public:
  explicit LogScope(LogContext context);
  ~LogScope();
  LogScope(const LogScope&) = delete;
  LogScope& operator=(const LogScope&) = delete;

  LogContext& context() { return context_; }

 private:
  LogContext context_;
  LogContext* previous_;
};

// This thread's innermost log context, or null outside any LogScope. The MCP endpoint
// replaces the trace when a message's _meta carries its own traceparent; the outbox
// stores the trace with each event (src/crm/outbox.h).
LogContext* CurrentLogContext();
// Makes `context` this thread's innermost log context and answers the one it replaces:
// for the worker pool, which keeps a suspended fiber's context aside (src/core/worker_pool.h).
LogContext* ExchangeCurrentLogContext(LogContext* context);

}  // namespace crmd
