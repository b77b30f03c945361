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

// A loopback port held for a test that needs one where nobody listens (a relay that is
// down) and that must stay its own until Release(). It comes from below the system's
// ephemeral range, so no other test's FreePort() or listener on port 0, nor any outgoing
// connection's source port, can land on it; and it stays bound (not listening, so a
// connection is refused) until Release() frees it for the test's own listener.
class HeldPort {
 public:
  HeldPort();
  ~HeldPort() { Release(); }
  HeldPort(const HeldPort&) = delete;
  HeldPort& operator=(const HeldPort&) = delete;
  uint16_t port() const { return port_; }  // 0 if none could be held
  void Release();

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

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
