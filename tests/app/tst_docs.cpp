// The manual against the program, so that they cannot drift: every command `tilescope-cli --help`
// lists has a page in resources/docs/cli/, linked from the command line's index, and every option
// of the command's `--help` (its --long and -s forms) appears on that page; every table and
// column of the results database's schema appears on its page (formats/database.md).

#include "store/schema.h"

#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

namespace {

const QString kDocs = QStringLiteral(TILESCOPE_SOURCE_DIR "/resources/docs");

QString runHelp(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(TILESCOPE_CLI), args);
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
        return {};
    }
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return {};
    return QString::fromUtf8(p.readAllStandardOutput());
}

QString readFile(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll());
}

// The commands of `tilescope-cli --help` (CLI11: "Subcommands:", then "  NAME  description").
QStringList commandsOf(const QString& help) {
    QStringList commands;
    bool inList = false;
    static const QRegularExpression entry(QStringLiteral(R"(^  ([a-z][a-z0-9-]*)\s)"));
    for (const QString& line : help.split(QLatin1Char('\n'))) {
        if (line.startsWith(QLatin1String("Subcommands:"))) {
            inList = true;
            continue;
        }
        if (inList && !line.isEmpty() && !line.startsWith(QLatin1Char(' ')))
            inList = false;
        if (const auto match = entry.match(line); inList && match.hasMatch())
            commands << match.captured(1);
    }
    return commands;
}

// Every option name of a command's --help: each line of an option group begins with two spaces
// and the option's names ("  -j,--jobs UINT ...", "  --count  ..."); descriptions that wrap are
// indented further.
QStringList optionsOf(const QString& help) {
    QStringList options;
    static const QRegularExpression entry(QStringLiteral(R"(^  (-[^\s]+))"));
    for (const QString& line : help.split(QLatin1Char('\n'))) {
        if (const auto match = entry.match(line); match.hasMatch())
            for (const QString& name : match.captured(1).split(QLatin1Char(','), Qt::SkipEmptyParts))
                if (!options.contains(name))
                    options << name;
    }
    return options;
}

// Whether `page` names `word` as a whole word (not as part of a longer option or name).
bool mentions(const QString& page, const QString& word) {
    const QRegularExpression whole(QStringLiteral("(?<![\\w-])") + QRegularExpression::escape(word) +
                                   QStringLiteral("(?![\\w-])"));
    return whole.match(page).hasMatch();
}

QStringList missingFrom(const QString& page, const QStringList& words) {
    QStringList missing;
    for (const QString& word : words)
        if (!mentions(page, word))
            missing << word;
    return missing;
}

// The tables, views and columns the migrations create, as "table" and "table.column".
QStringList schemaNames() {
    QStringList names;
    static const QRegularExpression create(QStringLiteral(R"(CREATE (?:TABLE|VIEW) (\w+))"));
    static const QRegularExpression table(QStringLiteral(R"(CREATE TABLE (\w+) \(([^;]*)\);)"));
    static const QRegularExpression added(QStringLiteral(R"(ALTER TABLE (\w+) ADD COLUMN (\w+))"));
    static const QRegularExpression column(QStringLiteral(R"(^\s+([a-z_]+)\s+[A-Z])"),
                                           QRegularExpression::MultilineOption);
    for (const auto& migration : tilescope::store::migrations()) {
        const QString sql = QString::fromUtf8(migration.sql);
        for (auto it = create.globalMatch(sql); it.hasNext();)
            names << it.next().captured(1);
        for (auto it = table.globalMatch(sql); it.hasNext();) {
            const auto match = it.next();
            for (auto c = column.globalMatch(match.captured(2)); c.hasNext();)
                names << match.captured(1) + QLatin1Char('.') + c.next().captured(1);
        }
        for (auto it = added.globalMatch(sql); it.hasNext();) {
            const auto match = it.next();
            names << match.captured(1) + QLatin1Char('.') + match.captured(2);
        }
    }
    // A table made again under a new name (results_v3) is renamed back: it documents as its name.
    QStringList kept;
    for (const QString& name : names) {
        QString plain = name;
        plain.replace(QRegularExpression(QStringLiteral(R"(_v\d+\b)")), QString());
        if (!kept.contains(plain))
            kept << plain;
    }
    return kept;
}

} // namespace

class TestDocs : public QObject {
    Q_OBJECT

private slots:
    void helpParsing();
    void everyCommandHasAPage();
    void everyOptionIsOnItsPage_data();
    void everyOptionIsOnItsPage();
    void everyColumnIsDocumented();
};

