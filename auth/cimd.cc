#include "auth/cimd.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "auth/redirect_uri.h"
#include "auth/registration.h"
#include "src/core/log.h"

namespace crmd::auth {
namespace {
constexpr std::string_view kHttps = "https://";
constexpr size_t kMaxUrlLength = 2048;
}  // namespace

bool IsCimdClientId(std::string_view client_id) {
  return client_id.substr(0, kHttps.size()) == kHttps;
}

Status ValidateCimdUrl(std::string_view url) {
  auto bad = [](std::string why) { return Fail(Errc::kInvalidArgument, "client_id URL " + why); };
  if (!IsCimdClientId(url)) return bad("must use https");
  if (url.size() > kMaxUrlLength) return bad("is too long");
  for (unsigned char c : url)
    if (c <= 0x20 || c >= 0x7f || c == '\\') return bad("contains invalid characters");
  if (!IsRfc3986Text(url)) return bad("is not a valid URL (RFC 3986)");
  if (url.find('#') != std::string_view::npos) return bad("must not contain a fragment");
  std::string_view rest = url.substr(kHttps.size());
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, std::min(slash, rest.find('?')));
  if (authority.empty()) return bad("has no host");
  if (authority.find('@') != std::string_view::npos)
    return bad("must not contain user information");
  if (slash == std::string_view::npos || slash > rest.find('?')) return bad("must contain a path");
  std::string_view path = rest.substr(slash);
  path = path.substr(0, path.find('?'));
  if (path == "/") return bad("must contain a path");
  // Dot segments would let two URLs name the same document.
  size_t pos = 0;
  while (pos < path.size()) {
    size_t next = path.find('/', pos + 1);
    std::string_view seg =
        path.substr(pos + 1, next == std::string_view::npos ? next : next - pos - 1);
    if (seg == "." || seg == "..") return bad("must not contain dot segments");
    if (next == std::string_view::npos) break;
    pos = next;
  }
  return Ok();
}

int64_t CimdCacheTtl(std::optional<std::string_view> cache_control, int64_t min_ttl,
                     int64_t max_ttl) {
  int64_t ttl = min_ttl;
  if (cache_control) {
    std::string cc(*cache_control);
    std::transform(cc.begin(), cc.end(), cc.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    size_t p = cc.find("max-age=");
    if (p != std::string::npos && cc.find("no-store") == std::string::npos &&
        cc.find("no-cache") == std::string::npos) {
      int64_t n = 0;
      size_t i = p + 8;
      bool digits = false;
      while (i < cc.size() && std::isdigit(static_cast<unsigned char>(cc[i])) && n < max_ttl) {
        n = n * 10 + (cc[i++] - '0');
        digits = true;
      }
      if (digits) ttl = n;
    }
  }
  return std::clamp(ttl, min_ttl, max_ttl);
}

Result<Client> ClientFromCimdDocument(std::string_view url, const nlohmann::json& document) {
  auto bad = [](std::string why) {
    return Fail(Errc::kInvalidArgument, "client metadata document " + why);
  };
  if (!document.is_object()) return bad("is not a JSON object");
  if (!document.contains("client_id") || !document["client_id"].is_string() ||
      document["client_id"].get<std::string>() != url)
    return bad("client_id does not equal its URL");
  if (!document.contains("redirect_uris")) return bad("has no redirect_uris");
  // No shared secret can exist for a document-identified client (draft §4.1).
  if (document.contains("client_secret") || document.contains("client_secret_expires_at"))
    return bad("must not contain a client_secret");
  nlohmann::json m = document;
  if (!m.contains("token_endpoint_auth_method")) m["token_endpoint_auth_method"] = "none";
  if (m["token_endpoint_auth_method"] != "none")
    return bad("token_endpoint_auth_method must be none (private_key_jwt is not supported)");
  auto client = ClientFromMetadata(m);
  if (!client) return bad(client.error().description);
  client->client_id = std::string(url);
  client->source = "cimd";
  return *client;
}

Result<Client> CimdResolver::Resolve(std::string_view client_id) {
  if (auto st = ValidateCimdUrl(client_id); !st) return Fail(st.error());
  const int64_t now = clock_.NowUnix();
  auto cached = clients_.Find(client_id);
  if (!cached) return Fail(cached.error());
  if (*cached) {
    if ((*cached)->revoked) return Fail(Errc::kPermissionDenied, "this client has been revoked");
    if ((*cached)->source != "cimd") return **cached;
    if ((*cached)->cimd_expires_at.value_or(0) > now) return **cached;
  }
  auto res = http_.Send({.method = "GET",
                         .url = std::string(client_id),
                         .headers = {{"Accept", "application/json"}},
                         .timeout_ms = options_.timeout_ms,
                         .max_response_bytes = options_.max_document_bytes,
                         .allow_private = options_.allow_private});
  if (!res) {
    if (res.error().code == Errc::kPayloadTooLarge)
      return Fail(Errc::kInvalidArgument, "client metadata document is too large");
    if (res.error().code == Errc::kInvalidArgument)
      return Fail(Errc::kInvalidArgument, "client metadata document URL is not usable");
    // One answer for a name that does not resolve, one that resolves to a private address,
    // a refused connection and a timeout: the caller learns nothing about the network
    // behind this server. The log keeps which it was.
    spdlog::info(R"("event":"cimd_fetch_failed","code":"{}","reason":"{}")",
                 ErrcCode(res.error().code), JsonEscape(res.error().message));
    return Fail(
        Errc::kUnavailable, "client metadata document could not be fetched",
        res.error().message + (res.error().detail.empty() ? "" : ": ") + res.error().detail);
  }
  if (res->status != 200)
    return Fail(Errc::kUnavailable,
                "client metadata document answered HTTP " + std::to_string(res->status));
  auto doc = nlohmann::json::parse(res->body, nullptr, false);
  if (doc.is_discarded())
    return Fail(Errc::kInvalidArgument, "client metadata document is not JSON");
  auto client = ClientFromCimdDocument(client_id, doc);
  if (!client) return Fail(client.error());
  client->cimd_expires_at =
      now + CimdCacheTtl(res->Header("Cache-Control"), options_.min_ttl, options_.max_ttl);
  client->created_at = *cached ? (*cached)->created_at : now;
  client->updated_at = now;
  if (auto st = clients_.UpsertCimd(*client); !st) return Fail(st.error());
  // Re-read: an operator may have revoked it between our read and the upsert.
  auto stored = clients_.Find(client_id);
  if (!stored) return Fail(stored.error());
  if (!*stored) return Fail(Errc::kInternal, "", "cimd client vanished");
  if ((*stored)->revoked) return Fail(Errc::kPermissionDenied, "this client has been revoked");
  return **stored;
}

}  // namespace crmd::auth
