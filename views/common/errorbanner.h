#pragma once

// An inline message bar (like KDE's KMessageWidget): an icon, a title, rich details and a close
// button, tinted for errors or warnings from the current palette. Hidden until show...() is called.

#include <QFrame>

class QLabel;
class QToolButton;

namespace tilescope::views {

class ErrorBanner : public QFrame {
    Q_OBJECT
public:
    enum class Level { Error, Warning };

    explicit ErrorBanner(QWidget* parent = nullptr);

    /// Shows the banner; `details` is plain text (shown in a monospace-friendly way, selectable).
    void showMessage(Level level, const QString& title, const QString& details = {});
    QString title() const;
    QString details() const;

signals:
    void closed();

protected:
    void changeEvent(QEvent* event) override;

private:
    void applyColours();

    Level m_level = Level::Error;
    bool m_applyingColours = false;
    QLabel* m_icon = nullptr;
    QLabel* m_title = nullptr;
    QLabel* m_details = nullptr;
    QToolButton* m_close = nullptr;
};

} // namespace tilescope::views
