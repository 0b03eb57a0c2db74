// RunQuery and the text search compiled to SQL over `runs r`, so a query costs one statement
// however many runs the store holds, and pages (the Runs table) stay SQL's LIMIT / OFFSET.

#include <algorithm>
#include <map>
#include <vector>

#include "levels.h"
#include "query_node.h"
#include "run_where.h"
#include "stagewise/storage/run_query.h"

namespace stagewise::storage::detail {

namespace {

std::string asciiLower(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

// Keys read from the runs table's own columns (what the table shows); any other key is read
// from the summary JSON, else the spec JSON.
const std::map<std::string, std::string>& columnKeys() {
  static const std::map<std::string, std::string> keys = {
      {"id", "r.id"},
      {"name", "r.name"},
      {"status", "r.status"},
      {"mode", "r.mode"},
      {"model", "r.model_kind"},
      {"stages", "r.stage_count"},
      {"steps", "r.steps"},
      {"notes", "r.notes"},
      {"test_accuracy", "r.test_accuracy"},
      {"test_loss", "r.test_loss"},
      {"samples_per_sec", "(" SW_LIVE_SAMPLES_PER_SEC ")"},
      {"wall_seconds", "r.wall_seconds"},
      {"cpu_utilization", "r.cpu_utilization"},
      {"pipeline_efficiency", "r.pipeline_efficiency"},
  };
  return keys;
}

const char* sqlOp(QueryOp op) {
  switch (op) {
    case QueryOp::Eq:
      return "=";
    case QueryOp::Ne:
      return "<>";
    case QueryOp::Lt:
      return "<";
    case QueryOp::Le:
      return "<=";
    case QueryOp::Gt:
      return ">";
    case QueryOp::Ge:
      return ">=";
    case QueryOp::Match:
    case QueryOp::NoMatch:
      return "GLOB";
  }
  return "=";
}

std::string valueParam(Where& w, const QueryValue& value) {
  return value.isNumber ? w.bind(value.number) : w.bind(value.text);
}

/// The value of a key (NULL where the run has none).
std::string keyExpression(Where& w, const std::string& key) {
  if (auto it = columnKeys().find(key); it != columnKeys().end()) return it->second;
  if (key.rfind("spec.", 0) == 0)
    return "json_extract(r.spec_json, " + w.bind("$." + key.substr(5)) + ")";
  if (key.rfind("summary.", 0) == 0)
    return "json_extract(r.summary_json, " + w.bind("$." + key.substr(8)) + ")";
  const std::string path = w.bind("$." + key);
  return "COALESCE(json_extract(r.summary_json, " + path + "), json_extract(r.spec_json, " + path +
         "))";
}

/// The id of the series an aggregate reads: the run's own (stage -1), else the last stage's;
/// or the given stage's.
std::string seriesId(Where& w, const QueryOperand& operand) {
  const std::string name = w.bind(operand.name);
  if (operand.stage > 0) {
    return "(SELECT s.id FROM series s WHERE s.run_id = r.id AND s.name = " + name +
           " AND s.stage = " + w.bind(static_cast<int64_t>(operand.stage - 1)) +
           " AND s.layer = -1)";
  }
  return "(SELECT s.id FROM series s WHERE s.run_id = r.id AND s.name = " + name +
         " AND s.layer = -1 ORDER BY s.stage = -1 DESC, s.stage DESC LIMIT 1)";
}

std::string aggregateExpression(Where& w, const QueryOperand& operand) {
  const std::string id = seriesId(w, operand);
  // Min and max from the coarsest summary level (a few rows however long the series; exact,
  // as every point is summarised), the points only where a series has no levels.
  const std::string level = std::to_string(kLevelSizes.back());
  switch (operand.aggregate) {
    case Aggregate::Max:
      return "COALESCE((SELECT max(l.v_max) FROM series_levels l WHERE l.series_id = " + id +
             " AND l.level = " + level +
             "), (SELECT max(p.value) FROM points p WHERE p.series_id = " + id + "))";
    case Aggregate::Min:
      return "COALESCE((SELECT min(l.v_min) FROM series_levels l WHERE l.series_id = " + id +
             " AND l.level = " + level +
             "), (SELECT min(p.value) FROM points p WHERE p.series_id = " + id + "))";
    case Aggregate::Mean:
      return "(SELECT avg(p.value) FROM points p WHERE p.series_id = " + id + ")";
    case Aggregate::First:
      return "(SELECT p.value FROM points p WHERE p.series_id = " + id + " ORDER BY p.seq LIMIT 1)";
    case Aggregate::Last:
    case Aggregate::None:
      return "(SELECT p.value FROM points p WHERE p.series_id = " + id +
             " ORDER BY p.seq DESC LIMIT 1)";
  }
  return "NULL";
}

std::string tagCondition(Where& w, const QueryNode& node) {
  const bool pattern = node.op == QueryOp::Match || node.op == QueryOp::NoMatch;
  const std::string exists = "EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = r.id AND " +
                             (pattern ? "lower(t.tag) GLOB " + w.bind(asciiLower(node.value.text))
                                      : "t.tag = " + w.bind(node.value.text)) +
                             ")";
  return node.op == QueryOp::Ne || node.op == QueryOp::NoMatch ? "(NOT " + exists + ")" : exists;
}

std::string compareCondition(Where& w, const QueryNode& node) {
  const QueryOperand& operand = node.operand;
  if (operand.aggregate != Aggregate::None) {
    const std::string a = aggregateExpression(w, operand);
    return "COALESCE(" + a + " " + sqlOp(node.op) + " " + w.bind(node.value.number) + ", 0)";
  }
  if (operand.name == "tag") return tagCondition(w, node);
  if (operand.name == "study") {
    const std::string exists =
        "EXISTS (SELECT 1 FROM study_runs sr WHERE sr.run_id = r.id AND sr.study_id = " +
        w.bind(node.value.number) + ")";
    return node.op == QueryOp::Ne ? "(NOT " + exists + ")" : exists;
  }
  const std::string e = keyExpression(w, operand.name);
  if (node.op == QueryOp::Match || node.op == QueryOp::NoMatch) {
    const std::string match =
        "lower(CAST(" + e + " AS TEXT)) GLOB " + w.bind(asciiLower(node.value.text));
    return "COALESCE(" + (node.op == QueryOp::NoMatch ? "NOT (" + match + ")" : match) + ", 0)";
  }
  // A number compares with numbers only and a text with texts only (SQLite orders every number
  // before every text, which would make `mode > 3` true).
  const std::string type = node.value.isNumber ? "typeof(" + e + ") IN ('integer', 'real')"
                                               : "typeof(" + e + ") = 'text'";
  return "COALESCE(" + type + " AND " + e + " " + sqlOp(node.op) + " " + valueParam(w, node.value) +
         ", 0)";
}

// "(" + a + sep + b + ")" built by appending: `"(" + std::string&&` makes GCC 12 warn falsely
// (-Wrestrict).
std::string parenthesised(const std::string& a, std::string_view sep, const std::string& b = {}) {
  std::string out(1, '(');
  out += a;
  out += sep;
  out += b;
  out += ')';
  return out;
}

std::string nodeCondition(Where& w, const QueryNode& node) {
  switch (node.kind) {
    case QueryNode::Kind::And:
    case QueryNode::Kind::Or: {
      // A chain (a and b and c) as one flat list, not nested pairs: SQLite's parser stack
      // allows 100 levels of parentheses.
      std::vector<const QueryNode*> terms;
      std::vector<const QueryNode*> pending = {&node};
      while (!pending.empty()) {
        const QueryNode* n = pending.back();
        pending.pop_back();
        if (n->kind == node.kind) {
          pending.push_back(n->children[1].get());
          pending.push_back(n->children[0].get());
        } else {
          terms.push_back(n);
        }
      }
      const char* op = node.kind == QueryNode::Kind::And ? " AND " : " OR ";
      std::string out(1, '(');
      for (size_t i = 0; i < terms.size(); ++i) {
        if (i > 0) out += op;
        out += nodeCondition(w, *terms[i]);
      }
      return out += ')';
    }
    case QueryNode::Kind::Not:
      return parenthesised("NOT ", nodeCondition(w, *node.children[0]));
    case QueryNode::Kind::Text:
      return textSearchCondition(w, node.text);
    case QueryNode::Kind::Compare:
      return compareCondition(w, node);
  }
  return "1";
}

}  // namespace

std::string textSearchCondition(Where& w, const std::string& text) {
  // Name, notes, tags, mode and status; "#12" or "12" also finds run 12.
  const std::string p = w.bind(asciiLower(text));
  int64_t number = -1;
  if (!text.empty() && text.size() < 19 &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    number = std::stoll(text);
  const std::string id = w.bind(number);
  return "(instr(lower(r.name), " + p + ") > 0 OR instr(lower(r.notes), " + p +
         ") > 0 OR lower(r.mode) = " + p + " OR lower(r.status) = " + p +
         " OR ('#' || r.id) = " + p + " OR r.id = " + id +
         " OR EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = r.id AND instr(lower(t.tag), " + p +
         ") > 0))";
}

std::string queryCondition(Where& w, const RunQuery& query) {
  return query.root() ? nodeCondition(w, *query.root()) : std::string();
}

}  // namespace stagewise::storage::detail
