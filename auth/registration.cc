#include "auth/registration.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "auth/redirect_uri.h"
#include "auth/scopes.h"
#include "src/core/crypto.h"

namespace crmd::auth {
namespace {

using nlohmann::json;

constexpr size_t kMaxRedirectUris = 20;
constexpr size_t kMaxTextLength = 1000;
constexpr std::string_view kRegisterPrefix = "/oauth/register/";

tl::unexpected<OAuthError> MetadataError(std::string description) {
  return tl::unexpected<OAuthError>(
      OAuthError{400, "invalid_client_metadata", std::move(description)});
}

// Optional string fields echoed back as registered. The *_uri ones must be web URLs: they
// may end up as links shown to people.
struct TextField {
  const char* name;
  bool is_url;
  size_t max;
};
constexpr TextField kTextFields[] = {
    {"client_name", false, 200},          {"client_uri", true, kMaxTextLength},
    {"logo_uri", true, kMaxTextLength},   {"tos_uri", true, kMaxTextLength},
    {"policy_uri", true, kMaxTextLength}, {"software_id", false, 200},
    {"software_version", false, 200},
};

OAuthResult<std::vector<std::string>> StringList(const json& m, const char* name,
                                                 size_t max_items) {
  std::vector<std::string> out;
  const json& v = m[name];
  if (!v.is_array()) return MetadataError(std::string(name) + " must be an array of strings");
  if (v.size() > max_items) return MetadataError(std::string(name) + " has too many entries");
  for (const auto& e : v) {
    if (!e.is_string()) return MetadataError(std::string(name) + " must be an array of strings");
    std::string s = e.get<std::string>();
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
  }
  return out;
}

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

http::Response JsonError(int status, const std::string& error, const std::string& description) {
  auto r = http::Response::Json(status, {{"error", error}, {"error_description", description}});
  r.Set("Cache-Control", "no-store");
  return r;
}

http::Response Unauthorized(bool token_presented) {
  auto r = JsonError(401, "invalid_token", "missing or invalid registration access token");
  r.Set("WWW-Authenticate", token_presented
                                ? "Bearer error=\"invalid_token\", error_description=\"invalid "
                                  "registration access token\""
                                : "Bearer");
  return r;
}

std::optional<std::string> BearerToken(const http::Request& req) {
  auto h = req.Header("Authorization");
  if (!h || h->size() <= 7 || !http::IEquals(h->substr(0, 7), "Bearer ")) return std::nullopt;
  std::string_view t = h->substr(7);
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  if (t.empty()) return std::nullopt;
  return std::string(t);
}

}  // namespace

OAuthResult<Client> ClientFromMetadata(const json& m) {
  if (!m.is_object()) return MetadataError("the request body must be a JSON object");
  Client c;
  json accepted = json::object();

  // Client authentication (RFC 7591 §2). RFC 7591 defaults to client_secret_basic; MCP
  // clients register as public clients by sending "none" explicitly, which we honour.
  c.token_endpoint_auth_method = "client_secret_basic";
  if (m.contains("token_endpoint_auth_method")) {
    if (!m["token_endpoint_auth_method"].is_string())
      return MetadataError("token_endpoint_auth_method must be a string");
    c.token_endpoint_auth_method = m["token_endpoint_auth_method"].get<std::string>();
  }
  static const std::set<std::string> kMethods = {"none", "client_secret_basic",
                                                 "client_secret_post"};
  if (!kMethods.count(c.token_endpoint_auth_method))
    return MetadataError(
        "token_endpoint_auth_method must be none, client_secret_basic or client_secret_post");
  accepted["token_endpoint_auth_method"] = c.token_endpoint_auth_method;

  c.grant_types = {"authorization_code"};
  if (m.contains("grant_types")) {
    auto g = StringList(m, "grant_types", 8);
    if (!g) return tl::unexpected(g.error());
    c.grant_types = *g;
  }
  static const std::set<std::string> kGrants = {"authorization_code", "refresh_token",
                                                "client_credentials"};
  for (const auto& g : c.grant_types)
    if (!kGrants.count(g)) return MetadataError("unsupported grant_type: " + g);
  if (c.grant_types.empty()) return MetadataError("grant_types must not be empty");
  if (c.IsPublic() && c.AllowsGrant("client_credentials"))
    return MetadataError("client_credentials requires a confidential client");
  accepted["grant_types"] = c.grant_types;

  const bool uses_code = c.AllowsGrant("authorization_code");
  std::vector<std::string> response_types;
  if (uses_code) response_types = {"code"};
  if (m.contains("response_types")) {
    auto r = StringList(m, "response_types", 4);
    if (!r) return tl::unexpected(r.error());
    response_types = *r;
  }
  for (const auto& r : response_types)
    if (r != "code") return MetadataError("unsupported response_type: " + r + " (only code)");
  // RFC 7591 §2.1: grant_types and response_types must agree.
  if (uses_code != Contains(response_types, "code"))
    return MetadataError("response_types \"code\" goes with grant_types \"authorization_code\"");
  accepted["response_types"] = response_types;

  if (m.contains("redirect_uris")) {
    auto uris = StringList(m, "redirect_uris", kMaxRedirectUris);
    if (!uris) return tl::unexpected(uris.error());
    for (const auto& u : *uris) {
      auto ok = ValidateRedirectUri(u);
      if (!ok)
        return tl::unexpected<OAuthError>(
            OAuthError{400, "invalid_redirect_uri", u + ": " + ok.error().message});
    }
    c.redirect_uris = *uris;
  }
  if (uses_code && c.redirect_uris.empty())
    return tl::unexpected<OAuthError>(OAuthError{
        400, "invalid_redirect_uri", "redirect_uris is required for the authorization_code grant"});
  accepted["redirect_uris"] = c.redirect_uris;

  if (m.contains("scope")) {
    if (!m["scope"].is_string()) return MetadataError("scope must be a string");
    auto parsed = ParseScope(m["scope"].get<std::string>());
    if (!parsed) return MetadataError(parsed.error().message);
    if (!parsed->empty()) accepted["scope"] = JoinScope(*parsed);
  }

  for (const auto& f : kTextFields) {
    if (!m.contains(f.name)) continue;
    const json& v = m[f.name];
    if (!v.is_string()) return MetadataError(std::string(f.name) + " must be a string");
    std::string s = v.get<std::string>();
    if (s.size() > f.max) return MetadataError(std::string(f.name) + " is too long");
    for (unsigned char ch : s)
      if (ch < 0x20 || ch == 0x7f)
        return MetadataError(std::string(f.name) + " contains control characters");
    if (f.is_url)
      if (auto ok = ValidateWebUrl(s, f.name); !ok) return MetadataError(ok.error().message);
    if (s.empty()) continue;
    accepted[f.name] = s;
  }
  if (accepted.contains("client_name")) c.client_name = accepted["client_name"].get<std::string>();
  if (m.contains("contacts")) {
    auto contacts = StringList(m, "contacts", 10);
    if (!contacts) return tl::unexpected(contacts.error());
    accepted["contacts"] = *contacts;
  }
  c.metadata_json = accepted.dump();
  return c;
}

json Registration::InformationResponse(const Client& client, const std::string& registration_token,
                                       const std::optional<std::string>& secret) {
  json out = json::parse(client.metadata_json, nullptr, false);
  if (!out.is_object()) out = json::object();
  out["client_id"] = client.client_id;
  out["client_id_issued_at"] = client.created_at;
  if (secret) {
    out["client_secret"] = *secret;
    out["client_secret_expires_at"] = 0;  // never expires
  }
  out["registration_access_token"] = registration_token;
  out["registration_client_uri"] =
      options_.issuer + std::string(kRegisterPrefix) + client.client_id;
  return out;
}

http::Response Registration::HandleRegister(const http::Request& req) {
  if (req.method != "POST") {
    auto r = http::Response::Json(
        405, {{"error", "invalid_request"}, {"error_description", "use POST"}});
    r.Set("Allow", "POST");
    return r;
  }
  auto decision = limiter_.Hit("register:ip:" + req.remote_ip, options_.rate_limit);
  if (!decision) return JsonError(500, "server_error", "internal error");
  if (!decision->allowed) {
    auto r =
        JsonError(429, "rate_limited", "too many registrations from this address; try again later");
    r.Set("Retry-After", std::to_string(decision->retry_after));
    return r;
  }
  auto body = json::parse(req.body, nullptr, false);
  if (body.is_discarded())
    return JsonError(400, "invalid_client_metadata", "the request body is not JSON");
  auto client = ClientFromMetadata(body);
  if (!client) return JsonError(400, client.error().error, client.error().description);
  if (options_.global_limit.limit > 0) {
    auto global = limiter_.Hit("register:all", options_.global_limit);
    if (!global) return JsonError(500, "server_error", "internal error");
    if (!global->allowed) {
      auto r = JsonError(429, "rate_limited",
                         "this server accepts no more registrations for now; try again later");
      r.Set("Retry-After", std::to_string(global->retry_after));
      return r;
    }
  }

  const int64_t now = clock_.NowUnix();
  client->client_id = random_.Token(24);
  client->source = "dcr";
  client->created_at = client->updated_at = now;
  std::optional<std::string> secret;
  if (!client->IsPublic()) secret = random_.Token(32);
  std::string reg_token = random_.Token(32);
  auto st =
      clients_.Insert(*client, secret ? std::optional(crypto::HashSecret(*secret)) : std::nullopt,
                      crypto::HashSecret(reg_token));
  if (!st) return JsonError(500, "server_error", "internal error");
  auto r = http::Response::Json(201, InformationResponse(*client, reg_token, secret));
  r.Set("Cache-Control", "no-store");
  return r;
}

http::Response Registration::HandleConfiguration(const http::Request& req) {
  if (req.method != "GET" && req.method != "PUT" && req.method != "DELETE") {
    auto r = JsonError(405, "invalid_request", "use GET, PUT or DELETE");
    r.Set("Allow", "GET, PUT, DELETE");
    return r;
  }
  if (req.path.size() <= kRegisterPrefix.size()) return Unauthorized(false);
  auto client_id = http::PercentDecode(std::string_view(req.path).substr(kRegisterPrefix.size()));
  auto token = BearerToken(req);
  if (!token) return Unauthorized(false);
  if (!client_id) return Unauthorized(true);
  auto client = clients_.AuthenticateRegistration(*client_id, *token);
  if (!client) {
    if (client.error().code == Errc::kUnauthenticated) return Unauthorized(true);
    return JsonError(500, "server_error", "internal error");
  }
  if (req.method == "GET") return Read(*client);
  if (req.method == "PUT") return Update(*client, req);
  return Delete(*client);
}

http::Response Registration::Read(const Client& client) {
  std::string reg_token = random_.Token(32);
  if (!clients_.SetRegistrationTokenHash(client.client_id, crypto::HashSecret(reg_token)))
    return JsonError(500, "server_error", "internal error");
  auto r = http::Response::Json(200, InformationResponse(client, reg_token, std::nullopt));
  r.Set("Cache-Control", "no-store");
  return r;
}

http::Response Registration::Update(const Client& current, const http::Request& req) {
  auto body = json::parse(req.body, nullptr, false);
  if (!body.is_object())
    return JsonError(400, "invalid_client_metadata", "the request body must be a JSON object");
  // RFC 7592 §2.2: the client sends its full metadata including client_id, and never the
  // server-assigned fields.
  if (!body.contains("client_id") || body["client_id"] != current.client_id)
    return JsonError(400, "invalid_client_metadata",
                     "client_id must be present and match the client");
  for (const char* f : {"registration_access_token", "registration_client_uri",
                        "client_secret_expires_at", "client_id_issued_at"})
    if (body.contains(f))
      return JsonError(400, "invalid_client_metadata", std::string(f) + " must not be sent");
  if (body.contains("client_secret")) {
    if (!body["client_secret"].is_string() ||
        !clients_.Authenticate(current.client_id, body["client_secret"].get<std::string>()))
      return JsonError(400, "invalid_client_metadata", "client_secret does not match");
  }
  auto updated = ClientFromMetadata(body);
  if (!updated) return JsonError(400, updated.error().error, updated.error().description);
  updated->client_id = current.client_id;
  updated->source = current.source;
  updated->created_at = current.created_at;
  updated->updated_at = clock_.NowUnix();
  updated->allowed_scopes = current.allowed_scopes;

  // A client that becomes confidential needs a secret; one that becomes public loses it.
  std::optional<std::string> new_secret;
  if (current.IsPublic() && !updated->IsPublic()) new_secret = random_.Token(32);
  bool clear_secret = updated->IsPublic() && !current.IsPublic();
  auto st = clients_.Update(
      *updated, new_secret ? std::optional(crypto::HashSecret(*new_secret)) : std::nullopt,
      clear_secret);
  if (!st) return JsonError(500, "server_error", "internal error");
  std::string reg_token = random_.Token(32);
  if (!clients_.SetRegistrationTokenHash(current.client_id, crypto::HashSecret(reg_token)))
    return JsonError(500, "server_error", "internal error");
  auto r = http::Response::Json(200, InformationResponse(*updated, reg_token, new_secret));
  r.Set("Cache-Control", "no-store");
  return r;
}

http::Response Registration::Delete(const Client& client) {
  if (!clients_.Delete(client.client_id)) return JsonError(500, "server_error", "internal error");
  return http::Response::Empty(204);
}

}  // namespace crmd::auth
