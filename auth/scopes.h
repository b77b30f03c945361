#pragma once
// The scope catalogue (../shared/design/TOOLS.md) and scope-string helpers (RFC 6749 §3.3:
// space-delimited, case-sensitive). Pure functions; thread-safe.
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/result.h"

namespace crmd::auth {

// Every scope crmd knows, in catalogue order.
const std::vector<std::string>& AllScopes();
bool IsKnownScope(std::string_view scope);

// Parses "a b c" (runs of spaces tolerated, duplicates ignored). Refuses characters
// outside %x21 / %x23-5B / %x5D-7E and unknown scopes (kInvalidArgument naming the scope).
Result<std::set<std::string>> ParseScope(std::string_view scope);
// Sorted, space-joined.
std::string JoinScope(const std::set<std::string>& scopes);
// True when every scope in `requested` is in `granted`.
bool IsSubset(const std::set<std::string>& requested, const std::set<std::string>& granted);

}  // namespace crmd::auth
