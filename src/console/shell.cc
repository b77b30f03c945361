#include "src/console/shell.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <string_view>

#include "src/core/crypto.h"
#include "src/core/log.h"

namespace crmd::console {

void ConsoleRoutes::Append(ConsoleRoutes other) {
  for (auto& r : other.exact) exact.push_back(std::move(r));
  for (auto& r : other.prefix) prefix.push_back(std::move(r));
}

PageChrome ChromeFor(const Person& p, std::string section) {
  return PageChrome{.email = p.email,
                    .csrf_token = p.csrf_token,
                    .is_admin = p.is_admin,
                    .section = std::move(section)};
}

http::Response MessagePage(int status, const std::string& title, const std::string& message,
                           const PageChrome& chrome, const std::string& link,
                           const std::string& link_text) {
  ViewMap ctx{{"message", message}};
  if (!link.empty()) {
    ctx.emplace("link", link);
    ctx.emplace("link_text", link_text);
  }
  return RenderPage(status, title, "message.mustache", ctx, chrome);
}

http::Response SeeOther(const std::string& location) {
  http::Response r = http::Response::Empty(303);
  r.Set("Location", location);
  r.Set("Cache-Control", "no-store");
  return r;
}

http::Response InternalError(const Error& e, const PageChrome& chrome) {
  spdlog::error(R"("event":"console_error","detail":"{}")",
                JsonEscape(e.detail.empty() ? e.message : e.detail));
  return MessagePage(500, "Error", "Something went wrong. Try again in a minute.", chrome);
}

http::Response NotFoundPage(const PageChrome& chrome) {
  return MessagePage(404, "Not found", "There is no such page.", chrome, "/console", "Overview");
}

std::optional<int64_t> IdField(const FormFields& form, std::string_view name) {
  auto v = http::FormValue(form, name);
  if (!v || v->empty() || v->size() > 18) return std::nullopt;
  int64_t id = 0;
  for (char ch : *v) {
    if (ch < '0' || ch > '9') return std::nullopt;
    id = id * 10 + (ch - '0');
  }
  if (id <= 0) return std::nullopt;
  return id;
}

std::optional<int> PersonFacingStatus(const Error& e) {
  switch (e.code) {
    case Errc::kInvalidArgument:
      return 400;
    case Errc::kNotFound:
      return 404;
    // A signed-in person who reached the page may use it: a refusal from a service is
    // about what was entered (an outgoing URL on a private network), not about them.
    case Errc::kPermissionDenied:
      return 422;
    case Errc::kAlreadyExists:
    case Errc::kRevisionConflict:
    case Errc::kInvalidTransition:
    case Errc::kDependencyBlocked:
    case Errc::kSuppressed:
      return 409;
    case Errc::kRateLimited:
      return 429;
    default:
      return std::nullopt;
  }
}

http::Response ServiceErrorPage(const Error& e, const PageChrome& chrome, const std::string& back) {
  auto status = PersonFacingStatus(e);
  if (!status) return InternalError(e, chrome);
  if (*status == 404 && back.empty()) return NotFoundPage(chrome);
  if (*status == 404)
    return MessagePage(404, "Not found", e.message.empty() ? "It no longer exists." : e.message,
                       chrome, back, "Back");
  return MessagePage(*status, "Not saved", e.message, chrome, back, back.empty() ? "" : "Back");
}

std::optional<http::Response> OnlyMethods(const http::Request& req, std::string_view allowed,
                                          const PageChrome& chrome) {
  std::string list(allowed);
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    std::string m = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    while (!m.empty() && m.front() == ' ') m.erase(0, 1);
    if (m == req.method) return std::nullopt;
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  auto r = MessagePage(405, "Method not allowed", "Use the page's links and buttons.", chrome);
  r.Set("Allow", list);
  return r;
}

std::string FieldValue(const FormFields& form, const std::string& name) {
  return http::FormValue(form, name).value_or("");
}

std::vector<std::string> SplitList(const std::string& s, std::string_view separators) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    size_t a = cur.find_first_not_of(" \t\r\n"), b = cur.find_last_not_of(" \t\r\n");
    if (a != std::string::npos) out.push_back(cur.substr(a, b - a + 1));
    cur.clear();
  };
  for (char ch : s) {
    if (separators.find(ch) != std::string_view::npos)
      flush();
    else
      cur += ch;
  }
  flush();
  return out;
}

