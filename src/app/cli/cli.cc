#include "src/app/cli/cli.h"

#include <charconv>
#include <cstdio>
#include <iostream>

namespace crmd::app::cli {

int Usage(std::string_view text) {
  std::fprintf(stderr, "usage: crmctl %.*s\n", static_cast<int>(text.size()), text.data());
  return 2;
}

int PrintError(const Error& e, std::string_view who) {
  std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(who.size()), who.data(),
               e.message.empty() ? e.detail.c_str() : e.message.c_str());
  if (!e.message.empty() && !e.detail.empty()) std::fprintf(stderr, "  %s\n", e.detail.c_str());
  return 1;
}

void PrintJson(const nlohmann::json& j) { std::printf("%s\n", j.dump(2).c_str()); }

std::optional<int64_t> ParseId(std::string_view s) {
  int64_t v = 0;
  if (s.empty() || s.size() > 18) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v <= 0) return std::nullopt;
  return v;
}

std::optional<std::string> Flag(const Args& args, std::string_view name) {
  const std::string flag = "--" + std::string(name);
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == flag && i + 1 < args.size()) return args[i + 1];
    if (args[i].rfind(flag + "=", 0) == 0) return args[i].substr(flag.size() + 1);
  }
  return std::nullopt;
}

std::optional<int64_t> IntFlag(const Args& args, std::string_view name, int64_t fallback) {
  auto v = Flag(args, name);
  if (!v) return fallback;
  int64_t n = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc() || p == v->data()) return std::nullopt;
  return n;
}

std::string ReadStdinLine() {
  std::string line;
  std::getline(std::cin, line);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

}  // namespace crmd::app::cli
