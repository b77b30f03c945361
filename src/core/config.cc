#include "src/core/config.h"

#include <arpa/inet.h>

#include <cmath>
#include <concepts>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <type_traits>
#include <variant>

extern char** environ;

namespace crmd {
namespace {

Result<int64_t> ParseInt(const std::string& key, const std::string& v) {
  try {
    size_t pos = 0;
    long long n = std::stoll(v, &pos);
    if (pos != v.size()) throw std::invalid_argument("trailing");
    return n;
  } catch (...) {
    return Fail(Errc::kInvalidArgument, "config " + key + ": not an integer: " + v);
  }
}

Result<bool> ParseBool(const std::string& key, const std::string& v) {
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return Fail(Errc::kInvalidArgument, "config " + key + ": not a boolean: " + v);
}

std::vector<std::string> SplitList(const std::string& v) {
  std::vector<std::string> out;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ',')) {
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// A value the field cannot hold is refused rather than wrapped (port=99999 once listened on
// 34463, a negative byte count became a huge one); Validate() checks what each key means.
template <typename T>
requires(std::integral<T> && !std::same_as<T, bool>) Status
    Read(const std::string& key, const std::string& v, T& field) {
  auto n = ParseInt(key, v);
  if (!n) return Fail(n.error());
  const int64_t lo = static_cast<int64_t>(std::numeric_limits<T>::min());
  const uint64_t hi = static_cast<uint64_t>(std::numeric_limits<T>::max());
  if (*n < lo || (*n > 0 && static_cast<uint64_t>(*n) > hi))
    return Fail(Errc::kInvalidArgument, "config " + key + ": out of range (" + std::to_string(lo) +
                                            ".." + std::to_string(hi) + "): " + v);
  field = static_cast<T>(*n);
  return Ok();
}

Status Read(const std::string& key, const std::string& v, bool& field) {
  auto b = ParseBool(key, v);
  if (!b) return Fail(b.error());
  field = *b;
  return Ok();
}

// A rate or a burst: a finite amount of at least 0 (0 disables the limit), written in
// decimal (std::stod also reads hexadecimal "0x10" and words such as "inf").
Status Read(const std::string& key, const std::string& v, double& field) {
  auto refuse = [&] {
    return Fail(Errc::kInvalidArgument,
                "config " + key + ": not a finite number >= 0 (0 disables): " + v);
  };
  if (v.empty() || v.find_first_not_of("0123456789.eE+-") != std::string::npos) return refuse();
  try {
    size_t pos = 0;
    double d = std::stod(v, &pos);
    if (pos != v.size() || !std::isfinite(d) || d < 0) return refuse();
    field = d;
    return Ok();
  } catch (...) {
    return refuse();
  }
}

Status Read(const std::string&, const std::string& v, std::string& field) {
  field = v;
  return Ok();
}

Status Read(const std::string&, const std::string& v, std::vector<std::string>& field) {
  field = SplitList(v);
  return Ok();
}

// Every key and the member it sets; the member's type says how its text is read.
using Member = std::variant<std::string Config::*, std::vector<std::string> Config::*,
                            bool Config::*, uint16_t Config::*, int Config::*, int64_t Config::*,
                            size_t Config::*, double Config::*>;
struct Key {
  std::string_view name;
  Member member;
};
const Key kKeys[] = {
    {"listen_address", &Config::listen_address},
    {"port", &Config::port},
    {"public_base_url", &Config::public_base_url},
    {"tls_cert_file", &Config::tls_cert_file},
    {"tls_key_file", &Config::tls_key_file},
    {"allow_insecure_http", &Config::allow_insecure_http},
    {"mcp_validate_output", &Config::mcp_validate_output},
    {"mcp_apps", &Config::mcp_apps},
    {"io_threads", &Config::io_threads},
    {"worker_threads", &Config::worker_threads},
    {"database_url", &Config::database_url},
    {"database_read_url", &Config::database_read_url},
    {"access_token_ttl", &Config::access_token_ttl},
    {"refresh_token_ttl", &Config::refresh_token_ttl},
    {"auth_code_ttl", &Config::auth_code_ttl},
    {"signing_key_rotation", &Config::signing_key_rotation},
    {"allowed_origins", &Config::allowed_origins},
    {"allowed_hosts", &Config::allowed_hosts},
    {"trusted_proxies", &Config::trusted_proxies},
    {"smtp_url", &Config::smtp_url},
    {"mail_from", &Config::mail_from},
    {"mail_concurrency", &Config::mail_concurrency},
    {"mail_dir", &Config::mail_dir},
    {"mail_poll_interval_ms", &Config::mail_poll_interval_ms},
    {"mail_lease_s", &Config::mail_lease_s},
    {"mail_rate_per_second", &Config::mail_rate_per_second},
    {"mail_receiver_window_s", &Config::mail_receiver_window_s},
    {"mail_receiver_retention_s", &Config::mail_receiver_retention_s},
    {"bounce_domain", &Config::bounce_domain},
    {"bounce_mailbox_url", &Config::bounce_mailbox_url},
    {"bounce_poll_seconds", &Config::bounce_poll_seconds},
    {"dkim_private_key_file", &Config::dkim_private_key_file},
    {"dkim_selector", &Config::dkim_selector},
    {"dkim_domain", &Config::dkim_domain},
    {"dns_server", &Config::dns_server},
    {"max_header_bytes", &Config::max_header_bytes},
    {"max_body_bytes", &Config::max_body_bytes},
    {"read_timeout_s", &Config::read_timeout_s},
    {"idle_timeout_s", &Config::idle_timeout_s},
    {"max_connections", &Config::max_connections},
    {"shutdown_grace_s", &Config::shutdown_grace_s},
    {"allow_private_network_targets", &Config::allow_private_network_targets},
    {"mcp_calls_per_second", &Config::mcp_calls_per_second},
    {"mcp_calls_burst", &Config::mcp_calls_burst},
    {"rest_root", &Config::rest_root},
    {"rest_namespace", &Config::rest_namespace},
    {"rest_max_body_bytes", &Config::rest_max_body_bytes},
    {"import_max_bytes", &Config::import_max_bytes},
    {"import_lease_s", &Config::import_lease_s},
    {"form_rate_limit_per_minute", &Config::form_rate_limit_per_minute},
    {"hook_rate_limit_per_minute", &Config::hook_rate_limit_per_minute},
    {"registration_limit_per_hour", &Config::registration_limit_per_hour},
    {"webhook_poll_interval_ms", &Config::webhook_poll_interval_ms},
    {"webhook_backoff_base_s", &Config::webhook_backoff_base_s},
    {"webhook_backoff_max_s", &Config::webhook_backoff_max_s},
    {"webhook_retry_horizon_s", &Config::webhook_retry_horizon_s},
    {"webhook_timeout_ms", &Config::webhook_timeout_ms},
    {"webhook_lease_grace_s", &Config::webhook_lease_grace_s},
    {"webhook_disable_after_failures", &Config::webhook_disable_after_failures},
    {"webhook_disable_after_s", &Config::webhook_disable_after_s},
    {"housekeeping_interval_s", &Config::housekeeping_interval_s},
    {"retention_days", &Config::retention_days},
    {"metrics_allow", &Config::metrics_allow},
    {"metrics_listen_address", &Config::metrics_listen_address},
    {"log_level", &Config::log_level},
    {"log_format", &Config::log_format},
};

}  // namespace

std::string Config::Issuer() const {
  std::string base = public_base_url;
  if (base.empty()) {
    base =
        std::string(Tls() ? "https://" : "http://") + listen_address + ":" + std::to_string(port);
  }
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base;
}

std::vector<std::string_view> Config::Keys() {
  std::vector<std::string_view> out;
  for (const auto& k : kKeys) out.push_back(k.name);
  return out;
}

Status Config::Set(const std::string& key, const std::string& v) {
  for (const auto& [name, field] : kKeys) {
    if (name == key)
      return std::visit([&](auto member) { return Read(key, v, this->*member); }, field);
  }
  return Fail(Errc::kNotFound, "unknown config key: " + key);
}

Result<HostPort> SplitHostPort(const std::string& address) {
  auto bad = [&] {
    return Fail(Errc::kInvalidArgument,
                "metrics_listen_address must be host:port (port 0..65535): " + address);
  };
  auto colon = address.rfind(':');
  if (colon == std::string::npos) return bad();
  HostPort hp{.host = address.substr(0, colon)};
  if (hp.host.size() > 1 && hp.host.front() == '[' && hp.host.back() == ']')
    hp.host = hp.host.substr(1, hp.host.size() - 2);
  const std::string digits = address.substr(colon + 1);
  // Digits only: std::stoi would read "9464abc" as 9464 and "-5" as a port.
  if (hp.host.empty() || digits.empty() || digits.size() > 5 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return bad();
  const int port = std::stoi(digits);
  if (port > 65535) return bad();
  hp.port = static_cast<uint16_t>(port);
  return hp;
}

Status ValidateDnsServer(const std::string& server) {
  if (server.empty()) return Ok();
  auto hp = SplitHostPort(server);
  in_addr addr{};
  if (!hp || hp->port == 0 || inet_pton(AF_INET, hp->host.c_str(), &addr) != 1)
    return Fail(Errc::kInvalidArgument,
                "dns_server must be an IPv4 address and a port, e.g. 127.0.0.1:53: " + server);
  return Ok();
}

bool IsLoopbackAddress(const std::string& host) {
  return host == "127.0.0.1" || host == "::1" || host == "localhost" || host.rfind("127.", 0) == 0;
}

Status Config::CheckBounceMailbox() const {
  if (!bounce_domain.empty() &&
      (bounce_domain.find_first_of("@ /:<>") != std::string::npos || bounce_domain.size() > 253))
    return Fail(Errc::kInvalidArgument,
                "bounce_domain must be a host name, e.g. bounces.example.com");
  if (bounce_mailbox_url.empty()) return Ok();
  bool known = false;
  for (const char* scheme : {"imap://", "imaps://", "pop3://", "pop3s://"})
    known = known || bounce_mailbox_url.rfind(scheme, 0) == 0;
  if (!known)
    return Fail(Errc::kInvalidArgument,
                "bounce_mailbox_url must start with imap://, imaps://, pop3:// or pop3s://");
  if (bounce_domain.empty())
    return Fail(Errc::kInvalidArgument, "bounce_mailbox_url needs bounce_domain (VERP)");
  return Ok();
}

Status Config::Validate() const {
  if (Tls() == false && (!tls_cert_file.empty() || !tls_key_file.empty()))
    return Fail(Errc::kInvalidArgument, "tls_cert_file and tls_key_file must be set together");
  if (!Tls() && !IsLoopbackAddress(listen_address) && !allow_insecure_http)
    return Fail(Errc::kInvalidArgument,
                "plain HTTP is allowed only on loopback; set tls_cert_file/tls_key_file or "
                "allow_insecure_http=true");
  if (log_format != "json" && log_format != "text")
    return Fail(Errc::kInvalidArgument, "log_format must be json or text");
  if (io_threads < 0 || worker_threads < 1)
    return Fail(Errc::kInvalidArgument,
                "io_threads must be >= 0 (0: one per core) and worker_threads >= 1");
  if (mail_concurrency < 1 || mail_concurrency > 64)
    return Fail(Errc::kInvalidArgument, "mail_concurrency must be between 1 and 64");
  if (mail_lease_s < 10) return Fail(Errc::kInvalidArgument, "mail_lease_s must be >= 10");
  if (mail_receiver_window_s < 1 || mail_receiver_retention_s < mail_receiver_window_s)
    return Fail(Errc::kInvalidArgument,
                "mail_receiver_window_s must be >= 1 and mail_receiver_retention_s >= it");
  if (!smtp_url.empty() && smtp_url.rfind("smtp://", 0) != 0 && smtp_url.rfind("smtps://", 0) != 0)
    return Fail(Errc::kInvalidArgument, "smtp_url must start with smtp:// or smtps://");
  {
    int dkim = !dkim_private_key_file.empty() + !dkim_selector.empty() + !dkim_domain.empty();
    if (dkim != 0 && dkim != 3)
      return Fail(Errc::kInvalidArgument,
                  "dkim_private_key_file, dkim_selector and dkim_domain must be set together");
  }
  if (auto st = CheckBounceMailbox(); !st) return st;
  if (auto st = ValidateDnsServer(dns_server); !st) return st;
  if (access_token_ttl < 60) return Fail(Errc::kInvalidArgument, "access_token_ttl must be >= 60");
  // Durations, sizes and intervals that 0 or less would break (a 0 s read timeout, a poll
  // loop that never sleeps) must be >= 1; counts and limits where 0 means "none" or
  // "disabled" must be >= 0. A negative value means nothing anywhere.
  const struct {
    const char* key;
    int64_t value;
    int64_t min;
  } kMinimums[] = {
      {"refresh_token_ttl", refresh_token_ttl, 1},
      {"auth_code_ttl", auth_code_ttl, 1},
      {"signing_key_rotation", signing_key_rotation, 1},
      {"max_header_bytes", static_cast<int64_t>(max_header_bytes), 1},
      {"max_body_bytes", static_cast<int64_t>(max_body_bytes), 1},
      {"rest_max_body_bytes", static_cast<int64_t>(rest_max_body_bytes), 1},
      {"import_max_bytes", import_max_bytes, 1},
      {"import_lease_s", import_lease_s, 1},
      {"read_timeout_s", read_timeout_s, 1},
      {"idle_timeout_s", idle_timeout_s, 1},
      {"max_connections", max_connections, 1},
      {"shutdown_grace_s", shutdown_grace_s, 0},
      {"form_rate_limit_per_minute", form_rate_limit_per_minute, 0},
      {"hook_rate_limit_per_minute", hook_rate_limit_per_minute, 0},
      {"registration_limit_per_hour", registration_limit_per_hour, 0},
      {"webhook_poll_interval_ms", webhook_poll_interval_ms, 1},
      {"webhook_backoff_base_s", webhook_backoff_base_s, 1},
      {"webhook_backoff_max_s", webhook_backoff_max_s, 1},
      {"webhook_retry_horizon_s", webhook_retry_horizon_s, 0},
      {"webhook_timeout_ms", webhook_timeout_ms, 1},
      {"webhook_lease_grace_s", webhook_lease_grace_s, 0},
      {"webhook_disable_after_s", webhook_disable_after_s, 0},
      {"webhook_disable_after_failures", webhook_disable_after_failures, 0},
      {"mail_poll_interval_ms", mail_poll_interval_ms, 1},
      {"bounce_poll_seconds", bounce_poll_seconds, 1},
      {"housekeeping_interval_s", housekeeping_interval_s, 0},
      {"retention_days", retention_days, 0},
  };
  for (const auto& m : kMinimums)
    if (m.value < m.min)
      return Fail(Errc::kInvalidArgument,
                  std::string(m.key) + " must be >= " + std::to_string(m.min));
  if (webhook_backoff_max_s < webhook_backoff_base_s)
    return Fail(Errc::kInvalidArgument, "webhook_backoff_max_s must be >= webhook_backoff_base_s");
  if (!metrics_listen_address.empty())
    if (auto hp = SplitHostPort(metrics_listen_address); !hp) return Fail(hp.error());
  return Ok();
}

namespace {

bool IsUnknownConfigKey(const std::string& key) {
  Config probe;
  auto st = probe.Set(key, "");
  return !st && st.error().code == Errc::kNotFound;
}

}  // namespace

Result<Config> LoadConfig(int argc, char** argv, std::vector<std::string>* rest,
                          std::vector<std::string>* warnings) {
  Config cfg;
  std::vector<std::pair<std::string, std::string>> flags;
  std::string config_file;
  if (const char* f = std::getenv("CRMD_CONFIG")) config_file = f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
      std::string key = a.substr(2, a.find('=') - 2);
      for (auto& c : key)
        if (c == '-') c = '_';
      std::string val = a.substr(a.find('=') + 1);
      if (key == "config")
        config_file = val;
      else if (rest && !rest->empty() && IsUnknownConfigKey(key))
        rest->push_back(a);  // after the command word, not a config key: the command's own
      else
        flags.emplace_back(key, val);
    } else if (rest) {
      rest->push_back(a);
    }
  }
  if (!config_file.empty()) {
    std::ifstream in(config_file);
    if (!in) return Fail(Errc::kInvalidArgument, "cannot read config file " + config_file);
    // Comments (// and /* */) are allowed: the packaged config file explains itself.
    auto j = nlohmann::json::parse(in, nullptr, false, /*ignore_comments=*/true);
    if (j.is_discarded() || !j.is_object())
      return Fail(Errc::kInvalidArgument, "config file is not a JSON object: " + config_file);
    for (auto& [k, v] : j.items()) {
      std::string s;
      if (v.is_string())
        s = v.get<std::string>();
      else if (v.is_array()) {
        for (auto& e : v)
          s += (s.empty() ? "" : ",") + (e.is_string() ? e.get<std::string>() : e.dump());
      } else
        s = v.dump();
      if (auto st = cfg.Set(k, s); !st) {
        Error e = st.error();
        e.code = Errc::kInvalidArgument;  // an unknown key in the file is a typo
        return Fail(std::move(e));
      }
    }
  }
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    if (kv.rfind("CRMD_", 0) != 0 || kv.rfind("CRMD_CONFIG=", 0) == 0) continue;
    auto eq = kv.find('=');
    std::string key = kv.substr(5, eq - 5);
    for (auto& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (key.rfind("test_", 0) == 0) continue;  // CRMD_TEST_* belong to the test harness
    if (auto st = cfg.Set(key, kv.substr(eq + 1)); !st) {
      // Another program's variable that happens to start with CRMD_: not ours to refuse.
      if (st.error().code != Errc::kNotFound) return Fail(st.error());
      if (warnings)
        warnings->push_back("ignoring environment variable " + kv.substr(0, eq) +
                            ": not a crmd config key");
    }
  }
  for (auto& [k, v] : flags)
    if (auto st = cfg.Set(k, v); !st) {
      Error e = st.error();
      e.code = Errc::kInvalidArgument;  // an unknown flag is a typo: the same error as a bad value
      return Fail(std::move(e));
    }
  if (auto st = cfg.Validate(); !st) return Fail(st.error());
  return cfg;
}

}  // namespace crmd
