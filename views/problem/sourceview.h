#pragma once

// A read-only source viewer: monospace text with line numbers in a gutter, C++/CUDA highlighting
// and the current line marked. Follows palette changes (light or dark).

#include <QPlainTextEdit>

namespace tilescope::views {

class CudaHighlighter;

class SourceView : public QPlainTextEdit {
    Q_OBJECT
public:
    explicit SourceView(QWidget* parent = nullptr);
    ~SourceView() override;

    /// Shows `text`; `highlight` turns C++/CUDA highlighting on.
    void setSource(const QString& text, bool highlight = true);
    /// Scrolls to line `line` (1-based) and selects it.
    void showLine(int line);
    /// Width the line-number gutter needs for the current line count.
    int gutterWidth() const;

protected:
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    friend class LineNumberGutter;
    void paintGutter(QPaintEvent* event);
    void updateGutterWidth();
    void updateGutter(const QRect& rect, int dy);
    void markCurrentLine();
    void followPalette();

    QWidget* m_gutter = nullptr;
    CudaHighlighter* m_highlighter = nullptr;
};

} // namespace tilescope::views
