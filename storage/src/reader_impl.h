#pragma once
// State shared by the two halves of RunReader (run_reader.cpp: runs, series_reader.cpp: series).

#include <memory>

#include "sqlite_db.h"
#include "stagewise/storage/run_reader.h"

namespace stagewise::storage {

struct RunReader::Impl {
  std::unique_ptr<detail::Database> db;
};

}  // namespace stagewise::storage
