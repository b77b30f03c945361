// Issue 13: an environment variable that merely starts with CRMD_ (a deployment's own, e.g.
// CRMD_ADMIN_EMAIL for its scripts) does not stop crmd or crmctl: it is a warning naming
// the variable. Unknown keys in the config file or on the command line stay errors
// (typos), and so does a bad value of a known key in the environment. The real binaries.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "tests/support/crmd_process.h"
#include "tests/support/test_server.h"

namespace crmd {
namespace {

struct CliResult {
  int exit_code = -1;
  std::string out;
};

// `env_prefix` is prepended to the command line (VAR=value ...); stderr goes with stdout.
CliResult Shell(const std::string& env_prefix, const std::string& binary, const std::string& args) {
  std::string cmd = "env " + env_prefix + " timeout 30 " + std::string(CRMD_BINARY_DIR) +
                    "/src/app/" + binary + " " + args + " 2>&1";
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) r.out.append(buf, n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ConfigEnvironment, CrmctlRunsWithAnUnknownCrmdVariableAndWarnsNamingIt) {
  testing::TempDir dir;
  CliResult r = Shell("CRMD_ADMIN_EMAIL=ops@example.com", "crmctl",
                      "--database_url=sqlite:" + dir.path() + "/a.db migrate");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("warning"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CRMD_ADMIN_EMAIL"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("ops@example.com"), std::string::npos)
      << "the value is not echoed: " << r.out;
}

TEST(ConfigEnvironment, CrmctlStillRefusesAnUnknownFlagAnUnknownFileKeyAndABadKnownVariable) {
  testing::TempDir dir;
  const std::string db = "--database_url=sqlite:" + dir.path() + "/b.db";
  CliResult flag = Shell("", "crmctl", db + " --admin_email=ops@example.com migrate");
  EXPECT_EQ(flag.exit_code, 2) << flag.out;
  EXPECT_NE(flag.out.find("unknown config key: admin_email"), std::string::npos) << flag.out;

  const std::string file = dir.path() + "/crmd.json";
  std::ofstream(file) << R"({"admin_email": "ops@example.com"})";
  CliResult in_file = Shell("", "crmctl", db + " --config=" + file + " migrate");
  EXPECT_EQ(in_file.exit_code, 2) << in_file.out;
  EXPECT_NE(in_file.out.find("unknown config key: admin_email"), std::string::npos) << in_file.out;

  CliResult bad_value = Shell("CRMD_PORT=eighty", "crmctl", db + " migrate");
  EXPECT_EQ(bad_value.exit_code, 2) << bad_value.out;
  EXPECT_NE(bad_value.out.find("not an integer"), std::string::npos) << bad_value.out;
}

TEST(ConfigEnvironment, CrmdStartsWithAnUnknownCrmdVariableAndLogsAWarningNamingIt) {
  testing::TempDir dir;
  const uint16_t port = testing::FreePort();
  ASSERT_NE(port, 0);
  const std::string log = dir.path() + "/crmd.log";
  // The child inherits this process's environment.
  ASSERT_EQ(setenv("CRMD_ADMIN_EMAIL", "ops@example.com", 1), 0);
  std::string text;
  {
    testing::CrmdProcess crmd(
        {"--port=" + std::to_string(port), "--database_url=sqlite:" + dir.path() + "/c.db",
         "--mail_dir=" + dir.path() + "/mail"},
        log);
    unsetenv("CRMD_ADMIN_EMAIL");
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < until) {
      text = ReadFile(log);
      if (text.find("\"event\":\"listening\"") != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  EXPECT_NE(text.find("\"event\":\"listening\""), std::string::npos) << "crmd did not start:\n"
                                                                     << text;
  EXPECT_NE(text.find("config_warning"), std::string::npos) << text;
  EXPECT_NE(text.find("CRMD_ADMIN_EMAIL"), std::string::npos) << text;
}

TEST(ConfigEnvironment, CrmdStillRefusesAnUnknownFlag) {
  testing::TempDir dir;
  CliResult r =
      Shell("", "crmd",
            "--port=0 --database_url=sqlite:" + dir.path() + "/d.db --admin_email=ops@example.com");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("unknown config key: admin_email"), std::string::npos) << r.out;
}

// docs/reliability.md: a bad value of a known key stops crmd. A port outside 0..65535 once
// wrapped (99999 listened on 34463, -5 on 65531); now it is refused like "abc", exit 2,
// whether it comes from a flag, the environment or the file.
TEST(ConfigEnvironment, CrmdRefusesAPortOutsideZeroTo65535InsteadOfWrappingIt) {
  testing::TempDir dir;
  const std::string db = "--database_url=sqlite:" + dir.path() + "/e.db";
  for (const std::string port : {"99999", "65536", "-5"}) {
    CliResult r = Shell("", "crmd", "--port=" + port + " " + db);
    EXPECT_EQ(r.exit_code, 2) << port << ": " << r.out;
    EXPECT_NE(r.out.find("config port: out of range (0..65535): " + port), std::string::npos)
        << r.out;
  }
  CliResult env = Shell("CRMD_PORT=70000", "crmd", db);
  EXPECT_EQ(env.exit_code, 2) << env.out;
  const std::string file = dir.path() + "/crmd.json";
  std::ofstream(file) << R"({"port": 99999})";
  CliResult in_file = Shell("", "crmd", db + " --config=" + file);
  EXPECT_EQ(in_file.exit_code, 2) << in_file.out;
  EXPECT_NE(in_file.out.find("out of range"), std::string::npos) << in_file.out;
}

TEST(ConfigEnvironment, CrmdRefusesANegativeOrZeroTimeoutAndABadMetricsPortWithExit2) {
  testing::TempDir dir;
  const std::string base = "--port=0 --database_url=sqlite:" + dir.path() + "/f.db ";
  CliResult timeout = Shell("", "crmd", base + "--read_timeout_s=0");
  EXPECT_EQ(timeout.exit_code, 2) << timeout.out;
  EXPECT_NE(timeout.out.find("read_timeout_s must be >= 1"), std::string::npos) << timeout.out;
  CliResult body = Shell("", "crmd", base + "--max_body_bytes=-1");
  EXPECT_EQ(body.exit_code, 2) << body.out;
  EXPECT_NE(body.out.find("config max_body_bytes: out of range"), std::string::npos) << body.out;
  for (const std::string addr : {"127.0.0.1:99999", "127.0.0.1:-5", "127.0.0.1:9464abc"}) {
    CliResult metrics = Shell("", "crmd", base + "--metrics_listen_address=" + addr);
    EXPECT_EQ(metrics.exit_code, 2) << addr << ": " << metrics.out;
    EXPECT_NE(metrics.out.find("metrics_listen_address must be host:port"), std::string::npos)
        << metrics.out;
  }
}

}  // namespace
}  // namespace crmd
