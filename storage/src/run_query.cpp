#include "stagewise/storage/run_query.h"

#include <charconv>
#include <optional>
#include <vector>

#include "query_node.h"

namespace stagewise::storage {

namespace detail {

const char* toString(QueryOp op) {
  switch (op) {
    case QueryOp::Eq:
      return "=";
    case QueryOp::Ne:
      return "!=";
    case QueryOp::Lt:
      return "<";
    case QueryOp::Le:
      return "<=";
    case QueryOp::Gt:
      return ">";
    case QueryOp::Ge:
      return ">=";
    case QueryOp::Match:
      return "~";
    case QueryOp::NoMatch:
      return "!~";
  }
  return "?";
}

const char* toString(Aggregate aggregate) {
  switch (aggregate) {
    case Aggregate::None:
      return "";
    case Aggregate::Max:
      return "max";
    case Aggregate::Min:
      return "min";
    case Aggregate::Mean:
      return "mean";
    case Aggregate::First:
      return "first";
    case Aggregate::Last:
      return "last";
  }
  return "";
}

}  // namespace detail

namespace {

using detail::Aggregate;
using detail::QueryNode;
using detail::QueryOp;

// Characters that make a text a query rather than a plain search, and that end a bare word.
constexpr std::string_view kSyntaxChars = "=!<>~()\"";

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
bool isAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool isKeyword(std::string_view word) {
  const std::string w = lower(word);
  return w == "and" || w == "or" || w == "not";
}

struct Token {
  enum class Kind { Word, String, Op, LParen, RParen, End };
  Kind kind = Kind::End;
  std::string text;  ///< Word: as written; String: unescaped; Op: as written
  QueryOp op = QueryOp::Eq;
  int column = 1;  ///< 1-based, in characters
};

class Lexer {
 public:
  explicit Lexer(std::string_view text) : m_text(text) {}

  std::vector<Token> tokens() {
    std::vector<Token> out;
    for (;;) {
      while (m_pos < m_text.size() && isSpace(m_text[m_pos])) ++m_pos;
      Token t;
      t.column = column(m_pos);
      if (m_pos >= m_text.size()) {
        out.push_back(t);
        return out;
      }
      const char c = m_text[m_pos];
      const char next = m_pos + 1 < m_text.size() ? m_text[m_pos + 1] : '\0';
      if (c == '(' || c == ')') {
        t.kind = c == '(' ? Token::Kind::LParen : Token::Kind::RParen;
        t.text = std::string(1, c);
        ++m_pos;
      } else if (c == '"') {
        t.kind = Token::Kind::String;
        t.text = readString(t.column);
      } else if (kSyntaxChars.find(c) != std::string_view::npos) {
        t.kind = Token::Kind::Op;
        size_t length = 1;
        if (c == '=') {
          t.op = QueryOp::Eq;
          if (next == '=') length = 2;
        } else if (c == '<' || c == '>') {
          const bool orEqual = next == '=';
          t.op = c == '<' ? (orEqual ? QueryOp::Le : QueryOp::Lt)
                          : (orEqual ? QueryOp::Ge : QueryOp::Gt);
          if (orEqual) length = 2;
        } else if (c == '~') {
          t.op = QueryOp::Match;
        } else if (c == '!' && (next == '=' || next == '~')) {
          t.op = next == '=' ? QueryOp::Ne : QueryOp::NoMatch;
          length = 2;
        } else {
          throw QueryError("'!' on its own: write != (differs) or !~ (does not match)", t.column);
        }
        t.text = std::string(m_text.substr(m_pos, length));
        m_pos += length;
      } else {
        t.kind = Token::Kind::Word;
        const size_t start = m_pos;
        while (m_pos < m_text.size() && !isSpace(m_text[m_pos]) &&
               kSyntaxChars.find(m_text[m_pos]) == std::string_view::npos)
          ++m_pos;
        t.text = std::string(m_text.substr(start, m_pos - start));
      }
      out.push_back(std::move(t));
    }
  }

  /// 1-based column of a byte offset, counting UTF-8 characters.
  int column(size_t offset) const {
    int col = 1;
    for (size_t i = 0; i < offset && i < m_text.size(); ++i)
      if ((static_cast<unsigned char>(m_text[i]) & 0xC0) != 0x80) ++col;
    return col;
  }

 private:
  std::string readString(int startColumn) {
    std::string out;
    ++m_pos;  // the opening quote
    while (m_pos < m_text.size()) {
      const char c = m_text[m_pos++];
      if (c == '"') return out;
      if (c == '\\' && m_pos < m_text.size()) {
        out += m_text[m_pos++];  // \" and \\ (and any other escaped character as itself)
      } else {
        out += c;
      }
    }
    throw QueryError("this string has no closing \": add one", startColumn);
  }

