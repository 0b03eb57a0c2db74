#pragma once
// The replication report in the workbench: the same document `stagewise-cli report` writes,
// shown with its plots as images (Qt's rich text has no inline SVG: the SVGs PLplot draws are
// rendered by QtSvg), and saved as report.html + report.json (the plots inline as SVG, as the
// CLI writes them) or as a PDF of what is shown.

#include <QDialog>
#include <memory>

class QPushButton;
class QTextBrowser;

namespace stagewise::report {
struct ReportDoc;
}

namespace stagewise::ui {

class ReportView : public QDialog {
  Q_OBJECT
 public:
  explicit ReportView(std::shared_ptr<const report::ReportDoc> doc, QWidget* parent = nullptr);

  QTextBrowser* browser() const { return m_browser; }
  const report::ReportDoc& doc() const { return *m_doc; }
  /// Writes report.html and report.json into `dir` (created if needed). False with `error`.
  bool saveHtml(const QString& dir, QString* error = nullptr) const;
  /// Writes the report as shown here to a PDF file. False with `error`.
  bool savePdf(const QString& path, QString* error = nullptr) const;

 private:
  void chooseHtml();
  void choosePdf();

  std::shared_ptr<const report::ReportDoc> m_doc;
  QTextBrowser* m_browser;
  QPushButton* m_saveHtml;
  QPushButton* m_savePdf;
};

}  // namespace stagewise::ui
