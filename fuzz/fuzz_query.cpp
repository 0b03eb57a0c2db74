// libFuzzer: run queries (docs/query.md) as typed in the Runs filter or given to `runs list
// --where`. Any text must parse or be refused with a QueryError whose column lies within the
// text; a query that parses must compile to SQL the store runs (on an empty store).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "stagewise/storage/run_query.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"

namespace {

stagewise::storage::RunReader& reader() {
  static std::unique_ptr<stagewise::storage::RunStore> store;
  static std::unique_ptr<stagewise::storage::RunReader> r;
  if (!r) {
    const std::string dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    const std::string path = dir + "/stagewise-fuzz-query-" + std::to_string(getpid()) + ".db";
    unlink(path.c_str());
    static std::string removeAtExit;
    removeAtExit = path;
    std::atexit([] {
      for (const char* suffix : {"", "-wal", "-shm"}) unlink((removeAtExit + suffix).c_str());
    });
    store = std::make_unique<stagewise::storage::RunStore>(path);
    r = std::make_unique<stagewise::storage::RunReader>(*store);
  }
  return *r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stagewise::storage;
  const std::string text(reinterpret_cast<const char*>(data), size);
  RunFilter filter;
  try {
    filter.query = RunQuery::parse(text);
  } catch (const QueryError& e) {
    if (e.column() < 1 || static_cast<size_t>(e.column()) > size + 1) __builtin_trap();
    (void)formatQueryError(text, e);
    return 0;
  }
  (void)filter.query->describe();
  // A StoreError here is a query compiled to SQL SQLite refuses: a bug, so it is not caught.
  (void)reader().countRuns(filter);
  return 0;
}
