#include "src/mail/transport.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <utility>

#include "src/core/crypto.h"
#include "src/core/worker_pool.h"

namespace crmd::mail {
namespace {

struct Reader {
  std::string_view data;
  size_t pos = 0;
};

size_t ReadCallback(char* buffer, size_t size, size_t nitems, void* userdata) {
  auto* r = static_cast<Reader*>(userdata);
  size_t n = std::min(size * nitems, r->data.size() - r->pos);
  std::memcpy(buffer, r->data.data() + r->pos, n);
  r->pos += n;
  return n;
}

// libcurl hands the relay's replies to a debug callback (as "header" data, with VERBOSE
// on; nothing is printed with a callback set). Only replies are kept, never what crmd
// sends (AUTH carries the password), and only refusals (4xx, 5xx): the last line of the
// latest, printable ASCII, at most 300 bytes. (A QUIT's "221" after the refusal, when the
// connection is dropped, leaves it alone.)
int DebugCallback(CURL*, curl_infotype type, char* data, size_t size, void* userdata) {
  if (type != CURLINFO_HEADER_IN) return 0;
  std::string_view s(data, size);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  if (auto nl = s.rfind('\n'); nl != s.npos) s.remove_prefix(nl + 1);
  if (s.empty() || (s[0] != '4' && s[0] != '5')) return 0;
  auto* out = static_cast<std::string*>(userdata);
  out->clear();
  for (char c : s.substr(0, 300)) out->push_back(c >= 0x20 && c < 0x7f ? c : '?');
  return 0;
}

bool IsEnvelopeAddress(std::string_view a) { return a.find_first_of("<>\r\n \t") == a.npos; }

bool HasNonAscii(std::string_view a) {
  return std::any_of(a.begin(), a.end(),
                     [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
}

SendResult Temporary(std::string detail, int code = 0) {
  return {.status = SendStatus::kTemporaryFailure, .smtp_code = code, .detail = std::move(detail)};
}

// curl_global_init is not thread-safe on every build: once, before the first handle.
void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

SmtpTransport::SmtpTransport(SmtpOptions options) : options_(std::move(options)) { InitCurlOnce(); }

SmtpTransport::~SmtpTransport() { Reset(); }

void SmtpTransport::Reset() {
  if (curl_) curl_easy_cleanup(curl_);  // closes the connection (QUIT)
  curl_ = nullptr;
}

SendResult SmtpTransport::Send(const Envelope& envelope, std::string_view message) {
  if (envelope.recipients.empty() || !IsEnvelopeAddress(envelope.mail_from)) {
    return {.status = SendStatus::kPermanentFailure, .detail = "malformed envelope"};
  }
  for (const std::string& r : envelope.recipients) {
    if (r.empty() || !IsEnvelopeAddress(r)) {
      return {.status = SendStatus::kPermanentFailure, .detail = "malformed recipient address"};
    }
  }
  if (!curl_) {
    curl_ = curl_easy_init();
    if (!curl_) return Temporary("curl_easy_init failed");
    curl_easy_setopt(curl_, CURLOPT_URL, options_.url.c_str());
    curl_easy_setopt(curl_, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
    curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl_, CURLOPT_CONNECTTIMEOUT_MS, options_.connect_timeout_ms);
    curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, options_.timeout_ms);
    long use_ssl = options_.tls == SmtpTls::kRequired ? CURLUSESSL_ALL
                   : options_.tls == SmtpTls::kNone   ? CURLUSESSL_NONE
                                                      : CURLUSESSL_TRY;
    curl_easy_setopt(curl_, CURLOPT_USE_SSL, use_ssl);
    curl_easy_setopt(curl_, CURLOPT_SSL_VERIFYPEER, options_.verify_peer ? 1L : 0L);
    curl_easy_setopt(curl_, CURLOPT_SSL_VERIFYHOST, options_.verify_peer ? 2L : 0L);
    if (!options_.ca_file.empty()) {
      curl_easy_setopt(curl_, CURLOPT_CAINFO, options_.ca_file.c_str());
    }
    curl_easy_setopt(curl_, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl_, CURLOPT_READFUNCTION, ReadCallback);
    curl_easy_setopt(curl_, CURLOPT_DEBUGFUNCTION, DebugCallback);
    curl_easy_setopt(curl_, CURLOPT_DEBUGDATA, &last_reply_);
    curl_easy_setopt(curl_, CURLOPT_VERBOSE, 1L);
  }
  last_reply_.clear();

  std::string from = "<" + envelope.mail_from + ">";
  curl_slist* rcpt = nullptr;
  for (const std::string& r : envelope.recipients) {
    rcpt = curl_slist_append(rcpt, ("<" + r + ">").c_str());
  }
  Reader reader{.data = message};
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl_, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl_, CURLOPT_MAIL_FROM, from.c_str());
  curl_easy_setopt(curl_, CURLOPT_MAIL_RCPT, rcpt);
  curl_easy_setopt(curl_, CURLOPT_READDATA, &reader);
  curl_easy_setopt(curl_, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(message.size()));

  CURLcode rc;
  {
    BlockingRegion blocking;  // network I/O (src/core/worker_pool.h)
    rc = curl_easy_perform(curl_);
  }
  long code = 0;
  curl_off_t uploaded = 0;
  curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &code);
  curl_easy_getinfo(curl_, CURLINFO_SIZE_UPLOAD_T, &uploaded);
  // The handle must not point at this stack frame after we return.
  curl_easy_setopt(curl_, CURLOPT_ERRORBUFFER, nullptr);
  curl_easy_setopt(curl_, CURLOPT_MAIL_RCPT, nullptr);
  curl_easy_setopt(curl_, CURLOPT_READDATA, nullptr);
  curl_slist_free_all(rcpt);

