#include "stagewise/cli/runs_command.h"

#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <optional>

#include "runs_output.h"
#include "stagewise/storage/export.h"
#include "stagewise/storage/paths.h"
#include "stagewise/storage/run_query.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/trace.h"

namespace stagewise::cli {

using namespace stagewise::storage;

namespace {

/// A usage problem: one line for `err`, exit code 2.
struct UsageError {
  std::string message;
};

/// The words after the subcommand: options (--name value / --flag) and positionals.
class Args {
 public:
  Args(std::string command, std::vector<std::string> words) : m_command(std::move(command)) {
    m_words = std::move(words);
  }

  /// Removes `--name VALUE` (or `--name=VALUE`) and returns the value.
  std::optional<std::string> value(const std::string& name) {
    for (size_t i = 0; i < optionEnd(); ++i) {
      if (m_words[i] == name) {
        if (i + 1 >= m_words.size()) fail(name + " needs a value");
        std::string v = m_words[i + 1];
        m_words.erase(m_words.begin() + static_cast<long>(i),
                      m_words.begin() + static_cast<long>(i) + 2);
        return v;
      }
      if (m_words[i].rfind(name + "=", 0) == 0) {
        std::string v = m_words[i].substr(name.size() + 1);
        m_words.erase(m_words.begin() + static_cast<long>(i));
        return v;
      }
    }
    return std::nullopt;
  }

  bool flag(const std::string& name) {
    for (size_t i = 0; i < optionEnd(); ++i) {
      if (m_words[i] == name) {
        m_words.erase(m_words.begin() + static_cast<long>(i));
        return true;
      }
    }
    return false;
  }

  /// What is left after every known option was taken: positionals (everything after `--` is
  /// one, so a note may start with a dash); an unknown option fails.
  std::vector<std::string> positionals() {
    const size_t end = optionEnd();
    std::vector<std::string> out;
    for (size_t i = 0; i < m_words.size(); ++i) {
      const std::string& w = m_words[i];
      if (i == end) continue;  // the `--` itself
      if (i < end && w.size() > 1 && w[0] == '-' && !isNumber(w)) {
        fail("unknown option '" + w + "' (see `stagewise-cli runs --help`)");
      }
      out.push_back(w);
    }
    return out;
  }

  [[noreturn]] void fail(const std::string& message) const {
    throw UsageError{"runs " + m_command + ": " + message};
  }

  int64_t runId(const std::string& text) const {
    int64_t id = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
    if (ec != std::errc() || end != text.data() + text.size() || id <= 0) {
      fail("'" + text + "' is not a run id (a positive whole number, see `runs list`)");
    }
    return id;
  }

  int count(const std::string& option, const std::string& text) const {
    int n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || n < 0) {
      fail(option + " wants a whole number >= 0, not '" + text + "'");
    }
    return n;
  }

