#pragma once
// Logging setup: spdlog with JSON lines (default) or plain text. Never log secrets:
// tokens, codes, passwords, client secrets and API keys must not reach any log call.
#include <string>

namespace crmd {

void SetupLogging(const std::string& level, const std::string& format);

// Escapes a string for embedding inside a JSON string in a log line.
std::string JsonEscape(const std::string& s);

}  // namespace crmd
