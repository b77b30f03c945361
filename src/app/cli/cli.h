#pragma once
// The one helper every crmctl command shares: argument parsing and printing. A command
// takes the words after its name, prints results on stdout and errors on stderr, and
// returns the exit code: 0 ok, 1 failure, 2 usage.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/result.h"

namespace crmd::app::cli {

using Args = std::vector<std::string>;

// "usage: crmctl <text>" on stderr; returns 2.
int Usage(std::string_view text);
// "<who>: <message>" on stderr, and the detail on an indented line when there is one;
// returns 1.
int PrintError(const Error& e, std::string_view who = "crmctl");
// Pretty-printed JSON and a newline on stdout.
void PrintJson(const nlohmann::json& j);

// A positive decimal id; nullopt for anything else.
std::optional<int64_t> ParseId(std::string_view s);
// The value of "--name V" or "--name=V"; nullopt when absent.
std::optional<std::string> Flag(const Args& args, std::string_view name);
// Flag() as a number: `fallback` when absent, nullopt when not a number.
std::optional<int64_t> IntFlag(const Args& args, std::string_view name, int64_t fallback);
// One line from stdin without its trailing CR/LF (passwords and secrets, which then never
// appear in the process list).
std::string ReadStdinLine();

}  // namespace crmd::app::cli
