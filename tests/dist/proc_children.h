#pragma once
// The processes whose parent is `parent` (zombies included), read from /proc: what a launcher
// started, or left behind.

#include <sys/types.h>

#include <QDir>
#include <QFile>
#include <QList>
#include <QString>
#include <QStringList>

inline QList<pid_t> childrenOf(pid_t parent) {
  QList<pid_t> out;
  for (const QString& entry : QDir("/proc").entryList(QDir::Dirs)) {
    bool ok = false;
    const pid_t pid = entry.toInt(&ok);
    if (!ok) continue;
    QFile stat("/proc/" + entry + "/stat");
    if (!stat.open(QIODevice::ReadOnly)) continue;
    const QString s = QString::fromUtf8(stat.readAll());
    const QStringList f = s.mid(s.lastIndexOf(')') + 2).split(' ');  // after "pid (comm) "
    if (f.size() > 1 && f[1].toLongLong() == parent) out << pid;
  }
  return out;
}
