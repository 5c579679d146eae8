#pragma once

// Syntax highlighting for C++ and CUDA sources: keywords, types, CUDA qualifiers and built-ins,
// preprocessor lines, numbers, strings and comments (including block comments over several
// lines). The colours follow the palette (light or dark) of the document's widget.

#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>

#include <vector>

namespace tilescope::views {

class CudaHighlighter : public QSyntaxHighlighter {
    Q_OBJECT
public:
    explicit CudaHighlighter(QTextDocument* document);

    /// Picks colours for a light or a dark background and highlights again.
    void setDarkBackground(bool dark);

protected:
    void highlightBlock(const QString& text) override;

private:
    struct Rule {
        QRegularExpression pattern;
        QTextCharFormat format;
    };
    void buildRules();

    bool m_dark = false;
    std::vector<Rule> m_rules;
    QTextCharFormat m_preprocessor;
    QTextCharFormat m_comment;
    QRegularExpression m_commentStart;
    QRegularExpression m_commentEnd;
};

} // namespace tilescope::views
