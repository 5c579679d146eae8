#pragma once

// What a panel shows while it has nothing to show: a centred, wrapped, muted note saying how to
// get something there, with the shortcuts written as the platform writes them.

#include <QString>

class QKeySequence;
class QLabel;
class QWidget;

namespace tilescope::views {

/// A label for an empty panel: rich text, centred and wrapped, in the placeholder colour.
QLabel* emptyStateLabel(const QString& html, QWidget* parent);
/// A shortcut as the platform writes it ("Ctrl+O", "⌘O").
QString shortcutText(const QKeySequence& sequence);

} // namespace tilescope::views
