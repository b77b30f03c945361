#pragma once
// The composition root. Owns every service, wires modules together, builds the route
// table and runs the HTTP server and background workers. Tests create one per fixture
// on port 0 with a fresh SQLite file.
#include <memory>
#include <string>

#include "src/core/config.h"
#include "src/core/result.h"

namespace crmd::app {

class App {
 public:
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  // Opens the database (running migrations) and constructs every service.
  static Result<std::unique_ptr<App>> Create(Config config);

  // Starts serving; returns the bound port. If config.port is 0 and no public_base_url
  // was given, the issuer becomes http(s)://<address>:<bound port>.
  Result<uint16_t> Start();
  void Stop();  // graceful
  void Wait();  // until stopped
  void StopOnSignals();

  const Config& config() const;
  struct Services;
  Services& services();

 private:
  App();
  std::unique_ptr<Services> s_;
};

}  // namespace crmd::app
