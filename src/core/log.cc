#include "src/core/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <utility>

namespace crmd {
namespace {

thread_local LogContext* current_context = nullptr;

void Append(spdlog::memory_buf_t& dest, std::string_view s) {
  dest.append(s.data(), s.data() + s.size());
}

// %* in the pattern: the thread's request and trace ids, as JSON members followed by a
// comma (json) or as key=value words followed by a space (text); nothing outside a scope.
class ContextFlag final : public spdlog::custom_flag_formatter {
 public:
  explicit ContextFlag(bool json) : json_(json) {}
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const LogContext* c = current_context;
    if (!c) return;
    std::string_view payload(msg.payload.data(), msg.payload.size());
    bool has_request_id =
        payload.find(json_ ? "\"request_id\":" : "request_id") != std::string_view::npos;
    auto member = [&](std::string_view key, const std::string& value) {
      if (value.empty()) return;
      if (json_) {
        Append(dest, "\"");
        Append(dest, key);
        Append(dest, "\":\"");
        Append(dest, JsonEscape(value));
        Append(dest, "\",");
      } else {
        Append(dest, key);
        Append(dest, "=");
        Append(dest, value);
        Append(dest, " ");
      }
    };
    if (!has_request_id) member("request_id", c->request_id);
    member("trace_id", c->trace.trace_id);
    member("span_id", c->trace.span_id);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<ContextFlag>(json_);
  }

 private:
  const bool json_;
};

}  // namespace

void UseLogFormat(spdlog::logger& logger, const std::string& format) {
  bool json = format == "json";
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  // Messages are written by callers as JSON object members: `"event":"x","k":"v"`.
  formatter->add_flag<ContextFlag>('*', json).set_pattern(
      json ? R"({"ts":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l",%*%v})"
           : "%Y-%m-%dT%H:%M:%S.%e %l %*%v");
  logger.set_formatter(std::move(formatter));
}

void SetupLogging(const std::string& level, const std::string& format) {
  auto logger = spdlog::stderr_logger_mt("crmd");
  UseLogFormat(*logger, format);
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

LogScope::LogScope(LogContext context) : context_(std::move(context)), previous_(current_context) {
  current_context = &context_;
}

LogScope::~LogScope() { current_context = previous_; }

LogContext* CurrentLogContext() { return current_context; }

LogContext* ExchangeCurrentLogContext(LogContext* context) {
  return std::exchange(current_context, context);
}

std::string JsonEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

}  // namespace crmd
