// The manual as the workbench shows it (Help > Manual, F1): every page of resources/docs is in
// the program's resources and loads as Markdown with a title; every link between pages leads to
// a page of the manual, and a link to a heading to a heading of that page (GitHub's anchors);
// every image a page shows is in the resources; the viewer follows links, headings and history
// inside itself; the menu action, in a bare window and in the workbench's Help menu, opens it.
// With TILESCOPE_SCREENSHOT_DIR set, it saves the viewer there (manual.png).

#include "common/manualview.h"
#include "mainwindow.h"

#include <QAction>
#include <QDirIterator>
#include <QFile>
#include <QMainWindow>
#include <QMenuBar>
#include <QScrollBar>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextDocument>
#include <QTextFragment>
#include <QTreeWidget>

using namespace tilescope::views;

namespace {

const QString kDocs = QStringLiteral(TILESCOPE_SOURCE_DIR "/resources/docs");

QString readResource(const QUrl& url) {
    QFile file(QLatin1Char(':') + url.path());
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll());
}

// The links and images of a page as Qt's Markdown reader sees them.
struct PageLinks {
    QStringList links;
    QStringList images;
};

PageLinks linksOf(const QTextDocument& document) {
    PageLinks found;
    for (QTextBlock block = document.begin(); block.isValid(); block = block.next()) {
        for (auto it = block.begin(); !it.atEnd(); ++it) {
            const QTextCharFormat format = it.fragment().charFormat();
            if (format.isImageFormat())
                found.images << format.toImageFormat().name();
            else if (format.isAnchor() && !format.anchorHref().isEmpty() && !found.links.contains(format.anchorHref()))
                found.links << format.anchorHref();
        }
    }
    return found;
}

void saveShot(QWidget& widget, const QString& name) {
    if (const QByteArray dir = qgetenv("TILESCOPE_SCREENSHOT_DIR"); !dir.isEmpty())
        widget.grab().save(QString::fromLocal8Bit(dir) + QLatin1Char('/') + name);
}

} // namespace

class TestManual : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void everySourcePageIsInTheResources();
    void everyPageLoads();
    void everyLinkResolves();
    void headingAnchorsAreGitHubs();
    void viewerFollowsLinks();
    void viewerShowsImages();
    void menuActionOpensTheViewer();
    void workbenchHelpMenuHasTheManual();
};

void TestManual::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY2(!ManualView::pages().isEmpty(), "no manual in the resources (:/docs)");
}

void TestManual::everySourcePageIsInTheResources() {
    QStringList missing;
    int count = 0;
    for (QDirIterator it(kDocs, {QStringLiteral("*.md")}, QDir::Files, QDirIterator::Subdirectories); it.hasNext();) {
        const QString relative = it.next().mid(kDocs.size());
        ++count;
        if (!ManualView::pages().contains(QUrl(QStringLiteral("qrc:/docs") + relative)))
            missing << QStringLiteral("resources/docs") + relative;
    }
    QVERIFY(count > 0);
    QVERIFY2(missing.isEmpty(),
             qPrintable(QStringLiteral("not in resources/resources.qrc: ") + missing.join(QLatin1String(", "))));
    QCOMPARE(ManualView::pages().size(), count);
    QCOMPARE(ManualView::pages().first(), ManualView::indexUrl());
}

void TestManual::everyPageLoads() {
    for (const QUrl& page : ManualView::pages()) {
        const QString text = readResource(page);
        QVERIFY2(text.startsWith(QLatin1String("# ")),
                 qPrintable(page.toString() + QStringLiteral(": does not begin with a level-1 heading")));
        QTextDocument document;
        document.setMarkdown(text);
        QVERIFY2(document.blockCount() > 3, qPrintable(page.toString()));
        QCOMPARE(document.begin().blockFormat().headingLevel(), 1);
        QVERIFY2(!ManualView::pageTitle(page).isEmpty(), qPrintable(page.toString()));
    }
}

