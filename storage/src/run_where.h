#pragma once
// A WHERE clause over `runs r` with numbered parameters, and the binder that fills them in the
// same order (RunFilter and RunQuery both add to it).

#include <functional>
#include <string>
#include <vector>

#include "sqlite_db.h"

// Shared by the sort columns (run_reader.cpp) and the query's samples_per_sec (query_sql.cpp).
// A run still training has no summary yet: its latest measured samples/s, shown and sorted by
// (issue 36 §2.2: sorted by the summary column alone, a running run sat at the bottom).
// (A resumed run keeps its earlier segment's summary value until it ends: the live one wins.)
#define SW_LIVE_SAMPLES_PER_SEC                                                                   \
  "CASE WHEN r.status = 'running' THEN COALESCE((SELECT p.value FROM series s "                   \
  "JOIN points p ON p.series_id = s.id WHERE s.run_id = r.id AND s.name = 'samples_per_sec' AND " \
  "s.stage = -1 AND s.layer = -1 AND p.value > 0 ORDER BY p.seq DESC LIMIT 1), "                  \
  "r.samples_per_sec) "                                                                           \
  "ELSE r.samples_per_sec END"

namespace stagewise::storage {

class RunQuery;

namespace detail {

struct Where {
  std::string sql;
  std::vector<std::function<void(Statement&, int)>> binds;

  void add(const std::string& condition) { sql += (sql.empty() ? " WHERE " : " AND ") + condition; }
  std::string param() const {
    std::string p(1, '?');  // not "?" + to_string(): GCC 12 warns falsely (-Wrestrict)
    p += std::to_string(binds.size() + 1);
    return p;
  }
  /// A new parameter holding `value`; returns its placeholder.
  template <typename T>
  std::string bind(T value) {
    const std::string p = param();
    binds.push_back([value = std::move(value)](Statement& st, int i) { st.bind(i, value); });
    return p;
  }
  void bindAll(Statement& st) const {
    for (size_t i = 0; i < binds.size(); ++i) binds[i](st, static_cast<int>(i + 1));
  }
};

/// The filter box's text search: a case-insensitive substring of the name, notes or a tag, or
/// the mode, the status or the id ("12" or "#12"). Returns the condition; parameters go to `w`.
std::string textSearchCondition(Where& w, const std::string& text);

/// The query as one SQL condition on `runs r` (every comparison true or false, never NULL, so
/// `not` of a missing key is true); parameters go to `w`. Empty for a query that matches all.
std::string queryCondition(Where& w, const RunQuery& query);

}  // namespace detail
}  // namespace stagewise::storage
