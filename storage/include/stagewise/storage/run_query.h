#pragma once
// A query over stored runs (docs/query.md): spec keys, summary figures and aggregates of stored
// series compared with values, combined with and / or / not. One grammar for the workbench's
// Runs filter and `stagewise-cli runs list --where`; RunReader compiles it to SQL.

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace stagewise::storage {

namespace detail {
struct QueryNode;
}

/// A query that does not parse: what to fix, and where (a 1-based column, in characters).
class QueryError : public std::invalid_argument {
 public:
  QueryError(const std::string& message, int column)
      : std::invalid_argument(message), m_column(column) {}
  int column() const { return m_column; }

 private:
  int m_column;
};

/// A parsed run query; cheap to copy (the tree is shared and immutable). A text with no query
/// syntax at all (no operator, quote, parenthesis, and/or/not) is a plain text search, as the
/// filter box always took; an empty text matches every run.
class RunQuery {
 public:
  RunQuery() = default;
  /// Throws QueryError.
  static RunQuery parse(std::string_view text);

  const std::string& text() const { return m_text; }
  bool matchesAll() const { return !m_root; }
  /// The tree fully parenthesised, e.g. `((mode = "local") or (not (max(loss) < 0.5)))`: what
  /// the parser understood (tests, error reports).
  std::string describe() const;

  const detail::QueryNode* root() const { return m_root.get(); }

 private:
  std::string m_text;
  std::shared_ptr<const detail::QueryNode> m_root;
};

/// The error with the query and a caret under its column, three lines, for a terminal:
///   column 30: expected a value after '<' (a number or a "quoted" text), found the end
///     mode = "local" and train.lr <
///                                  ^
std::string formatQueryError(std::string_view query, const QueryError& error);

}  // namespace stagewise::storage
