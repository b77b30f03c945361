#pragma once
// The REST API's own route table: (method, pattern) pairs below the REST base path, e.g.
// ("POST", "/form/submit/{form_id}"). Patterns are matched segment by segment on the raw
// (still percent-encoded) path; a "{name}" segment captures one segment. Built once,
// read-only afterwards (thread-safe). routes() is what the OpenAPI coverage test compares
// with schemas/rest/openapi.json.
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/http_types.h"
#include "src/governance/api_keys.h"

namespace crmd::rest {

enum class Access {
  kPublic,  // no key (openapi.json, incoming hooks authenticated by their URL token)
  kKey,     // any enabled API key
  kAdmin,   // an enabled API key with the admin role
  kForm,    // key optional here; the form decides (a presented key must still be valid)
};

struct RestContext {
  const http::Request& req;
  std::map<std::string, std::string> params;  // raw path captures
  std::optional<governance::ApiKey> key;      // the authenticated key, if any
  nlohmann::json body;                        // the parsed JSON body (json_body routes)

  const std::string& Param(const std::string& name) const { return params.at(name); }
};

using RestHandler = std::function<http::Response(RestContext&)>;

struct RestRoute {
  std::string method;
  std::string pattern;
  Access access = Access::kKey;
  bool json_body = false;  // requires Content-Type JSON, size limit, parse
  RestHandler handler;
  // Runs on every response of this route once it matched, errors included (CORS headers
  // for browser-facing routes). Optional.
  std::function<void(const http::Request&, const std::map<std::string, std::string>& params,
                     http::Response&)>
      finish;
  // Top-level members of a 2xx body that hold a secret shown once (an API key, a webhook
  // secret): an Idempotency-Key replay answers the stored body without them, and they are
  // never stored.
  std::vector<std::string> secret_members;
  // json_body routes: an array is a body too (a provider that posts a batch of events).
  bool json_array = false;
  // false: Idempotency-Key is ignored here, because the path holds a secret (an incoming
  // hook's token) that the idempotency store would keep in its scope.
  bool idempotency = true;
  // Runs first, before the key is looked up or the body parsed: a refusal here (e.g. a
  // per-IP rate limit, 429) costs no database work. Optional.
  std::function<std::optional<http::Response>(const http::Request&)> admit;
};

class RestRouter {
 public:
  void Add(RestRoute route) { routes_.push_back(std::move(route)); }

  struct Match {
    const RestRoute* route = nullptr;  // null: no route for this method
    std::map<std::string, std::string> params;
    std::string allow;  // methods of the matching patterns, for 405
  };
  // `sub_path` is the request path below the base, starting with '/'.
  Match Find(std::string_view method, std::string_view sub_path) const;
  const std::vector<RestRoute>& routes() const { return routes_; }

 private:
  std::vector<RestRoute> routes_;
};

// Splits "/a/b/c" into {"a","b","c"}; empty segments are kept (so "/a//b" never matches).
std::vector<std::string_view> SplitPath(std::string_view path);

}  // namespace crmd::rest
