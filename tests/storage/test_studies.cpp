// Studies in the run store: their keys and counts, links to runs (shared, replaced), the study
// filter, the lock that tells a running study from one whose process died, and deletion.
#include <sys/wait.h>
#include <unistd.h>

#include <QTemporaryDir>
#include <QtTest>

#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"
#include "store_test_util.h"

using namespace stagewise::storage;
using namespace stagewise::storage::testing;

namespace {

NewStudy sampleStudy(const std::string& name = "lr sweep") {
  NewStudy s;
  s.name = name;
  s.baseSpecJson = R"({"name":"base"})";
  s.keys = {{"train.lr", "[0.001,0.0003]"}, {"partition.cuts", "[[2],[4]]"}};
  s.seeds = 2;
  s.runsTotal = 8;
  s.target = 0.8;
  return s;
}

int64_t finishedRun(RunStore& store, RunStatus status) {
  RunWriter& w = store.writer();
  const int64_t id = w.createRun(sampleRun());
  RunFinish f;
  f.status = status;
  w.finishRun(id, f);
  w.flush();
  return id;
}

StudyRunRecord linkOf(int point, int64_t runId, int64_t seed = 1) {
  StudyRunRecord l;
  l.point = point;
  l.runId = runId;
  l.seed = seed;
  l.valuesJson = "[0.001,[2]]";
  return l;
}

}  // namespace

