#pragma once
// A real DNS server on 127.0.0.1 for the tests (tests/support/dns_server.py over Debian's
// python3-dnslib), UDP and TCP on one port of the system's choosing, for the lifetime of the
// object. The test sets its records at any time (Set, Drop): the server reads them again
// for every query. Give crmd `dns_server = address()`.
#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>

namespace crmd::testing {

class DnsServer {
 public:
  DnsServer();
  ~DnsServer();
  DnsServer(const DnsServer&) = delete;
  DnsServer& operator=(const DnsServer&) = delete;

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  // Replaces the TXT records of `name` (none: the name no longer exists).
  void SetTxt(const std::string& name, const std::vector<std::string>& values);
  // Replaces every record of `name`: [{"type": "MX", "value": "mail.x.net", "priority": 10},
  // {"type": "A", "value": "192.0.2.1"}, ...] (empty: the name no longer exists).
  void Set(const std::string& name, const nlohmann::json& records);
  // `name` gets no answer at all: the client times out.
  void Drop(const std::string& name);

 private:
  void Write();

  std::string dir_;
  std::string zone_file_;
  nlohmann::json zone_ = {{"records", nlohmann::json::object()}, {"drop", nlohmann::json::array()}};
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace crmd::testing
