#include "src/store/sqlite_vfs.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <map>
#include <mutex>
#include <new>
#include <utility>

namespace crmd::store {

// What the files of one database (one -shm, by device and inode, as the unix VFS keys it)
// share: the pin's file and the slot it holds.
struct ShmPin::Group {
  std::mutex mu;
  sqlite3_file* pin = nullptr;  // the unix VFS's file of the pin connection
  int slot = -1;                // the lock offset the pin holds shared, -1 for none
  uint64_t uses = 0;            // shared locks seen (ReleaseIfIdle)
  uint64_t uses_seen = 0;       // ... at the previous ReleaseIfIdle
  uint64_t pinned = 0;
  uint64_t released = 0;
  uint64_t idle_released = 0;
};

namespace {

using Group = ShmPin::Group;

// The WAL index's read slots: lock offsets 3 to 7 (WAL_READ_LOCK(0) to (4), after the
// write, checkpoint and recovery locks; sqlite.org/walformat.html, "locks").
constexpr int kFirstReadSlot = 3;
constexpr int kEndReadSlot = SQLITE_SHM_NLOCK;

struct FileKey {
  dev_t dev;
  ino_t ino;
  bool operator<(const FileKey& o) const { return dev != o.dev ? dev < o.dev : ino < o.ino; }
};

std::mutex g_groups_mu;
std::map<FileKey, std::weak_ptr<Group>>* g_groups = new std::map<FileKey, std::weak_ptr<Group>>;

std::shared_ptr<Group> GroupOf(const char* path) {
  struct stat st {};
  if (!path || stat(path, &st) != 0) return nullptr;
  std::lock_guard lock(g_groups_mu);
  for (auto it = g_groups->begin(); it != g_groups->end();)
    it = it->second.expired() ? g_groups->erase(it) : std::next(it);
  auto& slot = (*g_groups)[FileKey{st.st_dev, st.st_ino}];
  auto group = slot.lock();
  if (!group) {
    group = std::make_shared<Group>();
    slot = group;
  }
  return group;
}

// A file of ours: the unix VFS's file follows it in the same allocation.
struct File {
  sqlite3_file base;
  sqlite3_file* real;
  std::shared_ptr<Group>* group;  // main database files only, else null
};

sqlite3_vfs* Real(sqlite3_vfs* vfs) { return static_cast<sqlite3_vfs*>(vfs->pAppData); }
sqlite3_file* R(sqlite3_file* f) { return reinterpret_cast<File*>(f)->real; }
const sqlite3_io_methods* M(sqlite3_file* f) { return R(f)->pMethods; }

int Close(sqlite3_file* f) {
  File* file = reinterpret_cast<File*>(f);
  int rc = M(f)->xClose(R(f));
  delete file->group;
  file->group = nullptr;
  return rc;
}
int Read(sqlite3_file* f, void* b, int n, sqlite3_int64 o) { return M(f)->xRead(R(f), b, n, o); }
int Write(sqlite3_file* f, const void* b, int n, sqlite3_int64 o) {
  return M(f)->xWrite(R(f), b, n, o);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) { return M(f)->xTruncate(R(f), size); }
int Sync(sqlite3_file* f, int flags) { return M(f)->xSync(R(f), flags); }
int FileSize(sqlite3_file* f, sqlite3_int64* size) { return M(f)->xFileSize(R(f), size); }
int Lock(sqlite3_file* f, int level) { return M(f)->xLock(R(f), level); }
int Unlock(sqlite3_file* f, int level) { return M(f)->xUnlock(R(f), level); }
int CheckReserved(sqlite3_file* f, int* out) { return M(f)->xCheckReservedLock(R(f), out); }
int FileControl(sqlite3_file* f, int op, void* arg) { return M(f)->xFileControl(R(f), op, arg); }
int SectorSize(sqlite3_file* f) { return M(f)->xSectorSize(R(f)); }
int DeviceCharacteristics(sqlite3_file* f) { return M(f)->xDeviceCharacteristics(R(f)); }
int ShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** p) {
  return M(f)->xShmMap(R(f), region, size, extend, p);
}
void ShmBarrier(sqlite3_file* f) { M(f)->xShmBarrier(R(f)); }
int ShmUnmap(sqlite3_file* f, int del) { return M(f)->xShmUnmap(R(f), del); }
int Fetch(sqlite3_file* f, sqlite3_int64 o, int n, void** p) { return M(f)->xFetch(R(f), o, n, p); }
int Unfetch(sqlite3_file* f, sqlite3_int64 o, void* p) { return M(f)->xUnfetch(R(f), o, p); }

// The one method that differs (see the header).
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  File* file = reinterpret_cast<File*>(f);
  sqlite3_file* real = file->real;
  const bool read_slots = offset < kEndReadSlot && offset + n > kFirstReadSlot;
  if (!file->group || !read_slots) return real->pMethods->xShmLock(real, offset, n, flags);
  Group& g = **file->group;
  if (flags == (SQLITE_SHM_LOCK | SQLITE_SHM_EXCLUSIVE)) {
    // Held until the request is made: a pin taken meanwhile would fail it.
    std::lock_guard lock(g.mu);
    if (g.pin && g.slot >= offset && g.slot < offset + n) {
      g.pin->pMethods->xShmLock(g.pin, g.slot, 1, SQLITE_SHM_UNLOCK | SQLITE_SHM_SHARED);
      g.slot = -1;
      ++g.released;
    }
    return real->pMethods->xShmLock(real, offset, n, flags);
  }
  const int rc = real->pMethods->xShmLock(real, offset, n, flags);
  if (rc != SQLITE_OK || flags != (SQLITE_SHM_LOCK | SQLITE_SHM_SHARED)) return rc;
  // This connection holds the slot now, so taking it for the pin too makes no system call;
  // letting an older slot go may. A busy mutex skips it: the next read pins.
  std::unique_lock lock(g.mu, std::try_to_lock);
  if (!lock.owns_lock()) return rc;
  ++g.uses;
  if (!g.pin || g.slot == offset) return rc;
  if (g.slot >= 0)
    g.pin->pMethods->xShmLock(g.pin, g.slot, 1, SQLITE_SHM_UNLOCK | SQLITE_SHM_SHARED);
  g.slot = -1;
  if (g.pin->pMethods->xShmLock(g.pin, offset, 1, SQLITE_SHM_LOCK | SQLITE_SHM_SHARED) ==
      SQLITE_OK) {
    g.slot = offset;
    ++g.pinned;
  }
  return rc;
}

