#include "src/mail/dkim.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "src/core/crypto.h"
#include "src/mail/message.h"
#include "tests/support/fake_clock.h"
#include "tests/unit/mail/dkim_keys.h"
#include "tests/unit/mail/python.h"

namespace crmd::mail {
namespace {

using testing::RunPython;
using testing::TempDir;

TEST(DkimCanonicalization, RelaxedHeaderMatchesTheRfcExample_Rfc6376_3_4_5) {
  EXPECT_EQ(DkimRelaxedHeader("A", " X"), "a:X");
  EXPECT_EQ(DkimRelaxedHeader("B ", " Y\t\r\n\tZ  "), "b:Y Z");
}

TEST(DkimCanonicalization, RelaxedBodyMatchesTheRfcExample_Rfc6376_3_4_5) {
  EXPECT_EQ(DkimRelaxedBody(" C \r\nD \t E\r\n\r\n\r\n"), " C\r\nD E\r\n");
  EXPECT_EQ(DkimRelaxedBody(""), "");
  EXPECT_EQ(DkimRelaxedBody("\r\n\r\n"), "");
  EXPECT_EQ(DkimRelaxedBody("no newline"), "no newline\r\n");
}

TEST(DkimSigner, RejectsMissingFilesAndNonRsaKeys) {
  EXPECT_FALSE(
      DkimSigner::Load(
          {.private_key_file = "/nonexistent/key.pem", .selector = "s", .domain = "acme.example"})
          .has_value());
  EXPECT_FALSE(
      DkimSigner::FromPem("not a key", {.selector = "s", .domain = "acme.example"}).has_value());
  EVP_PKEY* ec = EVP_EC_gen("P-256");
  ASSERT_NE(ec, nullptr);
  auto pem = testing::PrivateKeyPem(ec);
  EVP_PKEY_free(ec);
  auto s = DkimSigner::FromPem(pem, {.selector = "s", .domain = "acme.example"});
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message.find("RSA"), std::string::npos);
  const auto& key = testing::TestRsaKey();
  EXPECT_FALSE(
      DkimSigner::FromPem(key.private_pem, {.selector = "bad;sel", .domain = "acme.example"})
          .has_value());
}

// Verified by python3-dkim with the public key served through its dnsfunc.
constexpr const char* kVerify = R"PY(
import dkim, logging, sys
logging.basicConfig(stream=sys.stdout, level=logging.DEBUG)
msg = open(sys.argv[1], 'rb').read()
txt = open(sys.argv[2], 'rb').read()
def dnsfunc(name, timeout=5):
    name = name.decode() if isinstance(name, bytes) else name
    return txt if name.rstrip('.') == 'sel1._domainkey.acme.example' else None
ok = dkim.verify(msg, logger=logging.getLogger('dkim'), dnsfunc=dnsfunc)
print('VERIFIED' if ok else 'FAILED')
)PY";

// The verifier's log goes to `log` for the failure message of a test that expected success.
bool VerifiedByPythonDkim(const std::string& message, std::string* log = nullptr) {
  TempDir dir;
  const auto& key = testing::TestRsaKey();
  auto run = RunPython(kVerify, {dir.Write("m.eml", message), dir.Write("txt", key.dns_txt)});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  if (log) *log = run.output;
  return run.output.find("VERIFIED") != std::string::npos;
}

DkimSigner Signer() {
  auto s = DkimSigner::FromPem(testing::TestRsaKey().private_pem,
                               {.selector = "sel1", .domain = "acme.example"});
  EXPECT_TRUE(s.has_value());
  return *s;
}

Message SignedSample() {
  return {.from = {.name = "Acme Ünïcode", .address = "news@acme.example"},
          .to = {.name = "Ada", .address = "ada@example.com"},
          .subject = "Grüße — a subject long enough to be folded over more than one header line",
          .html = "<p>Hello    world</p>\n\n<p>" + std::string(200, 'y') + "</p>",
          .preheader = "preview",
          .message_id = MakeMessageId("s1", "ada@example.com", "acme.example"),
          .list_unsubscribe = {"https://acme.example/u/abc", "mailto:u@acme.example"},
          .one_click_unsubscribe = true};
}

TEST(DkimSigner, SignatureVerifiesWithPythonDkim_Rfc6376_3_7) {
  FakeClock clock;
  auto rendered = RenderMessage(SignedSample(), clock);
  ASSERT_TRUE(rendered.has_value());
  auto signed_message = Signer().Sign(*rendered);
  ASSERT_TRUE(signed_message.has_value()) << signed_message.error().message;
  EXPECT_EQ(signed_message->rfind("DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; "
                                  "d=acme.example; s=sel1;",
                                  0),
            0u);
  EXPECT_NE(signed_message->find("h=from:to:subject:date:message-id:mime-version:"),
            std::string::npos)
      << *signed_message;
  EXPECT_NE(signed_message->find("list-unsubscribe:"), std::string::npos);
  EXPECT_NE(signed_message->find("list-unsubscribe-post;"), std::string::npos);
  std::string log;
  EXPECT_TRUE(VerifiedByPythonDkim(*signed_message, &log)) << log;
}

TEST(DkimSigner, TamperedHeaderOrBodyFailsVerification) {
  FakeClock clock;
  std::string m = *Signer().Sign(*RenderMessage(SignedSample(), clock));
  std::string header_changed = m;
  header_changed.replace(header_changed.find("To: Ada"), 7, "To: Bob");
  EXPECT_FALSE(VerifiedByPythonDkim(header_changed));
  std::string body_changed = m;
  body_changed.replace(body_changed.rfind("yyyy"), 4, "zzzz");
  EXPECT_FALSE(VerifiedByPythonDkim(body_changed));
}

TEST(DkimSigner, RelaxedCanonicalizationToleratesWhitespaceChanges_Rfc6376_3_4_2) {
  FakeClock clock;
  std::string m = *Signer().Sign(*RenderMessage(SignedSample(), clock));
  // A relay that re-folds a header or pads a body line with spaces keeps the signature.
  std::string refolded = m;
  refolded.replace(refolded.find("MIME-Version: 1.0"), 17, "MIME-Version:   1.0  ");
  size_t body = refolded.find("\r\n\r\n");
  refolded.replace(refolded.find("\r\n", body + 4), 2, "   \r\n");
  std::string log;
  EXPECT_TRUE(VerifiedByPythonDkim(refolded, &log)) << log;
}

TEST(DkimSigner, SignsBareLfMessagesAsCrlf) {
  std::string m = "From: a@acme.example\nTo: b@example.com\nSubject: hi\n\nbody line\n";
  auto s = Signer().Sign(m);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->find("\n", s->find("From:")), s->find("\r\n", s->find("From:")) + 1);
  std::string log;
  EXPECT_TRUE(VerifiedByPythonDkim(*s, &log)) << log;
  EXPECT_FALSE(Signer().Sign("To: b@example.com\r\n\r\nno from").has_value());
  EXPECT_FALSE(Signer().Sign("From: a@acme.example\r\nno separator").has_value());
}

TEST(DkimSigner, LoadsTheKeyFromAPemFile) {
  TempDir dir;
  std::string path = dir.Write("dkim.pem", testing::TestRsaKey().private_pem);
  auto s =
      DkimSigner::Load({.private_key_file = path, .selector = "sel1", .domain = "acme.example"});
  ASSERT_TRUE(s.has_value()) << s.error().message;
  FakeClock clock;
  std::string log;
  EXPECT_TRUE(VerifiedByPythonDkim(*s->Sign(*RenderMessage(SignedSample(), clock)), &log)) << log;
}

}  // namespace
}  // namespace crmd::mail
