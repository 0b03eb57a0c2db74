// libFuzzer: opening a run store file of arbitrary bytes. It must be refused with a StoreError
// (or opened, if the bytes are a valid store) and never crash.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // In memory where the system has it (/dev/shm): a file on disk per input made this target
  // five times slower than the parsers.
  static const bool shm = access("/dev/shm", W_OK) == 0;
  char path[] = "/dev/shm/stagewise-fuzz-XXXXXX";
  char fallback[] = "/tmp/stagewise-fuzz-XXXXXX";
  char* file = shm ? path : fallback;
  int fd = mkstemp(file);
  if (fd < 0) return 0;
  if (write(fd, data, size) != static_cast<ssize_t>(size)) {
    close(fd);
    unlink(file);
    return 0;
  }
  close(fd);
  try {
    stagewise::storage::RunStore store(file);
    stagewise::storage::RunReader reader(store);
    reader.listRuns();
  } catch (const stagewise::storage::StoreError&) {
  }
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    unlink((std::string(file) + suffix).c_str());
  return 0;
}
