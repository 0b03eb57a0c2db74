#include "live/plot_export.h"

#include "common/app_settings.h"
#include "common/plot_frame.h"

#include <qcustomplot.h>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QTextStream>
#include <cmath>

namespace stagewise::ui {

namespace {

QString csvField(const QString& text) {
  if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) &&
      !text.contains(QLatin1Char('\n')))
    return text;
  QString quoted = text;
  quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
  return QLatin1Char('"') + quoted + QLatin1Char('"');
}

template <typename Container>
void writeRows(QTextStream& out, const QString& name, const Container& data) {
  for (auto it = data.constBegin(); it != data.constEnd(); ++it)
    if (std::isfinite(it->mainValue()))
      out << csvField(name) << ',' << QString::number(it->mainKey(), 'g', 10) << ','
          << QString::number(it->mainValue(), 'g', 10) << '\n';
}

bool exportCsv(QCustomPlot* plot, const QString& path) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) return false;
  QTextStream out(&file);
  const auto label = [](const QCPAxis* axis, const char* fallback) {
    return axis->label().isEmpty() ? QString::fromLatin1(fallback) : axis->label();
  };
  out << "series," << csvField(label(plot->xAxis, "x")) << ',' << csvField(label(plot->yAxis, "y"))
      << '\n';
  for (int i = 0; i < plot->plottableCount(); ++i) {
    QCPAbstractPlottable* p = plot->plottable(i);
    // The whole name, not the legend's text shortened to fit the panel.
    const auto* g = qobject_cast<QCPGraph*>(p);
    const QString whole = g ? PlotFrame::fullName(g) : p->name();
    const QString name = whole.isEmpty() ? QStringLiteral("series %1").arg(i + 1) : whole;
    if (auto* graph = qobject_cast<QCPGraph*>(p))
      writeRows(out, name, *graph->data());
    else if (auto* bars = qobject_cast<QCPBars*>(p))
      writeRows(out, name, *bars->data());
  }
  out.flush();
  return out.status() == QTextStream::Ok && file.commit();
}

}  // namespace

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
  } else if (suffix == QLatin1String("csv")) {
    ok = exportCsv(plot, path);
  } else {
    return QObject::tr("Unknown format '%1': use .png, .svg, .pdf or .csv").arg(suffix);
  }
  return ok ? QString() : QObject::tr("Could not write %1").arg(path);
}

void exportPlotWithDialog(QCustomPlot* plot, const QString& title, QWidget* parent) {
  QString selected;
  QString name = title.toLower();
  name.replace(QRegularExpression(QStringLiteral("[^a-z0-9]+")), QStringLiteral("-"));
  while (name.endsWith(QLatin1Char('-'))) name.chop(1);
  const QString path = QFileDialog::getSaveFileName(
      parent, QObject::tr("Export %1").arg(title),
      QDir(AppSettings::lastExportDir()).filePath(name),
      QObject::tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf);;"
                  "CSV data (*.csv)"),
      &selected);
  if (path.isEmpty()) return;
  AppSettings::setLastExportDir(QFileInfo(path).absolutePath());
  QString file = path;
  if (QFileInfo(file).suffix().isEmpty())
    file += selected.contains(QLatin1String("svg"))   ? QStringLiteral(".svg")
            : selected.contains(QLatin1String("pdf")) ? QStringLiteral(".pdf")
            : selected.contains(QLatin1String("csv")) ? QStringLiteral(".csv")
                                                      : QStringLiteral(".png");
  const QString error = exportPlot(plot, file, 0, 0, title);
  if (!error.isEmpty()) QMessageBox::warning(parent, QObject::tr("Export failed"), error);
}

}  // namespace stagewise::ui
