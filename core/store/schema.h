#pragma once

// The results database's schema, as SQL, one migration per version. Internal to core/store;
// the manual's resources/docs/formats/database.md documents it for users, and tst_docs checks
// that every table and column appears there.

#include <span>

namespace tilescope::store {

struct Migration {
    int version;     ///< the schema version after this step
    const char* sql; ///< statements run in one transaction
};

/// Every migration in order: migrations()[i].version == i + 1. Version 1 creates the schema.
std::span<const Migration> migrations();

/// SQLite's application_id of a Tilescope results database ("TSC1"), so that other programs
/// (`file`) and Tilescope itself can tell it from other SQLite files.
inline constexpr int kApplicationId = 0x54534331;

} // namespace tilescope::store
