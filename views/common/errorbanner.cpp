#include "common/errorbanner.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

namespace tilescope::views {

namespace {

QColor blend(const QColor& a, const QColor& b, qreal t) {
    return QColor::fromRgbF(static_cast<float>(a.redF() * (1 - t) + b.redF() * t),
                            static_cast<float>(a.greenF() * (1 - t) + b.greenF() * t),
                            static_cast<float>(a.blueF() * (1 - t) + b.blueF() * t));
}

} // namespace

ErrorBanner::ErrorBanner(QWidget* parent)
    : QFrame(parent)
    , m_icon(new QLabel(this))
    , m_title(new QLabel(this))
    , m_details(new QLabel(this))
    , m_close(new QToolButton(this)) {
    setObjectName(QStringLiteral("errorBanner"));
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);

    m_title->setWordWrap(true);
    m_title->setTextFormat(Qt::PlainText);
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_details->setWordWrap(true);
    m_details->setTextFormat(Qt::PlainText);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_close->setAutoRaise(true);
    m_close->setIcon(style()->standardIcon(QStyle::SP_TitleBarCloseButton));
    m_close->setToolTip(tr("Dismiss"));
    connect(m_close, &QToolButton::clicked, this, [this]() {
        hide();
        emit closed();
    });

    auto* text = new QVBoxLayout;
    text->setSpacing(2);
    text->addWidget(m_title);
    text->addWidget(m_details);
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(m_icon, 0, Qt::AlignTop);
    layout->addLayout(text, 1);
    layout->addWidget(m_close, 0, Qt::AlignTop);
    hide();
}

void ErrorBanner::showMessage(Level level, const QString& title, const QString& details) {
    m_level = level;
    const int size = style()->pixelMetric(QStyle::PM_SmallIconSize, nullptr, this);
    const auto icon = level == Level::Error ? QStyle::SP_MessageBoxCritical : QStyle::SP_MessageBoxWarning;
    m_icon->setPixmap(style()->standardIcon(icon).pixmap(size, size));
    m_title->setText(title);
    m_details->setText(details);
    m_details->setVisible(!details.isEmpty());
    applyColours();
    show();
}

QString ErrorBanner::title() const {
    return m_title->text();
}

QString ErrorBanner::details() const {
    return m_details->text();
}

void ErrorBanner::changeEvent(QEvent* event) {
    QFrame::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && !m_applyingColours)
        applyColours();
}

void ErrorBanner::applyColours() {
    // A tint of red or amber over the window colour reads on light and dark palettes alike.
    const QColor base =
        parentWidget() ? parentWidget()->palette().color(QPalette::Window) : palette().color(QPalette::Window);
    const QColor accent = m_level == Level::Error ? QColor(0xda, 0x44, 0x53) : QColor(0xf6, 0x74, 0x00);
    m_applyingColours = true; // setPalette() sends a PaletteChange of its own
    QPalette pal = palette();
    pal.setColor(QPalette::Window, blend(base, accent, 0.18));
    pal.setColor(QPalette::Light, accent);
    pal.setColor(QPalette::Dark, accent);
    pal.setColor(QPalette::Mid, accent);
    setPalette(pal);
    m_applyingColours = false;
}

} // namespace tilescope::views