std::string SafeNext(const std::string& next) {
  const std::string kHome = "/console";
  // The browser resolves the path before it asks: "/console/../oauth/authorize" and
  // "/console/%2e%2e/oauth/authorize" (WHATWG URL: %2e is a dot in a dot segment) both land
  // on /oauth/authorize, and "\\" is "/" to it. So the path must stay a plain /console path:
  // no dot segments, no empty segments, no backslashes, and no escape that decodes into a
  // dot, a separator, a '%' (decoded twice somewhere) or a control character (%20 is fine).
  for (char ch : next)
    if (static_cast<unsigned char>(ch) < 0x21 || ch == 0x7f || ch == '\\') return kHome;
  const std::string path = next.substr(0, next.find_first_of("?#"));
  if (path != kHome && path.rfind(kHome + "/", 0) != 0) return kHome;
  for (size_t i = path.find('%'); i != std::string::npos; i = path.find('%', i + 1)) {
    auto byte = http::PercentDecode(std::string_view(path).substr(i, 3));
    if (!byte || byte->size() != 1) return kHome;
    const unsigned char ch = static_cast<unsigned char>((*byte)[0]);
    if (ch < 0x20 || ch == 0x7f || ch == '.' || ch == '/' || ch == '\\' || ch == '%') return kHome;
  }
  for (size_t start = 1; start <= path.size();) {  // segments after the leading '/'
    size_t end = std::min(path.find('/', start), path.size());
    std::string_view segment(path.data() + start, end - start);
    if (segment == "." || segment == "..") return kHome;
    if (segment.empty() && end != path.size()) return kHome;  // "//": another host or path
    start = end + 1;
  }
  return next;
}

http::Response WithPerson(const ConsolePeople& people, const http::Request& req,
                          const std::function<http::Response(const Person&)>& then) {
  auto person = people.current(req);
  if (!person) return InternalError(person.error());
  if (!*person) {
    std::string back = req.path + (req.query.empty() ? "" : "?" + req.query);
    std::string login = "/console/login?next=" + http::PercentEncode(back);
    if (req.method != "GET" && req.method != "HEAD")
      return MessagePage(403, "Signed out", "Your session has ended. Sign in and try again.", {},
                         login, "Sign in");
    return SeeOther(login);
  }
  return then(**person);
}

http::Response WithAdmin(const ConsolePeople& people, const http::Request& req,
                         const std::string& section,
                         const std::function<http::Response(const Person&)>& then) {
  return WithPerson(people, req, [&](const Person& p) {
    if (!p.is_admin)
      return MessagePage(403, "Administrators only",
                         "This page is for administrators. Ask one to make the change.",
                         ChromeFor(p, section), "/console", "Overview");
    return then(p);
  });
}

http::Response WithEditor(const ConsolePeople& people, const http::Request& req,
                          const std::string& section,
                          const std::function<http::Response(const Person&)>& then) {
  return WithPerson(people, req, [&](const Person& p) {
    if (!p.can_edit)
      return MessagePage(403, "Editors only",
                         "Your role lets you read the contact book, not change it. Ask an "
                         "administrator for the editor role.",
                         ChromeFor(p, section), "/console", "Overview");
    return then(p);
  });
}

std::optional<http::Response> RefuseForgedPost(const ConsolePeople& people,
                                               const http::Request& req, const Person& p,
                                               const FormFields& form) {
  if (!people.origin_allowed(req))
    return MessagePage(403, "Forbidden", "This form was sent from another site.", ChromeFor(p, ""));
  auto csrf = http::FormValue(form, "csrf_token");
  if (!csrf || csrf->empty() || p.csrf_token.empty() ||
      !crypto::ConstantTimeEqual(*csrf, p.csrf_token))
    return MessagePage(403, "Forbidden", "The form has expired. Reload the page and try again.",
                       ChromeFor(p, ""));
  return std::nullopt;
}