sqlite3_io_methods MethodsOfVersion(int version) {
  sqlite3_io_methods m{};
  m.iVersion = version;
  m.xClose = Close;
  m.xRead = Read;
  m.xWrite = Write;
  m.xTruncate = Truncate;
  m.xSync = Sync;
  m.xFileSize = FileSize;
  m.xLock = Lock;
  m.xUnlock = Unlock;
  m.xCheckReservedLock = CheckReserved;
  m.xFileControl = FileControl;
  m.xSectorSize = SectorSize;
  m.xDeviceCharacteristics = DeviceCharacteristics;
  if (version >= 2) {
    m.xShmMap = ShmMap;
    m.xShmLock = ShmLock;
    m.xShmBarrier = ShmBarrier;
    m.xShmUnmap = ShmUnmap;
  }
  if (version >= 3) {
    m.xFetch = Fetch;
    m.xUnfetch = Unfetch;
  }
  return m;
}
// Index: the version of the unix VFS's own methods for the file (1 to 3).
const sqlite3_io_methods kMethods[4] = {MethodsOfVersion(1), MethodsOfVersion(1),
                                        MethodsOfVersion(2), MethodsOfVersion(3)};

int Open(sqlite3_vfs* vfs, const char* name, sqlite3_file* f, int flags, int* out_flags) {
  File* file = reinterpret_cast<File*>(f);
  file->base.pMethods = nullptr;
  file->real = reinterpret_cast<sqlite3_file*>(file + 1);
  file->group = nullptr;
  int rc = Real(vfs)->xOpen(Real(vfs), name, file->real, flags, out_flags);
  if (file->real->pMethods == nullptr) return rc;
  if ((flags & SQLITE_OPEN_MAIN_DB) && rc == SQLITE_OK) {
    if (auto group = GroupOf(name)) file->group = new std::shared_ptr<Group>(std::move(group));
  }
  const int version = file->real->pMethods->iVersion;
  file->base.pMethods = &kMethods[version < 1 ? 1 : version > 3 ? 3 : version];
  return rc;
}

int Delete(sqlite3_vfs* v, const char* n, int sync) { return Real(v)->xDelete(Real(v), n, sync); }
int Access(sqlite3_vfs* v, const char* n, int flags, int* out) {
  return Real(v)->xAccess(Real(v), n, flags, out);
}
int FullPathname(sqlite3_vfs* v, const char* n, int size, char* out) {
  return Real(v)->xFullPathname(Real(v), n, size, out);
}
void* DlOpen(sqlite3_vfs* v, const char* n) { return Real(v)->xDlOpen(Real(v), n); }
void DlError(sqlite3_vfs* v, int n, char* out) { Real(v)->xDlError(Real(v), n, out); }
void (*DlSym(sqlite3_vfs* v, void* h, const char* s))(void) {
  return Real(v)->xDlSym(Real(v), h, s);
}
void DlClose(sqlite3_vfs* v, void* h) { Real(v)->xDlClose(Real(v), h); }
int Randomness(sqlite3_vfs* v, int n, char* out) { return Real(v)->xRandomness(Real(v), n, out); }
int Sleep(sqlite3_vfs* v, int us) { return Real(v)->xSleep(Real(v), us); }
int CurrentTime(sqlite3_vfs* v, double* t) { return Real(v)->xCurrentTime(Real(v), t); }
int GetLastError(sqlite3_vfs* v, int n, char* out) {
  return Real(v)->xGetLastError(Real(v), n, out);
}
int CurrentTimeInt64(sqlite3_vfs* v, sqlite3_int64* t) {
  return Real(v)->xCurrentTimeInt64(Real(v), t);
}
int SetSystemCall(sqlite3_vfs* v, const char* n, sqlite3_syscall_ptr p) {
  return Real(v)->xSetSystemCall(Real(v), n, p);
}
sqlite3_syscall_ptr GetSystemCall(sqlite3_vfs* v, const char* n) {
  return Real(v)->xGetSystemCall(Real(v), n);
}
const char* NextSystemCall(sqlite3_vfs* v, const char* n) {
  return Real(v)->xNextSystemCall(Real(v), n);
}

