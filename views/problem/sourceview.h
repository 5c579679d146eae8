#pragma once

// A read-only source viewer: monospace text with line numbers in a gutter, C++/CUDA highlighting
// and the current line marked. Follows palette changes (light or dark).

#include <QPlainTextEdit>

class QHelpEvent;

#include <map>

namespace tilescope::views {

class CudaHighlighter;

/// What the gutter shows beside a line: its spill and local-memory instructions, and how another
/// config's compare (the Kernel Source panel's comparison).
struct LineMark {
    int spillStores = 0;
    int spillLoads = 0;
    int localStores = 0;
    int localLoads = 0;
    int otherSpills = -1; ///< the compared config's spill instructions on this line; -1 = no comparison
    QString tooltip;      ///< the line's SASS, as the disassembler prints it

    int spills() const { return spillStores + spillLoads; }
    int local() const { return localStores + localLoads; }
};

class SourceView : public QPlainTextEdit {
    Q_OBJECT
public:
    explicit SourceView(QWidget* parent = nullptr);
    ~SourceView() override;

    /// Shows `text`; `highlight` turns C++/CUDA highlighting on.
    void setSource(const QString& text, bool highlight = true);
    /// Scrolls to line `line` (1-based) and selects it.
    void showLine(int line);
    /// Width the line-number gutter needs for the current line count (and the marks' column).
    int gutterWidth() const;
    /// Marks lines (1-based) in the gutter: spill stores/loads in the marks' column, the line
    /// tinted, the SASS as the gutter's tooltip. Empty: no marks' column.
    void setLineMarks(std::map<int, LineMark> marks);
    const std::map<int, LineMark>& lineMarks() const { return m_marks; }
    /// The gutter's tooltip for line `line` ("" when unmarked).
    QString markTooltip(int line) const;

protected:
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    friend class LineNumberGutter;
    void paintGutter(QPaintEvent* event);
    bool gutterToolTip(QHelpEvent* event);
    int marksWidth() const;
    void updateGutterWidth();
    void updateGutter(const QRect& rect, int dy);
    void markCurrentLine();
    void followPalette();

    QWidget* m_gutter = nullptr;
    CudaHighlighter* m_highlighter = nullptr;
    std::map<int, LineMark> m_marks;
};

} // namespace tilescope::views
