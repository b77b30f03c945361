#include "src/webhooks/incoming.h"

#include <spdlog/spdlog.h>

#include "src/core/crypto.h"
#include "src/crm/lists.h"
#include "src/webhooks/incoming_repo.h"
#include "src/webhooks/signing.h"

namespace crmd::webhooks {
namespace {

// Lower-case base32, as API key prefixes: easy to read out, never contains '_'.
std::string PrefixChars(Random& random, size_t n) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
  std::string out;
  for (unsigned char b : random.Bytes(n)) out += kAlphabet[b & 31];
  return out;
}

std::optional<std::string> TokenPrefix(std::string_view token) {
  if (token.size() < IncomingHooks::kPrefixLength + 2 || token.size() > 128) return std::nullopt;
  if (token.substr(0, IncomingHooks::kTokenPrefix.size()) != IncomingHooks::kTokenPrefix)
    return std::nullopt;
  if (token[IncomingHooks::kPrefixLength] != '_') return std::nullopt;
  return std::string(token.substr(0, IncomingHooks::kPrefixLength));
}

tl::unexpected<Error> NoSuchHook(int64_t id) {
  return Fail(Errc::kNotFound, "no incoming webhook " + std::to_string(id));
}

}  // namespace

nlohmann::json IncomingHookJson(const IncomingHook& h) {
  return {
      {"id", h.id},
      {"name", h.name},
      {"token_prefix", h.token_prefix},
      {"mapping", h.mapping},
      {"applies", h.applies},
      {"hmac", h.has_hmac_secret},
      {"enabled", h.enabled},
      {"received_count", h.received_count},
      {"created_at", FormatRfc3339(h.created_at)},
      {"updated_at", FormatRfc3339(h.updated_at)},
      {"last_received_at",
       h.last_received_at ? nlohmann::json(FormatRfc3339(*h.last_received_at)) : nlohmann::json()}};
}

Result<IncomingHookInput> IncomingHookInputFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Fail(Errc::kInvalidArgument, "body: must be an object");
  IncomingHookInput in;
  for (const auto& [k, v] : j.items()) {
    if (k == "name") {
      if (!v.is_string()) return Fail(Errc::kInvalidArgument, "name: must be a string");
      in.name = v.get<std::string>();
    } else if (k == "mapping") {
      in.mapping = v;
    } else if (k == "applies") {
      in.applies = v;
    } else if (k == "hmac_secret") {
      if (v.is_null())
        in.hmac_secret = std::optional<std::string>();
      else if (v.is_string())
        in.hmac_secret = std::optional<std::string>(v.get<std::string>());
      else
        return Fail(Errc::kInvalidArgument, "hmac_secret: must be a string or null");
    } else if (k == "enabled") {
      if (!v.is_boolean()) return Fail(Errc::kInvalidArgument, "enabled: must be a boolean");
      in.enabled = v.get<bool>();
    } else {
      return Fail(Errc::kInvalidArgument, k + ": unknown member");
    }
  }
  return in;
}

Status IncomingHooks::Check(const IncomingHookInput& in, bool creating) {
  if (creating && !in.name) return Fail(Errc::kInvalidArgument, "name: is required");
  if (creating && !in.mapping) return Fail(Errc::kInvalidArgument, "mapping: is required");
  if (in.name && (in.name->empty() || in.name->size() > 200))
    return Fail(Errc::kInvalidArgument, "name: must be 1 to 200 characters");
  if (in.mapping)
    if (auto m = ParseMapping(*in.mapping); !m) return Fail(m.error());
  if (in.applies) {
    auto a = ParseApplies(*in.applies);
    if (!a) return Fail(a.error());
    // Lists are never created on the fly (tags are): a missing one is a configuration error.
    if (o_.lists)
      for (const auto& ref : a->lists)
        if (auto l = o_.lists->Get(ref); !l) {
          if (l.error().code != Errc::kNotFound) return Fail(l.error());
          return Fail(Errc::kInvalidArgument, "applies.lists: " + l.error().message);
        }
  }
  if (in.hmac_secret && *in.hmac_secret &&
      ((*in.hmac_secret)->size() < kMinHmacSecret || (*in.hmac_secret)->size() > kMaxHmacSecret))
    return Fail(Errc::kInvalidArgument, "hmac_secret: must be " + std::to_string(kMinHmacSecret) +
                                            " to " + std::to_string(kMaxHmacSecret) +
                                            " characters");
  return Ok();
}

