#include "tests/support/browser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "src/app/services.h"
#include "src/core/crypto.h"
#include "src/core/random.h"
#include "src/core/text.h"

namespace crmd::testing {
namespace {

std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    static const std::pair<std::string_view, char> kEntities[] = {
        {"&amp;", '&'},  {"&lt;", '<'},   {"&gt;", '>'},
        {"&quot;", '"'}, {"&#39;", '\''}, {"&#x27;", '\''}};
    bool done = false;
    for (const auto& [e, c] : kEntities) {
      if (s.substr(i, e.size()) == e) {
        out += c;
        i += e.size() - 1;
        done = true;
        break;
      }
    }
    if (!done) {
      // Numeric references to ASCII (mstch writes '/' as &#x2F;, '=' as &#x3D;, '`' as &#x60;).
      size_t semi = s.find(';', i);
      if (semi != std::string_view::npos && semi - i <= 6 && i + 2 < s.size() && s[i + 1] == '#') {
        bool hex = s[i + 2] == 'x' || s[i + 2] == 'X';
        std::string digits(s.substr(i + (hex ? 3 : 2), semi - i - (hex ? 3 : 2)));
        char* end = nullptr;
        long code = digits.empty() ? -1 : std::strtol(digits.c_str(), &end, hex ? 16 : 10);
        if (end && *end == '\0' && code > 0 && code < 128) {
          out += static_cast<char>(code);
          i = semi;
          done = true;
        }
      }
    }
    if (!done) out += '&';
  }
  return out;
}

// Attributes of a start tag's text (after the tag name, up to '>').
std::map<std::string, std::optional<std::string>> Attributes(std::string_view tag) {
  std::map<std::string, std::optional<std::string>> out;
  size_t i = 0;
  while (i < tag.size()) {
    while (i < tag.size() && (std::isspace(static_cast<unsigned char>(tag[i])) || tag[i] == '/'))
      ++i;
    size_t start = i;
    while (i < tag.size() && !std::isspace(static_cast<unsigned char>(tag[i])) && tag[i] != '=' &&
           tag[i] != '/')
      ++i;
    if (i == start) break;
    std::string name = text::AsciiLower(std::string(tag.substr(start, i - start)));
    while (i < tag.size() && std::isspace(static_cast<unsigned char>(tag[i]))) ++i;
    if (i < tag.size() && tag[i] == '=') {
      ++i;
      while (i < tag.size() && std::isspace(static_cast<unsigned char>(tag[i]))) ++i;
      std::string value;
      if (i < tag.size() && (tag[i] == '"' || tag[i] == '\'')) {
        char q = tag[i++];
        size_t end = tag.find(q, i);
        value = std::string(tag.substr(i, end - i));
        i = end == std::string_view::npos ? tag.size() : end + 1;
      } else {
        size_t s = i;
        while (i < tag.size() && !std::isspace(static_cast<unsigned char>(tag[i]))) ++i;
        value = std::string(tag.substr(s, i - s));
      }
      out.emplace(name, Unescape(value));
    } else {
      out.emplace(name, std::nullopt);
    }
  }
  return out;
}

std::string Origin(const std::string& url) {
  size_t p = url.find("://");
  if (p == std::string::npos) return url;
  return url.substr(0, url.find('/', p + 3));
}

}  // namespace

std::optional<std::string> Form::Value(const std::string& name) const {
  for (const auto& i : inputs)
    if (i.name == name) return i.value;
  return std::nullopt;
}

void Form::Set(const std::string& name, const std::string& value) {
  for (auto& i : inputs) {
    if (i.name == name) {
      i.value = value;
      return;
    }
  }
  inputs.push_back({.tag = "input", .type = "text", .name = name, .value = value});
}

void Form::Remove(const std::string& name) {
  inputs.erase(std::remove_if(inputs.begin(), inputs.end(),
                              [&](const FormInput& i) { return i.name == name; }),
               inputs.end());
}

bool Form::SetChecked(const std::string& name, const std::string& value, bool checked) {
  for (auto& i : inputs) {
    if (i.name == name && i.value == value && (i.type == "checkbox" || i.type == "radio")) {
      i.checked = checked;
      return true;
    }
  }
  return false;
}

std::vector<std::string> Form::Options(const std::string& name) const {
  std::vector<std::string> out;
  for (const auto& i : inputs)
    if (i.name == name && (i.type == "checkbox" || i.type == "radio")) out.push_back(i.value);
  return out;
}

