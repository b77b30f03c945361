#pragma once
// SQLite's unix VFS with one addition: a read lock that stays (src/store/sqlite.cc).
//
// In WAL mode every read transaction takes a shared lock on one of the WAL index's read
// slots and gives it back at its end. The unix VFS makes that a system call (fcntl on the
// -shm file) whenever no other connection of the process holds the same slot: on a node
// answering reads, two fcntl calls per read, a twentieth of a get_contact's CPU.
//
// A "pin" is one more connection of the process, used for nothing else, whose only job is
// to hold a shared lock on the slot the readers use last, so that the unix VFS finds the
// slot held by a sibling and makes no system call. The pin is not a reader: it holds no
// snapshot, only the lock. Whenever a connection of the same database in this process asks
// for an exclusive lock on a read slot (a reader moving the slot's mark after a write, a
// checkpoint, a WAL restart, recovery), the pin lets go of that slot first, so everything
// SQLite does in the process behaves as without it. To other processes (crmctl) the pin
// looks like a reader of crmd's on one slot: they use the other slots, and a checkpoint of
// theirs may stop at its mark, as with any reader. At most one slot is pinned at a time,
// and none once the process has stopped reading (ReleaseIfIdle, called every second by
// src/store/sqlite.cc): an idle crmd holds no slot, so another process's checkpoint and
// WAL restart go through as they would without the pin.
#include <cstdint>
#include <memory>

struct sqlite3;
struct sqlite3_file;

namespace crmd::store {

// "crmd-unix", registered on the first call (not as the default VFS). Connections opened
// through it are the ones whose read locks a pin can hold.
const char* PinningVfsName();

// A pin for the database `db` (opened through PinningVfsName(), in WAL mode) is attached
// to: `db` must take no further statement. Detached (its slot released) when destroyed,
// which must happen before `db` is closed. Only the first pin of a database file in the
// process takes effect.
class ShmPin {
 public:
  static std::unique_ptr<ShmPin> Attach(sqlite3* db);
  ~ShmPin();
  ShmPin(const ShmPin&) = delete;
  ShmPin& operator=(const ShmPin&) = delete;

  // Lets the slot go if no read took a slot since the previous call. Returns whether it
  // did.
  bool ReleaseIfIdle();

  // For tests: how often a slot was pinned, and let go for an exclusive lock.
  struct Counts {
    uint64_t pinned = 0;
    uint64_t released = 0;
    uint64_t idle_released = 0;
  };
  Counts counts() const;
  bool active() const;  // this pin is the one of its database file

  struct Group;

 private:
  explicit ShmPin(std::shared_ptr<Group> group, bool active)
      : group_(std::move(group)), active_(active) {}
  std::shared_ptr<Group> group_;
  bool active_ = false;
};

}  // namespace crmd::store
