#include "src/app/router.h"

#include <nlohmann/json.hpp>

#include "src/core/clock.h"

namespace crmd::app {

void Router::SetMetrics(metrics::Registry* metrics, std::string rest_base) {
  metrics_ = metrics;
  rest_base_ = std::move(rest_base);
}

std::string_view Router::FaceOf(std::string_view route) const {
  auto starts = [&](std::string_view p) { return route.substr(0, p.size()) == p; };
  if (route == "/mcp") return "mcp";
  if (starts("/oauth/") || starts("/.well-known/")) return "oauth";
  if (!rest_base_.empty() && starts(rest_base_)) return "rest";
  // The web console and the links in messages (unsubscribe, tracking, opt-in).
  if (route == "/console" || starts("/console/") || starts("/u/") || starts("/t/") ||
      starts("/confirm/"))
    return "console";
  if (route == "/healthz" || route == "/readyz" || route == "/metrics") return "ops";
  return "other";
}

void Router::Exact(std::string path, http::Handler handler) {
  std::string face(FaceOf(path));
  routes_.push_back({std::move(path), false, std::move(handler), std::move(face)});
}

void Router::Prefix(std::string prefix, http::Handler handler) {
  std::string face(FaceOf(prefix));
  routes_.push_back({std::move(prefix), true, std::move(handler), std::move(face)});
}

http::Response Router::Timed(const Route* route, const http::Request& req) const {
  if (!metrics_) {
    if (route) return route->handler(req);
    return http::Response::Json(
        404, {{"error", "not_found"}, {"error_description", "no such endpoint"}});
  }
  const Stopwatch started;
  http::Response res =
      route ? route->handler(req)
            : http::Response::Json(
                  404, {{"error", "not_found"}, {"error_description", "no such endpoint"}});
  const int64_t us = started.ElapsedMicros();
  std::string_view face = route ? std::string_view(route->face) : "other";
  std::string_view path = route ? std::string_view(route->path) : "unmatched";
  static constexpr std::string_view kClass[] = {"1xx", "2xx", "3xx", "4xx", "5xx"};
  const size_t cls = res.status >= 100 && res.status < 600 ? res.status / 100 - 1 : 4;
  auto counter = [&]() -> metrics::Counter& {
    return metrics_->Counter("crmd_http_requests_total",
                             "HTTP requests by face, route and status class.",
                             {{"face", face}, {"route", path}, {"status", kClass[cls]}});
  };
  auto histogram = [&]() -> metrics::Histogram& {
    return metrics_->Histogram("crmd_http_request_duration_seconds",
                               "HTTP handler latency by face and route.",
                               {{"face", face}, {"route", path}});
  };
  if (!route) {
    counter().Inc();
    histogram().ObserveMicros(us);
    return res;
  }
  metrics::Kept(route->series->requests[cls], counter).Inc();
  metrics::Kept(route->series->duration, histogram).ObserveMicros(us);
  return res;
}

http::Response Router::Dispatch(const http::Request& req) const {
  for (const auto& r : routes_)
    if (!r.prefix && r.path == req.path) return Timed(&r, req);
  const Route* best = nullptr;
  for (const auto& r : routes_) {
    if (r.prefix && req.path.rfind(r.path, 0) == 0 && (!best || r.path.size() > best->path.size()))
      best = &r;
  }
  return Timed(best, req);
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
