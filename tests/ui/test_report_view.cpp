// The replication report's window on its own (walkthrough of issue 36): its plots drawn as
// plots, not black rectangles (QtSvg 6.4 drew PLplot's clip paths as black shapes), and Save
// HTML… asking for a file name, in a folder it may create.
#include <QFileDialog>
#include <QPushButton>
#include <QScrollBar>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTimer>
#include <QtTest>

#include "common/app_settings.h"
#include "runs/report_view.h"
#include "stagewise/report/findings.h"
#include "stagewise/report/report.h"

using namespace stagewise;
using namespace stagewise::ui;

namespace {

report::Plot linePlot() {
  report::Plot p;
  p.title = "validation accuracy";
  p.xLabel = "step";
  p.yLabel = "accuracy";
  for (int s = 0; s < 2; ++s) {
    report::PlotSeries series;
    series.label = s ? "backprop" : "local";
    for (int i = 0; i <= 20; ++i) {
      series.x.push_back(i * 10.0);
      series.y.push_back(0.5 + 0.02 * i + 0.05 * s);
    }
    p.series.push_back(series);
  }
  return p;
}

/// The share of an image's pixels that are nearly black.
double darkShare(const QImage& image) {
  const QImage rgb = image.convertToFormat(QImage::Format_RGB32);
  qint64 dark = 0;
  for (int y = 0; y < rgb.height(); ++y)
    for (int x = 0; x < rgb.width(); ++x) dark += qGray(rgb.pixel(x, y)) < 60;
  return double(dark) / double(rgb.width() * rgb.height());
}

std::shared_ptr<report::ReportDoc> oneFindingDoc() {
  auto doc = std::make_shared<report::ReportDoc>();
  doc->quick = true;
  report::Finding f;
  f.id = report::kFindingIds.front();
  f.title = "A finding";
  f.plots.push_back(linePlot());
  doc->findings.push_back(f);
  return doc;
}

}  // namespace

class TestReportView : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void plotImageIsAPlotNotABlackRectangle() {
    const QImage image = ReportView::plotImage(linePlot());
    QVERIFY(!image.isNull());
    const double dark = darkShare(image);
    QVERIFY2(dark < 0.05, qPrintable(QString::number(dark)));
    // The series are drawn in their colours (the palette's first is #0072B2).
    int blue = 0;
    for (int y = 0; y < image.height(); ++y)
      for (int x = 0; x < image.width(); ++x) {
        const QColor c = image.pixelColor(x, y);
        blue += c.blue() > 150 && c.red() < 60;
      }
    QVERIFY2(blue > 50, qPrintable(QString::number(blue)));
  }

  void theWindowShowsThePlot() {
    ReportView view(oneFindingDoc());
    view.resize(900, 760);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    // The page scrolled to its plot (below the finding's heading and table).
    QTextBrowser* browser = view.browser();
    const QRectF page(QPointF(0, 0), browser->document()->size());
    QVERIFY(page.height() > 400);
    browser->verticalScrollBar()->setValue(browser->verticalScrollBar()->maximum());
    QApplication::processEvents();
    const QImage shown = browser->viewport()->grab().toImage();
    // A 640x400 plot is on screen: most of the page is white, some of it the series' blue.
    const double dark = darkShare(shown);
    QVERIFY2(dark < 0.05, qPrintable(QString::number(dark)));
    int blue = 0;
    for (int y = 0; y < shown.height(); ++y)
      for (int x = 0; x < shown.width(); ++x) {
        const QColor c = shown.pixelColor(x, y);
        blue += c.blue() > 150 && c.red() < 60;
      }
    QVERIFY2(blue > 50, qPrintable(QString::number(blue)));
  }

  void saveHtmlAsksForAFileAndMakesItsFolder() {
    QTemporaryDir tmp;
    AppSettings::setLastReportDir(tmp.path());
    ReportView view(oneFindingDoc());
    view.show();
    const QString target = tmp.filePath(QStringLiteral("new folder/my report.html"));
    bool asked = false;
    QTimer::singleShot(0, [&] {
      for (QWidget* w : QApplication::topLevelWidgets())
        if (auto* dialog = qobject_cast<QFileDialog*>(w); dialog && dialog->isVisible()) {
          asked = dialog->acceptMode() == QFileDialog::AcceptSave &&
                  dialog->fileMode() != QFileDialog::Directory &&
                  dialog->directory().absolutePath() == QDir(tmp.path()).absolutePath();
          dialog->selectFile(target);
          QMetaObject::invokeMethod(dialog, "accept", Qt::QueuedConnection);
        }
    });
    view.saveHtmlButton()->click();
    QVERIFY(asked);
    QVERIFY(QFileInfo(target).size() > 1000);
    QVERIFY(QFileInfo(tmp.filePath(QStringLiteral("new folder/my report.json"))).size() > 10);
    QCOMPARE(AppSettings::lastReportDir(), QFileInfo(target).absolutePath());
  }
};

QTEST_MAIN(TestReportView)
#include "test_report_view.moc"
