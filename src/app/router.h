#pragma once
// The route table: exact paths and prefixes mapped to handlers. Built once in the
// composition root; lookups are read-only afterwards (thread-safe).
//
// With metrics set, every dispatch counts crmd_http_requests_total{face,route,status} and
// observes crmd_http_request_duration_seconds{face,route}: `route` is the registered path
// or prefix (never the request's own path), `face` the part of crmd it belongs to (mcp,
// oauth, rest, console, ops, other).
#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/http_types.h"
#include "src/core/metrics.h"

namespace crmd::app {

class Router {
 public:
  // REQUIRES: before any route is added. `rest_base` ("/api/crm/v1") names the REST face.
  void SetMetrics(metrics::Registry* metrics, std::string rest_base);

  // Exact path match, any method (the handler checks the method and answers 405).
  void Exact(std::string path, http::Handler handler);
  // Prefix match; longest prefix wins after exact matches.
  void Prefix(std::string prefix, http::Handler handler);

  http::Response Dispatch(const http::Request& req) const;

  // The face a route belongs to, for metrics labels.
  std::string_view FaceOf(std::string_view route) const;

 private:
  // A route's series, found in the registry on first use and kept (metrics::Kept).
  struct RouteSeries {
    std::array<std::atomic<metrics::Counter*>, 5> requests{};  // by status class
    std::atomic<metrics::Histogram*> duration{nullptr};
  };
  struct Route {
    std::string path;
    bool prefix;
    http::Handler handler;
    std::string face;
    std::shared_ptr<RouteSeries> series = std::make_shared<RouteSeries>();
  };
  http::Response Timed(const Route* route, const http::Request& req) const;

  std::vector<Route> routes_;
  metrics::Registry* metrics_ = nullptr;
  std::string rest_base_;
};

// Answers 405 with an Allow header unless the method is one of `allowed` (comma-separated).
std::optional<http::Response> RequireMethod(const http::Request& req, std::string_view allowed);

}  // namespace crmd::app
