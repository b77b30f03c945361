#include "src/mail/message.h"

#include <algorithm>
#include <cctype>

#include "src/core/clock.h"
#include "src/core/crypto.h"
#include "src/core/text.h"
#include "src/core/utf8.h"

namespace crmd::mail {
namespace {

constexpr size_t kMaxLine = 76;         // RFC 2045 §6.7 (5); RFC 5322 §2.1.1 SHOULD 78
constexpr size_t kHardLineLimit = 998;  // RFC 5322 §2.1.1 MUST
constexpr size_t kEncodedChunk = 30;    // raw bytes per encoded-word: 52 chars with its frame

bool IsPrintableAscii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

bool HasLineBreak(std::string_view s) { return s.find_first_of("\r\n") != std::string_view::npos; }

// RFC 5322 atext plus space: a display name made of these needs no quoting.
bool IsAtextPhrase(std::string_view s) {
  static constexpr std::string_view kSpecials = "!#$%&'*+-/=?^_`{|}~ ";
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || kSpecials.find(c) != kSpecials.npos;
  });
}

// Fields that RenderMessage writes itself or that a signer or relay adds: never extra.
bool IsReservedHeader(std::string_view name) {
  static constexpr std::string_view kReserved =
      ",from,to,cc,bcc,reply-to,sender,subject,date,message-id,mime-version,content-type,"
      "content-transfer-encoding,list-unsubscribe,list-unsubscribe-post,dkim-signature,";
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return kReserved.find("," + lower + ",") != std::string_view::npos;
}

// Splits a UTF-8 string into pieces of at most `max` bytes without cutting a character.
std::vector<std::string_view> Utf8Chunks(std::string_view s, size_t max) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    size_t n = std::min(max, s.size());
    while (n < s.size() && n > 1 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
    out.push_back(s.substr(0, n));
    s.remove_prefix(n);
  }
  return out;
}

std::string EncodedWords(std::string_view text) {
  std::string out;
  for (std::string_view chunk : Utf8Chunks(text, kEncodedChunk)) {
    if (!out.empty()) out += ' ';
    out += "=?UTF-8?B?" + crypto::Base64Encode(chunk) + "?=";
  }
  return out;
}

// Folds an unfolded header value at its spaces (RFC 5322 §2.2.3): CRLF is inserted before
// a space, so unfolding restores the value exactly.
std::string FoldAtSpaces(std::string_view value, size_t name_length) {
  std::string out;
  size_t line = name_length + 2;  // "Name: "
  bool first = true;
  while (true) {
    size_t sp = value.find(' ');
    std::string_view token = value.substr(0, sp);
    if (first) {
      out += token;
      line += token.size();
      first = false;
    } else if (!token.empty() && line + 1 + token.size() > kMaxLine) {
      out += "\r\n ";
      out += token;
      line = 1 + token.size();
    } else {
      out += ' ';
      out += token;
      line += 1 + token.size();
    }
    if (sp == value.npos) break;
    value.remove_prefix(sp + 1);
  }
  return out;
}

class HeaderWriter {
 public:
  // `value` is unfolded; it is folded here.
  Status Add(std::string_view name, std::string_view value) {
    if (name.empty() || HasLineBreak(name) || HasLineBreak(value) ||
        !std::all_of(name.begin(), name.end(),
                     [](char c) { return c > 0x20 && c < 0x7f && c != ':'; })) {
      return Fail(Errc::kInvalidArgument, "header " + std::string(name) + " is malformed");
    }
    AddFolded(name, FoldAtSpaces(value, name.size()));
    return Ok();
  }
  // `folded` is already folded (EncodeHeaderText).
  void AddFolded(std::string_view name, std::string_view folded) {
    out_ += name;
    out_ += ": ";
    out_ += folded;
    out_ += "\r\n";
  }
  Result<std::string> Take() {
    size_t start = 0;
    while (start < out_.size()) {
      size_t end = out_.find("\r\n", start);
      if (end - start > kHardLineLimit) {
        return Fail(Errc::kInvalidArgument, "a header line is longer than 998 characters");
      }
      start = end + 2;
    }
    return std::move(out_);
  }

 private:
  std::string out_;
};

std::string InsertPreheader(const std::string& html, std::string_view preheader) {
  if (preheader.empty()) return html;
  std::string element =
      "<div style=\"display:none;font-size:1px;line-height:1px;max-height:0;max-width:0;"
      "opacity:0;overflow:hidden;mso-hide:all;\" aria-hidden=\"true\">" +
      HtmlEscape(preheader) + "</div>";
  std::string lower = html;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  size_t body = lower.find("<body");
  while (body != lower.npos && body + 5 < lower.size() &&
         std::isalnum(static_cast<unsigned char>(lower[body + 5]))) {
    body = lower.find("<body", body + 5);  // not <bodyx>
  }
  size_t at = 0;
  if (body != lower.npos) {
    size_t gt = lower.find('>', body);
    at = gt == lower.npos ? html.size() : gt + 1;
  }
  return html.substr(0, at) + element + html.substr(at);
}

}  // namespace

