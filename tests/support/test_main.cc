#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "src/core/crypto.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

// A sanitized build (-DCRMD_SANITIZE=address,undefined; scripts/test.sh): the options of
// this test process. The environment's ASAN_OPTIONS/UBSAN_OPTIONS/LSAN_OPTIONS come after
// these and win. Any report ends the process with a failing status. Allocation and free
// stacks keep 10 frames, not 30: recording them was about 8 % of a sanitized test's CPU
// (perf), and 10 frames reach crmd's own code in every report seen so far.
#define CRMD_ASAN_OPTIONS \
  "detect_leaks=1:halt_on_error=1:check_initialization_order=1:malloc_context_size=10"
#define CRMD_UBSAN_OPTIONS "print_stacktrace=1:halt_on_error=1"
#define CRMD_LSAN_OPTIONS "suppressions=" CRMD_SOURCE_DIR "/tests/support/lsan.supp"
extern "C" const char* __asan_default_options() { return CRMD_ASAN_OPTIONS; }
extern "C" const char* __ubsan_default_options() { return CRMD_UBSAN_OPTIONS; }
extern "C" const char* __lsan_default_options() { return CRMD_LSAN_OPTIONS; }

namespace {

// The crmd and crmctl processes a test spawns inherit the environment but not the defaults
// above; their reports would end up in a log nobody reads (or be lost with a server the
// test stops). They get the same options and write reports into a directory of this
// process instead, which main() reads after the tests: a report from a child fails the test.
class ChildReports {
 public:
  ChildReports() {
    char dir[] = "/tmp/crmd-sanitizer.XXXXXX";
    if (mkdtemp(dir) == nullptr) return;
    dir_ = dir;
    const std::string log = ":log_path=" + dir_ + "/report:log_exe_name=1";
    Prepend("ASAN_OPTIONS", CRMD_ASAN_OPTIONS, log);
    Prepend("UBSAN_OPTIONS", CRMD_UBSAN_OPTIONS, log);
    Prepend("LSAN_OPTIONS", CRMD_LSAN_OPTIONS, "");
    // This process reports on stderr even when the environment names a log_path.
    __sanitizer_set_report_path("stderr");
  }
  ~ChildReports() {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  // Prints every report a child wrote; true when there was none.
  bool NoneWritten() const {
    if (dir_.empty()) return true;
    bool none = true;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      std::cerr << "Sanitizer report of a child process (" << entry.path().filename().string()
                << "):\n"
                << text.str() << "\n";
      none = false;
    }
    return none;
  }

 private:
  static void Prepend(const char* name, const std::string& defaults, const std::string& suffix) {
    const char* current = getenv(name);
    std::string value = defaults;
    if (current != nullptr && *current != '\0') value += std::string(":") + current;
    value += suffix;
    setenv(name, value.c_str(), 1);
  }

  std::string dir_;
};

}  // namespace
#endif

int main(int argc, char** argv) {
#if defined(__SANITIZE_ADDRESS__)
  ChildReports child_reports;
#endif
  spdlog::set_level(spdlog::level::warn);
  // Every test server hashes a first administrator's password: cheaply here (crypto.h).
  crmd::crypto::SetPasswordWorkFactorForTests(10);
  ::testing::InitGoogleTest(&argc, argv);
  int status = RUN_ALL_TESTS();
#if defined(__SANITIZE_ADDRESS__)
  if (!child_reports.NoneWritten()) status = 1;
#endif
  return status;
}
