#include "src/core/cpu_quota.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "src/core/worker_pool.h"

namespace crmd {
namespace {

// A directory of its own, removed with the test.
class ScratchDir {
 public:
  ScratchDir() {
    char tmpl[] = "/tmp/crmd-cpuquota.XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void WriteFile(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

TEST(CpuQuota, CpuMaxRoundsUpAndMaxIsUnlimited) {
  EXPECT_EQ(CoresOfCpuMax("200000 100000\n"), 2);
  EXPECT_EQ(CoresOfCpuMax("150000 100000"), 2);
  EXPECT_EQ(CoresOfCpuMax("50000 100000\n"), 1);
  EXPECT_EQ(CoresOfCpuMax("max 100000\n"), 0);
  EXPECT_EQ(CoresOfCpuMax("garbage"), 0);
  EXPECT_EQ(CoresOfCpuMax(""), 0);
}

TEST(CpuQuota, CfsQuotaOfMinusOneIsUnlimited) {
  EXPECT_EQ(CoresOfCfsQuota("300000\n", "100000\n"), 3);
  EXPECT_EQ(CoresOfCfsQuota("-1\n", "100000\n"), 0);
  EXPECT_EQ(CoresOfCfsQuota("x", "100000"), 0);
  EXPECT_EQ(CoresOfCfsQuota("100000", "0"), 0);
}

// cgroup v2: the tightest cpu.max of the process's cgroup and its ancestors.
TEST(CpuQuota, V2TakesTheTightestLimitUpTheTree) {
  ScratchDir dir;
  const std::string root = dir.path() + "/cg";
  WriteFile(root + "/cpu.max", "max 100000\n");
  WriteFile(root + "/system.slice/cpu.max", "300000 100000\n");
  WriteFile(root + "/system.slice/crmd.service/cpu.max", "max 100000\n");
  EXPECT_EQ(CgroupCpuLimit(root, "0::/system.slice/crmd.service\n"), 3);
  WriteFile(root + "/system.slice/crmd.service/cpu.max", "100000 100000\n");
  EXPECT_EQ(CgroupCpuLimit(root, "0::/system.slice/crmd.service\n"), 1);
  // A container sees its own cgroup as the root.
  WriteFile(root + "/cpu.max", "200000 100000\n");
  EXPECT_EQ(CgroupCpuLimit(root, "0::/\n"), 2);
  EXPECT_EQ(CgroupCpuLimit(root + "/none", "0::/\n"), 0);
}

// cgroup v1: the cpu controller's quota and period, mounted as cpu,cpuacct or cpu.
TEST(CpuQuota, V1ReadsTheCpuControllersQuota) {
  ScratchDir dir;
  const std::string root = dir.path() + "/cg";
  const std::string cgroup = "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n";
  WriteFile(root + "/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  WriteFile(root + "/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(CgroupCpuLimit(root, cgroup), 0);
  WriteFile(root + "/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "150000\n");
  WriteFile(root + "/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(CgroupCpuLimit(root, cgroup), 2);
  // No cpu controller named: no limit read.
  EXPECT_EQ(CgroupCpuLimit(root, "12:memory:/docker/abc\n"), 0);
}

TEST(CpuQuota, CoresIsAtLeastOneAndAtMostTheAffinity) {
  const int cores = WorkerPool::Cores();
  EXPECT_GE(cores, 1);
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  EXPECT_LE(cores, CPU_COUNT(&set));
}

}  // namespace
}  // namespace crmd
