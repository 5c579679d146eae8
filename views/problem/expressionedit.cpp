#include "problem/expressionedit.h"

#include "expr/expr.h"

#include <QCoreApplication>
#include <QInputMethodEvent>
#include <QPainter>
#include <QPainterPath>
#include <QRegularExpression>

namespace tilescope::views {

namespace {

QColor colourOf(expr::LexemeKind kind, bool parameter) {
    switch (kind) {
    case expr::LexemeKind::Number:
        return QColor(0x09, 0x86, 0x58);
    case expr::LexemeKind::String:
        return QColor(0xa3, 0x15, 0x15);
    case expr::LexemeKind::Name:
        return parameter ? QColor(0x1f, 0x4e, 0xb4) : QColor(0x00, 0x7a, 0x87);
    case expr::LexemeKind::Builtin:
        return QColor(0x79, 0x3c, 0xb0);
    case expr::LexemeKind::Keyword:
        return QColor(0xaf, 0x00, 0xdb);
    case expr::LexemeKind::Operator:
        return {};
    case expr::LexemeKind::Invalid:
        return QColor(0xd3, 0x2f, 0x2f);
    }
    return {};
}

} // namespace

ExpressionEdit::ExpressionEdit(QWidget* parent)
    : QLineEdit(parent) {
    connect(this, &QLineEdit::textChanged, this, &ExpressionEdit::colour);
}

void ExpressionEdit::setParameterNames(const QStringList& names) {
    const QSet<QString> set(names.begin(), names.end());
    if (set == m_parameters)
        return;
    m_parameters = set;
    colour();
}

QColor ExpressionEdit::colourAt(int position) const {
    for (const QTextLayout::FormatRange& f : m_formats)
        if (position >= f.start && position < f.start + f.length)
            return f.format.foreground().color();
    return palette().color(QPalette::Text);
}

void ExpressionEdit::colour() {
    const QString t = text();
    const QByteArray utf8 = t.toUtf8();
    // Byte offsets of the lexemes as positions in the text (the same for ASCII).
    std::vector<int> positionOf(static_cast<std::size_t>(utf8.size()) + 1, t.size());
    for (int i = 0, byte = 0; i < t.size(); ++i) {
        positionOf[static_cast<std::size_t>(byte)] = i;
        const bool pair = t[i].isHighSurrogate() && i + 1 < t.size();
        byte += QString(t.mid(i, pair ? 2 : 1)).toUtf8().size();
        i += pair ? 1 : 0;
    }
    m_formats.clear();
    for (const expr::Lexeme& l :
         expr::lexemes(std::string_view(utf8.constData(), static_cast<std::size_t>(utf8.size())))) {
        const int start = positionOf[l.start];
        const int end = positionOf[l.start + l.length];
        const QString word = t.mid(start, end - start);
        const QColor c = colourOf(l.kind, m_parameters.contains(word));
        if (!c.isValid())
            continue;
        QTextCharFormat format;
        format.setForeground(c);
        if (l.kind == expr::LexemeKind::Keyword)
            format.setFontWeight(QFont::DemiBold);
        m_formats.append({start, end - start, format});
    }
    // A line edit takes formats as an input method's attributes, positions from the cursor.
    QList<QInputMethodEvent::Attribute> attributes;
    for (const QTextLayout::FormatRange& f : m_formats)
        attributes.append({QInputMethodEvent::TextFormat, f.start - cursorPosition(), f.length, f.format});
    QInputMethodEvent event(QString(), attributes);
    QCoreApplication::sendEvent(this, &event);
}

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
