#include "problem/sourceview.h"

#include "problem/cudahighlighter.h"

#include <QFontDatabase>
#include <QHelpEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QTextBlock>
#include <QToolTip>

#include <algorithm>

namespace tilescope::views {

class LineNumberGutter : public QWidget {
public:
    explicit LineNumberGutter(SourceView* view)
        : QWidget(view)
        , m_view(view) {}
    QSize sizeHint() const override { return {m_view->gutterWidth(), 0}; }

protected:
    void paintEvent(QPaintEvent* event) override { m_view->paintGutter(event); }
    bool event(QEvent* event) override {
        if (event->type() == QEvent::ToolTip && m_view->gutterToolTip(static_cast<QHelpEvent*>(event)))
            return true;
        return QWidget::event(event);
    }

private:
    SourceView* m_view;
};

SourceView::SourceView(QWidget* parent)
    : QPlainTextEdit(parent)
    , m_gutter(new LineNumberGutter(this))
    , m_highlighter(new CudaHighlighter(document())) {
    setReadOnly(true);
    setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    setLineWrapMode(QPlainTextEdit::NoWrap);
    setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    setFrameShape(QFrame::NoFrame);
    connect(this, &QPlainTextEdit::blockCountChanged, this, &SourceView::updateGutterWidth);
    connect(this, &QPlainTextEdit::updateRequest, this, &SourceView::updateGutter);
    connect(this, &QPlainTextEdit::cursorPositionChanged, this, &SourceView::markCurrentLine);
    followPalette();
    updateGutterWidth();
}

SourceView::~SourceView() = default;

void SourceView::setSource(const QString& text, bool highlight) {
    m_highlighter->setDocument(highlight ? document() : nullptr);
    setPlainText(text);
    markCurrentLine();
}

int SourceView::gutterWidth() const {
    int digits = 1;
    for (int lines = std::max(1, blockCount()); lines >= 10; lines /= 10)
        ++digits;
    digits = std::max(digits, 3);
    return fontMetrics().horizontalAdvance(QLatin1Char('9')) * (digits + 2) + marksWidth();
}

int SourceView::marksWidth() const {
    // "9999/9999" and a little room.
    return m_marks.empty() ? 0 : fontMetrics().horizontalAdvance(QStringLiteral("9999/9999 ")) + 4;
}

void SourceView::setLineMarks(std::map<int, LineMark> marks) {
    m_marks = std::move(marks);
    updateGutterWidth();
    const QRect area = contentsRect();
    m_gutter->setGeometry(QRect(area.left(), area.top(), gutterWidth(), area.height()));
    markCurrentLine();
    m_gutter->update();
}

QString SourceView::markTooltip(int line) const {
    const auto it = m_marks.find(line);
    return it == m_marks.end() ? QString() : it->second.tooltip;
}

bool SourceView::gutterToolTip(QHelpEvent* event) {
    QTextBlock block = firstVisibleBlock();
    qreal top = blockBoundingGeometry(block).translated(contentOffset()).top();
    while (block.isValid()) {
        const qreal height = blockBoundingRect(block).height();
        if (event->pos().y() >= top && event->pos().y() < top + height) {
            const QString tip = markTooltip(block.blockNumber() + 1);
            if (tip.isEmpty())
                QToolTip::hideText();
            else
                QToolTip::showText(event->globalPos(), tip, m_gutter);
            return true;
        }
        block = block.next();
        top += height;
    }
    QToolTip::hideText();
    return true;
}

void SourceView::updateGutterWidth() {
    setViewportMargins(gutterWidth(), 0, 0, 0);
}

void SourceView::updateGutter(const QRect& rect, int dy) {
    if (dy != 0)
        m_gutter->scroll(0, dy);
    else
        m_gutter->update(0, rect.y(), m_gutter->width(), rect.height());
    if (rect.contains(viewport()->rect()))
        updateGutterWidth();
}

void SourceView::resizeEvent(QResizeEvent* event) {
    QPlainTextEdit::resizeEvent(event);
    const QRect area = contentsRect();
    m_gutter->setGeometry(QRect(area.left(), area.top(), gutterWidth(), area.height()));
}

void SourceView::changeEvent(QEvent* event) {
    QPlainTextEdit::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange)
        followPalette();
    else if (event->type() == QEvent::FontChange)
        updateGutterWidth();
}

