#pragma once
// Transports hand a rendered message to the outside world: SMTP (libcurl) or .eml files.
//
// Send() reports what happened as a value, never an exception. A permanent failure (an
// SMTP 5xx reply to RCPT TO, to DATA or after the message) means "this message to this
// recipient will never go": the caller marks the recipient failed (and, at kRecipient, the
// address bounced). A temporary failure (4xx, a refused or dropped connection, a timeout,
// TLS or authentication trouble, a relay that refuses our sender) means "not now": the
// caller backs off, keeps the recipient queued, and pauses when it keeps happening.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

typedef void CURL;

namespace crmd::mail {

struct Envelope {
  std::string mail_from;                // the bounce address (RFC 5321 reverse-path)
  std::vector<std::string> recipients;  // RCPT TO; a campaign sends one per message
};

enum class SendStatus { kSent, kTemporaryFailure, kPermanentFailure };

// Where a failure happened (RFC 5321 §3.3 transaction steps).
enum class SendStage {
  kNone,        // sent
  kConnection,  // connect, greeting, EHLO, STARTTLS/TLS, AUTH, or the connection broke
  kSender,      // MAIL FROM refused: the relay's policy, not this recipient
  kRecipient,   // RCPT TO refused: this address
  kData,        // DATA refused, or the message refused after it was sent
};

struct SendResult {
  SendStatus status = SendStatus::kSent;
  SendStage stage = SendStage::kNone;
  int smtp_code = 0;   // the last SMTP reply code, 0 when none was read
  std::string detail;  // for logs and the per-recipient log; never holds credentials

  bool ok() const { return status == SendStatus::kSent; }
  bool permanent() const { return status == SendStatus::kPermanentFailure; }
};

class Transport {
 public:
  virtual ~Transport() = default;
  // REQUIRES: `message` is a whole RFC 5322 message with CRLF line endings.
  virtual SendResult Send(const Envelope& envelope, std::string_view message) = 0;
};

enum class SmtpTls {
  kOpportunistic,  // smtp://: STARTTLS when offered (CURLUSESSL_TRY)
  kRequired,       // smtp://: STARTTLS or fail (CURLUSESSL_ALL); smtps:// is always TLS
  kNone,           // smtp://: never STARTTLS (a loopback sink)
};

struct SmtpOptions {
  // smtp://[user:pass@]host[:port][/ehlo-name] or smtps://... (implicit TLS, RFC 8314).
  // The user and password in the URL are used for AUTH; the path, if any, is the EHLO name.
  std::string url;
  SmtpTls tls = SmtpTls::kOpportunistic;
  bool verify_peer = true;  // certificate and host name checks under TLS
  std::string ca_file;      // empty: the system's CA store
  long connect_timeout_ms = 10'000;
  long timeout_ms = 60'000;  // one whole message, connection included
};

// SMTP through libcurl. The easy handle, and so the connection, is kept between messages
// (RFC 5321 allows many transactions per session) and dropped after any failure, so that
// a half-finished transaction never leaks into the next message ("503 sender already
// specified"). Not thread-safe: one SmtpTransport per worker.
class SmtpTransport final : public Transport {
 public:
  explicit SmtpTransport(SmtpOptions options);
  ~SmtpTransport() override;
  SmtpTransport(const SmtpTransport&) = delete;
  SmtpTransport& operator=(const SmtpTransport&) = delete;

  SendResult Send(const Envelope& envelope, std::string_view message) override;

 private:
  const SmtpOptions options_;
  CURL* curl_ = nullptr;
  std::string last_reply_;  // the relay's last refusal of this message (for `detail`)

  void Reset();
};

struct FileTransportOptions {
  std::string directory = "var/mail";  // created when missing
};

// Writes each message to <directory>/<name>.eml: written to a temporary file in the same
// directory, flushed to disk, then renamed, so a reader never sees half a message. The
// name comes from the Message-ID when there is one (a resend replaces the same file), or
// from the SHA-256 of the message. The envelope is not written. Thread-safe.
class FileTransport final : public Transport {
 public:
  explicit FileTransport(FileTransportOptions options);

  SendResult Send(const Envelope& envelope, std::string_view message) override;

  // The file a message is (or would be) written to.
  std::string PathFor(std::string_view message) const;

 private:
  const FileTransportOptions options_;
};

}  // namespace crmd::mail
