#include "common/manualview.h"

#include "common/examples.h"

#include <QAbstractTextDocumentLayout>
#include <QAction>
#include <QDesktopServices>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHash>
#include <QHeaderView>
#include <QImage>
#include <QMenu>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSet>
#include <QSplitter>
#include <QStyle>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextCursor>
#include <QTextDocument>
#include <QToolButton>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>
#include <QVBoxLayout>

#include <algorithm>

namespace tilescope::views {

namespace {

const QString kRoot = QStringLiteral(":/docs");

QString resourcePath(const QUrl& url) {
    return QLatin1Char(':') + url.path();
}

QUrl withoutFragment(QUrl url) {
    url.setFragment(QString());
    return url;
}

QString readPage(const QUrl& page) {
    QFile file(resourcePath(page));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll());
}

// The targets of the Markdown links of `text`, in order ("[title](target)"; images too).
QStringList linkTargets(const QString& text) {
    static const QRegularExpression link(QStringLiteral(R"(\]\(([^)\s]+)\))"));
    QStringList targets;
    for (auto it = link.globalMatch(text); it.hasNext();)
        targets << it.next().captured(1);
    return targets;
}

// The browser of the manual: images come from the resources (the default), scaled down to the
// width of the view so that a screenshot does not make the page scroll sideways.
class ManualBrowser : public QTextBrowser {
public:
    using QTextBrowser::QTextBrowser;

    QVariant loadResource(int type, const QUrl& name) override {
        QVariant loaded = QTextBrowser::loadResource(type, name);
        if (type != QTextDocument::ImageResource || loaded.typeId() != QMetaType::QByteArray)
            return loaded;
        QImage image;
        if (!image.loadFromData(loaded.toByteArray()))
            return loaded;
        const int width = std::max(320, viewport()->width() - 2 * static_cast<int>(document()->documentMargin()) - 8);
        if (image.width() > width)
            image = image.scaledToWidth(width, Qt::SmoothTransformation);
        return image;
    }
};

} // namespace

ManualView::ManualView(QWidget* parent)
    : QWidget(parent, Qt::Window) {
    initResources();
    setObjectName(QStringLiteral("manualView"));
    setWindowTitle(tr("Tilescope Manual"));
    resize(1100, 780);

    auto* back = new QToolButton(this);
    back->setIcon(style()->standardIcon(QStyle::SP_ArrowBack));
    back->setToolTip(tr("Back (Alt+Left)"));
    back->setShortcut(QKeySequence::Back);
    auto* forward = new QToolButton(this);
    forward->setIcon(style()->standardIcon(QStyle::SP_ArrowForward));
    forward->setToolTip(tr("Forward (Alt+Right)"));
    forward->setShortcut(QKeySequence::Forward);
    auto* home = new QToolButton(this);
    home->setText(tr("Contents"));
    home->setToolButtonStyle(Qt::ToolButtonTextOnly);
    home->setToolTip(tr("The manual's index"));

    m_pages = new QTreeWidget(this);
    m_pages->setHeaderHidden(true);
    m_pages->setColumnCount(1);
    m_pages->setRootIsDecorated(true);
    m_pages->setMinimumWidth(200);

    m_browser = new ManualBrowser(this);
    m_browser->setOpenLinks(false); // links are followed here: relative ones, headings, outside
    m_browser->setOpenExternalLinks(false);

    auto* splitter = new QSplitter(this);
    splitter->addWidget(m_pages);
    splitter->addWidget(m_browser);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({240, 860});

    auto* bar = new QHBoxLayout;
    bar->addWidget(back);
    bar->addWidget(forward);
    bar->addWidget(home);
    bar->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(splitter, 1);

    connect(back, &QToolButton::clicked, m_browser, &QTextBrowser::backward);
    connect(forward, &QToolButton::clicked, m_browser, &QTextBrowser::forward);
    connect(m_browser, &QTextBrowser::backwardAvailable, back, &QToolButton::setEnabled);
    connect(m_browser, &QTextBrowser::forwardAvailable, forward, &QToolButton::setEnabled);
    connect(home, &QToolButton::clicked, this, [this]() { open(indexUrl()); });
    connect(m_browser, &QTextBrowser::anchorClicked, this, &ManualView::followLink);
    connect(m_browser, &QTextBrowser::sourceChanged, this, &ManualView::pageChanged);
    connect(m_pages, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
        if (const QUrl url = item->data(0, Qt::UserRole).toUrl(); url.isValid())
            open(url);
    });
    connect(m_pages, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
        if (!item)
            return;
        const QUrl url = item->data(0, Qt::UserRole).toUrl();
        if (url.isValid() && url != withoutFragment(m_browser->source()))
            open(url);
    });
    back->setEnabled(false);
    forward->setEnabled(false);

    fillPageList();
    open(indexUrl());
}

