#pragma once
// SQLite driver: WAL, one writer connection (writes are serialised by SQLite anyway) and
// a pool of reader connections; each connection caches its prepared statements.
#include <memory>
#include <string>

#include "src/store/db.h"

namespace crmd::store {

Result<std::unique_ptr<Database>> OpenSqlite(const std::string& path, int readers);

}  // namespace crmd::store
