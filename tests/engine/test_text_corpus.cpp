// Text corpora for language models: reading files and folders, refusing what is not text,
// splitting by position, and drawing windows deterministically.
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <set>

#include "stagewise/engine/dataset.h"
#include "stagewise/engine/text_corpus.h"

using namespace stagewise::engine;

namespace {

void write(const QString& path, const std::string& bytes) {
  std::ofstream out(path.toStdString(), std::ios::binary);
  out << bytes;
}

std::string errorOf(const std::string& path) {
  try {
    readTextCorpus(path);
  } catch (const DatasetError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

class TestTextCorpus : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void readsAFile() {
    QTemporaryDir dir;
    write(dir.filePath("a.txt"), "héllo wörld\n");
    TextCorpus c = readTextCorpus(dir.filePath("a.txt").toStdString());
    QCOMPARE(c.text, std::string("héllo wörld\n"));
    QCOMPARE(c.files.size(), size_t{1});
  }

  void readsAFolderInNameOrderSkippingBinaryFilesAndRepeatedLinks() {
    QTemporaryDir dir;
    write(dir.filePath("b.txt"), "second");
    write(dir.filePath("a.txt"), "first");
    write(dir.filePath("c.idx"), std::string("\x01\x00\x02", 3));
    write(dir.filePath("d.txt"), "");
    std::filesystem::create_symlink(dir.filePath("a.txt").toStdString(),
                                    dir.filePath("e.u8").toStdString());
    std::filesystem::create_directory(dir.filePath("sub").toStdString());
    TextCorpus c = readTextCorpus(dir.path().toStdString());
    QCOMPARE(c.text, std::string("first\nsecond"));
    QCOMPARE(c.files.size(), size_t{2});
    const std::set<std::string> skipped(c.skipped.begin(), c.skipped.end());
    QVERIFY(skipped.count("c.idx (binary)"));
    QVERIFY(skipped.count("d.txt (empty)"));
    QVERIFY(skipped.count("e.u8 (a link to a file already read)"));
  }

  void fortuneSeparatorsBecomeBlankLinesBesideAnIndex() {
    QTemporaryDir dir;
    write(dir.filePath("jokes"), "one\n%\ntwo\n%\n");
    write(dir.filePath("jokes.dat"), std::string("\x00\x00\x00\x02", 4));
    write(dir.filePath("plain"), "keep\n%\nthis\n");
    TextCorpus c = readTextCorpus(dir.path().toStdString());
    QCOMPARE(c.text, std::string("one\n\ntwo\n\n\nkeep\n%\nthis\n"));
    QCOMPARE(c.skipped, std::vector<std::string>{"jokes.dat (binary)"});
    QCOMPARE(fortuneSeparatorsAsBlankLines("%\r\nx\n%"), std::string("\nx\n"));
  }

  void refusesWhatIsNotText() {
    QTemporaryDir dir;
    write(dir.filePath("empty.txt"), "");
    QVERIFY(QString::fromStdString(errorOf(dir.filePath("empty.txt").toStdString()))
                .contains("empty.txt: the file is empty"));
    write(dir.filePath("nul.txt"), std::string("text\0more", 9));
    QVERIFY(QString::fromStdString(errorOf(dir.filePath("nul.txt").toStdString()))
                .contains("NUL"));
    // 2 invalid bytes in 100: more than 1 %.
    std::string latin(98, 'a');
    latin += "\xE9\xE8";
    write(dir.filePath("latin1.txt"), latin);
    const std::string e = errorOf(dir.filePath("latin1.txt").toStdString());
    QVERIFY2(QString::fromStdString(e).contains("2.0 % of its bytes are invalid UTF-8"), e.c_str());
    // 1 in 100 is allowed.
    QCOMPARE(binaryReason(std::string(99, 'a') + "\xFF"), std::string());
    QVERIFY(!binaryReason(std::string(98, 'a') + "\xFF\xFF").empty());
    // Overlong forms and surrogates are invalid; a 4-byte sequence is valid.
    QCOMPARE(binaryReason("\xF0\x9F\x98\x80"), std::string());
    QVERIFY(!binaryReason("\xC0\xAF").empty());
    QVERIFY(!binaryReason("\xED\xA0\x80").empty());
    QVERIFY(QString::fromStdString(errorOf(dir.filePath("missing").toStdString()))
                .contains("no such file or folder"));
    QTemporaryDir binOnly;
    write(binOnly.filePath("x.dat"), std::string("\0", 1));
    QVERIFY(QString::fromStdString(errorOf(binOnly.path().toStdString()))
                .contains("holds no UTF-8 text file (skipped: x.dat (binary))"));
  }

  void splitsByPositionAndRefusesATextShorterThanAWindow() {
    QCOMPARE(textTestBegin(1000, 0.1, 16, "t"), int64_t{900});
    QCOMPARE(textTestBegin(1000, 0.25, 16, "t"), int64_t{750});
    try {
      textTestBegin(100, 0.1, 16, "short.txt");
      QFAIL("a 10-byte test part cannot hold a 17-byte window");
    } catch (const DatasetError& e) {
      QVERIFY(QString(e.what()).contains("short.txt: the text is too short for dataset.context 16"));
      QVERIFY(QString(e.what()).contains("test part holds 10 bytes"));
    }
    QVERIFY_THROWS_EXCEPTION(DatasetError, textTestBegin(100, 0.0, 4, "t"));
  }

  void windowsAreDeterministicInRangeAndSpread() {
    const int64_t train = 5000;
    const int context = 64;
    QCOMPARE(textWindowsPerEpoch(train, context), int64_t{78});
    std::set<int64_t> distinct;
    for (int64_t i = 0; i < 2000; ++i) {
      const int64_t o = textWindowOffset(7, i, train, context);
      QVERIFY(o >= 0 && o + context + 1 <= train);
      QCOMPARE(o, textWindowOffset(7, i, train, context));  // a resumed run draws the same
      distinct.insert(o);
    }
    QVERIFY(distinct.size() > 1500);
    int same = 0;
    for (int64_t i = 0; i < 100; ++i)
      same += textWindowOffset(7, i, train, context) == textWindowOffset(8, i, train, context);
    QVERIFY(same < 5);  // another seed, other windows
    QCOMPARE(textTestOffsets(10, 4), (std::vector<int64_t>{0, 4}));
    QCOMPARE(textTestOffsets(9, 4), (std::vector<int64_t>{0, 4}));
    QCOMPARE(textTestOffsets(8, 4), (std::vector<int64_t>{0}));
  }

  void readsTheDefaultCorpusWhenInstalled() {
    if (!std::filesystem::is_directory(defaultTextCorpusPath()))
      QSKIP("the fortunes package is not installed");
    TextCorpus c = readTextCorpus("");
    QVERIFY(c.text.size() > 1'000'000);  // about 1.3 MB of English
    QCOMPARE(binaryReason(c.text), std::string());
    for (const std::string& s : c.skipped)
      QVERIFY2(s.find(".dat (binary)") != std::string::npos ||
                   s.find("already read") != std::string::npos,
               s.c_str());
    QVERIFY(c.text.find("\n%\n") == std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestTextCorpus)
#include "test_text_corpus.moc"
