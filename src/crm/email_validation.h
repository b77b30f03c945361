#pragma once
// The email validation service (runs before a contact is added on every path).
//  - syntax: a practical RFC 5321/5322 subset: local part <= 64 octets (dot-atom, or a
//    quoted string; UTF-8 allowed per RFC 6531), domain <= 253 octets of LDH labels
//    <= 63, internationalised domains converted to punycode (RFC 3492, "xn--").
//  - dns: the domain must have MX, or A/AAAA when it has no MX (RFC 5321 §5.1); a null
//    MX (RFC 7505) is invalid.
//  - disposable: the domain (or a parent) is on schemas/data/disposable_domains.txt.
//  - role account: admin@, info@, support@, ... are flagged, not refused.
// Normalisation: trimmed, whole address lower-cased (ASCII), domain in punycode.
// Thread-safe (the resolver must be too).
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/email_address.h"  // NormalizeEmail, DomainToAscii
#include "src/core/result.h"
#include "src/crm/resolver.h"

namespace crmd::crm {

enum class ValidationMode { kOff, kSyntax, kDns };
Result<ValidationMode> ParseValidationMode(std::string_view s);
const char* ValidationModeName(ValidationMode m);

struct EmailVerdict {
  bool valid = false;
  std::vector<std::string> reasons;  // machine words: "syntax:local_too_long", "dns:no_mx", ...
  bool disposable = false;
  bool role_account = false;
  std::string normalized;  // empty when the syntax is invalid
  std::string mode;        // the mode used
};
nlohmann::json ToJson(const EmailVerdict& v);

struct EmailValidatorOptions {
  Resolver* resolver = nullptr;    // required for kDns
  bool refuse_disposable = false;  // disposable -> invalid (else only flagged)
};

class EmailValidator {
 public:
  explicit EmailValidator(EmailValidatorOptions options);
  EmailVerdict Validate(std::string_view raw, ValidationMode mode) const;
  bool IsDisposableDomain(std::string_view ascii_domain) const;
  static bool IsRoleLocalPart(std::string_view local);

 private:
  const EmailValidatorOptions o_;
  std::set<std::string, std::less<>> disposable_;
};

}  // namespace crmd::crm
