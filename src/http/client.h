#pragma once
// Blocking outbound HTTP(S) client (Beast). Thread-safe; one connection per request.
#include <memory>
#include <string>

#include "src/core/http_client.h"

namespace crmd::http {

std::unique_ptr<HttpClient> MakeHttpClient();

// True for loopback, RFC 1918, link-local, CGNAT, unique-local, unspecified, multicast and
// other addresses that are not globally routable (IPv4 and IPv6 text forms).
bool IsPrivateAddress(const std::string& ip);

}  // namespace crmd::http
