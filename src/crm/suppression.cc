#include "src/crm/suppression.h"

#include <algorithm>
#include <utility>

#include "src/core/clock.h"
#include "src/core/crypto.h"
#include "src/core/email_address.h"
#include "src/core/text.h"
#include "src/crm/contacts_repo.h"
#include "src/crm/suppression_repo.h"
#include "src/governance/audit.h"

namespace crmd::crm {

using nlohmann::json;

namespace {

constexpr size_t kMaxSourceBytes = 200;

// Which reason says more about the address; a stronger one replaces a weaker one.
int ReasonStrength(std::string_view reason) {
  if (reason == "complaint") return 4;
  if (reason == "hard_bounce") return 3;
  if (reason == "unsubscribed") return 2;
  if (reason == "erased") return 1;
  return 0;  // manual
}

// `source` with every spelling of the address replaced (a relay's "550 5.1.1 <x@y>: no such
// user" carries it) and cut to kMaxSourceBytes at a character boundary: the entry outlives
// the contact and must not keep its address.
std::string CleanSource(std::string_view source, std::string_view normalized_email) {
  std::string out(source);
  if (!normalized_email.empty()) {
    std::string lower = text::AsciiLower(out);
    for (size_t at = lower.find(normalized_email); at != std::string::npos;
         at = lower.find(normalized_email, at)) {
      out.replace(at, normalized_email.size(), "<address>");
      lower.replace(at, normalized_email.size(), "<address>");
    }
  }
  if (out.size() > kMaxSourceBytes) {
    size_t cut = kMaxSourceBytes;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
  }
  return out;
}

std::string DomainOf(std::string_view normalized_email) {
  auto at = normalized_email.rfind('@');
  return at == std::string_view::npos ? std::string()
                                      : std::string(normalized_email.substr(at + 1));
}

std::string EncodeSuppressionCursor(int64_t id) {
  return crypto::Base64UrlEncode("s:" + std::to_string(id));
}

Result<int64_t> DecodeSuppressionCursor(const std::string& cursor) {
  if (cursor.empty()) return 0;
  auto raw = crypto::Base64UrlDecode(cursor);
  if (!raw || raw->rfind("s:", 0) != 0 || raw->size() > 22)
    return Fail(Errc::kInvalidArgument, "cursor is not valid; pass next_cursor unchanged");
  int64_t id = 0;
  for (char ch : raw->substr(2)) {
    if (ch < '0' || ch > '9')
      return Fail(Errc::kInvalidArgument, "cursor is not valid; pass next_cursor unchanged");
    id = id * 10 + (ch - '0');
  }
  return id;
}

json SuppressionAuditDetails(const Suppression& s) {
  json d = {{"kind", s.is_domain() ? "domain" : "address"}, {"reason", s.reason}};
  if (s.is_domain()) d["domain"] = s.domain;
  if (s.contact_id) d["contact_id"] = *s.contact_id;
  return d;
}

}  // namespace

bool IsSuppressionReason(std::string_view reason) {
  return std::any_of(std::begin(kSuppressionReasons), std::end(kSuppressionReasons),
                     [&](const char* r) { return reason == r; });
}

std::string_view SuppressionReasonFor(std::string_view status) {
  if (status == "bounced") return "hard_bounce";
  if (status == "complained") return "complaint";
  if (status == "unsubscribed") return "unsubscribed";
  return {};
}

json ToJson(const Suppression& s, const std::string& email) {
  return {{"id", s.id},
          {"kind", s.is_domain() ? "domain" : "address"},
          {"domain", s.is_domain() ? json(s.domain) : json(nullptr)},
          {"email", email.empty() ? json(nullptr) : json(email)},
          {"contact_id", s.contact_id ? json(*s.contact_id) : json(nullptr)},
          {"reason", s.reason},
          {"source", s.source},
          {"created_at", FormatRfc3339(s.created_at)}};
}

std::string SuppressedSkip(const Suppression& s) {
  return (s.is_domain() ? "domain " + s.domain : std::string("address")) + " suppressed (" +
         s.reason + ")";
}

Error SuppressedError(const Suppression& s) {
  std::string what = s.is_domain() ? "the domain " + s.domain + " is on the suppression list"
                                   : "this address is on the suppression list";
  return Error{Errc::kSuppressed,
               what + " (" + s.reason + " since " + FormatRfc3339(s.created_at) + ", entry " +
                   std::to_string(s.id) +
                   "), so it is not made subscribed; it is lifted only by the person's own "
                   "confirmed double opt-in" +
                   (s.is_domain() ? std::string(" of an address elsewhere") : std::string()) +
                   " or by an administrator removing the entry",
               {}};
}

SuppressionInput SuppressionInputFromText(std::string_view value, std::string reason,
                                          std::string source) {
  value = text::TrimOws(value);
  while (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
         value.back() == value.front())
    value = text::TrimOws(value.substr(1, value.size() - 2));
  SuppressionInput in{.reason = std::move(reason), .source = std::move(source)};
  auto at = value.find('@');
  if (at == std::string_view::npos)
    in.domain = std::string(value);
  else if (at == 0)
    in.domain = std::string(value.substr(1));
  else
    in.email = std::string(value);
  return in;
}

SuppressionList::SuppressionList(SuppressionListOptions options) : o_(std::move(options)) {}

std::string SuppressionList::AddressHash(std::string_view normalized_email) const {
  return crypto::Hex(crypto::HmacSha256(o_.key, normalized_email));
}

Result<std::optional<Suppression>> SuppressionList::CheckIn(store::Conn& c,
                                                            std::string_view normalized_email) {
  return suppression_repo::FindMatch(c, AddressHash(normalized_email), DomainOf(normalized_email));
}

Result<std::unordered_set<std::string>> SuppressionList::SuppressedAmongIn(
    store::Conn& c, const std::vector<std::string>& normalized_emails) {
  std::vector<std::string> hashes, domains;
  hashes.reserve(normalized_emails.size());
  domains.reserve(normalized_emails.size());
  for (const auto& e : normalized_emails) {
    hashes.push_back(AddressHash(e));
    domains.push_back(DomainOf(e));
  }
  std::vector<std::string> distinct_domains = domains;
  std::sort(distinct_domains.begin(), distinct_domains.end());
  distinct_domains.erase(std::unique(distinct_domains.begin(), distinct_domains.end()),
                         distinct_domains.end());
  auto keys = suppression_repo::MatchingKeys(c, hashes, distinct_domains);
  if (!keys) return Fail(keys.error());
  std::unordered_set<std::string> out;
  if (keys->empty()) return out;
  for (size_t i = 0; i < normalized_emails.size(); ++i)
    if (keys->count(hashes[i]) || keys->count(domains[i])) out.insert(normalized_emails[i]);
  return out;
}

Result<std::optional<Suppression>> SuppressionList::Check(std::string_view email) {
  auto n = NormalizeEmail(email);
  if (!n)
    return Fail(Errc::kInvalidArgument, "email is not an address (" + n.error().message + ")");
  // One statement: no transaction around it (Database::ReadStatement).
  return o_.db->ReadStatement([&](store::Conn& c) { return CheckIn(c, *n); });
}

Result<Suppression> SuppressionList::Get(int64_t id) {
  return o_.db->ReadStatement([&](store::Conn& c) -> Result<Suppression> {
    auto s = suppression_repo::Find(c, id);
    if (!s) return Fail(s.error());
    if (!*s) return Fail(Error::NotFound("suppression " + std::to_string(id) + " not found"));
    return std::move(**s);
  });
}

Result<SuppressionPage> SuppressionList::List(const SuppressionFilter& filter,
                                              const std::string& cursor, int limit) {
  if (filter.reason && !IsSuppressionReason(*filter.reason))
    return Fail(Errc::kInvalidArgument,
                "reason must be hard_bounce, complaint, unsubscribed, erased or manual");
  if (filter.kind && *filter.kind != "address" && *filter.kind != "domain")
    return Fail(Errc::kInvalidArgument, "kind must be address or domain");
  auto after = DecodeSuppressionCursor(cursor);
  if (!after) return Fail(after.error());
  limit = std::clamp(limit, 1, 500);
  return o_.db->ReadStatement([&](store::Conn& c) -> Result<SuppressionPage> {
    auto rows = suppression_repo::List(c, {.reason = filter.reason, .kind = filter.kind}, *after,
                                       limit + 1);
    if (!rows) return Fail(rows.error());
    SuppressionPage page;
    if (rows->size() > static_cast<size_t>(limit)) {
      rows->resize(limit);
      page.next_cursor = EncodeSuppressionCursor(rows->back().entry.id);
    }
    page.items = std::move(*rows);
    return page;
  });
}

Result<SuppressionList::Parsed> SuppressionList::Parse(const SuppressionInput& in) const {
  if (!IsSuppressionReason(in.reason))
    return Fail(Errc::kInvalidArgument,
                "reason must be hard_bounce, complaint, unsubscribed, erased or manual");
  if (in.email.empty() == in.domain.empty())
    return Fail(Errc::kInvalidArgument, "email or domain: give exactly one of them");
  Parsed p{.entry = {.reason = in.reason}};
  if (!in.email.empty()) {
    auto n = NormalizeEmail(in.email);
    if (!n)
      return Fail(Errc::kInvalidArgument, "email is not an address (" + n.error().message + ")");
    p.email = std::move(*n);
    p.entry.address_hash = AddressHash(p.email);
    p.entry.source = CleanSource(in.source, p.email);
    return p;
  }
  auto d = DomainToAscii(text::TrimOws(in.domain));
  if (!d || d->find('.') == std::string::npos || d->front() == '.' || d->back() == '.')
    return Fail(Errc::kInvalidArgument, "domain is not a domain name (such as example.org)");
  p.entry.domain = std::move(*d);
  p.entry.source = CleanSource(in.source, "");
  return p;
}

Result<AddedSuppression> SuppressionList::AddIn(store::Conn& c, const SuppressionInput& in) {
  auto parsed = Parse(in);
  if (!parsed) return Fail(parsed.error());
  Suppression s = std::move(parsed->entry);
  if (!parsed->email.empty()) {
    auto holder = contacts_repo::FindContactByEmail(c, parsed->email);
    if (!holder) return Fail(holder.error());
    if (*holder) s.contact_id = (**holder).id;
  }
  s.created_at = o_.clock->NowUnix();
  auto id = suppression_repo::Insert(c, s);
  if (!id) return Fail(id.error());
  if (*id) {
    s.id = **id;
    return AddedSuppression{.entry = std::move(s), .created = true};
  }
  auto existing = suppression_repo::FindMatch(c, s.address_hash, s.domain);
  if (!existing) return Fail(existing.error());
  if (!*existing) return Fail(Error::Internal("suppression entry vanished"));
  return AddedSuppression{.entry = std::move(**existing), .created = false};
}

Result<AddedSuppression> SuppressionList::Add(const governance::Actor& actor,
                                              const SuppressionInput& in) {
  return o_.db->Write([&](store::Conn& c) -> Result<AddedSuppression> {
    auto added = AddIn(c, in);
    if (!added) return Fail(added.error());
    if (added->created)
      if (auto st = o_.audit->Record(c, actor,
                                     {.action = "add_suppression",
                                      .target_type = "suppression",
                                      .target_ids = {added->entry.id},
                                      .details = SuppressionAuditDetails(added->entry)});
          !st)
        return Fail(st.error());
    return added;
  });
}

Result<SuppressionImport> SuppressionList::AddMany(const governance::Actor& actor,
                                                   const std::vector<SuppressionInput>& in) {
  return o_.db->Write([&](store::Conn& c) -> Result<SuppressionImport> {
    SuppressionImport out;
    std::vector<int64_t> ids;
    for (size_t i = 0; i < in.size(); ++i) {
      auto added = AddIn(c, in[i]);
      if (!added) {
        if (added.error().code != Errc::kInvalidArgument) return Fail(added.error());
        ++out.invalid;
        out.refused.emplace_back(i, added.error().message);
      } else if (added->created) {
        ++out.added;
        ids.push_back(added->entry.id);
      } else {
        ++out.existing;
      }
    }
    if (!ids.empty())
      if (auto st = o_.audit->Record(c, actor,
                                     {.action = "import_suppressions",
                                      .target_type = "suppression",
                                      .target_ids = ids,
                                      .details = {{"added", out.added}}});
          !st)
        return Fail(st.error());
    return out;
  });
}

Result<Suppression> SuppressionList::Remove(const governance::Actor& actor, int64_t id) {
  return o_.db->Write([&](store::Conn& c) -> Result<Suppression> {
    auto s = suppression_repo::Find(c, id);
    if (!s) return Fail(s.error());
    if (!*s) return Fail(Error::NotFound("suppression " + std::to_string(id) + " not found"));
    auto gone = suppression_repo::Delete(c, id);
    if (!gone) return Fail(gone.error());
    json details = SuppressionAuditDetails(**s);
    details["source"] = (*s)->source;
    if (auto st = o_.audit->Record(c, actor,
                                   {.action = "remove_suppression",
                                    .target_type = "suppression",
                                    .target_ids = {id},
                                    .details = std::move(details)});
        !st)
      return Fail(st.error());
    return std::move(**s);
  });
}

Status SuppressionList::EnterIn(store::Conn& c, std::string_view normalized_email,
                                std::string_view reason, std::string_view source,
                                std::optional<int64_t> contact_id) {
  const std::string hash = AddressHash(normalized_email);
  auto existing = suppression_repo::FindMatch(c, hash, "");
  if (!existing) return Fail(existing.error());
  const std::string clean = CleanSource(source, normalized_email);
  if (!*existing) {
    auto id = suppression_repo::Insert(c, {.address_hash = hash,
                                           .reason = std::string(reason),
                                           .source = clean,
                                           .contact_id = contact_id,
                                           .created_at = o_.clock->NowUnix()});
    return Discard(id);
  }
  const Suppression& s = **existing;
  if (ReasonStrength(reason) > ReasonStrength(s.reason))
    if (auto st = suppression_repo::SetReason(c, s.id, std::string(reason), clean); !st) return st;
  if (contact_id && s.contact_id != contact_id)
    return suppression_repo::SetContact(c, s.id, contact_id);
  return Ok();
}

Result<std::optional<Suppression>> SuppressionList::AttachIn(store::Conn& c, int64_t contact_id,
                                                             std::string_view normalized_email) {
  auto hit = CheckIn(c, normalized_email);
  if (!hit) return Fail(hit.error());
  if (*hit && !(*hit)->is_domain() && (*hit)->contact_id != contact_id) {
    if (auto st = suppression_repo::SetContact(c, (*hit)->id, contact_id); !st)
      return Fail(st.error());
    (*hit)->contact_id = contact_id;
  }
  return hit;
}

Status SuppressionList::DetachIn(store::Conn& c, int64_t contact_id) {
  return suppression_repo::ClearContact(c, contact_id);
}

Status SuppressionList::LiftIn(store::Conn& c, const governance::Actor& actor,
                               std::string_view normalized_email, int64_t contact_id) {
  auto domain = suppression_repo::FindMatch(c, "", DomainOf(normalized_email));
  if (!domain) return Fail(domain.error());
  if (*domain) return Fail(SuppressedError(**domain));
  auto own = suppression_repo::FindMatch(c, AddressHash(normalized_email), "");
  if (!own) return Fail(own.error());
  if (!*own) return Ok();
  auto gone = suppression_repo::Delete(c, (*own)->id);
  if (!gone) return Fail(gone.error());
  json details = SuppressionAuditDetails(**own);
  details["contact_id"] = contact_id;
  details["by"] = "double_opt_in";
  return o_.audit->Record(c, actor,
                          {.action = "lift_suppression",
                           .target_type = "suppression",
                           .target_ids = {(*own)->id},
                           .details = std::move(details)});
}

Result<int64_t> SuppressionList::Backfill(int batch) {
  int64_t entered = 0;
  for (;;) {
    auto done = o_.db->Write([&](store::Conn& c) -> Result<std::pair<int64_t, int64_t>> {
      auto rows = suppression_repo::BackfillBatch(c, batch);
      if (!rows) return Fail(rows.error());
      int64_t n = 0;
      for (const auto& r : *rows) {
        std::string_view reason = SuppressionReasonFor(r.status);
        // A contact deleted or re-subscribed since the migration has nothing to enter here
        // (a deletion entered it already).
        if (!r.email.empty() && !reason.empty()) {
          if (auto st =
                  EnterIn(c, r.email, reason, "status before the suppression list", r.contact_id);
              !st)
            return Fail(st.error());
          ++n;
        }
        if (auto st = suppression_repo::BackfillDone(c, r.contact_id); !st) return Fail(st.error());
      }
      return std::make_pair(static_cast<int64_t>(rows->size()), n);
    });
    if (!done) return Fail(done.error());
    entered += done->second;
    if (done->first < batch) return entered;
  }
}

}  // namespace crmd::crm
