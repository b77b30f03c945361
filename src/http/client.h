#pragma once
// Blocking outbound HTTP(S) client (Beast). Thread-safe; one connection per request.
#include <memory>

#include "src/core/http_client.h"

namespace crmd::http {

std::unique_ptr<HttpClient> MakeHttpClient();

}  // namespace crmd::http