Result<CreatedIncomingHook> IncomingHooks::Create(const IncomingHookInput& in) {
  if (auto st = Check(in, true); !st) return Fail(st.error());
  const int64_t now = o_.clock->NowUnix();
  std::optional<std::string> hmac;
  if (in.hmac_secret && *in.hmac_secret) hmac = **in.hmac_secret;
  // A prefix collision (40 random bits) is retried rather than failing the caller.
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::string prefix = std::string(kTokenPrefix) + PrefixChars(*o_.random, 8);
    std::string token = prefix + "_" + o_.random->Token(32);
    auto id = o_.db->Write([&](store::Conn& c) {
      return incoming_repo::Insert(c,
                                   {.name = *in.name,
                                    .token_prefix = prefix,
                                    .token_hash = crypto::HashSecret(token),
                                    .mapping = in.mapping->dump(),
                                    .applies = in.applies.value_or(nlohmann::json::object()).dump(),
                                    .hmac_secret = hmac,
                                    .enabled = in.enabled.value_or(true),
                                    .now = now});
    });
    if (!id && id.error().code == Errc::kAlreadyExists) continue;
    if (!id) return Fail(id.error());
    auto hook = Get(*id);
    if (!hook) return Fail(hook.error());
    return CreatedIncomingHook{std::move(*hook), std::move(token)};
  }
  return Fail(Error::Internal("incoming webhook token prefix collisions"));
}

Result<std::vector<IncomingHook>> IncomingHooks::List() {
  return o_.db->Read([](store::Conn& c) { return incoming_repo::List(c); });
}

Result<IncomingHook> IncomingHooks::Get(int64_t id) {
  return o_.db->Read([&](store::Conn& c) -> Result<IncomingHook> {
    auto row = incoming_repo::Find(c, id);
    if (!row) return Fail(row.error());
    if (!*row) return NoSuchHook(id);
    return std::move(**row);
  });
}

Result<IncomingHook> IncomingHooks::Update(int64_t id, const IncomingHookInput& in) {
  if (auto st = Check(in, false); !st) return Fail(st.error());
  const int64_t now = o_.clock->NowUnix();
  auto changed = o_.db->Write([&](store::Conn& c) -> Result<int64_t> {
    auto exists = incoming_repo::Exists(c, id);
    if (!exists) return Fail(exists.error());
    if (!*exists) return NoSuchHook(id);
    std::vector<std::pair<const char*, store::Value>> sets;
    if (in.name) sets.emplace_back("name", *in.name);
    if (in.mapping) sets.emplace_back("mapping", in.mapping->dump());
    if (in.applies) sets.emplace_back("applies", in.applies->dump());
    if (in.hmac_secret)
      sets.emplace_back("hmac_secret", *in.hmac_secret ? store::Value(**in.hmac_secret) : nullptr);
    if (in.enabled) sets.emplace_back("enabled", int64_t{*in.enabled ? 1 : 0});
    sets.emplace_back("updated_at", now);
    // Column names come from the fixed list above, never from input.
    if (auto r = incoming_repo::SetColumns(c, id, sets); !r) return Fail(r.error());
    return int64_t{1};
  });
  if (!changed) return Fail(changed.error());
  return Get(id);
}

Status IncomingHooks::Delete(int64_t id) {
  auto changed = o_.db->Write([&](store::Conn& c) { return incoming_repo::Delete(c, id); });
  if (!changed) return Fail(changed.error());
  if (!*changed) return NoSuchHook(id);
  return Ok();
}

