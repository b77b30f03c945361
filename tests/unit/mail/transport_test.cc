#include "src/mail/transport.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "src/mail/dkim.h"
#include "src/mail/message.h"
#include "tests/support/fake_clock.h"
#include "tests/unit/mail/dkim_keys.h"
#include "tests/unit/mail/python.h"

namespace crmd::mail {
namespace {

using testing::SmtpSink;
using testing::TempDir;

std::string Render(const std::string& to, const std::string& subject = "Hello") {
  FakeClock clock;
  Message m{.from = {.name = "Acme", .address = "news@acme.example"},
            .to = {.name = "Rcpt", .address = to},
            .subject = subject,
            .html = "<p>Hi there</p>\n<p>.a line that starts with a dot</p>",
            .message_id = MakeMessageId("send-1", to, "acme.example"),
            .list_unsubscribe = {"https://acme.example/u/t"},
            .one_click_unsubscribe = true};
  return *RenderMessage(m, clock);
}

Envelope To(const std::string& rcpt) {
  return {.mail_from = "bounces@acme.example", .recipients = {rcpt}};
}

std::string Url(const SmtpSink& sink, const std::string& scheme = "smtp",
                const std::string& auth = "") {
  return scheme + "://" + auth + "127.0.0.1:" + std::to_string(sink.port());
}

TEST(SmtpTransport, DeliversExactBytesAndEnvelopeToARealServer_Rfc5321_3_3) {
  SmtpSink sink;
  ASSERT_NE(sink.port(), 0);
  SmtpTransport smtp({.url = Url(sink)});
  std::string message = Render("ada@example.com", "Grüße, Ada");
  SendResult r = smtp.Send(To("ada@example.com"), message);
  ASSERT_TRUE(r.ok()) << r.detail;
  EXPECT_EQ(r.smtp_code, 250);
  ASSERT_TRUE(sink.WaitFor(1));
  EXPECT_EQ(sink.Eml(1), message);  // dot-stuffing undone, nothing rewritten
  auto meta = nlohmann::json::parse(sink.Meta(1));
  EXPECT_EQ(meta["mail_from"], "bounces@acme.example");
  EXPECT_EQ(meta["rcpt_tos"], nlohmann::json::array({"ada@example.com"}));
}

TEST(SmtpTransport, LinesOfDotsSurviveTransparency_Rfc5321_4_5_2) {
  SmtpSink sink;
  SmtpTransport smtp({.url = Url(sink)});
  const std::string message =
      "From: a@acme.example\r\nSubject: dots\r\n\r\nline\r\n.\r\n..two\r\nend\r\n";
  ASSERT_TRUE(smtp.Send(To("ada@example.com"), message).ok());
  ASSERT_TRUE(sink.WaitFor(1));
  EXPECT_EQ(sink.Eml(1), message);
}

TEST(SmtpTransport, DkimSignedMessageVerifiesAfterTheRelay) {
  SmtpSink sink;
  SmtpTransport smtp({.url = Url(sink)});
  auto signer = DkimSigner::FromPem(testing::TestRsaKey().private_pem,
                                    {.selector = "sel1", .domain = "acme.example"});
  ASSERT_TRUE(signer.has_value());
  std::string message = *signer->Sign(Render("ada@example.com", "Signed ✓"));
  ASSERT_TRUE(smtp.Send(To("ada@example.com"), message).ok());
  ASSERT_TRUE(sink.WaitFor(1));
  TempDir dir;
  auto run = testing::RunPython(
      R"PY(
import dkim, sys
txt = open(sys.argv[2], 'rb').read()
print(dkim.verify(open(sys.argv[1], 'rb').read(), dnsfunc=lambda name, timeout=5: txt))
)PY",
      {sink.dir() + "/0001.eml", dir.Write("txt", testing::TestRsaKey().dns_txt)});
  EXPECT_EQ(run.output, "True\n");
}

TEST(SmtpTransport, ReusesOneConnectionForSeveralMessages) {
  SmtpSink sink;
  SmtpTransport smtp({.url = Url(sink)});
  for (const char* rcpt : {"a@example.com", "b@example.com", "c@example.com"}) {
    SendResult r = smtp.Send(To(rcpt), Render(rcpt));
    ASSERT_TRUE(r.ok()) << r.detail;
  }
  ASSERT_TRUE(sink.WaitFor(3));
  auto peer = [&](int n) { return nlohmann::json::parse(sink.Meta(n))["peer"]; };
  EXPECT_EQ(peer(1), peer(2));
  EXPECT_EQ(peer(2), peer(3));
  EXPECT_EQ(nlohmann::json::parse(sink.Meta(3))["rcpt_tos"][0], "c@example.com");
}

TEST(SmtpTransport, RejectedRecipientIsPermanentWithItsCode_Rfc5321_4_2_1) {
  SmtpSink sink;
  SmtpTransport smtp({.url = Url(sink)});
  SendResult r = smtp.Send(To("reject@example.com"), Render("reject@example.com"));
  EXPECT_EQ(r.status, SendStatus::kPermanentFailure);
  EXPECT_TRUE(r.permanent());
  EXPECT_EQ(r.stage, SendStage::kRecipient);
  EXPECT_EQ(r.smtp_code, 550);
  // The relay's own reason, not only libcurl's "RCPT failed: 550".
  EXPECT_NE(r.detail.find("550 5.1.1 No such user here"), std::string::npos) << r.detail;
  // The next message goes through on a fresh connection ("503 sender already specified"
  // never happens).
  SendResult next = smtp.Send(To("ok@example.com"), Render("ok@example.com"));
  ASSERT_TRUE(next.ok()) << next.detail;
  ASSERT_TRUE(sink.WaitFor(1));
  EXPECT_EQ(nlohmann::json::parse(sink.Meta(1))["rcpt_tos"][0], "ok@example.com");
}

// An internationalized address (RFC 6531): a relay that offers SMTPUTF8 is asked for it
// and takes the message with the address as it is; one that does not refuses the
// recipient, which is that recipient's permanent failure with the relay's words.
TEST(SmtpTransport, AnInternationalizedAddressGoesOutWithSmtpUtf8_Rfc6531_3_4) {
  const std::string zoe = "zo\xc3\xab@example.com";
  SmtpSink sink("utf8");
  SmtpTransport smtp({.url = Url(sink)});
  std::string message = Render(zoe);
  SendResult r = smtp.Send(To(zoe), message);
  ASSERT_TRUE(r.ok()) << r.detail;
  ASSERT_TRUE(sink.WaitFor(1));
  auto meta = nlohmann::json::parse(sink.Meta(1));
  EXPECT_EQ(meta["rcpt_tos"], nlohmann::json::array({zoe}));
  EXPECT_NE(meta["mail_options"].dump().find("SMTPUTF8"), std::string::npos) << meta.dump();
  EXPECT_EQ(sink.Eml(1), message);
  EXPECT_NE(message.find("\r\nTo: Rcpt <" + zoe + ">\r\n"), std::string::npos) << message;

  SmtpSink plain;  // no SMTPUTF8
  SmtpTransport old({.url = Url(plain)});
  SendResult refused = old.Send(To(zoe), Render(zoe));
  EXPECT_EQ(refused.status, SendStatus::kPermanentFailure) << refused.detail;
  EXPECT_GE(refused.smtp_code, 500) << refused.detail;
  // The message's failure, not the mailbox's: a campaign does not mark the contact bounced.
  EXPECT_EQ(refused.stage, SendStage::kData) << refused.detail;
  EXPECT_NE(refused.detail.find("SMTPUTF8"), std::string::npos) << refused.detail;
  EXPECT_EQ(plain.MessageCount(), 0u);
  // A UTF-8 sender refused at MAIL FROM is that message's failure too, not the relay being
  // down (which would hold the whole queue).
  SendResult sender =
      old.Send({.mail_from = zoe, .recipients = {"ada@example.com"}}, Render("ada@example.com"));
  EXPECT_EQ(sender.status, SendStatus::kPermanentFailure) << sender.detail;
  EXPECT_EQ(sender.stage, SendStage::kData) << sender.detail;
  // An ASCII address refused at RCPT is still that mailbox's bounce.
  SendResult ascii = old.Send(To("reject@example.com"), Render("reject@example.com"));
  EXPECT_EQ(ascii.stage, SendStage::kRecipient) << ascii.detail;
}

TEST(SmtpTransport, MessageRejectedAfterDataIsPermanent_Rfc5321_4_2_5) {
  SmtpSink sink;
  SmtpTransport smtp({.url = Url(sink)});
  SendResult r = smtp.Send(To("spam@example.com"), Render("spam@example.com"));
  EXPECT_EQ(r.status, SendStatus::kPermanentFailure);
  EXPECT_EQ(r.stage, SendStage::kData);
  EXPECT_EQ(r.smtp_code, 554);
  EXPECT_NE(r.detail.find("554 5.7.1 Message rejected as spam"), std::string::npos) << r.detail;
  SendResult next = smtp.Send(To("ok@example.com"), Render("ok@example.com"));
  ASSERT_TRUE(next.ok()) << next.detail;
}

TEST(SmtpTransport, ReconnectsWhenTheServerClosedAnIdleConnection) {
  SmtpSink sink("idle1s");
  SmtpTransport smtp({.url = Url(sink)});
  ASSERT_TRUE(smtp.Send(To("a@example.com"), Render("a@example.com")).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the server hangs up
  SendResult r = smtp.Send(To("b@example.com"), Render("b@example.com"));
  ASSERT_TRUE(r.ok()) << r.detail;
  ASSERT_TRUE(sink.WaitFor(2));
  EXPECT_NE(nlohmann::json::parse(sink.Meta(1))["peer"],
            nlohmann::json::parse(sink.Meta(2))["peer"]);
}

TEST(SmtpTransport, DeferredRecipientIsTemporaryWithItsCode_Rfc5321_4_2_1) {
  SmtpSink sink;
  SmtpTransport smtp({.url = Url(sink)});
  SendResult r = smtp.Send(To("later@example.com"), Render("later@example.com"));
  EXPECT_EQ(r.status, SendStatus::kTemporaryFailure);
  EXPECT_EQ(r.stage, SendStage::kRecipient);
  EXPECT_EQ(r.smtp_code, 451);
}

TEST(SmtpTransport, RefusedSenderIsTheRelaysPolicyNotTheRecipients_Rfc5321_3_3) {
  SmtpSink sink;
  SmtpTransport smtp({.url = Url(sink)});
  SendResult r = smtp.Send({.mail_from = "blocked@acme.example", .recipients = {"ada@example.com"}},
                           Render("ada@example.com"));
  EXPECT_EQ(r.status, SendStatus::kTemporaryFailure);
  EXPECT_EQ(r.stage, SendStage::kSender);
  EXPECT_EQ(r.smtp_code, 550);
}

TEST(SmtpTransport, RefusedConnectionIsTemporary) {
  // A port that was just free: nothing listens there.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  SmtpTransport smtp({.url = "smtp://127.0.0.1:" + std::to_string(ntohs(addr.sin_port))});
  SendResult r = smtp.Send(To("ada@example.com"), Render("ada@example.com"));
  EXPECT_EQ(r.status, SendStatus::kTemporaryFailure);
  EXPECT_EQ(r.stage, SendStage::kConnection);
  EXPECT_EQ(r.smtp_code, 0);
  EXPECT_FALSE(r.detail.empty());
}

TEST(SmtpTransport, AuthenticatesWithTheUrlsUserAndPassword_Rfc4954) {
  SmtpSink sink("auth");
  SmtpTransport good({.url = Url(sink, "smtp", "user:secret@")});
  SendResult r = good.Send(To("ada@example.com"), Render("ada@example.com"));
  ASSERT_TRUE(r.ok()) << r.detail;
  ASSERT_TRUE(sink.WaitFor(1));
  // A wrong password is the relay's problem, not the recipient's: temporary.
  SmtpTransport bad({.url = Url(sink, "smtp", "user:wrong@")});
  SendResult b = bad.Send(To("ada@example.com"), Render("ada@example.com"));
  EXPECT_EQ(b.status, SendStatus::kTemporaryFailure);
  EXPECT_EQ(b.stage, SendStage::kConnection);
  EXPECT_EQ(b.smtp_code, 535);
  EXPECT_EQ(b.detail.find("wrong"), std::string::npos);
}

TEST(SmtpTransport, StartTlsRequiredAndVerified_Rfc3207) {
  SmtpSink sink("starttls");
  ASSERT_NE(sink.port(), 0);
  SmtpTransport smtp({.url = Url(sink), .tls = SmtpTls::kRequired, .ca_file = sink.cert_file()});
  SendResult r = smtp.Send(To("ada@example.com"), Render("ada@example.com"));
  ASSERT_TRUE(r.ok()) << r.detail;
  ASSERT_TRUE(sink.WaitFor(1));
  // Without trusting the server's certificate nothing is sent.
  SmtpTransport untrusted({.url = Url(sink), .tls = SmtpTls::kRequired});
  EXPECT_EQ(untrusted.Send(To("ada@example.com"), Render("ada@example.com")).status,
            SendStatus::kTemporaryFailure);
}

TEST(SmtpTransport, ImplicitTlsWithSmtps_Rfc8314_3_3) {
  SmtpSink sink("smtps");
  ASSERT_NE(sink.port(), 0);
  SmtpTransport smtp({.url = Url(sink, "smtps"), .ca_file = sink.cert_file()});
  for (const char* rcpt : {"a@example.com", "b@example.com"}) {
    SendResult r = smtp.Send(To(rcpt), Render(rcpt));
    ASSERT_TRUE(r.ok()) << r.detail;
  }
  ASSERT_TRUE(sink.WaitFor(2));
  EXPECT_EQ(sink.Eml(2), Render("b@example.com"));
}

TEST(SmtpTransport, MalformedEnvelopeIsPermanentAndNeverSent) {
  SmtpTransport smtp({.url = "smtp://127.0.0.1:1"});
  EXPECT_TRUE(smtp.Send({.mail_from = "a@x.example", .recipients = {}}, "x").permanent());
  EXPECT_TRUE(smtp.Send(To("a@x.example>\r\nRCPT TO:<b@x.example"), "x").permanent());
}

TEST(FileTransport, WritesAParseableEmlAtomicallyNamedByMessageId) {
  TempDir dir;
  FileTransport files({.directory = dir.path() + "/var/mail"});
  std::string message = Render("ada@example.com", "Grüße");
  SendResult r = files.Send(To("ada@example.com"), message);
  ASSERT_TRUE(r.ok()) << r.detail;
  std::string path = files.PathFor(message);
  std::string id = MakeMessageId("send-1", "ada@example.com", "acme.example");
  EXPECT_EQ(std::filesystem::path(path).filename(), id.substr(1, id.size() - 2) + ".eml");
  EXPECT_EQ(testing::ReadFile(path), message);
  // Only the finished file is there: no temporary left behind.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path() + "/var/mail")) {
    ++entries;
    EXPECT_EQ(e.path().extension(), ".eml");
  }
  EXPECT_EQ(entries, 1);
  // A resend of the same message replaces the same file.
  ASSERT_TRUE(files.Send(To("ada@example.com"), message).ok());
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path() + "/var/mail"),
                          std::filesystem::directory_iterator()),
            1);
  auto run = testing::RunPython(R"PY(
import email, sys
from email import policy
m = email.message_from_bytes(open(sys.argv[1], 'rb').read(), policy=policy.default)
print(m['subject'], m.get_body(('plain',)).get_content().replace('\r\n', '\n').strip(), len(m.defects))
)PY",
                                {path});
  EXPECT_EQ(run.output, "Grüße Hi there\n\n.a line that starts with a dot 0\n");
}

TEST(FileTransport, UnwritableDirectoryIsTemporary) {
  TempDir dir;
  std::string blocker = dir.Write("file", "x");
  FileTransport files({.directory = blocker + "/sub"});
  SendResult r = files.Send(To("ada@example.com"), Render("ada@example.com"));
  EXPECT_EQ(r.status, SendStatus::kTemporaryFailure);
  EXPECT_FALSE(r.detail.empty());
}

}  // namespace
}  // namespace crmd::mail