namespace {

http::Response SignInForm(const ConsolePeople& people, const http::Request& req, int status,
                          const std::string& next, const std::string& email,
                          const std::string& error) {
  auto [token, cookie] = people.login_form_token(req);
  ViewMap ctx{{"next", SafeNext(next)}, {"email", email}, {"login_token", token}};
  if (!error.empty()) ctx.emplace("error", error);
  http::Response r = RenderPage(status, "Sign in", "sign_in.mustache", ctx);
  r.headers.emplace_back("Set-Cookie", cookie);
  return r;
}

http::Response HandleLogin(const ConsolePeople& people, const http::Request& req) {
  if (auto r = OnlyMethods(req, "GET, HEAD, POST")) return *r;
  if (req.method != "POST") {
    auto next = http::FormValue(http::ParseForm(req.query), "next").value_or("");
    auto person = people.current(req);
    if (!person) return InternalError(person.error());
    if (*person) return SeeOther(SafeNext(next));
    return SignInForm(people, req, 200, next, "", "");
  }
  if (!people.origin_allowed(req))
    return MessagePage(403, "Forbidden", "This form was sent from another site.");
  auto form = http::ParseForm(req.body);
  std::string next = http::FormValue(form, "next").value_or("");
  std::string email = http::FormValue(form, "email").value_or("");
  // Login CSRF: the form's token must match the cookie set with the form.
  if (!people.login_form_token_valid(req, http::FormValue(form, "login_token").value_or("")))
    return SignInForm(people, req, 403, next, email,
                      "The sign-in form expired. Sign in again with this fresh form.");
  std::string password = http::FormValue(form, "password").value_or("");
  SignInResult result = people.sign_in(req, email, password);
  if (!result.ok) {
    auto r = SignInForm(people, req, result.status, next, email, result.error);
    if (result.status == 429) r.Set("Retry-After", std::to_string(result.retry_after));
    return r;
  }
  http::Response r = SeeOther(SafeNext(next));
  for (auto& c : result.set_cookies) r.headers.emplace_back("Set-Cookie", std::move(c));
  return r;
}

http::Response HandleLogout(const ConsolePeople& people, const http::Request& req) {
  if (auto r = OnlyMethods(req, "POST")) return *r;
  return WithPerson(people, req, [&](const Person& p) {
    if (auto refused = RefuseForgedPost(people, req, p, http::ParseForm(req.body))) return *refused;
    http::Response r = SeeOther("/console/login");
    for (auto& c : people.sign_out(req)) r.headers.emplace_back("Set-Cookie", std::move(c));
    spdlog::info(R"("event":"console_sign_out","subject":"{}")", JsonEscape(p.subject));
    return r;
  });
}

http::Response StaticFile(const http::Request& req, const char* name, const char* type) {
  if (auto r = OnlyMethods(req, "GET, HEAD")) return *r;
  auto file = templates::Find(name);
  http::Response r = http::Response::Text(200, std::string(file.value_or("")), type);
  // Long-lived: the layout names the files with a ?v=<content hash>.
  r.Set("Cache-Control", "public, max-age=31536000, immutable");
  r.Set("X-Content-Type-Options", "nosniff");
  return r;
}

}  // namespace

ConsoleRoutes SessionRoutes(ConsolePeople people) {
  auto d = std::make_shared<ConsolePeople>(std::move(people));
  ConsoleRoutes routes;
  routes.exact.emplace_back("/console/login",
                            [d](const http::Request& r) { return HandleLogin(*d, r); });
  routes.exact.emplace_back("/console/logout",
                            [d](const http::Request& r) { return HandleLogout(*d, r); });
  routes.exact.emplace_back("/console/console.css", [](const http::Request& r) {
    return StaticFile(r, "console.css", "text/css; charset=utf-8");
  });
  routes.exact.emplace_back("/console/console.js", [](const http::Request& r) {
    return StaticFile(r, "console.js", "text/javascript; charset=utf-8");
  });
  // Every other /console page: sign in first, then 404.
  routes.prefix.emplace_back("/console/", [d](const http::Request& r) {
    return WithPerson(*d, r, [&](const Person& p) { return NotFoundPage(ChromeFor(p, "")); });
  });
  return routes;
}

}  // namespace crmd::console
