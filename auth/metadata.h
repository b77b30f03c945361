#pragma once
// Discovery documents: RFC 8414 authorization-server metadata (also served as
// openid-configuration for clients that only look there) and RFC 9728 protected-resource
// metadata for the MCP endpoint. Pure functions; thread-safe.
#include <nlohmann/json.hpp>
#include <string_view>

namespace crmd::auth {

// Fixed endpoint paths, relative to the issuer.
inline constexpr std::string_view kAuthorizePath = "/oauth/authorize";
inline constexpr std::string_view kRegisterPath = "/oauth/register";
inline constexpr std::string_view kTokenPath = "/oauth/token";
inline constexpr std::string_view kRevokePath = "/oauth/revoke";
inline constexpr std::string_view kIntrospectPath = "/oauth/introspect";
inline constexpr std::string_view kJwksPath = "/oauth/jwks";
inline constexpr std::string_view kWellKnownJwksPath = "/.well-known/jwks.json";
inline constexpr std::string_view kAsMetadataPath = "/.well-known/oauth-authorization-server";
inline constexpr std::string_view kOidcConfigPath = "/.well-known/openid-configuration";
inline constexpr std::string_view kPrMetadataPath = "/.well-known/oauth-protected-resource";
// RFC 9728 §3.1: the well-known path with the resource's path appended.
inline constexpr std::string_view kPrMetadataMcpPath = "/.well-known/oauth-protected-resource/mcp";

// `issuer` has no trailing slash.
nlohmann::json AuthorizationServerMetadata(std::string_view issuer);
nlohmann::json ProtectedResourceMetadata(std::string_view issuer, std::string_view resource);

}  // namespace crmd::auth
