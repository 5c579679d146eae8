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

/// The demo recording embedded in the resources: a whole session of the sgemm example at shape 1
/// (M = N = K = 2048) measured on an NVIDIA H200 (gzip-compressed T4; resources/demo/README.md).
inline constexpr int kDemoShapeIndex = 1;
inline constexpr const char* kDemoDevice = "NVIDIA H200";

/// Writes the demo recording into `folder` (created if needed) and returns its path. The
/// recording readers take files, and a replay names its recording by path, so it is written out
/// rather than read from memory. On failure returns "" and fills `error`.
QString extractDemoRecording(const QString& folder, QString* error = nullptr);

} // namespace tilescope::views
