#pragma once
// The parsed form of a RunQuery (run_query.cpp builds it, query_sql.cpp compiles it).

#include <memory>
#include <string>
#include <vector>

namespace stagewise::storage::detail {

enum class QueryOp { Eq, Ne, Lt, Le, Gt, Ge, Match, NoMatch };
enum class Aggregate { None, Max, Min, Mean, First, Last };

/// What a comparison reads: a key (`train.lr`, `status`, `tag`) or an aggregate of a series
/// (`max(test_accuracy)`, `min(loss@2)`).
struct QueryOperand {
  Aggregate aggregate = Aggregate::None;
  std::string name;  ///< the key, or the series name
  int stage = 0;     ///< series only: 1-based stage, 0: the run's series, else the last stage's
};

struct QueryValue {
  bool isNumber = false;
  double number = 0;
  std::string text;
};

struct QueryNode {
  enum class Kind { And, Or, Not, Compare, Text };
  Kind kind = Kind::Text;
  std::vector<std::unique_ptr<QueryNode>> children;  ///< And / Or: two; Not: one
  QueryOperand operand;                              ///< Compare
  QueryOp op = QueryOp::Eq;                          ///< Compare
  QueryValue value;                                  ///< Compare
  std::string text;                                  ///< Text: a plain search word or phrase
};

const char* toString(QueryOp op);
const char* toString(Aggregate aggregate);

}  // namespace stagewise::storage::detail
