#include "common/theme.h"

#include <qcustomplot.h>
#include <QApplication>
#include <QPalette>
#include <QStyleFactory>
#include <cmath>

namespace stagewise::ui {

Theme themeFromString(const QString& name) {
  return name.compare(QLatin1String("dark"), Qt::CaseInsensitive) == 0 ? Theme::Dark : Theme::Light;
}

QString toString(Theme theme) {
  return theme == Theme::Dark ? QStringLiteral("dark") : QStringLiteral("light");
}

static QPalette darkPalette() {
  QPalette p;
  const QColor window(0x2b, 0x2d, 0x31), base(0x1e, 0x1f, 0x22), text(0xe6, 0xe6, 0xe6);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, window);
  p.setColor(QPalette::ToolTipBase, QColor(0x3c, 0x3f, 0x44));
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::PlaceholderText, QColor(0x8a, 0x8a, 0x8a));
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, QColor(0x36, 0x39, 0x3e));
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x6b));
  p.setColor(QPalette::Link, QColor(0x6c, 0xb6, 0xff));
  p.setColor(QPalette::Highlight, QColor(0x3d, 0x7e, 0xd6));
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::Mid, QColor(0x50, 0x53, 0x58));
  p.setColor(QPalette::Dark, QColor(0x18, 0x19, 0x1b));
  p.setColor(QPalette::Light, QColor(0x45, 0x48, 0x4e));
  const QColor disabled(0x7a, 0x7a, 0x7a);
  p.setColor(QPalette::Disabled, QPalette::Text, disabled);
  p.setColor(QPalette::Disabled, QPalette::ButtonText, disabled);
  p.setColor(QPalette::Disabled, QPalette::WindowText, disabled);
  return p;
}

void applyTheme(QApplication& app, Theme theme) {
  if (auto* fusion = QStyleFactory::create(QStringLiteral("Fusion"))) app.setStyle(fusion);
  app.setPalette(theme == Theme::Dark ? darkPalette() : app.style()->standardPalette());
}

bool isDarkPalette() {
  return QApplication::palette().color(QPalette::Window).lightness() < 128;
}

QColor stageColor(int index) {
  // Tableau-like hues: distinguishable, and mid-lightness so they read on light and dark. Past
  // them, hues step by the golden angle at the same lightness, so no two stages share a colour.
  static const QColor kColors[] = {
      QColor(0x4e, 0x79, 0xa7), QColor(0xf2, 0x8e, 0x2b), QColor(0x59, 0xa1, 0x4f),
      QColor(0xe1, 0x57, 0x59), QColor(0x76, 0xb7, 0xb2), QColor(0xed, 0xc9, 0x48),
      QColor(0xb0, 0x7a, 0xa1), QColor(0x9c, 0x75, 0x5f), QColor(0xff, 0x9d, 0xa7),
      QColor(0x86, 0xbc, 0xb6), QColor(0xd3, 0x72, 0xc4), QColor(0xa0, 0xcb, 0xe8)};
  const int n = static_cast<int>(std::size(kColors));
  index = std::max(0, index);
  if (index < n) return kColors[index];
  const int hue = static_cast<int>(std::lround(std::fmod(30.0 + 137.508 * (index - n), 360.0)));
  return QColor::fromHsl(hue, 150, 125);
}

void stylePlot(QCustomPlot* plot) {
  const QPalette pal = QApplication::palette();
  const QColor bg = pal.color(QPalette::Base), fg = pal.color(QPalette::Text);
  QColor grid = fg;
  grid.setAlpha(40);
  plot->setBackground(bg);
  for (QCPAxis* axis : plot->axisRect()->axes()) {
    axis->setBasePen(QPen(fg));
    axis->setTickPen(QPen(fg));
    axis->setSubTickPen(QPen(fg));
    axis->setTickLabelColor(fg);
    axis->setLabelColor(fg);
    axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
  }
  plot->legend->setBrush(QBrush(bg));
  plot->legend->setTextColor(fg);
  plot->legend->setBorderPen(QPen(grid));
  if (plot->plotLayout()->rowCount() > 0)
    if (auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0)))
      title->setTextColor(fg);
}

}  // namespace stagewise::ui
