#pragma once

// Icons from the desktop's theme where it has them, else the style's own.

#include <QIcon>
#include <QStyle>

namespace tilescope::views {

/// The theme's icon `name` ("document-open"), else the style's `fallback`.
inline QIcon themeIcon(const char* name, QStyle::StandardPixmap fallback, const QStyle* style) {
    return QIcon::fromTheme(QString::fromLatin1(name), style->standardIcon(fallback));
}

} // namespace tilescope::views
