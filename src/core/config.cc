#include "src/core/config.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <type_traits>

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

Status Config::Set(const std::string& key, const std::string& v) {
  // A value the field cannot hold is refused rather than wrapped (port=99999 once listened on
  // 34463, a negative byte count became a huge one); Validate() checks what each key means.
  auto set_int = [&](auto& field) -> Status {
    using T = std::remove_reference_t<decltype(field)>;
    auto n = ParseInt(key, v);
    if (!n) return Fail(n.error());
    const int64_t lo = static_cast<int64_t>(std::numeric_limits<T>::min());
    const uint64_t hi = static_cast<uint64_t>(std::numeric_limits<T>::max());
    if (*n < lo || (*n > 0 && static_cast<uint64_t>(*n) > hi))
      return Fail(Errc::kInvalidArgument, "config " + key + ": out of range (" +
                                              std::to_string(lo) + ".." + std::to_string(hi) +
                                              "): " + v);
    field = static_cast<T>(*n);
    return Ok();
  };
  auto set_bool = [&](bool& field) -> Status {
    auto b = ParseBool(key, v);
    if (!b) return Fail(b.error());
    field = *b;
    return Ok();
  };
  if (key == "listen_address")
    listen_address = v;
  else if (key == "port")
    return set_int(port);
  else if (key == "public_base_url")
    public_base_url = v;
  else if (key == "tls_cert_file")
    tls_cert_file = v;
  else if (key == "tls_key_file")
    tls_key_file = v;
  else if (key == "allow_insecure_http")
    return set_bool(allow_insecure_http);
  else if (key == "mcp_validate_output")
    return set_bool(mcp_validate_output);
  else if (key == "io_threads")
    return set_int(io_threads);
  else if (key == "worker_threads")
    return set_int(worker_threads);
  else if (key == "database_url")
    database_url = v;
  else if (key == "access_token_ttl")
    return set_int(access_token_ttl);
  else if (key == "refresh_token_ttl")
    return set_int(refresh_token_ttl);
  else if (key == "auth_code_ttl")
    return set_int(auth_code_ttl);
  else if (key == "signing_key_rotation")
    return set_int(signing_key_rotation);
  else if (key == "allowed_origins")
    allowed_origins = SplitList(v);
  else if (key == "allowed_hosts")
    allowed_hosts = SplitList(v);
  else if (key == "trusted_proxies")
    trusted_proxies = SplitList(v);
  else if (key == "smtp_url")
    smtp_url = v;
  else if (key == "mail_from")
    mail_from = v;
  else if (key == "mail_concurrency")
    return set_int(mail_concurrency);
  else if (key == "mail_dir")
    mail_dir = v;
  else if (key == "mail_poll_interval_ms")
    return set_int(mail_poll_interval_ms);
  else if (key == "mail_lease_s")
    return set_int(mail_lease_s);
  else if (key == "dkim_private_key_file")
    dkim_private_key_file = v;
  else if (key == "dkim_selector")
    dkim_selector = v;
  else if (key == "dkim_domain")
    dkim_domain = v;
  else if (key == "max_header_bytes")
    return set_int(max_header_bytes);
  else if (key == "max_body_bytes")
    return set_int(max_body_bytes);
  else if (key == "read_timeout_s")
    return set_int(read_timeout_s);
  else if (key == "idle_timeout_s")
    return set_int(idle_timeout_s);
  else if (key == "max_connections")
    return set_int(max_connections);
  else if (key == "shutdown_grace_s")
    return set_int(shutdown_grace_s);
  else if (key == "allow_private_network_targets")
    return set_bool(allow_private_network_targets);
  else if (key == "mcp_calls_per_second" || key == "mcp_calls_burst" ||
           key == "mail_rate_per_second") {
    try {
      // Decimal only: std::stod also reads hexadecimal ("0x10") and words ("inf").
      if (v.empty() || v.find_first_not_of("0123456789.eE+-") != std::string::npos)
        throw std::invalid_argument("not a decimal number");
      size_t pos = 0;
      double d = std::stod(v, &pos);
      if (pos != v.size()) throw std::invalid_argument("trailing");
      // A rate or a burst is a finite amount of at least 0 (0 disables the limit); inf,
      // nan and negative values mean nothing.
      if (!std::isfinite(d) || d < 0) throw std::invalid_argument("not a finite amount >= 0");
      (key == "mcp_calls_per_second" ? mcp_calls_per_second
       : key == "mcp_calls_burst"    ? mcp_calls_burst
                                     : mail_rate_per_second) = d;
    } catch (...) {
      return Fail(Errc::kInvalidArgument,
                  "config " + key + ": not a finite number >= 0 (0 disables): " + v);
    }
  } else if (key == "rest_root")
    rest_root = v;
  else if (key == "rest_namespace")
    rest_namespace = v;
  else if (key == "rest_max_body_bytes")
    return set_int(rest_max_body_bytes);
  else if (key == "form_rate_limit_per_minute")
    return set_int(form_rate_limit_per_minute);
  else if (key == "hook_rate_limit_per_minute")
    return set_int(hook_rate_limit_per_minute);
  else if (key == "webhook_poll_interval_ms")
    return set_int(webhook_poll_interval_ms);
  else if (key == "webhook_backoff_base_s")
    return set_int(webhook_backoff_base_s);
  else if (key == "webhook_backoff_max_s")
    return set_int(webhook_backoff_max_s);
  else if (key == "webhook_retry_horizon_s")
    return set_int(webhook_retry_horizon_s);
  else if (key == "webhook_timeout_ms")
    return set_int(webhook_timeout_ms);
  else if (key == "webhook_lease_grace_s")
    return set_int(webhook_lease_grace_s);
  else if (key == "webhook_disable_after_failures")
    return set_int(webhook_disable_after_failures);
  else if (key == "webhook_disable_after_s")
    return set_int(webhook_disable_after_s);
  else if (key == "housekeeping_interval_s")
    return set_int(housekeeping_interval_s);
  else if (key == "retention_days")
    return set_int(retention_days);
  else if (key == "metrics_allow")
    metrics_allow = SplitList(v);
  else if (key == "metrics_listen_address")
    metrics_listen_address = v;
  else if (key == "log_level")
    log_level = v;
  else if (key == "log_format")
    log_format = v;
  else
    return Fail(Errc::kNotFound, "unknown config key: " + key);
  return Ok();
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

bool IsLoopbackAddress(const std::string& host) {
  return host == "127.0.0.1" || host == "::1" || host == "localhost" || host.rfind("127.", 0) == 0;
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
  if (!smtp_url.empty() && smtp_url.rfind("smtp://", 0) != 0 && smtp_url.rfind("smtps://", 0) != 0)
    return Fail(Errc::kInvalidArgument, "smtp_url must start with smtp:// or smtps://");
  {
    int dkim = !dkim_private_key_file.empty() + !dkim_selector.empty() + !dkim_domain.empty();
    if (dkim != 0 && dkim != 3)
      return Fail(Errc::kInvalidArgument,
                  "dkim_private_key_file, dkim_selector and dkim_domain must be set together");
  }
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
      {"read_timeout_s", read_timeout_s, 1},
      {"idle_timeout_s", idle_timeout_s, 1},
      {"max_connections", max_connections, 1},
      {"shutdown_grace_s", shutdown_grace_s, 0},
      {"form_rate_limit_per_minute", form_rate_limit_per_minute, 0},
      {"hook_rate_limit_per_minute", hook_rate_limit_per_minute, 0},
      {"webhook_poll_interval_ms", webhook_poll_interval_ms, 1},
      {"webhook_backoff_base_s", webhook_backoff_base_s, 1},
      {"webhook_backoff_max_s", webhook_backoff_max_s, 1},
      {"webhook_retry_horizon_s", webhook_retry_horizon_s, 0},
      {"webhook_timeout_ms", webhook_timeout_ms, 1},
      {"webhook_lease_grace_s", webhook_lease_grace_s, 0},
      {"webhook_disable_after_s", webhook_disable_after_s, 0},
      {"webhook_disable_after_failures", webhook_disable_after_failures, 0},
      {"mail_poll_interval_ms", mail_poll_interval_ms, 1},
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
