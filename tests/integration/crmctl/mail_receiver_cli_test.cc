// crmctl mail receiver, run as an operator would, against a real SQLite file: secrets come
// from files or stdin, are never printed, and a password is stored only as its hash.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "src/core/crypto.h"
#include "src/store/db.h"
#include "tests/integration/crmctl/run_crmctl.h"
#include "tests/support/test_server.h"

namespace crmd {
namespace {

testing::CtlRun ReceiverCtl(const std::string& db, const std::string& args,
                            bool with_stderr = true) {
  return testing::Crmctl("--database_url=sqlite:" + db + " " + args, with_stderr);
}

// The stored columns of one provider's row: signing_key, username, password_hash.
std::vector<std::string> StoredReceiver(const std::string& db, const std::string& provider) {
  auto opened = store::Open("sqlite:" + db, 1);
  EXPECT_TRUE(opened.has_value());
  if (!opened) return {};
  auto row = (*opened)->Read([&](store::Conn& c) {
    return c.QueryOne(
        "SELECT COALESCE(signing_key, ''), COALESCE(username, ''), COALESCE(password_hash, '') "
        "FROM mail_receivers WHERE provider = ?",
        {provider});
  });
  EXPECT_TRUE(row.has_value() && row->has_value());
  if (!row || !*row) return {};
  return {(*row)->Str(0), (*row)->Str(1), (*row)->Str(2)};
}

TEST(CrmctlMailReceiver, SetListShowDisableDeleteWithoutEverPrintingASecret) {
  testing::TempDir dir;
  const std::string db = dir.path() + "/receivers.db";
  const std::string key_file = dir.path() + "/mailgun.key";
  const std::string key = "key-0123456789abcdef0123456789abcdef";
  std::ofstream(key_file) << key << "\n";

  auto set = ReceiverCtl(db, "mail receiver set mailgun --signing-key-file " + key_file, false);
  ASSERT_EQ(set.status, 0) << set.out;
  EXPECT_EQ(set.out.find(key), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(set.out)["has_signing_key"], true) << set.out;
  EXPECT_EQ(StoredReceiver(db, "mailgun").at(0), key);  // the trailing newline dropped

  const std::string password = "pm-0123456789abcdef-password";
  auto pm = testing::RunCommand(
      "printf '%s\\n' '" + password + "' | " + std::string(CRMD_BINARY_DIR) +
      "/src/app/crmctl --database_url=sqlite:" + db +
      " mail receiver set postmark --username hooks --password-file -" + " 2>/dev/null");
  ASSERT_EQ(pm.status, 0) << pm.out;
  EXPECT_EQ(pm.out.find(password), std::string::npos);
  auto stored = StoredReceiver(db, "postmark");
  EXPECT_EQ(stored.at(1), "hooks");
  EXPECT_EQ(stored.at(2), crypto::HashSecret(password));

  auto list = ReceiverCtl(db, "mail receiver list", false);
  ASSERT_EQ(list.status, 0) << list.out;
  EXPECT_EQ(nlohmann::json::parse(list.out).size(), 2u) << list.out;
  EXPECT_EQ(list.out.find(key), std::string::npos);
  EXPECT_EQ(list.out.find(stored.at(2)), std::string::npos);

  auto off = ReceiverCtl(db, "mail receiver disable mailgun", false);
  ASSERT_EQ(off.status, 0) << off.out;
  EXPECT_EQ(nlohmann::json::parse(off.out)["enabled"], false);
  EXPECT_EQ(StoredReceiver(db, "mailgun").at(0), key);  // disabling keeps the key

  // Refusals: a short key, an unknown option, a key on the command line, an unknown provider.
  std::ofstream(key_file) << "short";
  EXPECT_NE(ReceiverCtl(db, "mail receiver set mailgun --signing-key-file " + key_file).status, 0);
  EXPECT_NE(ReceiverCtl(db, "mail receiver set mailgun --signing-key " + key).status, 0);
  EXPECT_NE(ReceiverCtl(db, "mail receiver set ses --signing-key-file " + key_file).status, 0);
  EXPECT_EQ(StoredReceiver(db, "mailgun").at(0), key);

  auto ses = ReceiverCtl(
      db, "mail receiver set ses --topic-arn arn:aws:sns:us-east-1:123456789012:ses-events", false);
  ASSERT_EQ(ses.status, 0) << ses.out;
  EXPECT_EQ(nlohmann::json::parse(ses.out)["topic_arn"],
            "arn:aws:sns:us-east-1:123456789012:ses-events");
  EXPECT_NE(ReceiverCtl(db, "mail receiver set ses --topic-arn not-an-arn").status, 0);

  EXPECT_EQ(ReceiverCtl(db, "mail receiver delete mailgun").status, 0);
  EXPECT_NE(ReceiverCtl(db, "mail receiver show mailgun").status, 0);
}

}  // namespace
}  // namespace crmd