void SourceView::followPalette() {
    m_highlighter->setDarkBackground(palette().color(QPalette::Base).lightness() < 128);
    markCurrentLine();
}

// The tint of a marked line: red for spills (stronger with more), amber for a local array's
// traffic alone; a line that differs from the compared config, blue.
static QColor markColour(const LineMark& m) {
    if (m.otherSpills >= 0 && m.otherSpills != m.spills())
        return QColor(40, 110, 230);
    return m.spills() > 0 ? QColor(220, 50, 40) : QColor(230, 160, 20);
}

void SourceView::markCurrentLine() {
    QList<QTextEdit::ExtraSelection> selections;
    for (const auto& [number, mark] : m_marks) {
        const QTextBlock block = document()->findBlockByNumber(number - 1);
        if (!block.isValid())
            continue;
        QTextEdit::ExtraSelection tint;
        QColor colour = markColour(mark);
        const bool differs = mark.otherSpills >= 0 && mark.otherSpills != mark.spills();
        colour.setAlphaF(differs ? 0.25f
                                 : std::min(0.35f, 0.1f + 0.01f * static_cast<float>(mark.spills() + mark.local())));
        tint.format.setBackground(colour);
        tint.format.setProperty(QTextFormat::FullWidthSelection, true);
        tint.cursor = QTextCursor(block);
        selections.push_back(tint);
    }
    QTextEdit::ExtraSelection line;
    QColor colour = palette().color(QPalette::Highlight);
    colour.setAlphaF(0.12f);
    line.format.setBackground(colour);
    line.format.setProperty(QTextFormat::FullWidthSelection, true);
    line.cursor = textCursor();
    line.cursor.clearSelection();
    selections.push_back(line);
    setExtraSelections(selections);
}

void SourceView::paintGutter(QPaintEvent* event) {
    QPainter painter(m_gutter);
    const QPalette& pal = palette();
    painter.fillRect(event->rect(), pal.color(QPalette::AlternateBase));
    painter.setPen(pal.color(QPalette::Mid));
    painter.drawLine(m_gutter->width() - 1, event->rect().top(), m_gutter->width() - 1, event->rect().bottom());

    const int current = textCursor().blockNumber();
    const int padding = fontMetrics().horizontalAdvance(QLatin1Char('9'));
    QTextBlock block = firstVisibleBlock();
    int number = block.blockNumber();
    qreal top = blockBoundingGeometry(block).translated(contentOffset()).top();
    while (block.isValid() && top <= event->rect().bottom()) {
        const qreal height = blockBoundingRect(block).height();
        if (block.isVisible() && top + height >= event->rect().top()) {
            painter.setPen(pal.color(number == current ? QPalette::Text : QPalette::PlaceholderText));
            painter.drawText(
                QRectF(marksWidth(), top, m_gutter->width() - marksWidth() - padding, fontMetrics().height()),
                Qt::AlignRight | Qt::AlignVCenter, QString::number(number + 1));
            const auto mark = m_marks.find(number + 1);
            if (mark != m_marks.end()) {
                // Stores/loads: the spills', else a local array's.
                const LineMark& m = mark->second;
                // Compared: this config's spill instructions | the pinned config's.
                const QString text = m.otherSpills >= 0 && m.otherSpills != m.spills()
                                         ? QStringLiteral("%1|%2").arg(m.spills()).arg(m.otherSpills)
                                     : m.spills() > 0 ? QStringLiteral("%1/%2").arg(m.spillStores).arg(m.spillLoads)
                                                      : QStringLiteral("%1/%2").arg(m.localStores).arg(m.localLoads);
                painter.setPen(markColour(m));
                painter.drawText(QRectF(2, top, marksWidth() - 4, fontMetrics().height()),
                                 Qt::AlignRight | Qt::AlignVCenter, text);
                painter.setPen(pal.color(QPalette::PlaceholderText));
            }
        }
        block = block.next();
        top += height;
        ++number;
    }
}

void SourceView::showLine(int line) {
    const QTextBlock block = document()->findBlockByNumber(line - 1);
    if (!block.isValid())
        return;
    QTextCursor cursor(block);
    cursor.movePosition(QTextCursor::EndOfBlock, QTextCursor::KeepAnchor);
    setTextCursor(cursor);
    centerCursor();
}

} // namespace tilescope::views
