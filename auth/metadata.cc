#include "auth/metadata.h"

#include <string>

#include "auth/scopes.h"

namespace crmd::auth {

nlohmann::json AuthorizationServerMetadata(std::string_view issuer) {
  std::string iss(issuer);
  auto url = [&](std::string_view path) { return iss + std::string(path); };
  nlohmann::json client_auth = {"none", "client_secret_basic", "client_secret_post"};
  nlohmann::json secret_auth = {"client_secret_basic", "client_secret_post"};
  return {
      {"issuer", iss},
      {"authorization_endpoint", url(kAuthorizePath)},
      {"token_endpoint", url(kTokenPath)},
      {"registration_endpoint", url(kRegisterPath)},
      {"revocation_endpoint", url(kRevokePath)},
      {"introspection_endpoint", url(kIntrospectPath)},
      {"jwks_uri", url(kJwksPath)},
      {"scopes_supported", AllScopes()},
      {"response_types_supported", {"code"}},
      {"response_modes_supported", {"query"}},
      {"grant_types_supported", {"authorization_code", "refresh_token", "client_credentials"}},
      {"code_challenge_methods_supported", {"S256"}},
      {"token_endpoint_auth_methods_supported", client_auth},
      // Public clients may revoke their own tokens by client_id; introspection needs a secret.
      {"revocation_endpoint_auth_methods_supported", client_auth},
      {"introspection_endpoint_auth_methods_supported", secret_auth},
      {"client_id_metadata_document_supported", true},
      {"authorization_response_iss_parameter_supported", true},
      {"access_token_signing_alg_values_supported", {"ES256"}},
  };
}

nlohmann::json ProtectedResourceMetadata(std::string_view issuer, std::string_view resource) {
  return {
      {"resource", std::string(resource)},
      {"authorization_servers", {std::string(issuer)}},
      {"scopes_supported", AllScopes()},
      {"bearer_methods_supported", {"header"}},
      {"resource_signing_alg_values_supported", {"ES256"}},
      {"resource_name", "crmd"},
  };
}

}  // namespace crmd::auth
