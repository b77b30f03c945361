#pragma once
// One email message and its rendering to RFC 5322 bytes.
//
// A Message is plain data. RenderMessage() turns it into the bytes a transport sends: a
// multipart/alternative (RFC 2046 §5.1.4) with a text/plain and a text/html part, both
// UTF-8 and quoted-printable (RFC 2045 §6.7), header fields with RFC 2047 encoded-words
// where they carry non-ASCII text, CRLF line endings and no line longer than 76
// characters in the bodies (998 is the hard limit of RFC 5322 §2.1.1 for headers whose
// value has no place to fold). Pure functions: thread-safe, no state.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"

namespace crmd::mail {

// A display name and an address ("Ada Lovelace" <ada@example.com>). The name may be
// empty and may hold any UTF-8 text.
struct Mailbox {
  std::string name;
  std::string address;
};

struct Message {
  Mailbox from;
  Mailbox to;
  std::optional<Mailbox> reply_to;
  std::string subject;  // UTF-8
  std::string html;     // the HTML part; required
  // The text part. When absent it is derived from `html` with HtmlToText().
  std::optional<std::string> text;
  // Shown by mail clients after the subject in the inbox list; rendered as a hidden
  // first element of the HTML body. Empty: none.
  std::string preheader;
  // With its angle brackets, e.g. from MakeMessageId(). Empty: no Message-ID header (a
  // relay would add its own, which defeats de-duplication: callers should set it).
  std::string message_id;
  // List-Unsubscribe URIs (RFC 2369 §3.2), e.g. an https link and a mailto: address;
  // each is written inside angle brackets. Empty: no header.
  std::vector<std::string> list_unsubscribe;
  // Adds "List-Unsubscribe-Post: List-Unsubscribe=One-Click" (RFC 8058 §3.1).
  // REQUIRES: list_unsubscribe holds an https URI (or an http URI on a loopback host: a
  // development server without a certificate).
  bool one_click_unsubscribe = false;
  // Further header fields, written after the standard ones (name, ASCII value), e.g.
  // X-Campaign-ID or Feedback-ID. Never one of the fields above, Cc, Bcc, Sender or
  // DKIM-Signature.
  std::vector<std::pair<std::string, std::string>> extra_headers;
};

// A plain addr-spec, what RenderMessage accepts as From and To (with `utf8`) or Reply-To:
// local@domain with one '@', printable ASCII without the specials of a display form
// (< > ( ) [ ] \ , ; : " and space); with `utf8`, well-formed UTF-8 above ASCII too
// (RFC 6531/6532). Services check a sender with it when it is saved.
bool IsPlainAddress(std::string_view address, bool utf8 = false);

// The whole message (header, blank line, body) with CRLF line endings. The Date header
// is `clock`'s time now. Fails (kInvalidArgument) on a header-injection attempt (CR or LF
// in a header value or name, an extra header that is a reserved field), an address that is
// not a plain addr-spec, a Message-ID not of the form <left@right>, a missing html part,
// or one-click unsubscribe without an https (or loopback http) URI.
Result<std::string> RenderMessage(const Message& message, const Clock& clock);

// Message-ID (RFC 5322 §3.6.4) that is the same for the same (send id, recipient) and
// domain: "<32 hex digits@domain>". A retry of the same send to the same recipient has the
// same id, so a relay or mailbox can de-duplicate it. The recipient is compared
// case-insensitively.
std::string MakeMessageId(std::string_view send_id, std::string_view recipient,
                          std::string_view domain);

// Whether `uri` may carry an RFC 8058 one-click unsubscribe: https, or http on a loopback
// host (localhost, 127.x.y.z, [::1]), a development server without a certificate.
bool SupportsOneClick(std::string_view uri);

// "Tue, 25 Nov 2026 02:33:06 +0000" (RFC 5322 §3.3), always UTC.
std::string FormatRfc5322Date(int64_t unix_seconds);

// Plain text for a text/plain part: tags removed (script, style and head with their
// content), links kept as "text (url)", block elements and <br> as line breaks, list items
// as "- ", entities decoded, runs of whitespace collapsed, at most one blank line.
std::string HtmlToText(std::string_view html);

// The unstructured header value `text` as it appears after "Name: ": plain when it is
// printable ASCII, otherwise RFC 2047 encoded-words (UTF-8, B encoding, never splitting
// a character); folded with CRLF SP so that no line exceeds 76 characters where a fold is
// possible. `name_length` is the length of the field name (the first line also holds
// "Name: ").
std::string EncodeHeaderText(std::string_view text, size_t name_length);

// A mailbox as a header value: `addr`, `"Name" <addr>` or `=?UTF-8?B?...?= <addr>`.
// Unfolded; RenderMessage folds it.
std::string FormatMailbox(const Mailbox& mailbox);

// Quoted-printable (RFC 2045 §6.7) of UTF-8 text; "\n" and "\r\n" become CRLF hard line
// breaks, lines are at most 76 characters (soft breaks "="), and a line starting with
// "." or "From " has that character encoded so that no transport needs to touch it.
std::string QuotedPrintable(std::string_view text);

// &, <, >, " and ' as entities.
std::string HtmlEscape(std::string_view text);

}  // namespace crmd::mail
