#pragma once
// The console's templates and static files, embedded from src/console/templates/ at build
// time (cmake/Embed.cmake, NAMESPACE crmd::console::templates), and rendering with mstch
// (Mustache: every {{value}} is HTML-escaped; {{{raw}}} is used only for HTML that mstch
// itself rendered). Thread-safe.
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <mstch/mstch.hpp>

#include "src/core/embedded.h"
#include "src/core/http_types.h"

namespace crmd::console::templates {

std::span<const crmd::embedded::File> All();
std::optional<std::string_view> Find(std::string_view path);

}  // namespace crmd::console::templates

namespace crmd::console {

// The strict policy of every console page: no script at all, styles only from
// /console/console.css, forms only to crmd, never framed.
inline constexpr const char* kConsoleCsp =
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'";

// An HTML page: `body_template` rendered with `context`, inside layout.mustache (title,
// the signed-in person's email when known). Security headers set (CSP above,
// X-Frame-Options DENY, no-store, no-referrer).
http::Response RenderPage(int status, const std::string& title, const std::string& body_template,
                          const mstch::node& context, const std::string& email = "");

}  // namespace crmd::console
