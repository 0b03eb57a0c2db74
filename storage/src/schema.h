#pragma once
// Schema versions and forward migrations. A new file runs every migration from version 1, so the
// chain that upgrades old files is the same code that creates new ones.

#include "sqlite_db.h"

namespace stagewise::storage::detail {

/// `PRAGMA application_id` of a Stagewise run store ("SWRS").
inline constexpr int64_t kApplicationId = 0x53575253;
/// The schema this build writes (PRAGMA user_version).
inline constexpr int kSchemaVersion = 6;

/// Brings `db` (writable, empty or a Stagewise store at an older version) to kSchemaVersion in
/// one IMMEDIATE transaction; re-reads the version under the lock so two processes opening the
/// same old file migrate it once. Returns the version found before migrating.
int migrate(Database& db);

}  // namespace stagewise::storage::detail
