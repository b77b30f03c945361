#pragma once
// The route table: exact paths and prefixes mapped to handlers. Built once in the
// composition root; lookups are read-only afterwards (thread-safe).
#include <string>
#include <vector>

#include "src/core/http_types.h"

namespace crmd::app {

class Router {
 public:
  // Exact path match, any method (the handler checks the method and answers 405).
  void Exact(std::string path, http::Handler handler);
  // Prefix match; longest prefix wins after exact matches.
  void Prefix(std::string prefix, http::Handler handler);

  http::Response Dispatch(const http::Request& req) const;

 private:
  struct Route {
    std::string path;
    bool prefix;
    http::Handler handler;
  };
  std::vector<Route> routes_;
};

// Answers 405 with an Allow header unless the method is one of `allowed` (comma-separated).
std::optional<http::Response> RequireMethod(const http::Request& req, std::string_view allowed);

}  // namespace crmd::app
