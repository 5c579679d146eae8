#pragma once

// The example problems embedded in the resources (":/examples/<name>/"), written out to a
// folder so that their kernel files resolve like any other problem's.

#include <QString>
#include <QStringList>

namespace tilescope::views {

/// Registers the resources of the views library (icons, examples). The library is static, so
/// its resources are not registered on their own; safe to call more than once.
void initResources();

/// The names of the embedded examples ("sgemm", ...).
QStringList embeddedExamples();

/// Writes every file of example `name` into `folder` (created if needed) and returns the path of
/// its problem file (`<folder>/<name>.json`). On failure returns "" and fills `error`.
QString extractExample(const QString& name, const QString& folder, QString* error = nullptr);

} // namespace tilescope::views
