#include "src/crm/email_validation.h"

#include <algorithm>
#include <cstdint>

#include "src/core/embedded.h"
#include "src/core/text.h"

namespace crmd::crm {
namespace {

bool IsAsciiSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

Result<ValidationMode> ParseValidationMode(std::string_view s) {
  if (s == "off") return ValidationMode::kOff;
  if (s == "syntax") return ValidationMode::kSyntax;
  if (s == "dns") return ValidationMode::kDns;
  return Fail(Errc::kInvalidArgument, "email_validation_mode must be off, syntax or dns");
}

const char* ValidationModeName(ValidationMode m) {
  switch (m) {
    case ValidationMode::kOff:
      return "off";
    case ValidationMode::kSyntax:
      return "syntax";
    case ValidationMode::kDns:
      return "dns";
  }
  return "syntax";
}

nlohmann::json ToJson(const EmailVerdict& v) {
  return {{"valid", v.valid},           {"reasons", v.reasons},
          {"disposable", v.disposable}, {"role_account", v.role_account},
          {"normalized", v.normalized}, {"mode", v.mode}};
}

EmailValidator::EmailValidator(EmailValidatorOptions options) : o_(options) {
  auto data = embedded::Find("data/disposable_domains.txt");
  if (!data) return;
  std::string_view d = *data;
  while (!d.empty()) {
    size_t nl = d.find('\n');
    std::string_view line = d.substr(0, nl);
    d = nl == std::string_view::npos ? std::string_view() : d.substr(nl + 1);
    while (!line.empty() && IsAsciiSpace(line.back())) line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    disposable_.insert(text::AsciiLower(line));
  }
}

bool EmailValidator::IsDisposableDomain(std::string_view domain) const {
  // The domain or any parent domain ("x.mailinator.com").
  while (true) {
    if (disposable_.count(domain)) return true;
    size_t dot = domain.find('.');
    if (dot == std::string_view::npos) return false;
    domain.remove_prefix(dot + 1);
  }
}

bool EmailValidator::IsRoleLocalPart(std::string_view local) {
  static constexpr std::string_view kRoles[] = {
      "abuse",      "accounts",  "admin",   "administrator", "billing",  "careers",    "contact",
      "enquiries",  "feedback",  "finance", "hello",         "help",     "hostmaster", "hr",
      "info",       "inquiries", "jobs",    "legal",         "mail",     "marketing",  "media",
      "newsletter", "no-reply",  "noc",     "noreply",       "office",   "orders",     "postmaster",
      "press",      "privacy",   "root",    "sales",         "security", "service",    "support",
      "team",       "webmaster"};
  size_t plus = local.find('+');  // sub-addressing: "support+x" is still support
  if (plus != std::string_view::npos) local = local.substr(0, plus);
  return std::find(std::begin(kRoles), std::end(kRoles), local) != std::end(kRoles);
}

EmailVerdict EmailValidator::Validate(std::string_view raw, ValidationMode mode) const {
  EmailVerdict v;
  v.mode = ValidationModeName(mode);
  if (mode == ValidationMode::kOff) {
    // Only what uniqueness needs: something@something, trimmed and lower-cased.
    auto n = NormalizeEmail(raw);
    if (n) {
      v.normalized = *n;
    } else {
      std::string_view t = raw;
      while (!t.empty() && IsAsciiSpace(t.front())) t.remove_prefix(1);
      while (!t.empty() && IsAsciiSpace(t.back())) t.remove_suffix(1);
      size_t at = t.rfind('@');
      if (at == std::string_view::npos || at == 0 || at + 1 == t.size()) {
        v.reasons.push_back("syntax:missing_at");
        return v;
      }
      v.normalized = text::AsciiLower(t);
    }
    v.valid = true;
    return v;
  }
  auto n = NormalizeEmail(raw);
  if (!n) {
    v.reasons.push_back(n.error().message);
    return v;
  }
  v.normalized = *n;
  size_t at = n->rfind('@');
  std::string_view local = std::string_view(*n).substr(0, at);
  std::string_view domain = std::string_view(*n).substr(at + 1);
  v.disposable = IsDisposableDomain(domain);
  v.role_account = IsRoleLocalPart(local);
  v.valid = true;
  if (v.disposable && o_.refuse_disposable) {
    v.valid = false;
    v.reasons.push_back("disposable_domain");
  }
  if (mode == ValidationMode::kDns && o_.resolver) {
    auto answer = o_.resolver->Lookup(std::string(domain));
    if (!answer) {
      // Fail open on a temporary DNS failure: a lookup outage must not lose sign-ups.
      v.reasons.push_back("dns:temporary_failure");
    } else if (!answer->domain_exists) {
      v.valid = false;
      v.reasons.push_back("dns:no_such_domain");
    } else if (answer->null_mx) {
      v.valid = false;
      v.reasons.push_back("dns:null_mx");
    } else if (!answer->has_mx && !answer->has_address) {
      v.valid = false;
      v.reasons.push_back("dns:no_mail_host");
    }
  } else if (mode == ValidationMode::kDns) {
    v.reasons.push_back("dns:no_resolver");
  }
  return v;
}

}  // namespace crmd::crm