QUrl ManualView::indexUrl() {
    return QUrl(QStringLiteral("qrc:/docs/README.md"));
}

QList<QUrl> ManualView::pages() {
    initResources();
    QSet<QUrl> all;
    for (QDirIterator it(kRoot, {QStringLiteral("*.md")}, QDir::Files, QDirIterator::Subdirectories); it.hasNext();)
        all.insert(QUrl(QStringLiteral("qrc") + it.next()));
    QList<QUrl> ordered;
    QSet<QUrl> seen;
    const auto add = [&](const QUrl& url) {
        if (all.contains(url) && !seen.contains(url)) {
            seen.insert(url);
            ordered << url;
        }
    };
    // The index, the pages it links in its order, then what those link (a folder's own index
    // lists its pages), then the rest by name.
    add(indexUrl());
    for (int i = 0; i < ordered.size(); ++i) {
        const QUrl page = ordered[i];
        for (const QString& target : linkTargets(readPage(page)))
            if (const QUrl url = resolvePage(page, target); url.isValid())
                add(withoutFragment(url));
    }
    QList<QUrl> rest(all.begin(), all.end());
    std::sort(rest.begin(), rest.end(), [](const QUrl& a, const QUrl& b) { return a.path() < b.path(); });
    for (const QUrl& url : rest)
        add(url);
    return ordered;
}

QString ManualView::pageTitle(const QUrl& page) {
    const QString text = readPage(page);
    static const QRegularExpression heading(QStringLiteral(R"(^# +(.+?)\s*$)"), QRegularExpression::MultilineOption);
    if (const auto match = heading.match(text); match.hasMatch())
        return match.captured(1).remove(QLatin1Char('`'));
    return QFileInfo(page.path()).fileName();
}

QString ManualView::headingAnchor(const QString& heading) {
    QString anchor;
    for (const QChar c : heading.trimmed().toLower()) {
        if (c.isLetterOrNumber() || c == QLatin1Char('-') || c == QLatin1Char('_'))
            anchor += c;
        else if (c == QLatin1Char(' '))
            anchor += QLatin1Char('-');
    }
    return anchor;
}

QStringList ManualView::headingAnchors(const QTextDocument& document) {
    QStringList anchors;
    QHash<QString, int> uses;
    for (QTextBlock block = document.begin(); block.isValid(); block = block.next()) {
        if (block.blockFormat().headingLevel() <= 0)
            continue;
        const QString anchor = headingAnchor(block.text());
        const int n = uses[anchor]++;
        anchors << (n == 0 ? anchor : anchor + QLatin1Char('-') + QString::number(n));
    }
    return anchors;
}

QUrl ManualView::resolvePage(const QUrl& page, const QString& link) {
    const QUrl target = QUrl(link);
    if (!target.isValid() || (!target.scheme().isEmpty() && target.scheme() != QLatin1String("qrc")))
        return {};
    const QUrl resolved = page.resolved(target);
    if (resolved.scheme() != QLatin1String("qrc") || !resolved.path().endsWith(QLatin1String(".md")) ||
        !QFile::exists(resourcePath(resolved)))
        return {};
    return resolved;
}

bool ManualView::open(const QUrl& url) {
    if (url.scheme() != QLatin1String("qrc") || !url.path().startsWith(QLatin1String("/docs/")) ||
        !QFile::exists(resourcePath(url)))
        return false;
    if (withoutFragment(url) == withoutFragment(m_browser->source())) {
        // The same page: no reload, only the heading (QTextBrowser knows no GitHub anchors).
        if (url.hasFragment())
            scrollToHeading(url.fragment());
        else
            m_browser->verticalScrollBar()->setValue(0);
        return true;
    }
    m_browser->setSource(url, QTextDocument::MarkdownResource);
    return true;
}

QUrl ManualView::currentUrl() const {
    return m_browser->source();
}