sqlite3_vfs* Register() {
  sqlite3_vfs* unix = sqlite3_vfs_find("unix");
  if (!unix) return nullptr;
  static sqlite3_vfs vfs{};
  vfs.iVersion = unix->iVersion < 3 ? unix->iVersion : 3;
  vfs.szOsFile = static_cast<int>(sizeof(File)) + unix->szOsFile;
  vfs.mxPathname = unix->mxPathname;
  vfs.zName = "crmd-unix";
  vfs.pAppData = unix;
  vfs.xOpen = Open;
  vfs.xDelete = Delete;
  vfs.xAccess = Access;
  vfs.xFullPathname = FullPathname;
  vfs.xDlOpen = DlOpen;
  vfs.xDlError = DlError;
  vfs.xDlSym = DlSym;
  vfs.xDlClose = DlClose;
  vfs.xRandomness = Randomness;
  vfs.xSleep = Sleep;
  vfs.xCurrentTime = CurrentTime;
  vfs.xGetLastError = GetLastError;
  if (vfs.iVersion >= 2) vfs.xCurrentTimeInt64 = CurrentTimeInt64;
  if (vfs.iVersion >= 3) {
    vfs.xSetSystemCall = SetSystemCall;
    vfs.xGetSystemCall = GetSystemCall;
    vfs.xNextSystemCall = NextSystemCall;
  }
  if (sqlite3_vfs_register(&vfs, 0) != SQLITE_OK) return nullptr;
  return &vfs;
}

}  // namespace

const char* PinningVfsName() {
  static sqlite3_vfs* vfs = Register();
  return vfs ? vfs->zName : nullptr;
}

std::unique_ptr<ShmPin> ShmPin::Attach(sqlite3* db) {
  // A read in WAL mode maps the WAL index for this connection (its shared-memory locks
  // need it), and says whether the database is in WAL mode at all.
  bool wal = false;
  auto is_wal = [](void* out, int, char** values, char**) {
    *static_cast<bool*>(out) = values[0] && sqlite3_stricmp(values[0], "wal") == 0;
    return 0;
  };
  if (sqlite3_exec(db, "PRAGMA journal_mode", is_wal, &wal, nullptr) != SQLITE_OK || !wal)
    return nullptr;
  if (sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) !=
      SQLITE_OK)
    return nullptr;
  sqlite3_file* top = nullptr;
  if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &top) != SQLITE_OK || !top)
    return nullptr;
  bool ours = false;
  for (const auto& m : kMethods) ours = ours || top->pMethods == &m;
  if (!ours) return nullptr;  // not opened through PinningVfsName()
  File* file = reinterpret_cast<File*>(top);
  if (!file->group || top->pMethods->iVersion < 2) return nullptr;
  std::shared_ptr<Group> group = *file->group;
  std::lock_guard lock(group->mu);
  const bool first = group->pin == nullptr;
  if (first) group->pin = file->real;
  return std::unique_ptr<ShmPin>(new ShmPin(std::move(group), first));
}

ShmPin::~ShmPin() {
  if (!active_) return;
  std::lock_guard lock(group_->mu);
  if (group_->slot >= 0)
    group_->pin->pMethods->xShmLock(group_->pin, group_->slot, 1,
                                    SQLITE_SHM_UNLOCK | SQLITE_SHM_SHARED);
  group_->slot = -1;
  group_->pin = nullptr;
}

bool ShmPin::ReleaseIfIdle() {
  if (!active_) return false;
  std::lock_guard lock(group_->mu);
  const bool idle = group_->uses == group_->uses_seen;
  group_->uses_seen = group_->uses;
  if (!idle || group_->slot < 0) return false;
  group_->pin->pMethods->xShmLock(group_->pin, group_->slot, 1,
                                  SQLITE_SHM_UNLOCK | SQLITE_SHM_SHARED);
  group_->slot = -1;
  ++group_->idle_released;
  return true;
}

ShmPin::Counts ShmPin::counts() const {
  std::lock_guard lock(group_->mu);
  return {.pinned = group_->pinned,
          .released = group_->released,
          .idle_released = group_->idle_released};
}

bool ShmPin::active() const { return active_; }

}  // namespace crmd::store
