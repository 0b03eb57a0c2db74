#pragma once
// Opening connections to a store file, and the checks made before the first write.

#include <memory>
#include <string>

#include "sqlite_db.h"
#include "stagewise/storage/options.h"

namespace stagewise::storage::detail {

/// Refuses, without writing a byte, a file that is not a SQLite database, is damaged, belongs to
/// another program or has a newer schema. Returns false if there is nothing there yet (missing
/// or empty file).
bool checkExistingFile(const std::string& path, const StoreOptions& options);

enum class Access { ReadOnly, ReadWrite };

/// A configured connection: busy timeout and foreign keys; for ReadWrite also WAL (verified)
/// and synchronous=NORMAL.
std::unique_ptr<Database> openConnection(const std::string& path, const StoreOptions& options,
                                         Access access);

}  // namespace stagewise::storage::detail
