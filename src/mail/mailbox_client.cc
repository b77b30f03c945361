#include "src/mail/mailbox_client.h"

#include <curl/curl.h>

#include <mutex>
#include <sstream>

#include "src/core/worker_pool.h"

namespace crmd::mail {
namespace {

struct Sink {
  std::string data;
  size_t limit = 0;
};

size_t WriteCallback(char* ptr, size_t size, size_t n, void* userdata) {
  auto* sink = static_cast<Sink*>(userdata);
  if (sink->data.size() + size * n > sink->limit) return 0;  // aborts the transfer
  sink->data.append(ptr, size * n);
  return size * n;
}

void InitCurl() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool AllDigits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::string RedactedMailboxUrl(const std::string& url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return "(not a URL)";
  std::string rest = url.substr(scheme_end + 3);
  auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  if (auto at = authority.rfind('@'); at != std::string::npos) authority = authority.substr(at + 1);
  return url.substr(0, scheme_end + 3) + authority +
         (slash == std::string::npos ? "" : rest.substr(slash));
}

MailboxClient::MailboxClient(MailboxOptions options) : options_(std::move(options)) { InitCurl(); }

MailboxClient::~MailboxClient() {
  if (curl_) curl_easy_cleanup(curl_);  // LOGOUT / QUIT
}

std::string MailboxClient::Base() const {
  std::string base = options_.url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (!pop3() && base.find('/', base.find("://") + 3) == std::string::npos) base += "/INBOX";
  return base;
}

Result<std::string> MailboxClient::Perform(const std::string& url, const std::string& command,
                                           bool body) {
  if (!curl_) {
    curl_ = curl_easy_init();
    if (!curl_) return Fail(Errc::kUnavailable, "curl_easy_init failed");
    curl_easy_setopt(curl_, CURLOPT_PROTOCOLS_STR, "imap,imaps,pop3,pop3s");
    curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl_, CURLOPT_CONNECTTIMEOUT_MS, options_.connect_timeout_ms);
    curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, options_.timeout_ms);
    curl_easy_setopt(curl_, CURLOPT_USE_SSL, static_cast<long>(CURLUSESSL_TRY));
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, WriteCallback);
  }
  Sink sink{.limit = options_.max_mail_bytes};
  curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl_, CURLOPT_CUSTOMREQUEST, command.empty() ? nullptr : command.c_str());
  curl_easy_setopt(curl_, CURLOPT_NOBODY, body ? 0L : 1L);
  curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &sink);
  CURLcode rc;
  {
    BlockingRegion blocking;  // network I/O (src/core/worker_pool.h)
    rc = curl_easy_perform(curl_);
  }
  curl_easy_setopt(curl_, CURLOPT_WRITEDATA, nullptr);
  curl_easy_setopt(curl_, CURLOPT_CUSTOMREQUEST, nullptr);
  if (rc != CURLE_OK) {
    // curl's own text names the step (login, select, fetch), never the password.
    std::string what = std::string(curl_easy_strerror(rc)) + " at " + Redacted();
    curl_easy_cleanup(curl_);
    curl_ = nullptr;
    return Fail(Errc::kUnavailable, "the bounce mailbox: " + what);
  }
  return std::move(sink.data);
}

Result<std::vector<std::string>> MailboxClient::List() {
  // IMAP: "* SEARCH 3 5 9"; POP3 LIST: "1 2048" per line.
  auto out = pop3() ? Perform(Base() + "/", "", true) : Perform(Base(), "UID SEARCH ALL", true);
  if (!out) return Fail(out.error());
  std::vector<std::string> ids;
  std::istringstream lines(*out);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::istringstream words(line);
    std::string w;
    if (pop3()) {
      if (words >> w && AllDigits(w)) ids.push_back(w);
      continue;
    }
    if (!(words >> w) || w != "*" || !(words >> w) || w != "SEARCH") continue;
    while (words >> w)
      if (AllDigits(w)) ids.push_back(w);
  }
  return ids;
}

Result<std::string> MailboxClient::Fetch(const std::string& id) {
  if (!AllDigits(id)) return Fail(Errc::kInvalidArgument, "not a mail id: " + id);
  return Perform(pop3() ? Base() + "/" + id : Base() + "/;UID=" + id, "", true);
}

Status MailboxClient::Delete(const std::string& id) {
  if (!AllDigits(id)) return Fail(Errc::kInvalidArgument, "not a mail id: " + id);
  auto done = pop3() ? Perform(Base() + "/" + id, "DELE", false)
                     : Perform(Base(), "UID STORE " + id + " +FLAGS.SILENT (\\Deleted)", true);
  if (!done) return Fail(done.error());
  return Ok();
}

Status MailboxClient::Finish() {
  if (!curl_) return Ok();
  if (!pop3())
    if (auto done = Perform(Base(), "EXPUNGE", true); !done) return Fail(done.error());
  curl_easy_cleanup(curl_);  // POP3: QUIT commits the deletions
  curl_ = nullptr;
  return Ok();
}

}  // namespace crmd::mail