// A plain addr-spec without comments or quoting: local@domain in printable ASCII.
// left@right with one '@', printable ASCII without the specials of a display form. With
// `utf8`, well-formed UTF-8 above ASCII too: an internationalized address (RFC 6531/6532),
// written into the header as it is. Only for From and To, which are also the envelope's
// sender and recipient: the SMTP transport (libcurl) then asks the relay for SMTPUTF8, and
// a relay without it refuses the message.
bool IsPlainAddress(std::string_view a, bool utf8) {
  size_t at = a.find('@');
  if (at == 0 || at == a.npos || at + 1 >= a.size() || a.find('@', at + 1) != a.npos) {
    return false;
  }
  static constexpr std::string_view kForbidden = "<>()[]\\,;:\" ";
  for (size_t i = 0; i < a.size();) {
    unsigned char c = static_cast<unsigned char>(a[i]);
    if (c >= 0x80) {
      size_t n = utf8 ? Utf8Sequence(a, i) : 0;
      if (n == 0) return false;
      i += n;
      continue;
    }
    if (c <= 0x20 || c == 0x7f || kForbidden.find(static_cast<char>(c)) != kForbidden.npos)
      return false;
    ++i;
  }
  return true;
}

std::string HtmlEscape(std::string_view text) { return text::HtmlEscape(text); }

std::string FormatRfc5322Date(int64_t unix_seconds) { return FormatImfDate(unix_seconds, "+0000"); }

std::string MakeMessageId(std::string_view send_id, std::string_view recipient,
                          std::string_view domain) {
  std::string key(send_id);
  key += '\n';
  for (char c : recipient) key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return "<" + crypto::Sha256Hex(key).substr(0, 32) + "@" + std::string(domain) + ">";
}

std::string EncodeHeaderText(std::string_view text, size_t name_length) {
  bool plain = IsPrintableAscii(text) && text.find("=?") == text.npos;
  return FoldAtSpaces(plain ? std::string(text) : EncodedWords(text), name_length);
}

std::string FormatMailbox(const Mailbox& mailbox) {
  const std::string& name = mailbox.name;
  if (name.empty()) return mailbox.address;
  std::string phrase;
  if (!IsPrintableAscii(name) || name.find("=?") != name.npos) {
    phrase = EncodedWords(name);
  } else if (IsAtextPhrase(name) && name.front() != ' ' && name.back() != ' ') {
    phrase = name;
  } else {
    phrase = "\"";
    for (char c : name) {
      if (c == '"' || c == '\\') phrase += '\\';
      phrase += c;
    }
    phrase += '"';
  }
  return phrase + " <" + mailbox.address + ">";
}

