#pragma once
// Runs the real crmctl binary of this build with `args` (stderr folded into stdout) and
// returns its exit code and output; shared by the crmctl integration tests.
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace crmd::testing {

struct CtlRun {
  int status;  // exit code
  std::string out;
};

// Runs a shell command line and returns its exit code (-1 if it did not exit) and output.
inline CtlRun RunCommand(const std::string& cmd) {
  CtlRun r{0, {}};
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) r.out.append(buf, n);
  int status = pclose(p);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline CtlRun Crmctl(const std::string& args, bool with_stderr = true) {
  return RunCommand(std::string(CRMD_BINARY_DIR) + "/src/app/crmctl " + args +
                    (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

}  // namespace crmd::testing
