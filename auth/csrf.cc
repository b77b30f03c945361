#include "auth/csrf.h"

#include <algorithm>

#include "src/core/crypto.h"

namespace crmd::auth {

bool CsrfTokenMatches(const std::optional<std::string>& presented, std::string_view expected) {
  if (!presented || presented->empty() || expected.empty()) return false;
  return crypto::ConstantTimeEqual(*presented, expected);
}

std::string OriginOf(std::string_view url) {
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return {};
  size_t path = url.find_first_of("/?#", scheme_end + 3);
  return std::string(url.substr(0, path));
}

bool OriginAllowed(const http::Request& req, std::string_view issuer,
                   const std::vector<std::string>& allowed_origins) {
  auto origin = req.Header("Origin");
  if (!origin) return true;  // non-browser clients and same-origin GET navigations
  if (*origin == OriginOf(issuer)) return true;
  return std::find(allowed_origins.begin(), allowed_origins.end(), *origin) !=
         allowed_origins.end();
}

}  // namespace crmd::auth
