#include "common/examples.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

// Q_INIT_RESOURCE must be used outside any namespace.
static void initViewsResources() {
    Q_INIT_RESOURCE(resources);
}

namespace tilescope::views {

namespace {
const QString kRoot = QStringLiteral(":/examples");
const QString kDemoRecording = QStringLiteral(":/demo/sgemm-h200-2048.t4.json.gz");
} // namespace

void initResources() {
    static const bool once = (initViewsResources(), true);
    (void)once;
}

QStringList embeddedExamples() {
    initResources();
    return QDir(kRoot).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
}

QString extractExample(const QString& name, const QString& folder, QString* error) {
    initResources();
    auto fail = [error](const QString& message) {
        if (error)
            *error = message;
        return QString();
    };
    const QDir source(kRoot + QLatin1Char('/') + name);
    if (name.isEmpty() || !source.exists())
        return fail(QObject::tr("there is no embedded example '%1'").arg(name));
    if (!QDir().mkpath(folder))
        return fail(QObject::tr("cannot create %1").arg(folder));
    const QStringList files = source.entryList(QDir::Files, QDir::Name);
    for (const QString& file : files) {
        const QString target = QDir(folder).filePath(file);
        if (QFileInfo::exists(target))
            QFile::remove(target);
        if (!QFile::copy(source.filePath(file), target))
            return fail(QObject::tr("cannot write %1").arg(target));
        // Files copied out of resources are read-only; the user may want to edit or delete them.
        QFile::setPermissions(target, QFile::permissions(target) | QFileDevice::WriteOwner | QFileDevice::WriteUser);
    }
    const QString problem = QDir(folder).filePath(name + QStringLiteral(".json"));
    if (!QFileInfo::exists(problem))
        return fail(QObject::tr("the example '%1' has no %1.json").arg(name));
    return problem;
}

QString extractDemoRecording(const QString& folder, QString* error) {
    initResources();
    auto fail = [error](const QString& message) {
        if (error)
            *error = message;
        return QString();
    };
    if (!QFileInfo::exists(kDemoRecording))
        return fail(QObject::tr("the demo recording is not embedded in this build"));
    if (!QDir().mkpath(folder))
        return fail(QObject::tr("cannot create %1").arg(folder));
    const QString target = QDir(folder).filePath(QFileInfo(kDemoRecording).fileName());
    if (QFileInfo::exists(target))
        QFile::remove(target);
    if (!QFile::copy(kDemoRecording, target))
        return fail(QObject::tr("cannot write %1").arg(target));
    QFile::setPermissions(target, QFile::permissions(target) | QFileDevice::WriteOwner | QFileDevice::WriteUser);
    return target;
}

} // namespace tilescope::views