  std::string_view m_text;
  size_t m_pos = 0;
};

std::optional<double> parseNumber(const std::string& word) {
  if (word.empty()) return std::nullopt;
  const char c0 = word[0];
  // from_chars also reads "inf" and "nan"; a number here starts like one.
  if (!isDigit(c0) && c0 != '.' && c0 != '-' && c0 != '+') return std::nullopt;
  const char* begin = word.data() + (c0 == '+' ? 1 : 0);
  double value = 0;
  const auto [end, ec] = std::from_chars(begin, word.data() + word.size(), value);
  if (ec != std::errc() || end != word.data() + word.size()) return std::nullopt;
  return value;
}

// A key: segments of letters, digits and _ joined by dots, each optionally indexed ([0]).
bool isValidKey(const std::string& key) {
  size_t i = 0;
  for (;;) {
    if (i >= key.size() || !isAlpha(key[i])) return false;
    while (i < key.size() && (isAlpha(key[i]) || isDigit(key[i]))) ++i;
    while (i < key.size() && key[i] == '[') {
      const size_t start = ++i;
      while (i < key.size() && isDigit(key[i])) ++i;
      if (i == start || i >= key.size() || key[i] != ']') return false;
      ++i;
    }
    if (i == key.size()) return true;
    if (key[i] != '.') return false;
    ++i;
  }
}

std::optional<Aggregate> aggregateFromName(const std::string& name) {
  const std::string n = lower(name);
  if (n == "max") return Aggregate::Max;
  if (n == "min") return Aggregate::Min;
  if (n == "mean") return Aggregate::Mean;
  if (n == "first") return Aggregate::First;
  if (n == "last") return Aggregate::Last;
  return std::nullopt;
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string describeToken(const Token& t) {
  switch (t.kind) {
    case Token::Kind::End:
      return "the end";
    case Token::Kind::String:
      return quoted(t.text);
    default:
      return "'" + t.text + "'";
  }
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : m_tokens(std::move(tokens)) {}

  std::unique_ptr<QueryNode> parseAll() {
    auto node = parseOr();
    const Token& t = peek();
    if (t.kind == Token::Kind::RParen) throw QueryError("')' without a matching '('", t.column);
    if (t.kind != Token::Kind::End) {
      throw QueryError("expected 'and', 'or' or the end, found " + describeToken(t) +
                           " (join conditions with and / or)",
                       t.column);
    }
    return node;
  }

 private:
  const Token& peek(size_t ahead = 0) const {
    return m_tokens[std::min(m_pos + ahead, m_tokens.size() - 1)];
  }
  Token take() {
    Token t = peek();
    if (m_pos < m_tokens.size() - 1) ++m_pos;
    return t;
  }
  bool atKeyword(const char* keyword) const {
    return peek().kind == Token::Kind::Word && lower(peek().text) == keyword;
  }

  static std::unique_ptr<QueryNode> join(QueryNode::Kind kind, std::unique_ptr<QueryNode> a,
                                         std::unique_ptr<QueryNode> b) {
    auto node = std::make_unique<QueryNode>();
    node->kind = kind;
    node->children.push_back(std::move(a));
    node->children.push_back(std::move(b));
    return node;
  }

  std::unique_ptr<QueryNode> parseOr() {
    auto node = parseAnd();
    while (atKeyword("or")) {
      take();
      node = join(QueryNode::Kind::Or, std::move(node), parseAnd());
    }
    return node;
  }

  std::unique_ptr<QueryNode> parseAnd() {
    auto node = parseNot();
    while (atKeyword("and")) {
      take();
      node = join(QueryNode::Kind::And, std::move(node), parseNot());
    }
    return node;
  }

  std::unique_ptr<QueryNode> parseNot() {
    if (!atKeyword("not")) return parsePrimary();
    const Token t = take();
    Nest nest(*this, t);
    auto node = std::make_unique<QueryNode>();
    node->kind = QueryNode::Kind::Not;
    node->children.push_back(parseNot());
    return node;
  }

  // Limits that keep the compiled SQL within SQLite's (expression depth 1000, parser stack
  // 100) and the parser's recursion shallow; far beyond what anyone types.
  static constexpr int kMaxDepth = 12;
  static constexpr int kMaxTerms = 128;

  /// One level of parentheses or `not`, for the depth limit.
  struct Nest {
    Nest(Parser& p, const Token& t) : parser(p) {
      if (++parser.m_depth > kMaxDepth) {
        throw QueryError("nested too deeply: at most " + std::to_string(kMaxDepth) +
                             " levels of parentheses and not",
                         t.column);
      }
    }
    ~Nest() { --parser.m_depth; }
    Parser& parser;
  };

  void countTerm(const Token& t) {
    if (++m_terms > kMaxTerms) {
      throw QueryError("too many conditions: at most " + std::to_string(kMaxTerms), t.column);
    }
  }

  [[noreturn]] void expectedCondition(const Token& t) const {
    std::string after;
    if (m_pos > 0) after = " after '" + m_tokens[m_pos - 1].text + "'";
    if (t.kind == Token::Kind::End)
      throw QueryError("expected a condition" + after + " (e.g. train.lr < 1e-3)", t.column);
    throw QueryError("expected a condition" + after + ", found " + describeToken(t), t.column);
  }

  std::unique_ptr<QueryNode> parsePrimary() {
    const Token& t = peek();
    switch (t.kind) {
      case Token::Kind::LParen: {
        const Token open = take();
        Nest nest(*this, open);
        auto node = parseOr();
        const Token& close = peek();
        if (close.kind == Token::Kind::RParen) {
          take();
          return node;
        }
        if (close.kind == Token::Kind::End)
          throw QueryError("this '(' is never closed: add ')'", open.column);
        throw QueryError("expected 'and', 'or' or ')', found " + describeToken(close),
                         close.column);
      }
      case Token::Kind::String: {
        countTerm(t);
        if (peek(1).kind == Token::Kind::Op) {
          throw QueryError(
              "a key is written without quotes: " + t.text + " " + peek(1).text + " ...", t.column);
        }
        auto node = std::make_unique<QueryNode>();
        node->text = take().text;
        return node;
      }
      case Token::Kind::Word: {
        if (isKeyword(t.text)) expectedCondition(t);
        countTerm(t);
        if (peek(1).kind == Token::Kind::LParen) return parseAggregate();
        if (peek(1).kind == Token::Kind::Op) return parseKeyComparison();
        auto node = std::make_unique<QueryNode>();  // a bare word: a text search
        node->text = take().text;
        return node;
      }
      case Token::Kind::Op:
        throw QueryError(
            "expected a key before '" + t.text + "' (e.g. train.lr " + t.text + " ...)", t.column);
      case Token::Kind::RParen:
      case Token::Kind::End:
        expectedCondition(t);
    }
    expectedCondition(t);
  }

  std::unique_ptr<QueryNode> parseAggregate() {
    const Token function = take();
    auto aggregate = aggregateFromName(function.text);
    if (!aggregate) {
      throw QueryError(
          "unknown function '" + function.text + "': use max, min, mean, first or last of a series",
          function.column);
    }
    take();  // (
    const Token arg = take();
    if (arg.kind != Token::Kind::Word) {
      throw QueryError(
          function.text + "() takes a series name, e.g. " + function.text + "(test_accuracy)",
          arg.column);
    }
    auto node = std::make_unique<QueryNode>();
    node->kind = QueryNode::Kind::Compare;
    node->operand.aggregate = *aggregate;
    std::string name = arg.text;
    if (const size_t at = name.find('@'); at != std::string::npos) {
      const std::string stage = name.substr(at + 1);
      int k = 0;
      const auto [end, ec] = std::from_chars(stage.data(), stage.data() + stage.size(), k);
      if (ec != std::errc() || end != stage.data() + stage.size() || k < 1) {
        throw QueryError("'" + stage + "' is not a stage: write " + name.substr(0, at) +
                             "@1 for the first stage",
                         arg.column);
      }
      node->operand.stage = k;
      name.resize(at);
    }
    if (name.empty() || !isAlpha(name[0]) ||
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
            std::string::npos) {
      throw QueryError("'" + name + "' is not a series name (letters, digits and _)", arg.column);
    }
    node->operand.name = name;
    const Token& close = peek();
    if (close.kind != Token::Kind::RParen) {
      throw QueryError("expected ')' after " + function.text + "(" + arg.text + ", found " +
                           describeToken(close),
                       close.column);
    }
    take();
    const std::string written = lower(function.text) + "(" + arg.text + ")";
    if (peek().kind != Token::Kind::Op) {
      throw QueryError("compare " + written + " with a value, e.g. " + written + " > 0.5",
                       peek().column);
    }
    node->op = take().op;
    const Token valueToken = peek();
    node->value = parseValue();
    if (!node->value.isNumber) {
      throw QueryError(written + " is a number: compare it with a number", valueToken.column);
    }
    if (node->op == QueryOp::Match || node->op == QueryOp::NoMatch) {
      throw QueryError("~ matches text: compare " + written + " with = != < <= > >=",
                       valueToken.column);
    }
    return node;
  }

  std::unique_ptr<QueryNode> parseKeyComparison() {
    const Token key = take();
    if (!isValidKey(key.text)) {
      throw QueryError("'" + key.text +
                           "' is not a key: keys are letters, digits and _ joined by dots "
                           "(train.lr, partition.cuts[0])",
                       key.column);
    }
    auto node = std::make_unique<QueryNode>();
    node->kind = QueryNode::Kind::Compare;
    node->operand.name = key.text;
    const Token opToken = take();
    node->op = opToken.op;
    const Token valueToken = peek();
    node->value = parseValue();
    const bool pattern = node->op == QueryOp::Match || node->op == QueryOp::NoMatch;
    if (pattern && node->value.isNumber) {
      throw QueryError(opToken.text + " takes a pattern in double quotes, e.g. name ~ \"*lr*\"",
                       valueToken.column);
    }
    const std::string& k = key.text;  // keys are case-sensitive, as the compiler reads them
    if (k == "tag" && (node->value.isNumber ||
                       (node->op != QueryOp::Eq && node->op != QueryOp::Ne && !pattern))) {
      throw QueryError("tag takes = != ~ or !~ and a \"quoted\" tag", opToken.column);
    }
    if (k == "study" &&
        (!node->value.isNumber || (node->op != QueryOp::Eq && node->op != QueryOp::Ne))) {
      throw QueryError("study takes = or != and a study id, e.g. study = 3", opToken.column);
    }
    return node;
  }

  detail::QueryValue parseValue() {
    const Token t = peek();
    detail::QueryValue value;
    if (t.kind == Token::Kind::String) {
      value.text = take().text;
      return value;
    }
    if (t.kind == Token::Kind::Word) {
      if (auto number = parseNumber(t.text)) {
        take();
        value.isNumber = true;
        value.number = *number;
        return value;
      }
      const std::string w = lower(t.text);
      if (w == "true" || w == "false") {
        take();
        value.isNumber = true;  // JSON booleans read as 1 and 0
        value.number = w == "true" ? 1 : 0;
        return value;
      }
      if (!isKeyword(t.text)) {
        throw QueryError("put text values in double quotes: \"" + t.text + "\"", t.column);
      }
    }
    const std::string op = m_pos > 0 ? m_tokens[m_pos - 1].text : "";
    throw QueryError("expected a value after '" + op + "' (a number or a \"quoted\" text), found " +
                         describeToken(t),
                     t.column);
  }

  std::vector<Token> m_tokens;
  size_t m_pos = 0;
  int m_depth = 0;
  int m_terms = 0;
};

std::string formatNumber(double value) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, end) : std::to_string(value);
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

std::string describeNode(const QueryNode& node) {
  switch (node.kind) {
    case QueryNode::Kind::And:
      return parenthesised(describeNode(*node.children[0]), " and ",
                           describeNode(*node.children[1]));
    case QueryNode::Kind::Or:
      return parenthesised(describeNode(*node.children[0]), " or ",
                           describeNode(*node.children[1]));
    case QueryNode::Kind::Not:
      return parenthesised("not ", describeNode(*node.children[0]));
    case QueryNode::Kind::Text: {
      std::string out = "text";
      return out += parenthesised(quoted(node.text), "");
    }
    case QueryNode::Kind::Compare: {
      std::string operand = node.operand.name;
      if (node.operand.aggregate != Aggregate::None) {
        if (node.operand.stage > 0) operand += '@' + std::to_string(node.operand.stage);
        operand = std::string(toString(node.operand.aggregate)) + "(" + operand + ")";
      }
      const std::string value =
          node.value.isNumber ? formatNumber(node.value.number) : quoted(node.value.text);
      return "(" + operand + " " + toString(node.op) + " " + value + ")";
    }
  }
  return {};
}

std::string trimmed(std::string_view text) {
  size_t b = 0;
  size_t e = text.size();
  while (b < e && isSpace(text[b])) ++b;
  while (e > b && isSpace(text[e - 1])) --e;
  return std::string(text.substr(b, e - b));
}

}  // namespace

RunQuery RunQuery::parse(std::string_view text) {
  RunQuery query;
  query.m_text = std::string(text);
  const std::string plain = trimmed(text);
  if (plain.empty()) return query;
  std::vector<Token> tokens = Lexer(text).tokens();
  bool syntax = plain.find_first_of(kSyntaxChars) != std::string::npos;
  for (const Token& t : tokens)
    syntax = syntax || (t.kind == Token::Kind::Word && isKeyword(t.text));
  if (!syntax) {
    auto node = std::make_unique<QueryNode>();
    node->text = plain;
    query.m_root = std::move(node);
    return query;
  }
  query.m_root = Parser(std::move(tokens)).parseAll();
  return query;
}

std::string RunQuery::describe() const {
  return m_root ? describeNode(*m_root) : std::string("(all)");
}

std::string formatQueryError(std::string_view query, const QueryError& error) {
  std::string caret(static_cast<size_t>(std::max(error.column(), 1) - 1), ' ');
  return "column " + std::to_string(error.column()) + ": " + error.what() + "\n  " +
         std::string(query) + "\n  " + caret + "^";
}

}  // namespace stagewise::storage
