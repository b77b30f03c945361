#pragma once
// The console's templates and static files, embedded from src/console/templates/ at build
// time (cmake/Embed.cmake, NAMESPACE crmd::console::templates), and rendering with
// kainjow's Mustache (Debian libkainjow-mustache-dev): every {{value}} is HTML-escaped;
// {{{raw}}} is used only for HTML that was itself rendered here. Thread-safe.
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "src/core/embedded.h"
#include "src/core/http_types.h"

namespace crmd::console::templates {

std::span<const crmd::embedded::File> All();
std::optional<std::string_view> Find(std::string_view path);

}  // namespace crmd::console::templates

namespace crmd::console {

// What a template sees: a text, a flag (sections), a map of names to values or a list.
// Numbers are refused at compile time (format them, e.g. std::to_string): a number would
// otherwise turn silently into a flag.
class View;
using ViewMap = std::map<std::string, View>;
using ViewList = std::vector<View>;
class View {
 public:
  View(std::string text) : value_(std::move(text)) {}
  View(const char* text) : value_(std::string(text)) {}
  View(bool flag) : value_(flag) {}
  View(ViewMap map) : value_(std::move(map)) {}
  View(ViewList list) : value_(std::move(list)) {}
  template <typename T>
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) View(T)
  = delete;

  const std::variant<std::string, bool, ViewMap, ViewList>& value() const { return value_; }

 private:
  std::variant<std::string, bool, ViewMap, ViewList> value_;
};

// `tmpl` rendered with `context`; {{value}} escapes & < > " ' and / as HTML entities.
// A template that does not parse renders as nothing (the embedded ones are tested).
std::string RenderMustache(std::string_view tmpl, const View& context);

// The strict policy of every console page: scripts and styles only from crmd's own files
// (/console/console.js, /console/console.css; never inline), forms and fetches (the
// incoming-webhook preview) only to crmd, never framed.
inline constexpr const char* kConsoleCsp =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

// What the layout shows around a page: the navigation and the sign-out button for a
// signed-in person, nothing for a visitor.
struct PageChrome {
  std::string email;       // the signed-in person; empty: a visitor (no navigation)
  std::string csrf_token;  // the session's form token, for the sign-out form
  bool is_admin = false;   // shows the administrators' sections
  std::string section;     // the navigation entry marked as the current page
  int refresh_s = 0;       // > 0: the page reloads itself after that many seconds
};

// A short hash of console.css and console.js: the layout links them with ?v=<it>, so they
// can be cached for a year and still change with a new build.
const std::string& AssetVersion();

// An HTML page: `body_template` rendered with `context`, inside layout.mustache. Security
// headers set (CSP above, X-Frame-Options DENY, no-store, Referrer-Policy same-origin, nosniff).
http::Response RenderPage(int status, const std::string& title, const std::string& body_template,
                          const View& context, const PageChrome& chrome = {});

}  // namespace crmd::console
