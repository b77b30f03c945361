#include "src/mcp/request_state.h"

#include "src/core/crypto.h"

namespace crmd::mcp {

using nlohmann::json;

namespace {

constexpr std::string_view kVersion = "s1";
// Domain separation: a MAC made with this key for anything else never verifies here.
constexpr std::string_view kTag = "crmd/mcp/requestState/v1";

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  while (true) {
    auto pos = s.find(sep);
    parts.push_back(s.substr(0, pos));
    if (pos == std::string_view::npos) break;
    s.remove_prefix(pos + 1);
  }
  return parts;
}

tl::unexpected<Error> Invalid() {
  return Fail(Errc::kInvalidArgument, "Invalid params: requestState is not valid for this request");
}

}  // namespace

RequestStateCodec::RequestStateCodec(std::vector<RequestStateKey> keys, RequestStateOptions options,
                                     const Clock& clock)
    : keys_(std::move(keys)), options_(options), clock_(clock) {}

std::string RequestStateCodec::ArgumentsDigest(const json& arguments) {
  return crypto::Sha256Hex(arguments.dump());
}

std::string RequestStateCodec::Mac(const RequestStateKey& key, std::string_view payload_b64) const {
  std::string data(kTag);
  data += '\0';
  data += key.id;
  data += '\0';
  data += payload_b64;
  return crypto::HmacSha256(key.secret, data);
}

Result<std::string> RequestStateCodec::Seal(const RequestStateBinding& b, const json& state) const {
  int64_t now = clock_.NowUnix();
  json payload{{"cid", b.client_id},
               {"sub", b.subject},
               {"m", b.method},
               {"n", b.name},
               {"a", b.arguments_digest},
               {"iat", now},
               {"exp", now + options_.ttl_s},
               {"st", state}};
  const RequestStateKey& key = keys_.front();
  std::string body = crypto::Base64UrlEncode(payload.dump());
  std::string token = std::string(kVersion) + "." + key.id + "." + body + "." +
                      crypto::Base64UrlEncode(Mac(key, body));
  if (token.size() > options_.max_token_bytes) {
    return Fail(Errc::kInternal, "internal error",
                "requestState of " + std::to_string(token.size()) + " bytes exceeds the limit");
  }
  return token;
}

Result<json> RequestStateCodec::Open(std::string_view token, const RequestStateBinding& b) const {
  if (token.size() > options_.max_token_bytes) return Invalid();
  auto parts = Split(token, '.');
  if (parts.size() != 4 || parts[0] != kVersion) return Invalid();
  const RequestStateKey* key = nullptr;
  for (const auto& k : keys_)
    if (k.id == parts[1]) key = &k;
  if (!key) return Invalid();
  auto mac = crypto::Base64UrlDecode(parts[3]);
  // The MAC first, in constant time: nothing of an unauthenticated payload is parsed.
  if (!mac || !crypto::ConstantTimeEqual(*mac, Mac(*key, parts[2]))) return Invalid();
  auto raw = crypto::Base64UrlDecode(parts[2]);
  if (!raw) return Invalid();
  json payload = json::parse(*raw, nullptr, false);
  if (!payload.is_object()) return Invalid();
  auto str = [&](const char* k) {
    return payload.contains(k) && payload[k].is_string() ? payload[k].get<std::string>()
                                                         : std::string("\x01");
  };
  if (str("cid") != b.client_id || str("sub") != b.subject || str("m") != b.method ||
      str("n") != b.name || str("a") != b.arguments_digest) {
    return Invalid();
  }
  if (!payload.contains("exp") || !payload["exp"].is_number_integer()) return Invalid();
  if (clock_.NowUnix() >= payload["exp"].get<int64_t>()) {
    return Fail(Errc::kInvalidArgument,
                "Invalid params: requestState has expired; call the tool again without it");
  }
  return payload.contains("st") ? payload["st"] : json(nullptr);
}

}  // namespace crmd::mcp
