#pragma once
// The one exception the run store throws: a message a user can act on.

#include <stdexcept>
#include <string>

namespace stagewise::storage {

/// A store that cannot be opened (newer version, not a SQLite file, corrupt), a bad argument
/// (unknown run id, unknown sort column) or a failed SQL statement. `what()` names the file or
/// the run and says what to do.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace stagewise::storage
