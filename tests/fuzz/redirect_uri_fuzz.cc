// The redirect-URI rules of client registration and authorization (auth/redirect_uri.h):
// an accepted URI matches itself, and matching never accepts a URI the rules refuse as a
// registration (the input is split at the first newline into registered / presented).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "auth/redirect_uri.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto nl = in.find('\n');
  std::string_view registered = in.substr(0, nl);
  std::string_view presented = nl == std::string_view::npos ? in : in.substr(nl + 1);
  auto kind = crmd::auth::ValidateRedirectUri(registered);
  if (kind && !crmd::auth::RedirectUriMatches(registered, registered)) std::abort();
  if (kind && crmd::auth::RedirectUriMatches(registered, presented) &&
      !crmd::auth::ValidateRedirectUri(presented))
    std::abort();
  return 0;
}
