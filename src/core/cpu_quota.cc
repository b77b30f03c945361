#include "src/core/cpu_quota.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

namespace crmd {
namespace {

std::optional<long long> Number(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  long long v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

int Ceil(long long quota, long long period) {
  if (quota <= 0 || period <= 0) return 0;
  return static_cast<int>((quota + period - 1) / period);
}

std::optional<std::string> Slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The tightest non-zero limit, 0 when neither is one.
int Tighter(int a, int b) { return a == 0 ? b : (b == 0 ? a : std::min(a, b)); }

// `dir` and its ancestors up to `top` (both under the same root, `dir` starting with `top`).
std::vector<std::string> UpTo(std::string dir, const std::string& top) {
  std::vector<std::string> out;
  while (true) {
    out.push_back(dir);
    if (dir.size() <= top.size()) break;
    auto slash = dir.find_last_of('/');
    if (slash == std::string::npos || slash < top.size())
      dir = top;
    else
      dir.resize(slash);
  }
  return out;
}

}  // namespace

int CoresOfCpuMax(std::string_view cpu_max) {
  auto space = cpu_max.find(' ');
  if (space == std::string_view::npos) return 0;
  auto quota = Number(cpu_max.substr(0, space));  // "max" is no number: unlimited
  auto period = Number(cpu_max.substr(space + 1));
  if (!quota || !period) return 0;
  return Ceil(*quota, *period);
}

int CoresOfCfsQuota(std::string_view quota_us, std::string_view period_us) {
  auto quota = Number(quota_us), period = Number(period_us);
  if (!quota || !period) return 0;
  return Ceil(*quota, *period);
}

int CgroupCpuLimit(const std::string& root, std::string_view proc_self_cgroup) {
  int limit = 0;
  std::istringstream lines{std::string(proc_self_cgroup)};
  std::string line;
  while (std::getline(lines, line)) {
    // "<id>:<controllers>:<path>"; v2 is "0::<path>".
    auto a = line.find(':'), b = line.find(':', a == std::string::npos ? 0 : a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    if (path.empty() || path[0] != '/') continue;
    if (path == "/") path.clear();
    if (controllers.empty()) {
      for (const auto& dir : UpTo(root + path, root))
        if (auto text = Slurp(dir + "/cpu.max")) limit = Tighter(limit, CoresOfCpuMax(*text));
      continue;
    }
    bool cpu = false;
    std::istringstream names(controllers);
    for (std::string n; std::getline(names, n, ',');) cpu = cpu || n == "cpu";
    if (!cpu) continue;
    // v1 mounts the controller at <root>/cpu,cpuacct or <root>/cpu (one may link the other).
    for (const std::string& mount : {root + "/" + controllers, root + "/cpu"}) {
      for (const auto& dir : UpTo(mount + path, mount)) {
        auto quota = Slurp(dir + "/cpu.cfs_quota_us");
        auto period = Slurp(dir + "/cpu.cfs_period_us");
        if (quota && period) limit = Tighter(limit, CoresOfCfsQuota(*quota, *period));
      }
    }
  }
  return limit;
}

int ProcessCpuLimit() {
  auto text = Slurp("/proc/self/cgroup");
  return text ? CgroupCpuLimit("/sys/fs/cgroup", *text) : 0;
}

}  // namespace crmd