std::vector<std::pair<std::string, std::string>> Form::Fields(
    const std::optional<std::pair<std::string, std::string>>& button) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& i : inputs) {
    if (i.name.empty() || i.tag == "button" || i.type == "submit") continue;
    if ((i.type == "checkbox" || i.type == "radio") && !i.checked) continue;
    out.emplace_back(i.name, i.value);
  }
  if (button) out.push_back(*button);
  return out;
}

std::optional<Form> ParseFirstForm(std::string_view html, std::string_view page_url) {
  std::string lower = text::AsciiLower(std::string(html));
  size_t start = lower.find("<form");
  if (start == std::string::npos) return std::nullopt;
  size_t tag_end = lower.find('>', start);
  size_t end = lower.find("</form>", start);
  if (tag_end == std::string::npos) return std::nullopt;
  if (end == std::string::npos) end = lower.size();
  auto attrs = Attributes(html.substr(start + 5, tag_end - start - 5));
  Form f;
  f.method = attrs.count("method") && attrs["method"]
                 ? text::AsciiLower(*attrs["method"]) == "post" ? "POST" : "GET"
                 : "GET";
  std::string action =
      attrs.count("action") && attrs["action"] ? *attrs["action"] : std::string(page_url);
  if (action.rfind("http://", 0) != 0 && action.rfind("https://", 0) != 0) {
    std::string origin = Origin(std::string(page_url));
    action = action.rfind('/', 0) == 0 ? origin + action : origin + "/" + action;
  }
  f.action = action;
  size_t pos = tag_end;
  while (true) {
    size_t in = lower.find("<input", pos);
    size_t bt = lower.find("<button", pos);
    size_t next = std::min(in, bt);
    if (next == std::string::npos || next >= end) break;
    bool is_button = next == bt;
    size_t name_len = is_button ? 7 : 6;
    size_t close = lower.find('>', next);
    if (close == std::string::npos) break;
    auto a = Attributes(html.substr(next + name_len, close - next - name_len));
    FormInput input;
    input.tag = is_button ? "button" : "input";
    input.type = a.count("type") && a["type"] ? text::AsciiLower(*a["type"])
                                              : (is_button ? "submit" : "text");
    input.name = a.count("name") && a["name"] ? *a["name"] : "";
    input.value =
        a.count("value") && a["value"] ? *a["value"] : (input.type == "checkbox" ? "on" : "");
    input.checked = a.count("checked") > 0;
    f.inputs.push_back(std::move(input));
    pos = close;
  }
  return f;
}

std::string PageHidden(std::string_view html, const std::string& name) {
  const std::string key = "name=\"" + name + "\" value=\"";
  size_t at = html.find(key);
  if (at == std::string_view::npos) return "";
  at += key.size();
  return std::string(html.substr(at, html.find('"', at) - at));
}

std::map<std::string, std::string> QueryParams(std::string_view url) {
  std::map<std::string, std::string> out;
  size_t q = url.find('?');
  if (q == std::string_view::npos) return out;
  std::string_view query = url.substr(q + 1);
  query = query.substr(0, query.find('#'));
  for (auto& [k, v] : http::ParseForm(query)) out.emplace(k, v);
  return out;
}

std::string EncodeForm(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [k, v] : fields) {
    if (!out.empty()) out += '&';
    out += http::PercentEncode(k) + "=" + http::PercentEncode(v);
  }
  return out;
}

std::optional<std::string> Page::Header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (http::IEquals(k, name)) return v;
  return std::nullopt;
}

std::string Browser::Absolute(const std::string& url) const {
  if (url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0) return url;
  return server_.base_url() + (url.rfind('/', 0) == 0 ? url : "/" + url);
}

std::optional<std::string> Browser::Cookie(const std::string& name) const {
  auto it = jar_.find(name);
  if (it == jar_.end()) return std::nullopt;
  return it->second;
}

Page Browser::Get(const std::string& url) { return Fetch("GET", Absolute(url), ""); }

Page Browser::PostForm(const std::string& url,
                       const std::vector<std::pair<std::string, std::string>>& fields) {
  return Fetch("POST", Absolute(url), EncodeForm(fields));
}

Page Browser::PostMultipart(const std::string& url,
                            const std::vector<std::pair<std::string, std::string>>& fields,
                            const std::string& file_field, const std::string& file_name,
                            const std::string& content) {
  const std::string boundary = "----crmdTestBoundary7MA4YWxkTrZu0gW";
  std::string body;
  for (const auto& [name, value] : fields)
    body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" +
            value + "\r\n";
  body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + file_field +
          "\"; filename=\"" + file_name + "\"\r\nContent-Type: text/csv\r\n\r\n" + content +
          "\r\n--" + boundary + "--\r\n";
  return Fetch("POST", Absolute(url), body, "multipart/form-data; boundary=" + boundary);
}

