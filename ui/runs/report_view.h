#pragma once
// The replication report in the workbench: the same document `stagewise-cli report` writes,
// shown with its plots as images (Qt's rich text has no inline SVG: the SVGs PLplot draws are
// rendered by QtSvg), and saved as report.html + report.json (the plots inline as SVG, as the
// CLI writes them) or as a PDF of what is shown.

#include <QDialog>
#include <QImage>
#include <memory>

class QPushButton;
class QTextBrowser;

namespace stagewise::report {
struct ReportDoc;
struct Plot;
}  // namespace stagewise::report

namespace stagewise::ui {

class ReportView : public QDialog {
  Q_OBJECT
 public:
  explicit ReportView(std::shared_ptr<const report::ReportDoc> doc, QWidget* parent = nullptr);

  QTextBrowser* browser() const { return m_browser; }
  const report::ReportDoc& doc() const { return *m_doc; }
  /// Writes report.html and report.json into `dir` (created if needed). False with `error`.
  bool saveHtml(const QString& dir, QString* error = nullptr) const;
  /// Writes the page to `path` (NAME.html) and the report's JSON beside it (NAME.json); the
  /// folder is created if needed. False with `error`.
  bool saveHtmlFile(const QString& path, QString* error = nullptr) const;
  QPushButton* saveHtmlButton() const { return m_saveHtml; }
  /// Writes the report as shown here to a PDF file. False with `error`.
  bool savePdf(const QString& path, QString* error = nullptr) const;
  /// A plot as shown here: its SVG drawn by QtSvg into an image at twice its size (sharp on a
  /// high-density screen and in the PDF). Throws when it cannot be drawn.
  static QImage plotImage(const report::Plot& plot);

 private:
  /// Where the save dialogs open: the last report folder, else the last export folder or
  /// Documents.
  static QString startFolder();
  void chooseHtml();
  void choosePdf();

  std::shared_ptr<const report::ReportDoc> m_doc;
  QTextBrowser* m_browser;
  QPushButton* m_saveHtml;
  QPushButton* m_savePdf;
};

}  // namespace stagewise::ui