// The parsing on help text of the form CLI11 prints, and a page that lacks an option fails.
void TestDocs::helpParsing() {
    const QString top = QStringLiteral("Usage: tilescope-cli [OPTIONS] SUBCOMMAND\n\n"
                                       "Options:\n  -h,--help                   Print this help message and exit\n\n"
                                       "Subcommands:\n  space                       Show a space\n"
                                       "  tune                        Tune a problem\n\nRun 'tilescope-cli COMMAND'\n");
    QCOMPARE(commandsOf(top), QStringList({QStringLiteral("space"), QStringLiteral("tune")}));

    const QString help = QStringLiteral("Positionals:\n  problem TEXT REQUIRED       A problem\n\nOptions:\n"
                                        "  -h,--help                   Print this help message and exit\n"
                                        "  --all Excludes: --sample    Every config\n"
                                        "  --sample UINT:INT >= 1 Excludes: --all\n"
                                        "                              N configs; --not-an-option here\n"
                                        "  -j,--jobs UINT:INT in [1, 1024]\n\nCUDA backend:\n"
                                        "  --no-cache                  No cache\n");
    QCOMPARE(optionsOf(help), QStringList({QStringLiteral("-h"), QStringLiteral("--help"), QStringLiteral("--all"),
                                           QStringLiteral("--sample"), QStringLiteral("-j"), QStringLiteral("--jobs"),
                                           QStringLiteral("--no-cache")}));

    const QString page = QStringLiteral("- `-h`, `--help`: help.\n- `--all`: all.\n- `--sample N`.\n- `-j`, `--jobs`.\n"
                                        "A `--no-cache-dir` that is another option, and --cache.\n");
    QCOMPARE(missingFrom(page, optionsOf(help)), QStringList({QStringLiteral("--no-cache")}));
}

void TestDocs::everyCommandHasAPage() {
    const QString help = runHelp({QStringLiteral("--help")});
    QVERIFY2(!help.isEmpty(), "tilescope-cli --help failed");
    const QStringList commands = commandsOf(help);
    QVERIFY2(commands.size() >= 10, qPrintable(QStringLiteral("too few commands parsed from:\n") + help));
    const QString index = readFile(kDocs + QStringLiteral("/cli/README.md"));
    QVERIFY2(!index.isEmpty(), "resources/docs/cli/README.md is missing");
    QStringList unlinked;
    for (const QString& command : commands) {
        QVERIFY2(QFile::exists(kDocs + QStringLiteral("/cli/") + command + QStringLiteral(".md")),
                 qPrintable(QStringLiteral("no page resources/docs/cli/%1.md for the command %1").arg(command)));
        if (!index.contains(QStringLiteral("](%1.md)").arg(command)))
            unlinked << command;
    }
    QVERIFY2(unlinked.isEmpty(), qPrintable(QStringLiteral("resources/docs/cli/README.md does not link: ") +
                                            unlinked.join(QLatin1String(", "))));
}

void TestDocs::everyOptionIsOnItsPage_data() {
    QTest::addColumn<QString>("command");
    for (const QString& command : commandsOf(runHelp({QStringLiteral("--help")})))
        QTest::newRow(qPrintable(command)) << command;
}

void TestDocs::everyOptionIsOnItsPage() {
    QFETCH(QString, command);
    const QString help = runHelp({command, QStringLiteral("--help")});
    QVERIFY2(!help.isEmpty(), qPrintable(QStringLiteral("tilescope-cli %1 --help failed").arg(command)));
    const QStringList options = optionsOf(help);
    QVERIFY2(options.contains(QStringLiteral("--help")),
             qPrintable(QStringLiteral("no options parsed from:\n") + help));
    const QString page = readFile(kDocs + QStringLiteral("/cli/") + command + QStringLiteral(".md"));
    QVERIFY2(!page.isEmpty(), qPrintable(QStringLiteral("resources/docs/cli/%1.md is missing").arg(command)));
    const QStringList missing = missingFrom(page, options);
    QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("resources/docs/cli/%1.md lacks options of `tilescope-cli %1 "
                                                          "--help`: %2")
                                               .arg(command, missing.join(QLatin1String(", ")))));
}

void TestDocs::everyColumnIsDocumented() {
    const QString page = readFile(kDocs + QStringLiteral("/formats/database.md"));
    QVERIFY2(!page.isEmpty(), "resources/docs/formats/database.md is missing");
    const QStringList names = schemaNames();
    QVERIFY2(names.contains(QStringLiteral("results.time_ci_high_ms")) && names.contains(QStringLiteral("result_view")),
             qPrintable(names.join(QLatin1String(", "))));
    QStringList missing;
    for (const QString& name : names) {
        const QString word = name.section(QLatin1Char('.'), -1);
        if (!page.contains(QLatin1Char('`') + word + QLatin1Char('`')))
            missing << name;
    }
    QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("resources/docs/formats/database.md does not document: ") +
                                           missing.join(QLatin1String(", "))));
}

QTEST_GUILESS_MAIN(TestDocs)
#include "tst_docs.moc"