Page Browser::Submit(const Form& form,
                     const std::optional<std::pair<std::string, std::string>>& button) {
  std::string body = EncodeForm(form.Fields(button));
  if (form.method == "GET") {
    std::string url = form.action.substr(0, form.action.find('?'));
    return Fetch("GET", url + "?" + body, "");
  }
  return Fetch("POST", form.action, body);
}

Page Browser::Fetch(std::string method, std::string url, std::string body,
                    std::string content_type) {
  Page page;
  for (int hop = 0; hop < 10; ++hop) {
    http::Headers headers;
    std::string cookie;
    for (const auto& [k, v] : jar_) cookie += (cookie.empty() ? "" : "; ") + k + "=" + v;
    if (!cookie.empty()) headers.emplace_back("Cookie", cookie);
    for (const auto& h : extra_headers_) headers.push_back(h);
    if (method == "POST") {
      headers.emplace_back("Content-Type", content_type);
      std::optional<std::string> origin =
          origin_set_ ? origin_ : std::optional(Origin(server_.base_url()));
      if (origin) headers.emplace_back("Origin", *origin);
    }
    auto r = server_.Send(method, url, body, headers);
    page.status = r.status;
    page.url = url;
    page.headers = r.headers;
    page.body = r.body;
    for (const auto& [k, v] : r.headers) {
      if (!http::IEquals(k, "Set-Cookie")) continue;
      page.set_cookies.push_back(v);
      std::string_view pair = std::string_view(v).substr(0, v.find(';'));
      size_t eq = pair.find('=');
      if (eq == std::string_view::npos) continue;
      std::string name(pair.substr(0, eq));
      std::string value(pair.substr(eq + 1));
      if (text::AsciiLower(v).find("max-age=0") != std::string::npos)
        jar_.erase(name);
      else
        jar_[name] = value;
    }
    auto location = page.Header("Location");
    if (!follow_ || !location || r.status < 300 || r.status >= 400) return page;
    std::string next = *location;
    if (next.rfind('/', 0) == 0) next = Origin(url) + next;
    if (Origin(next) != Origin(server_.base_url())) {
      page.client_redirect = next;
      return page;
    }
    if (r.status != 307 && r.status != 308) {
      method = "GET";
      body.clear();
    }
    url = next;
  }
  return page;
}

std::string PkceChallenge(const std::string& verifier) {
  return crypto::Base64UrlEncode(crypto::Sha256(verifier));
}