class TestStudies : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;
  int m_count = 0;
  std::string freshPath() { return m_dir.filePath(QString("s%1.db").arg(++m_count)).toStdString(); }

 private Q_SLOTS:
  void keepsKeysAndCountsCompletedPoints() {
    const std::string path = freshPath();
    RunStore store(path);
    const int64_t id = store.createStudy(sampleStudy());
    const int64_t done = finishedRun(store, RunStatus::Completed);
    const int64_t stopped = finishedRun(store, RunStatus::Stopped);
    const int64_t again = finishedRun(store, RunStatus::Completed);
    store.linkStudyRun(id, linkOf(0, done));
    store.linkStudyRun(id, linkOf(2, done));  // a run shared by two points counts for both
    store.linkStudyRun(id, linkOf(1, stopped, 2));
    store.linkStudyRun(id, linkOf(1, stopped, 2));  // idempotent
    RunReader reader(store);
    auto s = reader.study(id);
    QVERIFY(s.has_value());
    QCOMPARE(s->name, std::string("lr sweep"));
    QVERIFY(s->status == StudyStatus::Running);
    QCOMPARE(s->keys.size(), size_t(2));
    QCOMPARE(s->keys[0].key, std::string("train.lr"));  // in the order given
    QCOMPARE(s->keys[1].valuesJson, std::string("[[2],[4]]"));
    QCOMPARE(s->seeds, 2);
    QCOMPARE(s->runsTotal, 8);
    QCOMPARE(s->target.value_or(0), 0.8);
    QCOMPARE(s->baseSpecJson, std::string(R"({"name":"base"})"));
    QCOMPARE(s->runsCompleted, 2);
    QCOMPARE(reader.studyRuns(id).size(), size_t(3));

    // The stopped run is run again: the old record stays, linked and replaced.
    store.markStudyRunReplaced(id, stopped);
    store.linkStudyRun(id, linkOf(1, again, 2));
    const auto links = reader.studyRuns(id);
    QCOMPARE(links.size(), size_t(4));
    QCOMPARE(links[1].runId, stopped);
    QVERIFY(links[1].replaced);
    QVERIFY(links[1].runStatus == RunStatus::Stopped);
    QVERIFY(!links[2].replaced);
    QCOMPARE(links[2].seed, int64_t(2));
    QCOMPARE(reader.study(id)->runsCompleted, 3);

    // The study filter lists its runs, replaced ones included.
    RunFilter filter;
    filter.study = id;
    QCOMPARE(reader.countRuns(filter), int64_t(3));
    filter.study = id + 1;
    QCOMPARE(reader.countRuns(filter), int64_t(0));

    store.finishStudy(id, StudyStatus::Completed);
    const auto listed = reader.listStudies();
    QCOMPARE(listed.size(), size_t(1));
    QVERIFY(listed[0].status == StudyStatus::Completed);
    QVERIFY(listed[0].finishedAtMs.has_value());
    QCOMPARE(listed[0].keys.size(), size_t(2));
    QVERIFY(listed[0].baseSpecJson.empty());  // list leaves it out
  }

  void aStudyOfADeadProcessReadsInterrupted() {
    const std::string path = freshPath();
    { RunStore create(path); }
    const pid_t child = fork();
    if (child == 0) {
      // Creates a study, then dies without a final status (as a SIGKILL would leave it).
      try {
        RunStore store(path);
        store.createStudy(sampleStudy("killed"));
        _exit(0);  // before the store's destructor could write anything
      } catch (...) {
        _exit(3);
      }
      _exit(0);
    }
    int status = 0;
    QCOMPARE(waitpid(child, &status, 0), child);
    QVERIFY(WIFEXITED(status));
    QCOMPARE(WEXITSTATUS(status), 0);
    // The child's store was never destroyed: the row still says running, the lock file exists
    // and is free.
    QCOMPARE(rawQuery(path, "SELECT status FROM studies"), std::string("running"));
    RunStore store(path);
    RunReader reader(store);
    const auto studies = reader.listStudies();
    QCOMPARE(studies.size(), size_t(1));
    QVERIFY(studies[0].status == StudyStatus::Interrupted);
    // It can be taken over and finished here.
    store.resumeStudy(studies[0].id);
    QVERIFY(reader.study(studies[0].id)->status == StudyStatus::Running);
    store.finishStudy(studies[0].id, StudyStatus::Stopped);
    QVERIFY(reader.study(studies[0].id)->status == StudyStatus::Stopped);
  }

  void aRunningStudyCannotBeTakenOverOrDeleted() {
    const std::string path = freshPath();
    RunStore owner(path);
    const int64_t id = owner.createStudy(sampleStudy());
    RunStore other(path);  // another process would see the same: the lock is held
    QVERIFY(RunReader(other).study(id)->status == StudyStatus::Running);
    QVERIFY_THROWS_EXCEPTION(StoreError, other.resumeStudy(id));
    QVERIFY_THROWS_EXCEPTION(StoreError, other.deleteStudies({id}));
    QVERIFY_THROWS_EXCEPTION(StoreError, other.resumeStudy(id + 7));
    owner.finishStudy(id, StudyStatus::Stopped);
    other.resumeStudy(id);  // now it can
    other.finishStudy(id, StudyStatus::Completed);
  }

  void closingAnUnfinishedStudyMarksItInterrupted() {
    const std::string path = freshPath();
    int64_t id = 0;
    {
      RunStore store(path);
      id = store.createStudy(sampleStudy());
    }
    RunStore store(path);
    QVERIFY(RunReader(store).study(id)->status == StudyStatus::Interrupted);
  }

  void deletingAStudyKeepsItsRuns() {
    const std::string path = freshPath();
    RunStore store(path);
    const int64_t id = store.createStudy(sampleStudy());
    const int64_t run = finishedRun(store, RunStatus::Completed);
    store.linkStudyRun(id, linkOf(0, run));
    store.finishStudy(id, StudyStatus::Completed);
    store.deleteStudies({id});
    RunReader reader(store);
    QVERIFY(!reader.study(id).has_value());
    QVERIFY(reader.run(run).has_value());
    QCOMPARE(rawInt(path, "SELECT count(*) FROM study_runs"), 0LL);
    // Deleting a run removes its links.
    const int64_t id2 = store.createStudy(sampleStudy());
    store.linkStudyRun(id2, linkOf(0, run));
    store.deleteRuns({run});
    QVERIFY(reader.studyRuns(id2).empty());
    QCOMPARE(QString::fromStdString(rawQuery(path, "PRAGMA integrity_check")), QString("ok"));
  }
};

QTEST_GUILESS_MAIN(TestStudies)
#include "test_studies.moc"