  if (rc == CURLE_OK) return {.status = SendStatus::kSent, .smtp_code = static_cast<int>(code)};
  Reset();  // never reuse a connection after an error
  std::string detail = curl_easy_strerror(rc);
  if (error[0]) detail += std::string(": ") + error;
  // libcurl's text names the command and the code, not the relay's reason (5.1.1 unknown
  // user, 5.7.1 spam, ...); a refusal's own line says it.
  if (!last_reply_.empty()) detail += "; the relay replied: " + last_reply_;
  // libcurl names the refused command in its error text ("MAIL failed: 550", "RCPT
  // failed: 550", "DATA failed: 554"); a reply after the whole message was uploaded is
  // the verdict on the message.
  std::string_view what = error;
  SendStage stage = SendStage::kConnection;
  if (rc == CURLE_LOGIN_DENIED) {
    stage = SendStage::kConnection;
  } else if (what.rfind("MAIL failed", 0) == 0) {
    stage = SendStage::kSender;
  } else if (what.rfind("RCPT failed", 0) == 0) {
    stage = SendStage::kRecipient;
  } else if (what.rfind("DATA failed", 0) == 0 ||
             uploaded >= static_cast<curl_off_t>(message.size())) {
    stage = SendStage::kData;
  }
  // An internationalized address refused outright is most likely a relay without SMTPUTF8
  // (RFC 6531; libcurl asks for it only when the relay offers it): that is this message's
  // failure, not a bad mailbox (no bounce) and not the relay being down (no retry).
  if (code >= 500 && code < 600 &&
      ((stage == SendStage::kRecipient &&
        std::any_of(envelope.recipients.begin(), envelope.recipients.end(), HasNonAscii)) ||
       (stage == SendStage::kSender && HasNonAscii(envelope.mail_from)))) {
    stage = SendStage::kData;
    detail =
        "the relay refused an internationalized (UTF-8) address; it may not offer "
        "SMTPUTF8 (RFC 6531): " +
        detail;
  }
  bool permanent =
      code >= 500 && code < 600 && (stage == SendStage::kRecipient || stage == SendStage::kData);
  return {.status = permanent ? SendStatus::kPermanentFailure : SendStatus::kTemporaryFailure,
          .stage = stage,
          .smtp_code = static_cast<int>(code),
          .detail = std::move(detail)};
}

FileTransport::FileTransport(FileTransportOptions options) : options_(std::move(options)) {}

std::string FileTransport::PathFor(std::string_view message) const {
  std::string name;
  size_t end_of_header = message.find("\r\n\r\n");
  std::string_view header = message.substr(0, end_of_header);
  for (size_t pos = 0; pos < header.size();) {
    size_t eol = header.find("\r\n", pos);
    if (eol == header.npos) eol = header.size();
    std::string_view line = header.substr(pos, eol - pos);
    if (line.size() > 11 && strncasecmp(line.data(), "Message-ID:", 11) == 0) {
      size_t lt = line.find('<');
      size_t gt = line.find('>', lt == line.npos ? 0 : lt);
      if (lt != line.npos && gt != line.npos) name = std::string(line.substr(lt + 1, gt - lt - 1));
      break;
    }
    pos = eol + 2;
  }
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_' &&
        c != '@') {
      c = '_';
    }
  }
  if (name.empty() || name[0] == '.' || name.size() > 200) {
    name = crypto::Sha256Hex(message).substr(0, 32);
  }
  return (std::filesystem::path(options_.directory) / (name + ".eml")).string();
}

SendResult FileTransport::Send(const Envelope& /*envelope*/, std::string_view message) {
  static std::atomic<uint64_t> counter{0};
  std::error_code ec;
  std::filesystem::create_directories(options_.directory, ec);
  if (ec) return Temporary("cannot create " + options_.directory + ": " + ec.message());
  std::string path = PathFor(message);
  std::string tmp = (std::filesystem::path(options_.directory) /
                     (".tmp-" + std::to_string(getpid()) + "-" + std::to_string(counter++)))
                        .string();
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
  if (fd < 0) return Temporary("cannot create " + tmp + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < message.size()) {
    ssize_t n = write(fd, message.data() + done, message.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      close(fd);
      unlink(tmp.c_str());
      return Temporary("cannot write " + tmp + ": " + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  int sync_rc = fsync(fd);
  int err = errno;
  if (close(fd) != 0 && sync_rc == 0) {
    sync_rc = -1;
    err = errno;
  }
  if (sync_rc != 0) {
    unlink(tmp.c_str());
    return Temporary("cannot flush " + tmp + ": " + std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return Temporary("cannot rename to " + path + ": " + std::strerror(err));
  }
  return {.status = SendStatus::kSent};
}

}  // namespace crmd::mail
