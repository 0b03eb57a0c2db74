#include "common/about_dialog.h"

#include <qcustomplot.h>
#include <QCoreApplication>
#include <QMessageBox>

namespace stagewise::ui {

QString aboutText(const EngineDescription& engine, const QString& storePath) {
  QStringList devices;
  for (const auto& d : engine.devices) devices << QString::fromStdString(d);
  return QObject::tr(
             "<h3>Stagewise %1</h3>"
             "<p>A workbench for local-parallel training: a network cut into stages, each "
             "learning from its own aux head, all running at once (Laskin, Metz et al. 2020).</p>"
             "<table>"
             "<tr><td>Qt</td><td>%2 (built with %3)</td></tr>"
             "<tr><td>QCustomPlot</td><td>%4</td></tr>"
             "<tr><td>LibTorch</td><td>%5</td></tr>"
             "<tr><td>BLAS</td><td>%6</td></tr>"
             "<tr><td>OpenMP workers</td><td>%7</td></tr>"
             "<tr><td>malloc</td><td>%8</td></tr>"
             "<tr><td>Devices</td><td>%9 (%10 cores)</td></tr>"
             "<tr><td>Run store</td><td>%11</td></tr>"
             "</table>")
      .arg(QCoreApplication::applicationVersion(), QString::fromLatin1(qVersion()),
           QStringLiteral(QT_VERSION_STR), QStringLiteral(QCUSTOMPLOT_VERSION_STR),
           QString::fromStdString(engine.torchVersion), QString::fromStdString(engine.blas),
           QString::fromStdString(engine.openmpWait), QString::fromStdString(engine.malloc),
           devices.join(QStringLiteral(", ")))
      .arg(engine.hardwareCores)
      .arg(storePath.isEmpty() ? QObject::tr("none") : storePath.toHtmlEscaped());
}

void showAboutDialog(QWidget* parent, const EngineDescription& engine, const QString& storePath) {
  QMessageBox box(parent);
  box.setWindowTitle(QObject::tr("About Stagewise"));
  box.setTextFormat(Qt::RichText);
  box.setText(aboutText(engine, storePath));
  box.setIconPixmap(QIcon(QStringLiteral(":/icons/stagewise.svg")).pixmap(64, 64));
  box.exec();
}

}  // namespace stagewise::ui