 private:
  size_t optionEnd() const {
    for (size_t i = 0; i < m_words.size(); ++i) {
      if (m_words[i] == "--") return i;
    }
    return m_words.size();
  }
  static bool isNumber(const std::string& w) {
    return w.size() > 1 && w[0] == '-' && std::isdigit(static_cast<unsigned char>(w[1]));
  }
  std::string m_command;
  std::vector<std::string> m_words;
};

RunRecord requireRun(RunReader& reader, Args& args, int64_t id) {
  auto run = reader.run(id);
  if (!run) args.fail("there is no run " + std::to_string(id) + " (see `runs list`)");
  return *run;
}

int list(const std::string& db, Args& args, std::ostream& out) {
  RunFilter filter;
  RunOrder order;
  int limit = -1;
  int offset = 0;
  if (auto v = args.value("--status")) {
    size_t start = 0;
    for (;;) {
      const size_t comma = v->find(',', start);
      const std::string word = v->substr(start, comma - start);
      auto status = runStatusFromString(word);
      if (!status) {
        args.fail("unknown status '" + word +
                  "' (use running, completed, stopped, failed or interrupted)");
      }
      filter.statuses.push_back(*status);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (auto v = args.value("--mode")) {
    if (*v != "local" && *v != "backprop")
      args.fail("unknown mode '" + *v + "' (use local or backprop)");
    filter.mode = *v;
  }
  if (auto v = args.value("--filter")) filter.text = *v;
  if (auto v = args.value("--where")) {
    try {
      filter.query = RunQuery::parse(*v);
    } catch (const QueryError& e) {
      args.fail("--where: " + formatQueryError(*v, e) + "\n  (the grammar: docs/query.md)");
    }
  }
  while (auto v = args.value("--tag")) filter.tags.push_back(*v);
  if (auto v = args.value("--sort")) {
    std::string name = *v;
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ":asc") == 0) {
      order.descending = false;
      name.resize(name.size() - 4);
    } else if (name.size() > 5 && name.compare(name.size() - 5, 5, ":desc") == 0) {
      name.resize(name.size() - 5);
    }
    auto column = runColumnFromString(name);
    if (!column) {
      std::string names;
      for (const auto& n : runColumnNames()) names += (names.empty() ? "" : ", ") + n;
      args.fail("cannot sort by '" + name + "' (use one of " + names + ")");
    }
    order.column = *column;
  }
  if (args.flag("--asc")) order.descending = false;
  if (auto v = args.value("--limit")) limit = args.count("--limit", *v);
  if (auto v = args.value("--offset")) offset = args.count("--offset", *v);
  const bool json = args.flag("--json");
  if (!args.positionals().empty()) args.fail("takes no arguments, only options");

  std::vector<RunRecord> runs;
  std::map<int64_t, int64_t> prunedAt;
  if (std::filesystem::exists(db)) {  // listing never creates a store
    RunStore store(db);
    RunReader reader(store);
    runs = reader.listRuns(filter, order, limit, offset);
    std::vector<int64_t> pruned;
    for (const auto& r : runs)
      if (r.status == RunStatus::Pruned) pruned.push_back(r.id);
    if (!pruned.empty()) prunedAt = reader.prunedSteps(pruned);
  }
  if (json) {
    detail::printRunJson(runs, out);
  } else if (runs.empty()) {
    out << "No runs" << (std::filesystem::exists(db) ? "" : " (no store at " + db + " yet)")
        << ".\n";
  } else {
    detail::printRunTable(runs, out, prunedAt);
  }
  return 0;
}

std::unique_ptr<RunStore> openExisting(const std::string& db, Args& args) {
  if (!std::filesystem::exists(db)) {
    args.fail("there is no run store at '" + db + "' (give --db PATH or set STAGEWISE_DB)");
  }
  return std::make_unique<RunStore>(db);
}

int show(const std::string& db, Args& args, std::ostream& out) {
  const bool json = args.flag("--json");
  const auto words = args.positionals();
  if (words.size() != 1) args.fail("give exactly one run id: runs show ID [--json]");
  const int64_t id = args.runId(words[0]);
  auto store = openExisting(db, args);
  RunReader reader(*store);
  detail::printRunDetails(reader, requireRun(reader, args, id), json, out);
  return 0;
}

int exportRuns(const std::string& db, Args& args, std::ostream& out) {
  const auto format = args.value("--format");
  const auto file = args.value("--out");
  const auto words = args.positionals();
  if (words.empty())
    args.fail("give one or more run ids: runs export ID... [--format csv|json] [--out FILE]");
  std::vector<int64_t> ids;
  for (const auto& w : words) ids.push_back(args.runId(w));
  std::string fmt = format.value_or("");
  if (fmt.empty()) {
    fmt = file && std::filesystem::path(*file).extension() == ".json" ? "json" : "csv";
  }
  if (fmt != "csv" && fmt != "json") args.fail("unknown format '" + fmt + "' (use csv or json)");
  auto store = openExisting(db, args);
  RunReader reader(*store);
  for (int64_t id : ids) requireRun(reader, args, id);
  std::ofstream fileOut;
  if (file) {
    fileOut.open(*file, std::ios::binary | std::ios::trunc);
    if (!fileOut) args.fail("cannot write '" + *file + "'");
  }
  std::ostream& sink = file ? fileOut : out;
  if (fmt == "csv") {
    exportCsv(reader, ids, sink);
  } else {
    exportJson(reader, ids, sink);
  }
  sink.flush();
  if (file && !fileOut) throw StoreError("writing '" + *file + "' failed (disk full?)");
  return 0;
}

int trace(const std::string& db, Args& args, std::ostream& out) {
  const auto file = args.value("--out");
  const auto words = args.positionals();
  if (words.size() != 1 || !file)
    args.fail("give one run id and the file: runs trace ID --out FILE.json");
  if (file->empty()) args.fail("--out needs a file name");
  const int64_t id = args.runId(words[0]);
  auto store = openExisting(db, args);
  RunReader reader(*store);
  requireRun(reader, args, id);
  const int64_t spans = writeTraceFile(reader, id, *file);
  out << "Wrote " << spans << " spans of run " << id << " to " << *file
      << " (open it in ui.perfetto.dev or chrome://tracing).\n";
  return 0;
}

int tag(const std::string& db, Args& args, std::ostream& out) {
  const bool remove = args.flag("--remove");
  const auto words = args.positionals();
  if (words.size() < 2)
    args.fail("give a run id and one or more tags: runs tag ID TAG... [--remove]");
  const int64_t id = args.runId(words[0]);
  const std::vector<std::string> tags(words.begin() + 1, words.end());
  auto store = openExisting(db, args);
  RunReader reader(*store);
  requireRun(reader, args, id);
  if (remove) {
    store->removeTags(id, tags);
  } else {
    store->addTags(id, tags);
  }
  const auto now = reader.run(id)->tags;
  std::string joined;
  for (const auto& t : now) joined += (joined.empty() ? "" : ", ") + t;
  out << "Run " << id << " tags: " << (joined.empty() ? "(none)" : joined) << '\n';
  return 0;
}

int note(const std::string& db, Args& args, std::ostream& out) {
  const auto words = args.positionals();
  if (words.size() < 2) args.fail("give a run id and the note: runs note ID TEXT (\"\" clears it)");
  const int64_t id = args.runId(words[0]);
  std::string text;
  for (size_t i = 1; i < words.size(); ++i) text += (i > 1 ? " " : "") + words[i];
  auto store = openExisting(db, args);
  RunReader reader(*store);
  requireRun(reader, args, id);
  store->setNotes(id, text);
  out << "Run " << id << " notes " << (text.empty() ? "cleared" : "saved") << ".\n";
  return 0;
}

int remove(const std::string& db, Args& args, std::ostream& out) {
  const bool yes = args.flag("--yes");
  const auto words = args.positionals();
  if (words.empty()) args.fail("give one or more run ids: runs delete ID... --yes");
  std::vector<int64_t> ids;
  for (const auto& w : words) ids.push_back(args.runId(w));
  auto store = openExisting(db, args);
  RunReader reader(*store);
  for (int64_t id : ids) requireRun(reader, args, id);
  if (!yes) {
    args.fail("this deletes " + std::to_string(ids.size()) +
              " run(s) with all their data; add --yes to confirm");
  }
  store->deleteRuns(ids);
  out << "Deleted " << ids.size() << " run(s).\n";
  return 0;
}

}  // namespace

