#pragma once

// A one-line editor for an expression: its text coloured as the parser reads it (parameters,
// other names, builtins, keywords, numbers, strings; what cannot be read in red), and the place an
// error points at underlined with a red wavy line from the error's column to the end of the word.

#include <QLineEdit>
#include <QList>
#include <QSet>
#include <QTextLayout>

namespace tilescope::views {

class ExpressionEdit : public QLineEdit {
    Q_OBJECT
    Q_PROPERTY(int errorColumn READ errorColumn WRITE setErrorColumn)
public:
    explicit ExpressionEdit(QWidget* parent = nullptr);

    /// The names coloured as parameters (others, such as a shape's dimensions, as names).
    void setParameterNames(const QStringList& names);
    /// The colour the text has at `position` (0-based); the text colour where it has none of its own.
    QColor colourAt(int position) const;

    /// 1-based column of the error in the text; 0: none.
    int errorColumn() const { return m_errorColumn; }
    void setErrorColumn(int column);
    /// The column an error message names ("... column 15: ..." or "... at column 15"); 0: none.
    static int columnIn(const QString& message);

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    void colour();

    int m_errorColumn = 0;
    QSet<QString> m_parameters;
    QList<QTextLayout::FormatRange> m_formats; ///< as applied, positions in the text
};

} // namespace tilescope::views