OAuthFlowResult RunOAuthFlow(TestServer& server, const OAuthFlowOptions& o) {
  OAuthFlowResult out;
  const std::string base = server.base_url();
  if (o.create_user) {
    auto& users = *server.app().services().users;
    auto existing = users.FindByEmail(o.email);
    if (existing && !*existing) (void)users.Create(o.email, o.password, false);
  }

  // Discovery: protected resource metadata (RFC 9728) names the authorization server,
  // whose metadata (RFC 8414) names the endpoints.
  std::string registration_endpoint = base + "/oauth/register";
  std::string authorization_endpoint = base + "/oauth/authorize";
  std::string token_endpoint = base + "/oauth/token";
  std::string resource = base + "/mcp";
  out.issuer = base;
  auto prm = server.Get("/.well-known/oauth-protected-resource/mcp");
  if (prm.status == 200) {
    out.protected_resource_metadata = nlohmann::json::parse(prm.body, nullptr, false);
    const auto& j = out.protected_resource_metadata;
    if (j.is_object() && j.contains("resource")) resource = j["resource"].get<std::string>();
    if (j.is_object() && j.contains("authorization_servers") && !j["authorization_servers"].empty())
      out.issuer = j["authorization_servers"][0].get<std::string>();
  }
  auto asm_ = server.Get(out.issuer + "/.well-known/oauth-authorization-server");
  if (asm_.status == 200) {
    out.authorization_server_metadata = nlohmann::json::parse(asm_.body, nullptr, false);
    const auto& j = out.authorization_server_metadata;
    if (j.is_object()) {
      registration_endpoint = j.value("registration_endpoint", registration_endpoint);
      authorization_endpoint = j.value("authorization_endpoint", authorization_endpoint);
      token_endpoint = j.value("token_endpoint", token_endpoint);
    }
  }

  nlohmann::json reg = {
      {"client_name", o.client_name},
      {"redirect_uris", {o.redirect_uri}},
      {"grant_types", {"authorization_code", "refresh_token"}},
      {"response_types", {"code"}},
      {"token_endpoint_auth_method", o.confidential ? "client_secret_basic" : "none"}};
  auto r = server.PostJson(registration_endpoint, reg);
  if (r.status != 201) {
    out.error = "registration: HTTP " + std::to_string(r.status) + " " + r.body;
    return out;
  }
  out.registration = nlohmann::json::parse(r.body, nullptr, false);
  out.client_id = out.registration.value("client_id", "");
  out.client_secret = out.registration.value("client_secret", "");

  SecureRandom random;
  out.code_verifier = random.Token(32);
  out.state = random.Token(16);
  out.redirect_uri = o.redirect_uri;
  std::vector<std::pair<std::string, std::string>> q = {
      {"response_type", "code"},
      {"client_id", out.client_id},
      {"redirect_uri", o.redirect_uri},
      {"code_challenge", PkceChallenge(out.code_verifier)},
      {"code_challenge_method", "S256"},
      {"state", out.state},
      {"resource", resource}};
  if (!o.scope.empty()) q.emplace_back("scope", o.scope);

  Browser browser(server);
  Page page = browser.Get(authorization_endpoint + "?" + EncodeForm(q));
  auto login = page.form();
  if (page.status != 200 || !login || !login->Value("password")) {
    out.error = "authorize: expected the login page, got HTTP " + std::to_string(page.status) +
                " " + page.body;
    return out;
  }
  login->Set("email", o.email);
  login->Set("password", o.password);
  page = browser.Submit(*login);
  if (!page.client_redirect) {
    auto consent = page.form();
    if (page.status != 200 || !consent || consent->Options("scope").empty()) {
      out.error = "login: expected the consent page, got HTTP " + std::to_string(page.status) +
                  " " + page.body;
      return out;
    }
    if (o.on_consent) o.on_consent(*consent);
    page = browser.Submit(*consent, std::make_pair(std::string("decision"), std::string("allow")));
  }
  if (!page.client_redirect) {
    out.error = "consent: expected a redirect to the client, got HTTP " +
                std::to_string(page.status) + " " + page.body;
    return out;
  }
  auto params = QueryParams(*page.client_redirect);
  if (params["state"] != out.state) {
    out.error = "authorize: state not echoed: " + *page.client_redirect;
    return out;
  }
  if (!params.count("code")) {
    out.error = "authorize: no code: " + *page.client_redirect;
    return out;
  }
  out.code = params["code"];
  out.scope = o.scope;
  if (!o.exchange_code) return out;

  std::vector<std::pair<std::string, std::string>> form = {{"grant_type", "authorization_code"},
                                                           {"code", out.code},
                                                           {"redirect_uri", o.redirect_uri},
                                                           {"code_verifier", out.code_verifier},
                                                           {"resource", resource}};
  http::Headers headers;
  if (o.confidential) {
    headers.emplace_back("Authorization",
                         "Basic " + crypto::Base64Encode(http::PercentEncode(out.client_id) + ":" +
                                                         http::PercentEncode(out.client_secret)));
  } else {
    form.emplace_back("client_id", out.client_id);
  }
  auto t = server.PostForm(token_endpoint, EncodeForm(form), headers);
  out.token_response = nlohmann::json::parse(t.body, nullptr, false);
  if (t.status != 200 || !out.token_response.is_object()) {
    out.error = "token: HTTP " + std::to_string(t.status) + " " + t.body;
    return out;
  }
  out.access_token = out.token_response.value("access_token", "");
  out.refresh_token = out.token_response.value("refresh_token", "");
  out.scope = out.token_response.value("scope", out.scope);
  out.expires_in = out.token_response.value("expires_in", int64_t{0});
  if (out.access_token.empty()) out.error = "token: no access_token in " + t.body;
  return out;
}

Page SignInToConsole(Browser& browser, const std::string& email, const std::string& password) {
  Page login = browser.Get("/console/login");
  EXPECT_EQ(login.status, 200) << login.body;
  auto form = login.form();
  EXPECT_TRUE(form.has_value()) << login.body;
  if (!form) return login;
  form->Set("email", email);
  form->Set("password", password);
  return browser.Submit(*form);
}

}  // namespace crmd::testing
