#include "live/plot_export.h"

#include <qcustomplot.h>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QSvgGenerator>

namespace stagewise::ui {

QString exportPlot(QCustomPlot* plot, const QString& path, int width, int height,
                   const QString& title) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  const int w = width > 0 ? width : plot->width(), h = height > 0 ? height : plot->height();
  bool ok = false;
  if (suffix == QLatin1String("png")) {
    ok = plot->savePng(path, w, h, 2.0);
  } else if (suffix == QLatin1String("pdf")) {
    ok = plot->savePdf(path, w, h, QCP::epAllowCosmetic, QStringLiteral("Stagewise"), title);
  } else if (suffix == QLatin1String("svg")) {
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(QSize(w, h));
    svg.setViewBox(QRect(0, 0, w, h));
    svg.setTitle(title);
    QCPPainter painter;
    ok = painter.begin(&svg);
    if (ok) {
      painter.setMode(QCPPainter::pmVectorized);
      painter.setMode(QCPPainter::pmNoCaching);
      plot->toPainter(&painter, w, h);
      ok = painter.end();
    }
  } else {
    return QObject::tr("Unknown format '%1': use .png, .svg or .pdf").arg(suffix);
  }
  return ok ? QString() : QObject::tr("Could not write %1").arg(path);
}

void exportPlotWithDialog(QCustomPlot* plot, const QString& title, QWidget* parent) {
  QString selected;
  QString name = title.toLower();
  name.replace(QRegularExpression(QStringLiteral("[^a-z0-9]+")), QStringLiteral("-"));
  const QString path = QFileDialog::getSaveFileName(
      parent, QObject::tr("Export %1").arg(title), name,
      QObject::tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"), &selected);
  if (path.isEmpty()) return;
  QString file = path;
  if (QFileInfo(file).suffix().isEmpty())
    file += selected.contains(QLatin1String("svg"))   ? QStringLiteral(".svg")
            : selected.contains(QLatin1String("pdf")) ? QStringLiteral(".pdf")
                                                      : QStringLiteral(".png");
  const QString error = exportPlot(plot, file, 0, 0, title);
  if (!error.isEmpty()) QMessageBox::warning(parent, QObject::tr("Export failed"), error);
}

}  // namespace stagewise::ui
