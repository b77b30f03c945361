#pragma once
// OAuth Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, MCP
// 2025-11-25 authorization §"Client ID Metadata Documents"): a client_id that is an https
// URL names a JSON document describing the client. The resolver fetches it through the
// injected HttpClient (SSRF-guarded: private targets only when configured), checks that
// its client_id equals the URL, validates its metadata like a registration, and caches it
// in oauth_clients (source "cimd") for the Cache-Control max-age, bounded to
// [min_ttl, max_ttl].
//
// Thread-safe (the cache is the database; concurrent misses may fetch twice, harmlessly).
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "auth/clients.h"
#include "src/core/clock.h"
#include "src/core/http_client.h"
#include "src/core/result.h"

namespace crmd::auth {

// True when a client_id should be resolved as a metadata document (https URL).
bool IsCimdClientId(std::string_view client_id);
// Draft §3: https, a path, no fragment, no userinfo, no dot segments.
Status ValidateCimdUrl(std::string_view url);
// Seconds to cache a document given its Cache-Control header, clamped.
int64_t CimdCacheTtl(std::optional<std::string_view> cache_control, int64_t min_ttl,
                     int64_t max_ttl);
// The client a fetched document describes (client_id, source, times set). kInvalidArgument
// with a client-facing reason when the document is unacceptable.
Result<Client> ClientFromCimdDocument(std::string_view url, const nlohmann::json& document);

struct CimdOptions {
  bool allow_private = false;  // config.allow_private_network_targets
  int timeout_ms = 5000;
  size_t max_document_bytes = 64 * 1024;
  int64_t min_ttl = 5 * 60;
  int64_t max_ttl = 24 * 3600;
};

class CimdResolver {
 public:
  CimdResolver(ClientStore& clients, http::HttpClient& http, const Clock& clock,
               CimdOptions options)
      : clients_(clients), http_(http), clock_(clock), options_(options) {}
  CimdResolver(const CimdResolver&) = delete;
  CimdResolver& operator=(const CimdResolver&) = delete;

  // The client for an https client_id, from the cache or freshly fetched.
  // Errors: kInvalidArgument (bad URL or document), kUnavailable (fetch failed: one
  // message whatever the reason, so that it does not tell whether a name resolves to a
  // private address),
  // kPermissionDenied (an operator revoked this client).
  Result<Client> Resolve(std::string_view client_id);

 private:
  ClientStore& clients_;
  http::HttpClient& http_;
  const Clock& clock_;
  const CimdOptions options_;
};

}  // namespace crmd::auth
