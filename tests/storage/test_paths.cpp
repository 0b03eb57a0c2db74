// Where the store lives: --db, then STAGEWISE_DB, then the app setting, then the XDG default.

#include <QTemporaryDir>
#include <QTest>
#include <cstdlib>
#include <filesystem>

#include "stagewise/storage/paths.h"
#include "stagewise/storage/store_error.h"

using namespace stagewise::storage;
namespace fs = std::filesystem;

class TestPaths : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;
  std::string dir(const char* sub) { return (fs::path(m_dir.path().toStdString()) / sub).string(); }

 private Q_SLOTS:
  void init() {
    unsetenv("STAGEWISE_DB");
    setenv("XDG_DATA_HOME", dir("xdg").c_str(), 1);
    setenv("HOME", dir("home").c_str(), 1);
  }

  void defaultUsesXdgDataHome() { QCOMPARE(defaultDbPath(), dir("xdg") + "/stagewise/runs.db"); }

  void defaultFallsBackToHome() {
    unsetenv("XDG_DATA_HOME");
    QCOMPARE(defaultDbPath(), dir("home") + "/.local/share/stagewise/runs.db");
    setenv("XDG_DATA_HOME", "relative/dir", 1);  // XDG: relative paths are ignored
    QCOMPARE(defaultDbPath(), dir("home") + "/.local/share/stagewise/runs.db");
  }

  void explicitPathWins() {
    setenv("STAGEWISE_DB", dir("env/runs.db").c_str(), 1);
    QCOMPARE(resolveDbPath(dir("cli/runs.db"), dir("app/runs.db")), dir("cli/runs.db"));
    QVERIFY(fs::is_directory(dir("cli")));
  }

  void environmentBeatsAppSetting() {
    setenv("STAGEWISE_DB", dir("env/runs.db").c_str(), 1);
    QCOMPARE(resolveDbPath(std::nullopt, dir("app/runs.db")), dir("env/runs.db"));
    QCOMPARE(resolveDbPath(std::string(), dir("app/runs.db")), dir("env/runs.db"));
  }

  void appSettingBeatsDefault() {
    QCOMPARE(resolveDbPath(std::nullopt, dir("app/runs.db")), dir("app/runs.db"));
    QVERIFY(fs::is_directory(dir("app")));
  }

  void defaultLastAndParentsCreated() {
    const std::string path = resolveDbPath();
    QCOMPARE(path, dir("xdg") + "/stagewise/runs.db");
    QVERIFY(fs::is_directory(dir("xdg") + "/stagewise"));
    QVERIFY(!fs::exists(path));  // resolving creates folders, not the database
  }

  void uncreatableFolderIsAnError() {
    const std::string file = dir("plainfile");
    FILE* f = std::fopen(file.c_str(), "w");
    QVERIFY(f);
    std::fclose(f);
    try {
      resolveDbPath(file + "/sub/runs.db");
      QFAIL("expected StoreError");
    } catch (const StoreError& e) {
      QVERIFY2(std::string(e.what()).find("--db") != std::string::npos, e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestPaths)
#include "test_paths.moc"