std::string runsUsage() {
  return R"(Usage: stagewise-cli runs [--db PATH] COMMAND ...

Browse and manage the stored runs.
  list [--status S[,S...]] [--mode local|backprop] [--filter TEXT] [--tag TAG]...
       [--where QUERY] [--sort COLUMN[:asc|:desc]] [--asc] [--limit N] [--offset N] [--json]
                      runs, newest first (TEXT matches name, notes and tags; QUERY e.g.
                      'mode = "local" and train.lr < 1e-3 and max(test_accuracy) > 0.8',
                      the grammar in docs/query.md)
  show ID [--json]    everything about one run
  export ID... [--format csv|json] [--out FILE]
                      points as long CSV (run_id,run_name,series,stage,layer,step,time_s,value)
                      or one JSON document (the default format follows FILE's extension);
                      stage and layer count from 0 there (S1 is stage 0, -1: run-wide)
  trace ID --out FILE.json
                      the run's timeline as a Chrome trace for Perfetto (ui.perfetto.dev):
                      a track per stage grouped by rank, spans named as PyTorch pipelining's
                      (PP:0F3, PP:2B0, PP:0local), waits, and bytes and memory as counters
  tag ID TAG... [--remove]   add (or remove) tags
  note ID TEXT        set the run's notes ("" clears them)
  delete ID... --yes  delete runs with all their data

Sort columns: id, name, created, finished, status, mode, model, stages, steps, test_accuracy,
  test_loss, samples_per_sec, wall_seconds, cpu_utilization, pipeline_efficiency.
The store is --db PATH, else $STAGEWISE_DB, else $XDG_DATA_HOME/stagewise/runs.db.
)";
}

int runsCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    // --db and --help may come anywhere before a `--`.
    std::optional<std::string> dbOption;
    bool help = false;
    std::vector<std::string> words;
    bool literal = false;
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& w = args[i];
      if (literal || w == "--") {
        literal = true;
        words.push_back(w);
      } else if (w == "--db") {
        if (i + 1 >= args.size()) throw UsageError{"runs: --db needs a path"};
        dbOption = args[++i];
      } else if (w.rfind("--db=", 0) == 0) {
        dbOption = w.substr(5);
      } else if (w == "--help" || w == "-h") {
        help = true;
      } else {
        words.push_back(w);
      }
    }
    if (help || (!words.empty() && words[0] == "help")) {
      out << runsUsage();
      return 0;
    }
    if (words.empty()) {
      throw UsageError{
          "runs: give a command: list, show, export, trace, tag, note or delete (see "
          "`stagewise-cli runs --help`)"};
    }
    if (dbOption && dbOption->empty()) throw UsageError{"runs: --db needs a path"};
    const std::string command = words[0];
    Args sub(command, std::vector<std::string>(words.begin() + 1, words.end()));
    using Handler = int (*)(const std::string&, Args&, std::ostream&);
    const std::pair<const char*, Handler> handlers[] = {
        {"list", list}, {"show", show}, {"export", exportRuns}, {"trace", trace},
        {"tag", tag},   {"note", note}, {"delete", remove}};
    for (const auto& [name, handler] : handlers) {
      if (command == name) return handler(resolveDbPath(dbOption), sub, out);
    }
    throw UsageError{"runs: unknown command '" + command +
                     "' (use list, show, export, trace, tag, note or delete)"};
  } catch (const UsageError& e) {
    err << e.message << '\n';
    return 2;
  } catch (const std::exception& e) {
    err << "runs: " << e.what() << '\n';
    return 1;
  }
}

}  // namespace stagewise::cli
