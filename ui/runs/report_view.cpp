#include "runs/report_view.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QImage>
#include <QMessageBox>
#include <QPainter>
#include <QPdfWriter>
#include <QPushButton>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSvgRenderer>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <stdexcept>

#include "common/app_settings.h"
#include "stagewise/report/report.h"

namespace stagewise::ui {

namespace {

constexpr int kPlotWidth = 640, kPlotHeight = 400;

QUrl plotUrl(size_t finding, size_t plot) {
  return QUrl(QStringLiteral("plot:%1-%2").arg(finding).arg(plot));
}

/// The SVG without its clip paths: QtSvg before 6.7 (SVG Tiny) does not know <clipPath> and draws
/// the polygon inside it as a shape filled black, over the whole plot (walkthrough of issue 36:
/// every plot a black rectangle with only its legend on top). PLplot clips text to the page or
/// the plot's frame, which nothing here crosses.
QByteArray withoutClipPaths(const std::string& svg) {
  QString text = QString::fromStdString(svg);
  static const QRegularExpression clipPath(QStringLiteral("<clipPath\\b.*?</clipPath>"),
                                           QRegularExpression::DotMatchesEverythingOption);
  static const QRegularExpression clipAttr(QStringLiteral("\\s+clip-path=\"[^\"]*\""));
  text.remove(clipPath);
  text.remove(clipAttr);
  return text.toUtf8();
}

}  // namespace

QImage ReportView::plotImage(const report::Plot& plot) {
  QImage image(2 * kPlotWidth, 2 * kPlotHeight, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::white);
  QSvgRenderer renderer(withoutClipPaths(report::renderSvg(plot, kPlotWidth, kPlotHeight)));
  if (!renderer.isValid()) throw std::runtime_error("QtSvg cannot read the plot's SVG");
  QPainter painter(&image);
  painter.setRenderHint(QPainter::Antialiasing);
  renderer.render(&painter);
  return image;
}

namespace {

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
      tr("report.html (one self-contained page, plots inline as SVG) and report.json beside "
         "it, as stagewise-cli report writes them."));
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
  return saveHtmlFile(QDir(dir).filePath(QStringLiteral("report.html")), error);
}

bool ReportView::saveHtmlFile(const QString& path, QString* error) const {
  const QFileInfo html(path);
  if (!QDir().mkpath(html.absolutePath())) {
    if (error) *error = tr("cannot create the folder %1").arg(html.absolutePath());
    return false;
  }
  const QString json = html.dir().filePath(html.completeBaseName() + QStringLiteral(".json"));
  return writeText(html.absoluteFilePath(), report::reportHtml(*m_doc), error) &&
         writeText(json, report::reportJson(*m_doc), error);
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

QString ReportView::startFolder() {
  // The folder a report was last saved in; else the last export folder, else Documents.
  const QString last = AppSettings::lastReportDir();
  return QFileInfo(last).isDir() && last != QDir::homePath() ? last : AppSettings::lastExportDir();
}

void ReportView::chooseHtml() {
  // A file name, not a folder (issue 36: the folder dialog could not make a new folder, and
  // typing one said "Directory not found"); a folder typed in the name is created.
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Save the report as HTML (its .json beside it)"),
      QDir(startFolder()).filePath(QStringLiteral("report.html")), tr("HTML (*.html *.htm)"));
  if (path.isEmpty()) return;
  AppSettings::setLastReportDir(QFileInfo(path).absolutePath());
  QString error;
  if (!saveHtmlFile(path, &error)) QMessageBox::warning(this, tr("Report not saved"), error);
}

void ReportView::choosePdf() {
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Save the report as PDF"),
      QDir(startFolder()).filePath(QStringLiteral("report.pdf")), tr("PDF (*.pdf)"));
  if (path.isEmpty()) return;
  AppSettings::setLastReportDir(QFileInfo(path).absolutePath());
  QString error;
  if (!savePdf(path, &error)) QMessageBox::warning(this, tr("Report not saved"), error);
}

}  // namespace stagewise::ui
