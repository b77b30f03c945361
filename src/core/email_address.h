#pragma once
// Email address syntax and normalisation, with no DNS and no lists (the contact book's
// validation service, src/crm/email_validation.h, adds those):
//  - a practical RFC 5321/5322 subset: local part <= 64 octets (dot-atom, or a quoted
//    string; UTF-8 allowed per RFC 6531), domain <= 253 octets of LDH labels <= 63,
//    internationalised domains converted to punycode (RFC 3492, "xn--");
//  - normalised: trimmed, whole address lower-cased (ASCII), domain in punycode.
// Pure functions; any thread.
#include <string>
#include <string_view>

#include "src/core/result.h"

namespace crmd {

// Syntax + normalisation only. kInvalidArgument naming the problem ("syntax:...").
Result<std::string> NormalizeEmail(std::string_view raw);

// UTF-8 domain -> ASCII (punycode labels), lower-cased; kInvalidArgument when not
// representable.
Result<std::string> DomainToAscii(std::string_view domain);

}  // namespace crmd
