#include "runs/report_view.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QGuiApplication>
#include <QImage>
#include <QMessageBox>
#include <QPainter>
#include <QPdfWriter>
#include <QPushButton>
#include <QSaveFile>
#include <QSvgRenderer>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "common/app_settings.h"
#include "stagewise/report/report.h"

namespace stagewise::ui {

namespace {

constexpr int kPlotWidth = 640, kPlotHeight = 400;

QUrl plotUrl(size_t finding, size_t plot) {
  return QUrl(QStringLiteral("plot:%1-%2").arg(finding).arg(plot));
}

/// A plot as an image at twice its size (sharp on a high-density screen and in the PDF).
QImage plotImage(const report::Plot& plot) {
  QImage image(2 * kPlotWidth, 2 * kPlotHeight, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::white);
  QSvgRenderer renderer(
      QByteArray::fromStdString(report::renderSvg(plot, kPlotWidth, kPlotHeight)));
  QPainter painter(&image);
  painter.setRenderHint(QPainter::Antialiasing);
  renderer.render(&painter);
  return image;
}

bool writeText(const QString& path, const std::string& text, QString* error) {
  QSaveFile file(path);  // whole or not at all
  if (!file.open(QIODevice::WriteOnly) ||
      file.write(text.data(), qint64(text.size())) != qint64(text.size()) || !file.commit()) {
    if (error) *error = QObject::tr("cannot write %1: %2").arg(path, file.errorString());
    return false;
  }
  return true;
}

}  // namespace

ReportView::ReportView(std::shared_ptr<const report::ReportDoc> doc, QWidget* parent)
    : QDialog(parent), m_doc(std::move(doc)) {
  setWindowTitle(tr("Replication report"));
  m_browser = new QTextBrowser(this);
  m_browser->setOpenLinks(false);  // anchors within the page only
  connect(m_browser, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
    if (url.hasFragment()) m_browser->scrollToAnchor(url.fragment());
  });
  QGuiApplication::setOverrideCursor(Qt::WaitCursor);
  const std::string html =
      report::reportHtml(*m_doc, [this](size_t f, size_t p, const report::Plot& plot) {
        try {
          m_browser->document()->addResource(QTextDocument::ImageResource, plotUrl(f, p),
                                             plotImage(plot));
        } catch (const std::exception& e) {
          return "<p>(plot not drawn: " + report::escapeHtml(e.what()) + ")</p>";
        }
        return "<img src=\"" + plotUrl(f, p).toString().toStdString() + "\" width=\"" +
               std::to_string(kPlotWidth) + "\"/>";
      });
  m_browser->setHtml(QString::fromStdString(html));
  QGuiApplication::restoreOverrideCursor();

  m_saveHtml = new QPushButton(tr("Save HTML…"), this);
  m_saveHtml->setToolTip(
      tr("report.html (one self-contained page, plots inline as SVG) and "
         "report.json, as stagewise-cli report writes them."));
  m_savePdf = new QPushButton(tr("Save PDF…"), this);
  m_savePdf->setToolTip(tr("The report as shown here, as a PDF."));
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  buttons->addButton(m_saveHtml, QDialogButtonBox::ActionRole);
  buttons->addButton(m_savePdf, QDialogButtonBox::ActionRole);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::close);
  connect(m_saveHtml, &QPushButton::clicked, this, &ReportView::chooseHtml);
  connect(m_savePdf, &QPushButton::clicked, this, &ReportView::choosePdf);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_browser, 1);
  layout->addWidget(buttons);
  resize(900, 760);
}

bool ReportView::saveHtml(const QString& dir, QString* error) const {
  if (!QDir().mkpath(dir)) {
    if (error) *error = tr("cannot create the folder %1").arg(dir);
    return false;
  }
  return writeText(QDir(dir).filePath(QStringLiteral("report.html")), report::reportHtml(*m_doc),
                   error) &&
         writeText(QDir(dir).filePath(QStringLiteral("report.json")), report::reportJson(*m_doc),
                   error);
}

bool ReportView::savePdf(const QString& path, QString* error) const {
  QPdfWriter writer(path);
  writer.setPageSize(QPageSize(QPageSize::A4));
  writer.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter);
  writer.setTitle(tr("Stagewise replication report"));
  writer.setCreator(QStringLiteral("Stagewise"));
  m_browser->document()->print(&writer);
  if (QFileInfo(path).size() <= 0) {
    if (error) *error = tr("cannot write %1").arg(path);
    return false;
  }
  return true;
}

void ReportView::chooseHtml() {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Save the report into"),
                                                        AppSettings::lastReportDir());
  if (dir.isEmpty()) return;
  AppSettings::setLastReportDir(dir);
  QString error;
  if (!saveHtml(dir, &error)) QMessageBox::warning(this, tr("Report not saved"), error);
}

void ReportView::choosePdf() {
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Save the report as PDF"),
      QDir(AppSettings::lastReportDir()).filePath(QStringLiteral("report.pdf")), tr("PDF (*.pdf)"));
  if (path.isEmpty()) return;
  AppSettings::setLastReportDir(QFileInfo(path).absolutePath());
  QString error;
  if (!savePdf(path, &error)) QMessageBox::warning(this, tr("Report not saved"), error);
}

}  // namespace stagewise::ui
