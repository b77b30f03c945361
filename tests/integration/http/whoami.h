#pragma once
// A test-only route, GET /test/whoami, that answers what crmd's handler was told about
// the client (remote and peer address, scheme, Host); shared by hosts_test and nginx_test.
#include <nlohmann/json.hpp>
#include <string>

#include "src/app/services.h"

namespace crmd::testing {

inline void AddWhoAmI(app::App::Services& s) {
  s.router.Exact("/test/whoami", [](const http::Request& req) {
    return http::Response::Json(200, {{"remote_ip", req.remote_ip},
                                      {"peer_ip", req.peer_ip},
                                      {"scheme", req.scheme},
                                      {"host", std::string(req.Header("Host").value_or(""))}});
  });
}

}  // namespace crmd::testing
