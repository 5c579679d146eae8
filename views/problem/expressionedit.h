#pragma once

// A one-line editor for an expression that underlines the place an error points at: a red wavy
// line from the error's column to the end of the word there.

#include <QLineEdit>

namespace tilescope::views {

class ExpressionEdit : public QLineEdit {
    Q_OBJECT
    Q_PROPERTY(int errorColumn READ errorColumn WRITE setErrorColumn)
public:
    using QLineEdit::QLineEdit;

    /// 1-based column of the error in the text; 0: none.
    int errorColumn() const { return m_errorColumn; }
    void setErrorColumn(int column);
    /// The column an error message names ("... column 15: ..." or "... at column 15"); 0: none.
    static int columnIn(const QString& message);

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    int m_errorColumn = 0;
};

} // namespace tilescope::views