std::string QuotedPrintable(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  bool first_line = true;
  while (true) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!first_line) out += "\r\n";
    first_line = false;
    size_t col = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      auto c = static_cast<unsigned char>(line[i]);
      bool last = i + 1 == line.size();
      auto must_encode = [&](size_t at_col) {
        bool starts_line = at_col == 0 && (c == '.' || (c == 'F' && line.substr(i, 5) == "From "));
        return c == '=' || c > 126 || (c < 32 && c != '\t') || ((c == ' ' || c == '\t') && last) ||
               starts_line;
      };
      bool encode = must_encode(col);
      // Room for the soft break "=" unless this is the line's last character.
      if (col + (encode ? 3 : 1) > (last ? kMaxLine : kMaxLine - 1)) {
        out += "=\r\n";
        col = 0;
        encode = must_encode(0);
      }
      col += encode ? 3 : 1;
      if (encode) {
        out += '=';
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
      } else {
        out += static_cast<char>(c);
      }
    }
    if (nl == text.npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

bool SupportsOneClick(std::string_view uri) {
  if (uri.rfind("https://", 0) == 0) return true;
  if (uri.rfind("http://", 0) != 0) return false;
  std::string_view rest = uri.substr(7);
  std::string_view host = rest.substr(0, rest.find_first_of("/?#"));
  if (host.rfind("[::1]", 0) == 0) return true;
  host = host.substr(0, host.find(':'));
  return host == "localhost" || host.rfind("127.", 0) == 0;
}

Result<std::string> RenderMessage(const Message& m, const Clock& clock) {
  if (m.html.empty()) return Fail(Errc::kInvalidArgument, "the message has no HTML part");
  for (const Mailbox* mb : {&m.from, &m.to}) {
    if (!IsPlainAddress(mb->address, /*utf8=*/true)) {
      return Fail(Errc::kInvalidArgument, "not a plain email address: " + mb->address);
    }
  }
  // Reply-To is in no envelope, so nothing would ask the relay for SMTPUTF8: ASCII only.
  if (m.reply_to && !IsPlainAddress(m.reply_to->address)) {
    return Fail(Errc::kInvalidArgument, "not a plain email address: " + m.reply_to->address);
  }
  for (const std::string* s : {&m.from.name, &m.to.name, &m.subject, &m.message_id}) {
    if (HasLineBreak(*s)) return Fail(Errc::kInvalidArgument, "a header value has a line break");
  }
  if (m.reply_to && HasLineBreak(m.reply_to->name)) {
    return Fail(Errc::kInvalidArgument, "a header value has a line break");
  }
  if (!m.message_id.empty() &&
      (m.message_id.size() < 5 || m.message_id.front() != '<' || m.message_id.back() != '>' ||
       m.message_id.find('@') == std::string::npos ||
       !IsPlainAddress(m.message_id.substr(1, m.message_id.size() - 2)))) {
    return Fail(Errc::kInvalidArgument, "the Message-ID is not of the form <left@right>");
  }
  bool has_https = false;
  std::string unsubscribe;
  for (const std::string& uri : m.list_unsubscribe) {
    if (uri.find_first_of("<>, \r\n") != uri.npos || uri.empty()) {
      return Fail(Errc::kInvalidArgument, "malformed List-Unsubscribe URI");
    }
    if (SupportsOneClick(uri)) has_https = true;
    if (!unsubscribe.empty()) unsubscribe += ", ";
    unsubscribe += "<" + uri + ">";
  }
  if (m.one_click_unsubscribe && !has_https) {
    return Fail(Errc::kInvalidArgument, "one-click unsubscribe needs an https URI (RFC 8058 §3.1)");
  }

  std::string text = m.text ? *m.text : HtmlToText(m.html);
  std::string html = InsertPreheader(m.html, m.preheader);
  std::string boundary =
      "=_crmd_" + crypto::Sha256Hex(m.message_id + '\n' + m.subject + '\n' + html).substr(0, 24);

  HeaderWriter h;
  Status s;
  if (!(s = h.Add("From", FormatMailbox(m.from)))) return Fail(s.error());
  if (!(s = h.Add("To", FormatMailbox(m.to)))) return Fail(s.error());
  if (m.reply_to && !(s = h.Add("Reply-To", FormatMailbox(*m.reply_to)))) return Fail(s.error());
  h.AddFolded("Subject", EncodeHeaderText(m.subject, 7));
  if (!(s = h.Add("Date", FormatRfc5322Date(clock.NowUnix())))) return Fail(s.error());
  if (!m.message_id.empty() && !(s = h.Add("Message-ID", m.message_id))) return Fail(s.error());
  if (!(s = h.Add("MIME-Version", "1.0"))) return Fail(s.error());
  if (!unsubscribe.empty() && !(s = h.Add("List-Unsubscribe", unsubscribe))) return Fail(s.error());
  if (m.one_click_unsubscribe) {
    if (!(s = h.Add("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"))) return Fail(s.error());
  }
  for (const auto& [name, value] : m.extra_headers) {
    if (IsReservedHeader(name)) {
      return Fail(Errc::kInvalidArgument, "header " + name + " is set by the message itself");
    }
    if (!IsPrintableAscii(value)) {
      return Fail(Errc::kInvalidArgument, "header " + name + " is not printable ASCII");
    }
    if (!(s = h.Add(name, value))) return Fail(s.error());
  }
  if (!(s = h.Add("Content-Type", "multipart/alternative; boundary=\"" + boundary + "\""))) {
    return Fail(s.error());
  }
  auto header = h.Take();
  if (!header) return Fail(header.error());

  std::string out = std::move(*header);
  out += "\r\nThis is a multi-part message in MIME format.\r\n";
  auto part = [&](std::string_view type, std::string_view body) {
    out += "\r\n--" + boundary + "\r\n";
    out += "Content-Type: ";
    out += type;
    out += "; charset=UTF-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n";
    out += QuotedPrintable(body);
    // The CRLF before the next delimiter belongs to the delimiter (RFC 2046 §5.1.1), so
    // the body's last line gets a line break of its own.
    if (out.compare(out.size() - 2, 2, "\r\n") != 0) out += "\r\n";
  };
  part("text/plain", text);
  part("text/html", html);
  out += "\r\n--" + boundary + "--\r\n";
  return out;
}

}  // namespace crmd::mail
