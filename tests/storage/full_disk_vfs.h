#pragma once
// A SQLite VFS over the default one that can behave like a full disk, for the disk-full tests.
// While "full", a write that would make a file longer fails with SQLITE_FULL, which is what
// SQLite itself returns when write() fails with ENOSPC; writes inside a file's current size
// (SQLite reusing WAL space) still succeed, as they do on a real full disk. Installed as the
// process's default VFS, so the library under test uses it without any hook of its own.

#include <sqlite3.h>

#include <atomic>
#include <cstdint>

namespace stagewise::storage::testing {

class FullDiskVfs {
 public:
  /// Registers the VFS as the default (once per process).
  static void install() {
    static const bool done = [] {
      real() = sqlite3_vfs_find(nullptr);
      static sqlite3_vfs vfs = *real();
      vfs.pNext = nullptr;
      vfs.zName = "stagewise-full-disk";
      vfs.szOsFile = static_cast<int>(sizeof(File)) + real()->szOsFile;
      vfs.xOpen = &open;
      return sqlite3_vfs_register(&vfs, /*makeDflt=*/1) == SQLITE_OK;
    }();
    (void)done;
  }
  static void setFull(bool full) { state().full = full; }
  /// Writes refused so far.
  static int64_t refused() { return state().refused; }

 private:
  struct File {
    sqlite3_file base;
    sqlite3_file* real;  // the wrapped file, stored right after this struct
  };
  struct State {
    std::atomic<bool> full{false};
    std::atomic<int64_t> refused{0};
  };
  static State& state() {
    static State s;
    return s;
  }
  static sqlite3_vfs*& real() {
    static sqlite3_vfs* vfs = nullptr;
    return vfs;
  }
  static sqlite3_file* inner(sqlite3_file* f) { return reinterpret_cast<File*>(f)->real; }

  static int open(sqlite3_vfs*, const char* name, sqlite3_file* file, int flags, int* outFlags) {
    auto* f = reinterpret_cast<File*>(file);
    f->real = reinterpret_cast<sqlite3_file*>(f + 1);
    const int rc = real()->xOpen(real(), name, f->real, flags, outFlags);
    f->base.pMethods = f->real->pMethods ? &methods() : nullptr;
    return rc;
  }

  static int write(sqlite3_file* file, const void* data, int amount, sqlite3_int64 offset) {
    sqlite3_file* r = inner(file);
    if (state().full) {
      sqlite3_int64 size = 0;
      if (r->pMethods->xFileSize(r, &size) != SQLITE_OK || offset + amount > size) {
        ++state().refused;
        return SQLITE_FULL;
      }
    }
    return r->pMethods->xWrite(r, data, amount, offset);
  }

  static const sqlite3_io_methods& methods() {
    static const sqlite3_io_methods m = {
        3,
        [](sqlite3_file* f) {
          sqlite3_file* r = inner(f);
          const int rc = r->pMethods->xClose(r);
          r->pMethods = nullptr;
          return rc;
        },
        [](sqlite3_file* f, void* d, int n, sqlite3_int64 o) {
          return inner(f)->pMethods->xRead(inner(f), d, n, o);
        },
        &write,
        [](sqlite3_file* f, sqlite3_int64 size) {
          return inner(f)->pMethods->xTruncate(inner(f), size);
        },
        [](sqlite3_file* f, int flags) { return inner(f)->pMethods->xSync(inner(f), flags); },
        [](sqlite3_file* f, sqlite3_int64* size) {
          return inner(f)->pMethods->xFileSize(inner(f), size);
        },
        [](sqlite3_file* f, int lock) { return inner(f)->pMethods->xLock(inner(f), lock); },
        [](sqlite3_file* f, int lock) { return inner(f)->pMethods->xUnlock(inner(f), lock); },
        [](sqlite3_file* f, int* out) {
          return inner(f)->pMethods->xCheckReservedLock(inner(f), out);
        },
        [](sqlite3_file* f, int op, void* arg) {
          return inner(f)->pMethods->xFileControl(inner(f), op, arg);
        },
        [](sqlite3_file* f) { return inner(f)->pMethods->xSectorSize(inner(f)); },
        [](sqlite3_file* f) { return inner(f)->pMethods->xDeviceCharacteristics(inner(f)); },
        [](sqlite3_file* f, int page, int size, int extend, void volatile** out) {
          return inner(f)->pMethods->xShmMap(inner(f), page, size, extend, out);
        },
        [](sqlite3_file* f, int offset, int n, int flags) {
          return inner(f)->pMethods->xShmLock(inner(f), offset, n, flags);
        },
        [](sqlite3_file* f) { inner(f)->pMethods->xShmBarrier(inner(f)); },
        [](sqlite3_file* f, int deleteFlag) {
          return inner(f)->pMethods->xShmUnmap(inner(f), deleteFlag);
        },
        [](sqlite3_file* f, sqlite3_int64 o, int n, void** out) {
          return inner(f)->pMethods->xFetch(inner(f), o, n, out);
        },
        [](sqlite3_file* f, sqlite3_int64 o, void* p) {
          return inner(f)->pMethods->xUnfetch(inner(f), o, p);
        },
    };
    return m;
  }
};

}  // namespace stagewise::storage::testing
