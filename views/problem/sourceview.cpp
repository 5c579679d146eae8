#include "problem/sourceview.h"

#include "problem/cudahighlighter.h"

#include <QFontDatabase>
#include <QPaintEvent>
#include <QPainter>
#include <QTextBlock>

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
    return fontMetrics().horizontalAdvance(QLatin1Char('9')) * (digits + 2);
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

void SourceView::markCurrentLine() {
    QTextEdit::ExtraSelection line;
    QColor colour = palette().color(QPalette::Highlight);
    colour.setAlphaF(0.12f);
    line.format.setBackground(colour);
    line.format.setProperty(QTextFormat::FullWidthSelection, true);
    line.cursor = textCursor();
    line.cursor.clearSelection();
    setExtraSelections({line});
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
            painter.drawText(QRectF(0, top, m_gutter->width() - padding, fontMetrics().height()),
                             Qt::AlignRight | Qt::AlignVCenter, QString::number(number + 1));
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
