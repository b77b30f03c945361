#include "src/app/router.h"

#include <nlohmann/json.hpp>

namespace crmd::app {

void Router::Exact(std::string path, http::Handler handler) {
  routes_.push_back({std::move(path), false, std::move(handler)});
}

void Router::Prefix(std::string prefix, http::Handler handler) {
  routes_.push_back({std::move(prefix), true, std::move(handler)});
}

http::Response Router::Dispatch(const http::Request& req) const {
  for (const auto& r : routes_)
    if (!r.prefix && r.path == req.path) return r.handler(req);
  const Route* best = nullptr;
  for (const auto& r : routes_) {
    if (r.prefix && req.path.rfind(r.path, 0) == 0 && (!best || r.path.size() > best->path.size()))
      best = &r;
  }
  if (best) return best->handler(req);
  return http::Response::Json(404, {{"error", "not_found"}, {"error_description", "no such endpoint"}});
}

std::optional<http::Response> RequireMethod(const http::Request& req, std::string_view allowed) {
  size_t start = 0;
  while (start <= allowed.size()) {
    size_t comma = allowed.find(',', start);
    auto m = allowed.substr(start, comma == std::string_view::npos ? comma : comma - start);
    while (!m.empty() && m.front() == ' ') m.remove_prefix(1);
    if (m == req.method) return std::nullopt;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  auto r = http::Response::Json(405, {{"error", "method_not_allowed"}});
  r.Set("Allow", std::string(allowed));
  return r;
}

}  // namespace crmd::app
