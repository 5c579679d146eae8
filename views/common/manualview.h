#pragma once

// The manual (resources/docs/, embedded under :/docs) in a window of its own: the pages listed
// beside a Markdown browser (Qt's GitHub dialect). Links between pages are followed inside the
// viewer, with Back and Forward; a link to a heading (`tune.md#the-final-round`, GitHub's anchors)
// scrolls to it; images are read from the resources (`../screenshots/x.png` from a page resolves
// to :/screenshots/x.png, as it does in the repository); links that leave the manual (http,
// https, mailto) open in the desktop's browser.

#include <QList>
#include <QUrl>
#include <QWidget>

class QAction;
class QMenu;
class QTextBrowser;
class QTextDocument;
class QTreeWidget;
class QTreeWidgetItem;

namespace tilescope::views {

class ManualView : public QWidget {
    Q_OBJECT
public:
    /// A top-level window; `parent` (the main window) owns it and closes it with itself.
    explicit ManualView(QWidget* parent = nullptr);

    /// The index page: qrc:/docs/README.md.
    static QUrl indexUrl();
    /// Every page of the manual in the resources (qrc:/docs/...md), the index first, then in the
    /// order the index links them, then any page it does not link.
    static QList<QUrl> pages();
    /// A page's title: the text of its first level-1 heading, else its file name.
    static QString pageTitle(const QUrl& page);
    /// The anchor GitHub gives a heading: lower case, punctuation dropped, spaces made hyphens.
    static QString headingAnchor(const QString& heading);
    /// The anchors of a document's headings, in order, repeats numbered as GitHub does ("x", "x-1").
    static QStringList headingAnchors(const QTextDocument& document);
    /// Where `link` leads from `page`: a page of the manual (with the fragment kept), or an empty
    /// URL when it leaves the manual or names no page in the resources.
    static QUrl resolvePage(const QUrl& page, const QString& link);

    /// Shows `url`, a page of the manual with or without a #heading. False (nothing changes)
    /// when it is not one.
    bool open(const QUrl& url);
    /// The page shown, with the heading it was opened at.
    QUrl currentUrl() const;
    QTextBrowser* browser() const { return m_browser; }

    /// Adds "Manual" (F1) to `menu`: it shows the one viewer of `window` (made on first use) and
    /// raises it. The action's object name is "manualAction".
    static QAction* addMenuAction(QMenu* menu, QWidget* window);
    /// The viewer of `window`, or nullptr until the action has opened one.
    static ManualView* of(QWidget* window);

signals:
    /// A page was shown (by a link, the list, Back or Forward).
    void pageShown(const QUrl& url);

private:
    void followLink(const QUrl& link);
    void pageChanged(const QUrl& url);
    void scrollToHeading(const QString& anchor);
    void shadeCodeBlocks();
    void fillPageList();

    QTreeWidget* m_pages = nullptr;
    QTextBrowser* m_browser = nullptr;
};

} // namespace tilescope::views