Result<Received> IncomingHooks::Receive(const IncomingRequest& req,
                                        std::vector<PayloadError>* errors) {
  const auto not_found = [] { return Fail(Errc::kNotFound, "no such incoming webhook"); };
  // 1. The token: the prefix finds the row, the whole token is checked against the hash.
  auto prefix = TokenPrefix(req.token);
  using Found = incoming_repo::HookWithSecrets;
  auto found = o_.db->Read([&](store::Conn& c) -> Result<std::optional<Found>> {
    if (!prefix) return std::optional<Found>();
    return incoming_repo::FindByPrefix(c, *prefix);
  });
  if (!found) return Fail(found.error());
  // Hash the presented token even when no row matched so both paths cost about the same.
  const bool match =
      crypto::VerifySecret(req.token, *found ? (*found)->token_hash : std::string(64, '0'));
  if (!*found || !match || !(*found)->hook.enabled) return not_found();
  const IncomingHook& hook = (*found)->hook;

  // 2. The sender's signature over the raw body, when the hook has a secret.
  if (const auto& secret = (*found)->hmac_secret) {
    if (!req.signature)
      return Fail(Errc::kUnauthenticated,
                  std::string("this webhook requires a ") + kSignatureHeader + " header");
    if (!VerifyHexSignature(*secret, req.raw_body, *req.signature))
      return Fail(Errc::kUnauthenticated, std::string(kSignatureHeader) + " does not match");
  }

  // 3. The mapping (validated when configured; a failure here is a bug or a hand edit).
  auto mapping = ParseMapping(hook.mapping);
  auto applies = ParseApplies(hook.applies);
  if (!mapping || !applies)
    return Fail(Error::Internal("incoming webhook " + std::to_string(hook.id) +
                                " has a broken mapping: " +
                                (!mapping ? mapping.error().message : applies.error().message)));
  auto input = MapPayload(*mapping, *applies, *req.body);
  if (!input) {
    *errors = std::move(input.error());
    return Fail(Errc::kInvalidArgument, "the payload does not fit this webhook's mapping");
  }

  // 4. The email (may query DNS, so before the transaction).
  crm::EmailVerdict verdict = o_.contacts->ValidateEmail(input->email.value_or(""));
  if (!verdict.valid) {
    std::string reasons;
    for (const auto& r : verdict.reasons) reasons += (reasons.empty() ? "" : ", ") + r;
    errors->push_back({mapping->email().path.text(), "invalid_email",
                       "is not a valid email address (" + reasons + ")"});
    return Fail(Errc::kInvalidArgument, "the payload's email is not valid");
  }

  // 5. One transaction: the contact (status machine, events, audit) and the hook's count.
  const governance::Actor actor{.kind = "webhook",
                                .subject = "incoming_webhook:" + std::to_string(hook.id),
                                .client_id = "",
                                .request_id = req.request_id};
  const int64_t now = o_.clock->NowUnix();
  auto upserted = o_.db->Write([&](store::Conn& c) -> Result<crm::UpsertResult> {
    auto r = o_.contacts->UpsertIn(c, actor, *input, verdict);
    if (!r) return Fail(r.error());
    if (auto counted = incoming_repo::CountReceived(c, hook.id, now); !counted)
      return Fail(counted.error());
    return r;
  });
  if (!upserted) {
    // A list deleted since the hook was configured: the sender cannot fix it, but a 404
    // would read as "unknown webhook".
    if (upserted.error().code == Errc::kNotFound)
      return Fail(Errc::kInvalidArgument,
                  "applies.lists: a list this webhook applies no longer exists");
    return Fail(upserted.error());
  }
  return Received{.hook_id = hook.id,
                  .contact_id = upserted->contact.id,
                  .created = upserted->created,
                  .changed = upserted->changed};
}

}  // namespace crmd::webhooks
