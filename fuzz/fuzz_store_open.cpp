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
  char path[] = "/tmp/stagewise-fuzz-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 0;
  if (write(fd, data, size) != static_cast<ssize_t>(size)) {
    close(fd);
    unlink(path);
    return 0;
  }
  close(fd);
  try {
    stagewise::storage::RunStore store(path);
    stagewise::storage::RunReader reader(store);
    reader.listRuns();
  } catch (const stagewise::storage::StoreError&) {
  }
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) unlink((std::string(path) + suffix).c_str());
  return 0;
}
