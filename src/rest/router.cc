#include "src/rest/router.h"

namespace crmd::rest {

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> out;
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  size_t start = 0;
  while (true) {
    size_t slash = path.find('/', start);
    out.push_back(path.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return out;
}

namespace {

bool MatchPattern(std::string_view pattern, const std::vector<std::string_view>& segs,
                  std::map<std::string, std::string>* params) {
  auto pat = SplitPath(pattern);
  if (pat.size() != segs.size()) return false;
  std::map<std::string, std::string> captured;
  for (size_t i = 0; i < pat.size(); ++i) {
    if (pat[i].size() > 2 && pat[i].front() == '{' && pat[i].back() == '}') {
      if (segs[i].empty()) return false;
      captured[std::string(pat[i].substr(1, pat[i].size() - 2))] = std::string(segs[i]);
    } else if (pat[i] != segs[i]) {
      return false;
    }
  }
  *params = std::move(captured);
  return true;
}

}  // namespace

RestRouter::Match RestRouter::Find(std::string_view method, std::string_view sub_path) const {
  Match m;
  auto segs = SplitPath(sub_path);
  // Literal segments beat captures: "/contact/delete/{email}" is never "/contact/{email}"
  // (different lengths), and equal-length patterns are registered literal-first.
  for (const auto& r : routes_) {
    std::map<std::string, std::string> params;
    if (!MatchPattern(r.pattern, segs, &params)) continue;
    for (const std::string& allowed : r.method == "GET" ? std::vector<std::string>{"GET", "HEAD"}
                                                        : std::vector<std::string>{r.method})
      if (m.allow.find(allowed) == std::string::npos)
        m.allow += (m.allow.empty() ? "" : ", ") + allowed;
    // HEAD is served by the GET route (the listener drops the body).
    if (!m.route && (r.method == method || (method == "HEAD" && r.method == "GET"))) {
      m.route = &r;
      m.params = std::move(params);
    }
  }
  return m;
}

}  // namespace crmd::rest
