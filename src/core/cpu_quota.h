#pragma once
// The CPU bandwidth limit a cgroup puts on this process (a container's `--cpus`, systemd's
// CPUQuota=), so that "one per core" defaults (I/O threads, handler runners) count the
// cores the process may use rather than the machine's. Linux only; stateless.
#include <string>
#include <string_view>

namespace crmd {

// Cores allowed by a cgroup v2 `cpu.max` ("<quota> <period>", or "max <period>"), rounded
// up: "150000 100000" is 2. 0 when unlimited or not understood.
int CoresOfCpuMax(std::string_view cpu_max);
// The same from cgroup v1 `cpu.cfs_quota_us` (-1: unlimited) and `cpu.cfs_period_us`.
int CoresOfCfsQuota(std::string_view quota_us, std::string_view period_us);
// The tightest limit on the cgroup named in `proc_self_cgroup` (the text of
// /proc/self/cgroup) and its ancestors, read under `root` (normally /sys/fs/cgroup): v2's
// cpu.max, or v1's cpu controller files. 0 when there is none.
int CgroupCpuLimit(const std::string& root, std::string_view proc_self_cgroup);
// CgroupCpuLimit of this process: /proc/self/cgroup under /sys/fs/cgroup.
int ProcessCpuLimit();

}  // namespace crmd
