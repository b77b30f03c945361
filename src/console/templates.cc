#include "src/console/templates.h"

#include <mstch/mstch.hpp>

namespace crmd::console {

http::Response RenderPage(int status, const std::string& title, const std::string& body_template,
                          const mstch::node& context, const std::string& email) {
  auto body_tpl = templates::Find(body_template);
  auto layout = templates::Find("layout.mustache");
  std::string html;
  if (body_tpl && layout) {
    std::string body = mstch::render(std::string(*body_tpl), context);
    mstch::map page{{"title", title}, {"body", body}};
    if (!email.empty()) page.emplace("email", email);
    html = mstch::render(std::string(*layout), page);
  } else {
    status = 500;
    html = "<!doctype html><title>Error</title><p>Internal error.</p>";
  }
  http::Response r = http::Response::Html(status, std::move(html));
  r.Set("Content-Security-Policy", kConsoleCsp);
  r.Set("Referrer-Policy", "no-referrer");
  r.Set("X-Content-Type-Options", "nosniff");
  return r;
}

}  // namespace crmd::console
