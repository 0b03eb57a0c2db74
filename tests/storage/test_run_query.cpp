// The run query (docs/query.md): what the parser understands (precedence, parentheses, not),
// errors pointing at their column, and the runs a query selects from a hand-made store.

#include <QTest>
#include <algorithm>
#include <set>

#include "stagewise/storage/run_query.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"
#include "store_test_util.h"

using namespace stagewise::storage;
using namespace stagewise::storage::testing;

class TestRunQuery : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;
  std::unique_ptr<RunStore> m_store;

  struct Run {
    std::string name;
    std::string mode;
    std::string spec;
    std::string summary;  ///< empty: still running
    std::vector<std::string> tags;
    std::vector<PointInput> points;
    std::optional<double> samplesPerSec;
  };

  void add(const Run& r) {
    NewRun run = sampleRun(r.name);
    run.mode = r.mode;
    run.specJson = r.spec;
    run.tags = r.tags;
    RunWriter& w = m_store->writer();
    const int64_t id = w.createRun(run);
    if (!r.points.empty()) w.appendPoints(id, r.points);
    if (!r.summary.empty()) {
      RunFinish f;
      f.summaryJson = r.summary;
      f.samplesPerSec = r.samplesPerSec;
      f.steps = 200;
      w.finishRun(id, f);
    }
    w.flush();
  }

  static std::vector<PointInput> series(const std::string& name, int stage,
                                        std::vector<double> values) {
    std::vector<PointInput> out;
    int64_t step = 0;
    for (double v : values) out.push_back({name, stage, -1, step += 10, step * 0.1, v});
    return out;
  }

  static std::vector<PointInput> concat(std::vector<std::vector<PointInput>> parts) {
    std::vector<PointInput> out;
    for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
  }

  QString select(const QString& query) {
    RunFilter filter;
    filter.query = RunQuery::parse(query.toStdString());
    RunReader reader(*m_store);
    std::vector<std::string> names;
    for (const auto& r : reader.listRuns(filter)) names.push_back(r.name);
    std::sort(names.begin(), names.end());
    QStringList out;
    for (const auto& n : names) out << QString::fromStdString(n);
    // countRuns compiles the same query: it must agree with the list.
    if (reader.countRuns(filter) != int64_t(names.size())) return QStringLiteral("<count differs>");
    return out.join(QLatin1Char(','));
  }

 private Q_SLOTS:
  void initTestCase() {
    m_store = std::make_unique<RunStore>(m_dir.filePath("q.db").toStdString());
    add({"alpha",
         "local",
         "{\"train\":{\"lr\":0.0005,\"amp\":true},\"partition\":{\"cuts\":[2,4]}}",
         "{\"test_accuracy\":0.85,\"bytes_sent\":1000}",
         {"baseline"},
         concat({series("test_accuracy", -1, {0.3, 0.9, 0.85}), series("loss", 0, {2.0, 1.5}),
                 series("loss", 1, {1.8, 0.4})}),
         1200});
    add({"beta",
         "local",
         "{\"train\":{\"lr\":0.01},\"partition\":{\"cuts\":[3]}}",
         "{\"test_accuracy\":0.6}",
         {"sweep-a"},
         series("test_accuracy", -1, {0.2, 0.6}),
         900});
    add({"gamma",
         "backprop",
         "{\"train\":{\"lr\":0.0001}}",
         "{\"test_accuracy\":0.9}",
         {"baseline", "Big-Batch"},
         series("test_accuracy", -1, {0.5, 0.95, 0.9}),
         800});
    add({"delta", "local", "{\"train\":{\"lr\":0.001}}", "", {}, {}, {}});
    add({"epsilon",
         "pipeline",
         "{\"model\":{\"kind\":\"mlp\"}}",
         "{\"note\":\"no lr\"}",
         {},
         {},
         {}});
  }

  void parses_data() {
    QTest::addColumn<QString>("query");
    QTest::addColumn<QString>("tree");
    QTest::newRow("and before or") << "a = 1 or b = 2 and c = 3"
                                   << "((a = 1) or ((b = 2) and (c = 3)))";
    QTest::newRow("parentheses") << "(a = 1 or b = 2) and c = 3"
                                 << "(((a = 1) or (b = 2)) and (c = 3))";
    QTest::newRow("not binds tightest") << "not a = 1 and b = 2"
                                        << "((not (a = 1)) and (b = 2))";
    QTest::newRow("not not") << "NOT not a=1"
                             << "(not (not (a = 1)))";
    QTest::newRow("left to right") << "a = 1 or b = 2 or c = 3"
                                   << "(((a = 1) or (b = 2)) or (c = 3))";
    QTest::newRow("exponent") << "train.lr < 1e-3"
                              << "(train.lr < 0.001)";
    QTest::newRow("aggregate") << "MAX(loss@2) >= -2.5E2"
                               << "(max(loss@2) >= -250)";
    QTest::newRow("operators")
        << "a==1 and b!=\"x\" and c<=2 and d>3 and e~\"p*\" and f!~\"q\""
        << "((((((a = 1) and (b != \"x\")) and (c <= 2)) and (d > 3)) and (e ~ "
           "\"p*\")) and (f !~ \"q\"))";
    QTest::newRow("escaped quote") << "name ~ \"a\\\"b\""
                                   << "(name ~ \"a\\\"b\")";
    QTest::newRow("booleans") << "train.amp = TRUE or x = false"
                              << "((train.amp = 1) or (x = 0))";
    QTest::newRow("index") << "partition.cuts[0] = 2"
                           << "(partition.cuts[0] = 2)";
    QTest::newRow("plain word") << "lr-sweep"
                                << "text(\"lr-sweep\")";
    QTest::newRow("plain phrase") << "  my run "
                                  << "text(\"my run\")";
    QTest::newRow("id") << "#12"
                        << "text(\"#12\")";
    QTest::newRow("word in a query") << "baseline and x = 1"
                                     << "(text(\"baseline\") and (x = 1))";
    QTest::newRow("quoted text") << "\"a b\" or x = 1"
                                 << "(text(\"a b\") or (x = 1))";
    QTest::newRow("empty") << "   "
                           << "(all)";
  }

  void parses() {
    QFETCH(QString, query);
    QFETCH(QString, tree);
    try {
      QCOMPARE(QString::fromStdString(RunQuery::parse(query.toStdString()).describe()), tree);
    } catch (const QueryError& e) {
      QFAIL(qPrintable(QStringLiteral("column %1: %2").arg(e.column()).arg(e.what())));
    }
  }

  void errorsPointAtTheirColumn_data() {
    QTest::addColumn<QString>("query");
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("says");
    QTest::newRow("no value") << "train.lr <" << 11 << "expected a value after '<'";
    QTest::newRow("unquoted text") << "mode = local" << 8 << "double quotes: \"local\"";
    QTest::newRow("unclosed (") << "x = 1 and (a = 1" << 11 << "never closed";
    QTest::newRow("stray )") << "a = 1)" << 6 << "without a matching '('";
    QTest::newRow("missing and") << "a = 1 b = 2" << 7 << "expected 'and', 'or' or the end";
    QTest::newRow("unknown function") << "maxx(loss) > 1" << 1 << "unknown function 'maxx'";
    QTest::newRow("aggregate vs text") << "max(loss) > \"a\"" << 13 << "is a number";
    QTest::newRow("aggregate alone") << "max(loss) and a = 1" << 11 << "compare max(loss) with";
    QTest::newRow("open string") << "a = \"open" << 5 << "no closing";
    QTest::newRow("lone !") << "a ! 1" << 3 << "'!' on its own";
    QTest::newRow("leading and") << "and a = 1" << 1 << "expected a condition";
    QTest::newRow("trailing and") << "a = 1 and" << 10 << "expected a condition after 'and'";
    QTest::newRow("bad key") << "a-b = 1" << 1 << "is not a key";
    QTest::newRow("tag order") << "tag < \"x\"" << 5 << "tag takes";
    QTest::newRow("pattern number") << "name ~ 3" << 8 << "pattern in double quotes";
    QTest::newRow("quoted key") << "\"mode\" = \"x\"" << 1 << "without quotes";
    QTest::newRow("stage 0") << "max(loss@0) > 1" << 5 << "not a stage";
    QTest::newRow("no key") << "< 3" << 1 << "expected a key before '<'";
    // Columns count characters, not bytes: ï is two bytes.
    QTest::newRow("utf-8") << "\"naïve\" and (a = 1" << 13 << "never closed";
  }

  void errorsPointAtTheirColumn() {
    QFETCH(QString, query);
    QFETCH(int, column);
    QFETCH(QString, says);
    try {
      const RunQuery q = RunQuery::parse(query.toStdString());
      QFAIL(qPrintable(QStringLiteral("parsed as ") + QString::fromStdString(q.describe())));
    } catch (const QueryError& e) {
      QVERIFY2(QString::fromUtf8(e.what()).contains(says), e.what());
      QCOMPARE(e.column(), column);
    }
  }

  void formatsTheErrorWithACaret() {
    try {
      RunQuery::parse("mode = local");
      QFAIL("parsed");
    } catch (const QueryError& e) {
      QCOMPARE(QString::fromStdString(formatQueryError("mode = local", e)),
               QStringLiteral("column 8: put text values in double quotes: \"local\"\n"
                              "  mode = local\n"
                              "         ^"));
    }
  }

  void selectsRuns_data() {
    QTest::addColumn<QString>("query");
    QTest::addColumn<QString>("names");
    QTest::newRow("mode") << "mode = \"local\""
                          << "alpha,beta,delta";
    QTest::newRow("spec key <") << "train.lr < 1e-3"
                                << "alpha,gamma";
    QTest::newRow("spec key <=") << "train.lr <= 1e-3"
                                 << "alpha,delta,gamma";
    QTest::newRow("spec. prefix") << "spec.train.lr = 0.01"
                                  << "beta";
    QTest::newRow("array element") << "partition.cuts[0] = 2"
                                   << "alpha";
    QTest::newRow("array as text") << "partition.cuts = \"[2,4]\""
                                   << "alpha";
    QTest::newRow("boolean") << "train.amp = true"
                             << "alpha";
    QTest::newRow("summary figure") << "bytes_sent = 1000"
                                    << "alpha";
    QTest::newRow("summary. prefix") << "summary.test_accuracy >= 0.85"
                                     << "alpha,gamma";
    QTest::newRow("table column") << "samples_per_sec > 850"
                                  << "alpha,beta";
    QTest::newRow("status") << "status = \"running\""
                            << "delta";
    QTest::newRow("max") << "max(test_accuracy) > 0.8"
                         << "alpha,gamma";
    QTest::newRow("min") << "min(test_accuracy) < 0.25"
                         << "beta";
    QTest::newRow("last") << "last(test_accuracy) >= 0.85"
                          << "alpha,gamma";
    QTest::newRow("first") << "first(test_accuracy) = 0.5"
                           << "gamma";
    QTest::newRow("mean") << "mean(test_accuracy) > 0.7"
                          << "gamma";
    QTest::newRow("last stage's series") << "min(loss) < 0.5"
                                         << "alpha";
    QTest::newRow("a stage's series") << "min(loss@1) < 1.6 and min(loss@1) > 1.4"
                                      << "alpha";
    QTest::newRow("tag") << "tag = \"baseline\""
                         << "alpha,gamma";
    QTest::newRow("not tag") << "tag != \"baseline\""
                             << "beta,delta,epsilon";
    QTest::newRow("tag pattern") << "tag ~ \"big*\""
                                 << "gamma";
    QTest::newRow("name pattern") << "name ~ \"*TA\""
                                  << "beta,delta";
    QTest::newRow("not a pattern") << "name !~ \"*a\""
                                   << "epsilon";
    QTest::newRow("not of a pattern") << "not name ~ \"*a\""
                                      << "epsilon";
    QTest::newRow("or") << "mode = \"backprop\" or mode = \"pipeline\""
                        << "epsilon,gamma";
    QTest::newRow("and binds tighter")
        << "mode = \"backprop\" or mode = \"local\" and train.lr > 0.005"
        << "beta,gamma";
    QTest::newRow("parentheses first")
        << "(mode = \"backprop\" or mode = \"local\") and train.lr > 0.0002"
        << "alpha,beta,delta";
    QTest::newRow("missing key is false") << "train.lr != 0.01"
                                          << "alpha,delta,gamma";
    QTest::newRow("not of a missing key") << "not (train.lr < 1e-3)"
                                          << "beta,delta,epsilon";
    QTest::newRow("numbers never match text") << "mode > 3"
                                              << "";
    QTest::newRow("issue's example") << "mode = \"local\" and train.lr < 1e-3 and "
                                        "max(test_accuracy) > 0.8 and tag = \"baseline\""
                                     << "alpha";
    QTest::newRow("plain text") << "alp"
                                << "alpha";
    QTest::newRow("word in a query") << "baseline and mode = \"backprop\""
                                     << "gamma";
    QTest::newRow("SQL stays data") << "name = \"'; DROP TABLE runs; --\" or tag ~ \"*'*\""
                                    << "";
    QTest::newRow("everything") << ""
                                << "alpha,beta,delta,epsilon,gamma";
  }

  void selectsRuns() {
    QFETCH(QString, query);
    QFETCH(QString, names);
    QCOMPARE(select(query), names);
  }

  void longAndDeepQueriesRunOrAreRefused() {
    // At the limits the SQL still runs (SQLite's parser stack and expression depth); past
    // them the parser refuses, at the term or parenthesis that goes over.
    QStringList terms;
    for (int i = 0; i < 127; ++i) terms << QStringLiteral("train.lr = %1").arg(i);
    terms << QStringLiteral("name = \"beta\"");
    QCOMPARE(select(terms.join(QStringLiteral(" or "))), QStringLiteral("beta"));
    QCOMPARE(select(terms.join(QStringLiteral(" and "))), QString());
    const QString deep = QString(12, QLatin1Char('(')) + QStringLiteral("name = \"beta\"") +
                         QString(12, QLatin1Char(')'));
    QCOMPARE(select(deep), QStringLiteral("beta"));
    QCOMPARE(select(QStringLiteral("not ").repeated(12) + QStringLiteral("name = \"beta\"")),
             QStringLiteral("beta"));
    QString alternating = QStringLiteral("max(test_accuracy) > 0.9");  // gamma
    for (int i = 0; i < 12; ++i) {
      alternating = QStringLiteral("name = \"beta\" %1 (%2)")
                        .arg(i % 2 ? QStringLiteral("or") : QStringLiteral("and"), alternating);
    }
    QCOMPARE(select(alternating), QStringLiteral("beta"));
    const auto refused = [](const QString& query, int column, const char* says) {
      try {
        RunQuery::parse(query.toStdString());
        QFAIL("parsed");
      } catch (const QueryError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(QLatin1String(says)), e.what());
        QCOMPARE(e.column(), column);
      }
    };
    refused(terms.join(QStringLiteral(" or ")) + QStringLiteral(" or x = 1"),
            int(terms.join(QStringLiteral(" or ")).size()) + 5, "too many conditions");
    refused(QLatin1Char('(') + deep + QLatin1Char(')'), 13, "nested too deeply");
    refused(QStringLiteral("not ").repeated(13) + QStringLiteral("a = 1"), 49, "nested too deeply");
  }

  void combinesWithTheOtherFilters() {
    RunFilter filter;
    filter.query = RunQuery::parse("tag = \"baseline\"");
    filter.mode = "backprop";
    RunReader reader(*m_store);
    const auto runs = reader.listRuns(filter);
    QCOMPARE(runs.size(), size_t(1));
    QCOMPARE(runs[0].name, std::string("gamma"));
  }

  void selectsById() {
    RunReader reader(*m_store);
    int64_t gamma = -1;
    for (const auto& r : reader.listRuns())
      if (r.name == "gamma") gamma = r.id;
    QCOMPARE(select(QStringLiteral("id = %1").arg(gamma)), QStringLiteral("gamma"));
    QCOMPARE(select(QStringLiteral("#%1").arg(gamma)), QStringLiteral("gamma"));
  }
};

QTEST_GUILESS_MAIN(TestRunQuery)
#include "test_run_query.moc"
