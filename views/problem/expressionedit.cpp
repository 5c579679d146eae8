#include "problem/expressionedit.h"

#include <QPainter>
#include <QPainterPath>
#include <QRegularExpression>

namespace tilescope::views {

void ExpressionEdit::setErrorColumn(int column) {
    if (column == m_errorColumn)
        return;
    m_errorColumn = column;
    update();
}

int ExpressionEdit::columnIn(const QString& message) {
    static const QRegularExpression column(QStringLiteral(R"(column (\d+))"));
    const auto m = column.match(message);
    return m.hasMatch() ? m.captured(1).toInt() : 0;
}

void ExpressionEdit::paintEvent(QPaintEvent* event) {
    QLineEdit::paintEvent(event);
    const QString t = text();
    if (m_errorColumn <= 0 || m_errorColumn > t.size() + 1)
        return;
    // From the error's column to the end of the word there (one character at least).
    const int start = m_errorColumn - 1;
    int end = start + 1;
    while (end < t.size() && (t[end].isLetterOrNumber() || t[end] == QLatin1Char('_')))
        ++end;
    // x of a position: from the cursor's, which accounts for the scrolled text.
    const QFontMetrics metrics = fontMetrics();
    const int cursor = cursorPosition();
    const int cursorX = cursorRect().center().x();
    auto xOf = [&](int position) {
        return position >= cursor ? cursorX + metrics.horizontalAdvance(t.mid(cursor, position - cursor))
                                  : cursorX - metrics.horizontalAdvance(t.mid(position, cursor - position));
    };
    const int x0 = xOf(start);
    const int x1 = std::max(x0 + metrics.averageCharWidth(), xOf(std::min<int>(end, t.size())));
    const int y = cursorRect().bottom() - 1;
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setPen(QPen(QColor(0xd3, 0x2f, 0x2f), 1.2));
    QPainterPath wave;
    wave.moveTo(x0, y);
    for (int x = x0; x < x1; x += 2)
        wave.lineTo(x + 2, y + ((x - x0) / 2 % 2 ? -1.5 : 1.5));
    painter.drawPath(wave);
}

} // namespace tilescope::views