void ManualView::followLink(const QUrl& link) {
    const QUrl target = m_browser->source().resolved(link);
    if (target.scheme() == QLatin1String("qrc")) {
        open(target);
        return;
    }
    if (!target.scheme().isEmpty() && target.scheme() != QLatin1String("file"))
        QDesktopServices::openUrl(target); // a web page or a mail address
}

void ManualView::pageChanged(const QUrl& url) {
    shadeCodeBlocks();
    if (url.hasFragment())
        scrollToHeading(url.fragment());
    const QUrl page = withoutFragment(url);
    setWindowTitle(tr("%1 — Tilescope Manual").arg(pageTitle(page)));
    for (QTreeWidgetItemIterator it(m_pages); *it; ++it) {
        if ((*it)->data(0, Qt::UserRole).toUrl() == page) {
            const QSignalBlocker blocker(m_pages);
            m_pages->setCurrentItem(*it);
            break;
        }
    }
    emit pageShown(url);
}

void ManualView::shadeCodeBlocks() {
    // Qt's Markdown reader marks a fenced block but gives it no background; a code host shades it.
    QTextDocument* document = m_browser->document();
    const QColor shade = palette().color(QPalette::AlternateBase);
    QTextBlockFormat format;
    format.setBackground(shade);
    for (QTextBlock block = document->begin(); block.isValid(); block = block.next()) {
        if (!block.blockFormat().hasProperty(QTextFormat::BlockCodeFence))
            continue;
        QTextCursor cursor(block);
        cursor.mergeBlockFormat(format);
    }
}

void ManualView::scrollToHeading(const QString& anchor) {
    QHash<QString, int> uses;
    for (QTextBlock block = m_browser->document()->begin(); block.isValid(); block = block.next()) {
        if (block.blockFormat().headingLevel() <= 0)
            continue;
        const QString base = headingAnchor(block.text());
        const int n = uses[base]++;
        if ((n == 0 ? base : base + QLatin1Char('-') + QString::number(n)) != anchor)
            continue;
        QTextCursor cursor(block);
        m_browser->setTextCursor(cursor);
        const QRectF rect = m_browser->document()->documentLayout()->blockBoundingRect(block);
        m_browser->verticalScrollBar()->setValue(static_cast<int>(rect.top()));
        return;
    }
}

void ManualView::fillPageList() {
    m_pages->clear();
    QHash<QString, QTreeWidgetItem*> folders;
    for (const QUrl& page : pages()) {
        const QString relative = page.path().mid(QStringLiteral("/docs/").size());
        const int slash = relative.lastIndexOf(QLatin1Char('/'));
        const QString folder = slash < 0 ? QString() : relative.left(slash);
        const bool folderIndex = QFileInfo(relative).fileName() == QLatin1String("README.md");
        QTreeWidgetItem* item = nullptr;
        if (folder.isEmpty()) {
            item = new QTreeWidgetItem(m_pages);
        } else if (folderIndex) {
            // A folder's own index names the folder's entry in the list.
            item = folders.value(folder);
            if (!item)
                item = folders[folder] = new QTreeWidgetItem(m_pages);
        } else {
            QTreeWidgetItem*& parent = folders[folder];
            if (!parent)
                parent = new QTreeWidgetItem(m_pages, {folder});
            item = new QTreeWidgetItem(parent);
        }
        item->setText(0, pageTitle(page));
        item->setData(0, Qt::UserRole, page);
        item->setToolTip(0, relative);
    }
    m_pages->expandAll();
}

QAction* ManualView::addMenuAction(QMenu* menu, QWidget* window) {
    QAction* action = menu->addAction(tr("&Manual"));
    action->setObjectName(QStringLiteral("manualAction"));
    action->setShortcut(QKeySequence(Qt::Key_F1));
    action->setShortcutContext(Qt::ApplicationShortcut);
    action->setStatusTip(tr("The manual: the workbench, tuning, measuring, formats, the command line"));
    QObject::connect(action, &QAction::triggered, window, [window]() {
        ManualView* view = of(window);
        if (!view)
            view = new ManualView(window);
        view->show();
        view->raise();
        view->activateWindow();
    });
    return action;
}

ManualView* ManualView::of(QWidget* window) {
    return window ? window->findChild<ManualView*>(QStringLiteral("manualView"), Qt::FindDirectChildrenOnly) : nullptr;
}

} // namespace tilescope::views
