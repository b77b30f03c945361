#include "src/mail/dkim.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <utility>

#include "src/core/crypto.h"
#include "src/core/text.h"

namespace crmd::mail {
namespace {

constexpr size_t kFoldAt = 76;

bool IsWsp(char c) { return c == ' ' || c == '\t'; }

bool IsDnsLabelText(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
  });
}

std::string ToCrlf(std::string_view in) {
  std::string out;
  out.reserve(in.size() + in.size() / 32);
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '\n' && (i == 0 || in[i - 1] != '\r')) out += '\r';
    out += in[i];
  }
  return out;
}

struct Field {
  std::string name;   // as written
  std::string value;  // everything after the colon, folds included, without the final CRLF
};

// Header fields of a CRLF header block (which ends with CRLF).
std::vector<Field> ParseFields(std::string_view block) {
  std::vector<Field> fields;
  size_t pos = 0;
  while (pos < block.size()) {
    size_t end = block.find("\r\n", pos);
    if (end == block.npos) end = block.size();
    std::string_view line = block.substr(pos, end - pos);
    if (!line.empty() && IsWsp(line[0]) && !fields.empty()) {
      fields.back().value += "\r\n";
      fields.back().value += line;
    } else {
      size_t colon = line.find(':');
      if (colon != line.npos) {
        fields.push_back({std::string(line.substr(0, colon)), std::string(line.substr(colon + 1))});
      }
    }
    pos = end + 2;
  }
  return fields;
}

Result<std::string> SignSha256(EVP_PKEY* key, std::string_view data) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  size_t len = 0;
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, bytes, data.size()) != 1) {
    return Fail(Error::Internal("DKIM: EVP_DigestSign setup failed"));
  }
  std::string sig(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len, bytes,
                     data.size()) != 1) {
    return Fail(Error::Internal("DKIM: EVP_DigestSign failed"));
  }
  sig.resize(len);
  return sig;
}

}  // namespace

const std::vector<std::string>& DkimSignedHeaders() {
  static const std::vector<std::string> kHeaders = {
      "From",       "Reply-To",     "To",           "Subject",          "Date",
      "Message-ID", "MIME-Version", "Content-Type", "List-Unsubscribe", "List-Unsubscribe-Post"};
  return kHeaders;
}

std::string DkimRelaxedHeader(std::string_view name, std::string_view value) {
  std::string out = text::AsciiLower(name);
  while (!out.empty() && IsWsp(out.back())) out.pop_back();
  out += ':';
  size_t mark = out.size();
  bool in_wsp = false;
  for (char c : value) {
    if (c == '\r' || c == '\n') continue;  // unfold
    if (IsWsp(c)) {
      in_wsp = true;
      continue;
    }
    if (in_wsp && out.size() > mark) out += ' ';
    in_wsp = false;
    out += c;
  }
  return out;
}

std::string DkimRelaxedBody(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find("\r\n", pos);
    bool has_crlf = end != body.npos;
    if (!has_crlf) end = body.size();
    std::string_view line = body.substr(pos, end - pos);
    std::string canon;
    bool in_wsp = false;
    for (char c : line) {
      if (IsWsp(c)) {
        in_wsp = true;
        continue;
      }
      if (in_wsp) canon += ' ';
      in_wsp = false;
      canon += c;
    }
    out += canon;
    out += "\r\n";
    pos = has_crlf ? end + 2 : body.size();
  }
  // Empty lines at the end are ignored (§3.4.4); an empty body stays empty.
  while (out.size() >= 4 && out.compare(out.size() - 4, 4, "\r\n\r\n") == 0)
    out.resize(out.size() - 2);
  if (out == "\r\n") out.clear();
  return out;
}

DkimSigner::DkimSigner(std::shared_ptr<EVP_PKEY> key, std::string selector, std::string domain)
    : key_(std::move(key)), selector_(std::move(selector)), domain_(std::move(domain)) {}

Result<DkimSigner> DkimSigner::Load(const DkimOptions& options) {
  std::ifstream in(options.private_key_file, std::ios::binary);
  if (!in) {
    return Fail(Errc::kInvalidArgument,
                "cannot read the DKIM key file " + options.private_key_file);
  }
  std::stringstream pem;
  pem << in.rdbuf();
  return FromPem(pem.str(), options);
}

Result<DkimSigner> DkimSigner::FromPem(std::string_view pem, const DkimOptions& options) {
  if (!IsDnsLabelText(options.selector) || !IsDnsLabelText(options.domain)) {
    return Fail(Errc::kInvalidArgument, "DKIM selector and domain must be DNS names");
  }
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  EVP_PKEY* raw = bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr;
  if (!raw) return Fail(Errc::kInvalidArgument, "the DKIM key is not a PEM private key");
  std::shared_ptr<EVP_PKEY> key(raw, EVP_PKEY_free);
  if (!EVP_PKEY_is_a(key.get(), "RSA")) {
    return Fail(Errc::kInvalidArgument, "the DKIM key is not an RSA key (rsa-sha256)");
  }
  if (EVP_PKEY_get_bits(key.get()) < 1024) {
    return Fail(Errc::kInvalidArgument, "the DKIM key is shorter than 1024 bits (RFC 8301)");
  }
  return DkimSigner(std::move(key), options.selector, options.domain);
}

Result<std::string> DkimSigner::Sign(std::string_view message) const {
  std::string msg = ToCrlf(message);
  size_t sep = msg.find("\r\n\r\n");
  if (sep == std::string::npos) {
    return Fail(Errc::kInvalidArgument, "the message has no header/body separator");
  }
  std::vector<Field> fields = ParseFields(std::string_view(msg).substr(0, sep + 2));
  std::string body_hash =
      crypto::Base64Encode(crypto::Sha256(DkimRelaxedBody(std::string_view(msg).substr(sep + 4))));

  // §5.4.2: of several instances, the last is signed first.
  std::string canonical;
  std::vector<std::string> signed_names;
  for (const std::string& name : DkimSignedHeaders()) {
    std::string lower = text::AsciiLower(name);
    for (auto it = fields.rbegin(); it != fields.rend(); ++it) {
      if (text::AsciiLower(it->name) != lower) continue;
      signed_names.push_back(lower);
      canonical += DkimRelaxedHeader(it->name, it->value) + "\r\n";
    }
  }
  if (signed_names.empty() || signed_names.front() != "from") {
    return Fail(Errc::kInvalidArgument, "the message has no From field (RFC 6376 §5.4)");
  }

  std::string value =
      " v=1; a=rsa-sha256; c=relaxed/relaxed; d=" + domain_ + "; s=" + selector_ + ";";
  std::string h = "\r\n\th=";
  size_t line = 3;
  for (size_t i = 0; i < signed_names.size(); ++i) {
    std::string piece = signed_names[i] + (i + 1 < signed_names.size() ? ":" : ";");
    if (line + piece.size() > kFoldAt) {
      h += "\r\n\t ";
      line = 2;
    }
    h += piece;
    line += piece.size();
  }
  value += h + "\r\n\tbh=" + body_hash + ";\r\n\tb=";
  // §3.7: the signature covers the signed fields and this field with an empty b=, without
  // its final CRLF.
  auto sig = SignSha256(key_.get(), canonical + DkimRelaxedHeader("DKIM-Signature", value));
  if (!sig) return Fail(sig.error());
  std::string b = crypto::Base64Encode(*sig);
  for (size_t i = 0; i < b.size(); i += 70) {
    if (i > 0) value += "\r\n\t ";
    value += b.substr(i, 70);
  }
  return "DKIM-Signature:" + value + "\r\n" + msg;
}

}  // namespace crmd::mail