void TestManual::everyLinkResolves() {
    QStringList broken;
    int pageLinks = 0;
    for (const QUrl& page : ManualView::pages()) {
        QTextDocument document;
        document.setMarkdown(readResource(page));
        const PageLinks found = linksOf(document);
        for (const QString& link : found.links) {
            const QUrl url(link);
            if (url.scheme() == QLatin1String("https") || url.scheme() == QLatin1String("http") ||
                url.scheme() == QLatin1String("mailto"))
                continue;
            const QUrl target = ManualView::resolvePage(page, link);
            if (!target.isValid()) {
                broken << page.path() + QStringLiteral(": ") + link + QStringLiteral(" (no page of the manual)");
                continue;
            }
            ++pageLinks;
            if (!target.hasFragment())
                continue;
            QUrl targetPage = target;
            targetPage.setFragment(QString());
            QTextDocument targetDocument;
            targetDocument.setMarkdown(readResource(targetPage));
            if (!ManualView::headingAnchors(targetDocument).contains(target.fragment()))
                broken << page.path() + QStringLiteral(": ") + link + QStringLiteral(" (no such heading)");
        }
        for (const QString& image : found.images) {
            const QUrl resolved = page.resolved(QUrl(image));
            if (resolved.scheme() != QLatin1String("qrc") || !QFile::exists(QLatin1Char(':') + resolved.path()))
                broken << page.path() + QStringLiteral(": image ") + image;
        }
    }
    QVERIFY2(broken.isEmpty(),
             qPrintable(QStringLiteral("links that lead nowhere:\n") + broken.join(QLatin1Char('\n'))));
    QVERIFY2(pageLinks > 50, qPrintable(QString::number(pageLinks)));
    // Every page is reachable from the index through its links (ManualView::pages orders by them).
    QStringList unreachable;
    QList<QUrl> reached{ManualView::indexUrl()};
    for (int i = 0; i < reached.size(); ++i) {
        QTextDocument document;
        document.setMarkdown(readResource(reached[i]));
        for (const QString& link : linksOf(document).links)
            if (QUrl target = ManualView::resolvePage(reached[i], link); target.isValid()) {
                target.setFragment(QString());
                if (!reached.contains(target))
                    reached << target;
            }
    }
    for (const QUrl& page : ManualView::pages())
        if (!reached.contains(page))
            unreachable << page.path();
    QVERIFY2(unreachable.isEmpty(), qPrintable(QStringLiteral("not linked from the index, even through other pages: ") +
                                               unreachable.join(QLatin1String(", "))));
}

void TestManual::headingAnchorsAreGitHubs() {
    QCOMPARE(ManualView::headingAnchor(QStringLiteral("Reads and writes past a buffer's end")),
             QStringLiteral("reads-and-writes-past-a-buffers-end"));
    QCOMPARE(ManualView::headingAnchor(QStringLiteral("Tensor cores: bf16 and fp16 GEMM, the decode GEMV, softmax")),
             QStringLiteral("tensor-cores-bf16-and-fp16-gemm-the-decode-gemv-softmax"));
    QCOMPARE(ManualView::headingAnchor(QStringLiteral("3. A tuning session")), QStringLiteral("3-a-tuning-session"));
    QTextDocument document;
    document.setMarkdown(QStringLiteral("# Title\n\n## Example\n\ntext\n\n## Example\n"));
    QCOMPARE(ManualView::headingAnchors(document),
             QStringList({QStringLiteral("title"), QStringLiteral("example"), QStringLiteral("example-1")}));
}

