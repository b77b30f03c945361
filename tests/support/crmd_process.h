#pragma once
// The real crmd binary as a child process, for tests that kill it (SIGKILL) and start it
// again on the same database and port.
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace crmd::testing {

// A loopback port that was free a moment ago (crmd needs a fixed port across restarts).
uint16_t FreePort();

// <build>/src/app/crmd with `args`, stdout and stderr appended to `log_path`; killed with
// SIGKILL by Kill() or the destructor.
class CrmdProcess {
 public:
  CrmdProcess(const std::vector<std::string>& args, const std::string& log_path);
  ~CrmdProcess() { Kill(); }
  CrmdProcess(const CrmdProcess&) = delete;
  CrmdProcess& operator=(const CrmdProcess&) = delete;
  void Kill();
  pid_t pid() const { return pid_; }  // -1 once killed (or when it could not start)

 private:
  pid_t pid_ = -1;
};

}  // namespace crmd::testing
