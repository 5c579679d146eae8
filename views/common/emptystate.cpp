#include "common/emptystate.h"

#include <QKeySequence>
#include <QLabel>

namespace tilescope::views {

QLabel* emptyStateLabel(const QString& html, QWidget* parent) {
    auto* label = new QLabel(html, parent);
    label->setAlignment(Qt::AlignCenter);
    label->setWordWrap(true);
    label->setTextFormat(Qt::RichText);
    label->setContentsMargins(24, 24, 24, 24);
    label->setForegroundRole(QPalette::PlaceholderText);
    return label;
}

QString shortcutText(const QKeySequence& sequence) {
    return sequence.toString(QKeySequence::NativeText);
}

} // namespace tilescope::views