void TestManual::viewerFollowsLinks() {
    ManualView view;
    view.resize(1100, 780);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QCOMPARE(view.currentUrl(), ManualView::indexUrl());
    QVERIFY(view.browser()->toPlainText().contains(QLatin1String("The Tilescope manual")));
    auto* list = view.findChild<QTreeWidget*>();
    QVERIFY(list);
    QVERIFY(list->topLevelItemCount() >= 5);

    // A relative link, as a click delivers it, to another page and a heading on it.
    QSignalSpy shown(&view, &ManualView::pageShown);
    emit view.browser()->anchorClicked(QUrl(QStringLiteral("cli/tune.md#the-final-round")));
    QCOMPARE(view.currentUrl(), QUrl(QStringLiteral("qrc:/docs/cli/tune.md#the-final-round")));
    QVERIFY(view.browser()->toPlainText().startsWith(QLatin1String("tilescope-cli tune")));
    QCOMPARE(shown.count(), 1);
    QVERIFY2(view.browser()->verticalScrollBar()->value() > 0, "the heading was not scrolled to");
    QCOMPARE(view.browser()->textCursor().block().text(), QStringLiteral("The final round"));
    QCOMPARE(list->currentItem()->data(0, Qt::UserRole).toUrl(), QUrl(QStringLiteral("qrc:/docs/cli/tune.md")));
    saveShot(view, QStringLiteral("manual-tune.png"));

    // From there, a link up a folder; then Back returns.
    emit view.browser()->anchorClicked(QUrl(QStringLiteral("../formats/t1.md#expressions")));
    QCOMPARE(view.currentUrl().path(), QStringLiteral("/docs/formats/t1.md"));
    QCOMPARE(view.browser()->textCursor().block().text(), QStringLiteral("Expressions"));
    view.browser()->backward();
    QCOMPARE(view.currentUrl().path(), QStringLiteral("/docs/cli/tune.md"));

    // A heading on the same page, and a link to nowhere, which changes nothing.
    emit view.browser()->anchorClicked(QUrl(QStringLiteral("#shape-sets")));
    QCOMPARE(view.browser()->textCursor().block().text(), QStringLiteral("Shape sets"));
    QVERIFY(!view.open(QUrl(QStringLiteral("qrc:/docs/no-such-page.md"))));
    QCOMPARE(view.currentUrl().path(), QStringLiteral("/docs/cli/tune.md"));

    // The page list opens what it lists.
    QTreeWidgetItem* workbench = nullptr;
    for (QTreeWidgetItemIterator it(list); *it; ++it)
        if ((*it)->data(0, Qt::UserRole).toUrl() == QUrl(QStringLiteral("qrc:/docs/guide/workbench.md")))
            workbench = *it;
    QVERIFY(workbench);
    list->setCurrentItem(workbench);
    QCOMPARE(view.currentUrl().path(), QStringLiteral("/docs/guide/workbench.md"));
    QCOMPARE(view.windowTitle(), QStringLiteral("The workbench — Tilescope Manual"));
}

void TestManual::viewerShowsImages() {
    ManualView view;
    view.resize(1100, 780);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(view.open(QUrl(QStringLiteral("qrc:/docs/guide/workbench.md"))));
    const PageLinks found = linksOf(*view.browser()->document());
    QVERIFY(found.images.size() >= 4);
    for (const QString& image : found.images) {
        const QVariant loaded = view.browser()->loadResource(QTextDocument::ImageResource, QUrl(image));
        QVERIFY2(loaded.canConvert<QImage>() && !loaded.value<QImage>().isNull(), qPrintable(image));
        QVERIFY2(loaded.value<QImage>().width() <= view.browser()->viewport()->width(), qPrintable(image));
    }
    saveShot(view, QStringLiteral("manual.png"));
}

void TestManual::menuActionOpensTheViewer() {
    QMainWindow window;
    QMenu* help = window.menuBar()->addMenu(QStringLiteral("&Help"));
    QAction* action = ManualView::addMenuAction(help, &window);
    QCOMPARE(action->shortcut(), QKeySequence(Qt::Key_F1));
    QCOMPARE(ManualView::of(&window), nullptr);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    action->trigger();
    ManualView* view = ManualView::of(&window);
    QVERIFY(view);
    QVERIFY(view->isVisible());
    QCOMPARE(view->currentUrl(), ManualView::indexUrl());
    // Again: the same viewer, raised, not a second one.
    view->open(QUrl(QStringLiteral("qrc:/docs/architecture.md")));
    action->trigger();
    QCOMPARE(window.findChildren<ManualView*>().size(), 1);
    QCOMPARE(view->currentUrl().path(), QStringLiteral("/docs/architecture.md"));
}

void TestManual::workbenchHelpMenuHasTheManual() {
    MainWindow::Options options;
    options.persistent = false;
    MainWindow window(options);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QAction* manual = window.findChild<QAction*>(QStringLiteral("manualAction"));
    QVERIFY2(manual, "the workbench has no Help > Manual");
    QCOMPARE(manual->shortcut(), QKeySequence(Qt::Key_F1));
    bool inHelp = false;
    for (QAction* menu : window.findChildren<QMenuBar*>().value(0) ? window.findChildren<QMenuBar*>().first()->actions()
                                                                   : QList<QAction*>())
        if (menu->menu() && menu->menu()->actions().contains(manual))
            inHelp = menu->text().remove(QLatin1Char('&')) == QLatin1String("Help");
    QVERIFY2(inHelp, "Manual is not in the Help menu");
    manual->trigger();
    ManualView* view = ManualView::of(&window);
    QVERIFY(view);
    QVERIFY(view->isVisible());
    QCOMPARE(view->currentUrl(), ManualView::indexUrl());
}

QTEST_MAIN(TestManual)
#include "tst_manual.moc"
