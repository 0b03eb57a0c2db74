// Spec comparison: flattening to dotted keys and reporting only what differs.

#include <QTest>

#include "stagewise/storage/spec_diff.h"
#include "stagewise/storage/store_error.h"

using namespace stagewise::storage;

class TestSpecDiff : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void flattensNestedObjects() {
    const auto flat = flattenJson(
        R"({"train":{"lr":0.001,"optimizer":"adam"},"model":{"hidden":[512,256]},)"
        R"("stages":[{"device":"cpu"},{"device":"cuda:0","threads":2}],"name":"x","empty":{}})");
    const std::vector<std::pair<std::string, std::string>> expected = {
        {"empty", "{}"},
        {"model.hidden", "[512,256]"},
        {"name", "\"x\""},
        {"stages.0.device", "\"cpu\""},
        {"stages.1.device", "\"cuda:0\""},
        {"stages.1.threads", "2"},
        {"train.lr", "0.001"},
        {"train.optimizer", "\"adam\""},
    };
    QCOMPARE(flat, expected);
  }

  void reportsOnlyDifferingKeys() {
    const auto diff = diffJson({R"({"a":1,"b":{"c":2,"d":3}})", R"({"a":1,"b":{"c":2,"d":4}})",
                                R"({"a":1,"b":{"c":2,"d":3},"e":true})"});
    QCOMPARE(diff.size(), size_t(2));
    QCOMPARE(diff[0].key, std::string("b.d"));
    QCOMPARE(diff[0].values, (std::vector<std::optional<std::string>>{"3", "4", "3"}));
    QCOMPARE(diff[1].key, std::string("e"));
    QVERIFY(!diff[1].values[0] && !diff[1].values[1]);
    QCOMPARE(*diff[1].values[2], std::string("true"));
  }

  void identicalDocumentsHaveNoDifferences() {
    QVERIFY(diffJson({R"({"x":[1,2],"y":{"z":null}})", R"({"y":{"z":null},"x":[1,2]})"}).empty());
    QVERIFY(diffJson({}).empty());
  }

  void typeChangesCount() {
    const auto diff = diffJson({R"({"lr":1})", R"({"lr":"1"})", R"({"lr":1.0})"});
    QCOMPARE(diff.size(), size_t(1));
    QCOMPARE(*diff[0].values[1], std::string("\"1\""));
  }

  void invalidJsonIsAnError() { QVERIFY_THROWS_EXCEPTION(StoreError, flattenJson("{not json")); }
};

QTEST_GUILESS_MAIN(TestSpecDiff)
#include "test_spec_diff.moc"
