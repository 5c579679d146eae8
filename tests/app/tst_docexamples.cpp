// The manual's examples, run: every command example of resources/docs and README.md (a fenced
// block with a line that begins with `tilescope-cli`, `$ tilescope-cli` or
// `build/release/app/tilescope-cli`) runs here with the real CLI, unless it needs a GPU, another
// machine (ssh://), an MPI job or Slurm, which are recognised and skipped with the reason. Each
// page's examples run in order in a folder of their own, and what the page shows of an example's
// output must appear in what it prints, modulo the numbers that vary between runs. The rules are
// written out for people on the testing page (resources/docs/testing.md, "The manual's
// examples"); this file is them.

#include "base/cudatools.h"
#include "compile/triton.h"

#include "testprograms.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <map>
#include <optional>

namespace {

const QString kSource = QStringLiteral(TILESCOPE_SOURCE_DIR);

/// The repository's folders that each page's folder links to: the examples read what the
/// repository ships where the pages say it is (kernels/sgemm/sgemm.json), and write nothing there.
const QStringList kLinked = {QStringLiteral("kernels"), QStringLiteral("resources"), QStringLiteral("tests")};

struct StartsFrom {
    const char* page;
    const char* from;
};
/// Pages whose examples go on from another page's (each says so): they start in a copy of the
/// folder that page's examples left, and run after it.
const StartsFrom kStartsFrom[] = {
    {"resources/docs/cli/show.md", "resources/docs/cli/tune.md"},
    {"resources/docs/cli/export.md", "resources/docs/cli/tune.md"},
    {"resources/docs/cli/import.md", "resources/docs/cli/tune.md"},
    {"resources/docs/formats/exports.md", "resources/docs/cli/tune.md"},
};

struct Fixture {
    const char* page;
    const char* name; ///< in the page's folder, as the page names it
    const char* from; ///< in the repository
};
/// Files that examples take as the reader's own (a Kernel Tuner script in the current folder, a
/// problem with one field changed, a file with a bad entry), copied into the page's folder under
/// the names the page uses. tests/data/manual/README.md says what each one is.
const Fixture kFixtures[] = {
    {"resources/docs/cli/kt.md", "convolution.py", "tests/data/kt/convolution.py"},
    {"resources/docs/cli/kt.md", "convolution.cu", "tests/data/kt/convolution.cu"},
    {"resources/docs/guide/kerneltuner-scripts.md", "convolution.py", "tests/data/kt/convolution.py"},
    {"resources/docs/guide/kerneltuner-scripts.md", "convolution.cu", "tests/data/kt/convolution.cu"},
    {"resources/docs/formats/kernel-tuner.md", "convolution.json", "tests/data/manual/convolution.json"},
    {"resources/docs/formats/kernel-tuner.md", "convolution.cu", "tests/data/t1corpus/convolution.cu"},
    {"resources/docs/formats/kernel-tuner.md", "conv64.json", "tests/data/manual/conv64.json"},
    {"resources/docs/formats/kernel-tuner.md", "kt_convolution.cu", "tests/data/t1corpus/kt_convolution.cu"},
    {"resources/docs/formats/kernel-tuner.md", "neg.json", "tests/data/manual/neg.json"},
    {"resources/docs/formats/t4.md", "bogus.t4.json", "tests/data/manual/bogus.t4.json"},
};

struct Slow {
    const char* page;
    const char* command; ///< the example's command as the page writes it, up to here
    const char* why;
};
/// Examples too slow for the default suite (CI has 2 cores): they run when
/// TILESCOPE_DOC_EXAMPLES=all (the test tst_docexamples_slow, label "slow").
const Slow kSlow[] = {
    {"resources/docs/cli/lab.md", "tilescope-cli lab kernels/sgemm/sgemm.json",
     "180 replayed searches, 22 s on 2 cores"},
};

bool runSlow() {
    return qgetenv("TILESCOPE_DOC_EXAMPLES") == "all";
}

// ---------------------------------------------------------------------------------------------
// Reading the pages

/// One command of a page, as the page writes it.
struct Example {
    QString page;      ///< its path in the repository: "resources/docs/cli/tune.md"
    int line = 0;      ///< of the command, from 1
    int block = 0;     ///< which fenced block of the page, from 1
    QString command;   ///< without the "$ ", continuation lines kept
    QStringList shown; ///< the output the page shows under it (a block of "$ " commands)
};

const QRegularExpression& commandLine() {
    static const QRegularExpression re(QStringLiteral(
        R"(^(?:\$ )?(?:(?:build/release/app/)?tilescope-cli|(?:mpirun|srun|sbatch)\s.*\btilescope-cli)(?:\s|$))"));
    return re;
}

void readBlock(const QString& page, const QStringList& body, int firstLine, int block, QList<Example>& out) {
    bool hasCommand = false;
    bool prompt = false;
    for (const QString& line : body) {
        hasCommand = hasCommand || commandLine().match(line).hasMatch();
        prompt = prompt || line.startsWith(QLatin1String("$ "));
    }
    const bool script = !body.isEmpty() && body.first().startsWith(QLatin1String("#!"));
    // A shell script (a Slurm batch file) is one example, whole.
    if (script) {
        if (body.join(QLatin1Char('\n')).contains(QLatin1String("tilescope-cli")))
            out << Example{page, firstLine, block, body.join(QLatin1Char('\n')), {}};
        return;
    }
    if (!hasCommand)
        return;
    qsizetype current = -1; // the example that output lines belong to
    for (int k = 0; k < body.size(); ++k) {
        const QString& line = body[k];
        const bool starts = prompt ? line.startsWith(QLatin1String("$ "))
                                   : !line.trimmed().isEmpty() && !line.trimmed().startsWith(QLatin1Char('#'));
        if (!starts) {
            if (prompt && current >= 0)
                out[current].shown << line;
            continue;
        }
        if (current >= 0)
            while (!out[current].shown.isEmpty() && out[current].shown.last().trimmed().isEmpty())
                out[current].shown.removeLast();
        Example e{page, firstLine + k, block, prompt ? line.mid(2) : line, {}};
        while (e.command.endsWith(QLatin1Char('\\')) && k + 1 < body.size())
            e.command += QLatin1Char('\n') + body[++k];
        out << e;
        current = out.size() - 1;
    }
    if (current >= 0)
        while (!out[current].shown.isEmpty() && out[current].shown.last().trimmed().isEmpty())
            out[current].shown.removeLast();
}

/// The examples of a Markdown page, in order.
QList<Example> examplesOf(const QString& page, const QString& text) {
    QList<Example> out;
    const QStringList lines = text.split(QLatin1Char('\n'));
    int block = 0;
    for (int i = 0; i < lines.size(); ++i) {
        const qsizetype fence = lines[i].indexOf(QLatin1String("```"));
        if (fence < 0 || !lines[i].left(fence).trimmed().isEmpty())
            continue;
        QStringList body;
        int j = i + 1;
        for (; j < lines.size() && !lines[j].trimmed().startsWith(QLatin1String("```")); ++j)
            body << (lines[j].left(fence).trimmed().isEmpty() ? lines[j].mid(fence) : lines[j]);
        readBlock(page, body, i + 2, ++block, out);
        i = j;
    }
    return out;
}

/// The command without its shell comments and with quoted text blanked, for the rules that read
/// its words.
QString plainWords(const QString& command) {
    QString plain;
    QChar quote;
    for (qsizetype i = 0; i < command.size(); ++i) {
        const QChar c = command[i];
        if (!quote.isNull()) {
            if (c == quote)
                quote = QChar();
            continue;
        }
        if (c == QLatin1Char('"') || c == QLatin1Char('\'')) {
            quote = c;
            plain += QLatin1Char('q'); // no placeholder
            continue;
        }
        if (c == QLatin1Char('#') && (i == 0 || command[i - 1].isSpace())) {
            while (i < command.size() && command[i] != QLatin1Char('\n'))
                ++i;
            plain += QLatin1Char('\n');
            continue;
        }
        plain += c;
    }
    return plain;
}

/// A synopsis (`tilescope-cli tune PROBLEM.json [--seed S]`) names placeholders, not files: it is
/// no example.
bool isSynopsis(const QString& command) {
    static const QRegularExpression placeholder(QStringLiteral(R"(^[A-Z][A-Z0-9_]*(?:\.[a-z]+|\.\.\.)?$)"));
    for (const QString& word :
         plainWords(command).split(QRegularExpression(QStringLiteral(R"(\s+)")), Qt::SkipEmptyParts)) {
        if (word.contains(QLatin1Char('[')) || word.contains(QLatin1Char(']')) || placeholder.match(word).hasMatch())
            return true;
    }
    return false;
}

/// Why an example cannot run here whatever is installed: what it needs that a test has not (a
/// GPU, another machine, an MPI job, Slurm, a display); "" when it can run.
QString needs(const QString& command) {
    const auto has = [&](const char* pattern) {
        return QRegularExpression(QString::fromLatin1(pattern)).match(command).hasMatch();
    };
    if (has(R"(#SBATCH|\bsbatch\b|\bsrun\b|SLURM_)"))
        return QStringLiteral("a Slurm job");
    if (has(R"(\bmpirun\b|--mpi\b)"))
        return QStringLiteral("an MPI job (--mpi)");
    if (has(R"(ssh://)"))
        return QStringLiteral("another machine (ssh://)");
    if (has(R"(--backend[= ]cuda\b)"))
        return QStringLiteral("a GPU (--backend cuda)");
    for (const char* option : {"--here", "--executed", "--devices"})
        if (has((QByteArrayLiteral("(?<![\\w-])") + option + "(?![\\w-])").constData()))
            return QStringLiteral("a GPU (%1)").arg(QLatin1String(option));
    if (has(R"(tilescope-cli\s+(kt|triton)\b)") && !has(R"(--backend)"))
        return QStringLiteral("a GPU (a script's tunes measure on cuda unless --backend says otherwise)");
    if (has(R"((?<![\w-])--open(?![\w-]))"))
        return QStringLiteral("a display (--open starts the workbench)");
    return {};
}

/// The files a command writes (`--db`, `-o`, `--cpp`, ...), with shell variables as `*`.
QStringList writtenBy(const QString& command) {
    static const QRegularExpression option(
        QStringLiteral(R"((?<![\w-])(?:--db|-o|--output|--cpp|--triton|--csv|--curves|--only-stale|--outputs)[= ]+)"
                       "(\"[^\"]*\"|'[^']*'|[^\\s\"']+)"));
    static const QRegularExpression variable(QStringLiteral(R"(\$\(\([^)]*\)\)|\$\{[^}]*\}|\$\w+)"));
    QStringList files;
    for (auto it = option.globalMatch(command); it.hasNext();) {
        QString file = it.next().captured(1);
        if (file.startsWith(QLatin1Char('"')) || file.startsWith(QLatin1Char('\'')))
            file = file.mid(1, file.size() - 2);
        file.replace(variable, QStringLiteral("*"));
        files << file;
    }
    return files;
}

/// The first of `made` (file patterns) that `command` names, or "".
QString usesOneOf(const QString& command, const QStringList& made) {
    QStringList words;
    for (const QString& word : command.split(QRegularExpression(QStringLiteral("[\\s=\"']+")), Qt::SkipEmptyParts))
        words << word;
    for (const QString& pattern : made) {
        const QRegularExpression re(
            QRegularExpression::wildcardToRegularExpression(pattern, QRegularExpression::DefaultWildcardConversion));
        for (const QString& word : words) {
            const QRegularExpression back(
                QRegularExpression::wildcardToRegularExpression(word, QRegularExpression::DefaultWildcardConversion));
            if (re.match(word).hasMatch() || (back.isValid() && back.match(pattern).hasMatch()))
                return pattern;
        }
    }
    return {};
}

bool isStatusEcho(const QString& command) {
    return command.trimmed() == QLatin1String("echo $?");
}

// ---------------------------------------------------------------------------------------------
// Comparing what the page shows with what the command printed

/// How a line the page shows is looked for in the output: the numbers that vary from run to run
/// or machine to machine match any number, an absolute path any path to the same file, runs of
/// spaces any run of spaces, and "..." any text (a line that ends with it is the start of a line).
/// nullopt for a line that stands for lines left out ("..." alone) or an empty one.
std::optional<QRegularExpression> shownLinePattern(const QString& shown) {
    QString line = shown.trimmed();
    if (line.isEmpty() || line == QLatin1String("..."))
        return std::nullopt;
    // The numbers that vary: a date, a time of day, a duration, a rate, a tool's version, a count
    // of threads or of bytes; and an absolute path.
    const QString num = QStringLiteral(R"(\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?)");
    const QString unit = QStringLiteral(R"((?:ns|us|µs|ms|s|min|h)(?![\w/]))");
    const QString duration = num + QStringLiteral(R"(\s?)") + unit + QStringLiteral(R"((?:\s+)") + num +
                             QStringLiteral(R"(\s?)") + unit + QStringLiteral(")*");
    const QString date = QStringLiteral(R"(\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z?)?)");
    const QString clock = QStringLiteral(R"(\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)");
    const QString pathChars = QStringLiteral("[^\\s,;)\"']");
    const QRegularExpression free(
        QStringLiteral("(?<date>") + date + QStringLiteral(R"()|(?<clock>(?<![\d.]))") + clock +
        QStringLiteral(R"((?![\d.]))|(?<duration>)") + duration + QStringLiteral(R"()|(?<rate>)") + num +
        QStringLiteral(
            R"(/s\b)|(?<version>(?<=NVRTC |CUDA |Triton |driver |Tilescope |nvdisasm |Python )\d+(?:\.\d+)*))") +
        QStringLiteral(R"(|(?<count>)") + num + QStringLiteral(R"((?= (?:threads?|bytes)\b)))") +
        QStringLiteral("|(?<path>(?:(?<=[\\s:\"'(=])|^)/") + pathChars + QStringLiteral("+)"));
    // Text as it is, but for runs of spaces and "..." (any text, the spaces beside it too).
    const auto literal = [](const QString& text) {
        QStringList pieces;
        const QStringList split = text.split(QLatin1String("..."));
        for (qsizetype i = 0; i < split.size(); ++i) {
            QString piece = split[i];
            if (i > 0) // the spaces beside "..." go with it
                piece.remove(QRegularExpression(QStringLiteral(R"(^\s+)")));
            if (i + 1 < split.size())
                piece.remove(QRegularExpression(QStringLiteral(R"(\s+$)")));
            QStringList words;
            for (const QString& word : piece.split(QRegularExpression(QStringLiteral(R"(\s+)"))))
                words << QRegularExpression::escape(word);
            pieces << words.join(QStringLiteral(R"(\s+)"));
        }
        return pieces.join(QStringLiteral(R"(\s*.*?\s*)"));
    };
    QString pattern = QStringLiteral(R"(^\s*)");
    qsizetype at = 0;
    for (auto it = free.globalMatch(line); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        pattern += literal(line.mid(at, m.capturedStart() - at));
        if (!m.captured(QStringLiteral("date")).isEmpty())
            pattern += date;
        else if (!m.captured(QStringLiteral("clock")).isEmpty())
            pattern += clock;
        else if (!m.captured(QStringLiteral("duration")).isEmpty())
            pattern += duration;
        else if (!m.captured(QStringLiteral("rate")).isEmpty())
            pattern += num + QStringLiteral("/s");
        else if (!m.captured(QStringLiteral("version")).isEmpty())
            pattern += QStringLiteral(R"(\d+(?:\.\d+)*)");
        else if (!m.captured(QStringLiteral("count")).isEmpty())
            pattern += num;
        else
            pattern += QStringLiteral("/(?:") + pathChars + QStringLiteral("*/)?") +
                       QRegularExpression::escape(m.captured(QStringLiteral("path")).section(QLatin1Char('/'), -1));
        at = m.capturedEnd();
    }
    pattern += literal(line.mid(at)) + QStringLiteral(R"(\s*$)");
    return QRegularExpression(pattern);
}

/// The lines the page shows that the output lacks. Lines are looked for in stdout in the order
/// shown, else anywhere in stderr (notes, warnings and the progress line go there).
QStringList missingShown(const QStringList& shown, const QString& out, const QString& err) {
    const QStringList outLines = out.split(QLatin1Char('\n'));
    const QStringList errLines = err.split(QLatin1Char('\n'));
    QStringList missing;
    qsizetype cursor = 0;
    for (const QString& line : shown) {
        const std::optional<QRegularExpression> pattern = shownLinePattern(line);
        if (!pattern)
            continue;
        bool found = false;
        for (qsizetype i = cursor; i < outLines.size() && !found; ++i)
            if (pattern->match(outLines[i]).hasMatch()) {
                cursor = i + 1;
                found = true;
            }
        for (const QString& e : errLines)
            found = found || pattern->match(e).hasMatch();
        if (!found)
            missing << line;
    }
    return missing;
}

bool showsAnError(const QStringList& shown) {
    for (const QString& line : shown)
        if (line.startsWith(QLatin1String("error:")))
            return true;
    return false;
}

// ---------------------------------------------------------------------------------------------
// Running a page

struct Outcome {
    Example example;
    QString skip; ///< why it did not run ("" it ran)
    bool slow = false;
    int status = -1;
    QString out;
    QString err;
    qint64 ms = 0;
    QStringList problems; ///< what is wrong with it (it ran)
};

QString readText(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

QString shellQuote(const QString& text) {
    QString quoted = text;
    quoted.replace(QLatin1Char('\''), QLatin1String("'\\''"));
    return QLatin1Char('\'') + quoted + QLatin1Char('\'');
}

/// The T1 problem an example names (its first .json word that is one), or an empty object.
nlohmann::json problemOf(const QString& command, const QString& folder) {
    for (const QString& word : plainWords(command).split(QRegularExpression(QStringLiteral(R"(\s+)")))) {
        if (!word.endsWith(QLatin1String(".json")))
            continue;
        const QString text = readText(QDir(folder).filePath(word));
        const nlohmann::json j = nlohmann::json::parse(text.toStdString(), nullptr, false);
        if (j.is_object() && j.contains("KernelSpecification"))
            return j;
    }
    return nlohmann::json::object();
}

/// What this machine lacks that an example needs (a tool, Triton, NumPy), "" when it has it;
/// `fatal` set when a missing one must fail rather than skip (under CI).
QString lacks(const QString& command, const QString& folder, const QProcessEnvironment& env, bool* fatal) {
    static const QRegularExpression sub(QStringLiteral(R"(tilescope-cli\s+(\w+))"));
    const QString subcommand = sub.match(command).captured(1);
    const nlohmann::json problem = problemOf(command, folder);
    const bool triton =
        problem.value("KernelSpecification", nlohmann::json::object()).value("Language", "") == std::string("Triton");
    *fatal = false;
    if (triton && subcommand != QLatin1String("space")) {
        const tilescope::TritonSetup& setup = tilescope::tritonSetup();
        if (!setup.ok) {
            *fatal = qEnvironmentVariableIsSet("TILESCOPE_REQUIRE_TRITON") ||
                     (underCi() && qEnvironmentVariableIsSet("TILESCOPE_PYTHON"));
            return QStringLiteral("Triton, to compile a Triton kernel (%1)").arg(QString::fromStdString(setup.error));
        }
    } else if (command.contains(QLatin1String("--lines"))) {
        std::string searched;
        if (tilescope::findCudaTool("nvdisasm", "TILESCOPE_NVDISASM", &searched).empty())
            return QStringLiteral("the CUDA toolkit's nvdisasm for --lines (%1)").arg(QString::fromStdString(searched));
    }
    if (subcommand == QLatin1String("kt") || subcommand == QLatin1String("triton")) {
        QProcess python; // the python3 the examples find on their PATH
        python.setProcessEnvironment(env);
        python.start(QStandardPaths::findExecutable(QStringLiteral("python3"),
                                                    env.value(QStringLiteral("PATH")).split(QLatin1Char(':'))),
                     {QStringLiteral("-c"), QStringLiteral("import numpy")});
        if (!python.waitForFinished(60000) || python.exitStatus() != QProcess::NormalExit || python.exitCode() != 0) {
            *fatal = underCi();
            return QStringLiteral("python3 with NumPy, to run the script");
        }
    }
    return {};
}

bool isSlow(const Example& e, QString* why) {
    for (const Slow& slow : kSlow)
        if (e.page == QLatin1String(slow.page) && e.command.startsWith(QLatin1String(slow.command))) {
            *why = QString::fromUtf8(slow.why);
            return true;
        }
    return false;
}

/// Runs the examples of one page in `folder` (made, with the repository's folders linked in),
/// through one shell so that what an example sets (a variable, the status `echo $?` shows) holds
/// for the next; `logs` keeps each example's output.
QList<Outcome> runPage(const QList<Example>& examples, const QString& folder, const QString& logs,
                       const QProcessEnvironment& env) {
    QList<Outcome> outcomes;
    QStringList made;
    bool previousSkipped = false;
    for (const Example& e : examples) {
        Outcome o{e, {}, false, -1, {}, {}, 0, {}};
        QString why;
        if (isSynopsis(e.command))
            o.skip = QStringLiteral("a synopsis");
        else if (isStatusEcho(e.command) && previousSkipped)
            o.skip = QStringLiteral("the status of an example not run");
        else if (const QString n = needs(e.command); !n.isEmpty())
            o.skip = QStringLiteral("needs ") + n;
        else if (const QString used = usesOneOf(e.command, made); !used.isEmpty())
            o.skip = QStringLiteral("uses %1, which an example not run makes").arg(used);
        else if (isSlow(e, &why) && !runSlow()) {
            o.skip = QStringLiteral("slow: %1 (TILESCOPE_DOC_EXAMPLES=all runs it)").arg(why);
            o.slow = true;
        } else {
            bool fatal = false;
            if (const QString missing = lacks(e.command, folder, env, &fatal); !missing.isEmpty()) {
                o.skip = QStringLiteral("needs ") + missing;
                if (fatal)
                    o.problems << QStringLiteral("it cannot run here, and under CI it must: it needs ") + missing;
            }
        }
        if (!o.skip.isEmpty() && o.skip != QLatin1String("a synopsis"))
            made << writtenBy(e.command);
        previousSkipped = !o.skip.isEmpty();
        outcomes << o;
    }

    // One script: each example's output to its own files, its status and time after it.
    QString script = QStringLiteral("__status() { return \"$1\"; }\ncd -- %1 || exit 97\n").arg(shellQuote(folder));
    for (qsizetype i = 0; i < outcomes.size(); ++i) {
        if (!outcomes[i].skip.isEmpty())
            continue;
        const QString base = shellQuote(QDir(logs).filePath(QString::number(i)));
        script += QStringLiteral("__t=$(date +%s%N)\n__status \"${__s:-0}\"\n{ %1\n} >%2.out 2>%2.err </dev/null\n"
                                 "__s=$?; echo \"$__s $(( ($(date +%s%N) - __t) / 1000000 ))\" >%2.rc\n")
                      .arg(outcomes[i].example.command, base);
    }
    const QString scriptPath = QDir(logs).filePath(QStringLiteral("page.sh"));
    QFile file(scriptPath);
    if (!file.open(QIODevice::WriteOnly))
        qFatal("cannot write %s", qPrintable(scriptPath));
    file.write(script.toUtf8());
    file.close();

    QProcess shell;
    shell.setProcessEnvironment(env);
    shell.setWorkingDirectory(folder);
    shell.start(QStringLiteral("bash"), {scriptPath});
    const int limitMs = runSlow() ? 1500000 : 400000;
    if (!shell.waitForFinished(limitMs)) {
        shell.kill();
        shell.waitForFinished();
    }

    for (qsizetype i = 0; i < outcomes.size(); ++i) {
        Outcome& o = outcomes[i];
        if (!o.skip.isEmpty())
            continue;
        const QString base = QDir(logs).filePath(QString::number(i));
        const QStringList rc = readText(base + QStringLiteral(".rc")).split(QLatin1Char(' '));
        o.out = readText(base + QStringLiteral(".out"));
        o.err = readText(base + QStringLiteral(".err"));
        if (rc.size() < 2) {
            o.problems << QStringLiteral("it did not come to an end (the shell stopped before it, or the page ran past "
                                         "%1 s)")
                              .arg(limitMs / 1000);
            continue;
        }
        o.status = rc[0].toInt();
        o.ms = rc[1].trimmed().toLongLong();
    }

    // What each should have done: exit 0 (or fail, when the page shows an error, or the status a
    // following `echo $?` shows), and print what the page shows.
    for (qsizetype i = 0; i < outcomes.size(); ++i) {
        Outcome& o = outcomes[i];
        if (!o.skip.isEmpty() || o.status < 0)
            continue;
        const bool echoed = i + 1 < outcomes.size() && isStatusEcho(outcomes[i + 1].example.command) &&
                            outcomes[i + 1].example.block == o.example.block;
        if (showsAnError(o.example.shown)) {
            if (o.status == 0)
                o.problems << QStringLiteral("it succeeded, where the page shows it failing");
        } else if (!echoed && o.status != 0) {
            o.problems << QStringLiteral("it failed with exit status %1").arg(o.status);
        }
        const QStringList missing = missingShown(o.example.shown, o.out, o.err);
        if (!missing.isEmpty())
            o.problems << QStringLiteral("its output lacks these lines the page shows:\n    ") +
                              missing.join(QStringLiteral("\n    "));
        for (const QString& written : writtenBy(o.example.command))
            for (const QString& linked : kLinked)
                if (QDir::cleanPath(written).startsWith(linked + QLatin1Char('/')))
                    o.problems << QStringLiteral("it writes %1, in the repository's files").arg(written);
    }
    return outcomes;
}

/// What a reason to skip comes to, for the count: "a GPU", "slow", ...
QString kindOf(const QString& skip) {
    if (skip.startsWith(QLatin1String("uses ")))
        return QStringLiteral("what an example not run makes");
    if (skip.startsWith(QLatin1String("slow")))
        return QStringLiteral("slow");
    if (!skip.startsWith(QLatin1String("needs ")))
        return skip;
    QString kind = skip.mid(6);
    for (const char* end : {" (", ","})
        if (const qsizetype at = kind.indexOf(QLatin1String(end)); at > 0)
            kind.truncate(at);
    return kind;
}

QString tail(const QString& text, int lines) {
    QStringList all = text.split(QLatin1Char('\n'));
    if (all.size() > lines)
        all = QStringList{QStringLiteral("[... %1 lines]").arg(all.size() - lines)} + all.mid(all.size() - lines);
    return QStringLiteral("      ") + all.join(QStringLiteral("\n      "));
}

QString report(const Outcome& o) {
    QString text = QStringLiteral("%1:%2: `%3`\n  ")
                       .arg(o.example.page)
                       .arg(o.example.line)
                       .arg(o.example.command.section(QLatin1Char('\n'), 0, 0));
    text += o.problems.join(QStringLiteral("\n  "));
    if (o.skip.isEmpty())
        text += QStringLiteral("\n  exit status %1; stdout:\n%2\n  stderr:\n%3")
                    .arg(o.status)
                    .arg(tail(o.out, 40), tail(o.err, 20));
    return text;
}

/// Links the repository's folders and the CLI (as `build/release/app/tilescope-cli`, README's
/// name for it) into a page's folder.
void prepareFolder(const QString& folder) {
    QDir().mkpath(folder);
    for (const QString& linked : kLinked)
        QFile::link(kSource + QLatin1Char('/') + linked, QDir(folder).filePath(linked));
    QDir(folder).mkpath(QStringLiteral("build/release/app"));
    QFile::link(QStringLiteral(TILESCOPE_CLI),
                QDir(folder).filePath(QStringLiteral("build/release/app/tilescope-cli")));
    QDir(folder).mkpath(QStringLiteral("tmp"));
}

/// Copies what a page's examples left (not the links) into another page's folder.
void copyLeft(const QString& from, const QString& to) {
    QDirIterator it(from, QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        const QString relative = QDir(from).relativeFilePath(path);
        const QString top = relative.section(QLatin1Char('/'), 0, 0);
        if (kLinked.contains(top) || top == QLatin1String("build") || top == QLatin1String("tmp"))
            continue;
        const QFileInfo info(path);
        if (info.isSymLink())
            continue;
        if (info.isDir())
            QDir(to).mkpath(relative);
        else
            QFile::copy(path, QDir(to).filePath(relative));
    }
}

/// The pages, by their path in the repository: README.md, then the manual's, those another page
/// goes on from first.
QStringList manualPages() {
    QStringList pages;
    QDirIterator it(kSource + QStringLiteral("/resources/docs"), {QStringLiteral("*.md")}, QDir::Files,
                    QDirIterator::Subdirectories);
    while (it.hasNext())
        pages << QDir(kSource).relativeFilePath(it.next());
    pages.sort();
    QStringList ordered{QStringLiteral("README.md")};
    for (const StartsFrom& s : kStartsFrom)
        if (!ordered.contains(QLatin1String(s.from)))
            ordered << QString::fromLatin1(s.from);
    for (const QString& page : pages)
        if (!ordered.contains(page))
            ordered << page;
    return ordered;
}

QString pagePath(const QString& page) {
    return kSource + QLatin1Char('/') + page;
}

} // namespace

class TestDocExamples : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void readingPages();
    void comparingOutput();
    void aPageThatDrifted();
    void pages_data();
    void pages();
    void cleanupTestCase();

private:
    QTemporaryDir m_root;
    QProcessEnvironment m_env;
    std::map<QString, QString> m_folders; ///< page -> the folder its examples ran in
    std::map<QString, int> m_skipped;     ///< reason (its first words) -> examples
    int m_run = 0;
    int m_synopses = 0;
    qint64 m_ms = 0;

    QList<Outcome> run(const QString& page, const QString& text);
};

void TestDocExamples::initTestCase() {
    QVERIFY(m_root.isValid());
    m_env = QProcessEnvironment::systemEnvironment();
    const QString bin = m_root.filePath(QStringLiteral("bin"));
    QDir().mkpath(bin);
    QVERIFY(QFile::link(QStringLiteral(TILESCOPE_CLI), bin + QStringLiteral("/tilescope-cli")));
    // The scripts' python3 is the one Tilescope runs its helpers with, when one is named.
    QString path = bin;
    if (const QString python = m_env.value(QStringLiteral("TILESCOPE_PYTHON")); !python.isEmpty())
        path += QLatin1Char(':') + QFileInfo(python).absolutePath();
    m_env.insert(QStringLiteral("PATH"), path + QLatin1Char(':') + m_env.value(QStringLiteral("PATH")));
    // One compile cache for every page (they compile the same configs), in the test's folder.
    m_env.insert(QStringLiteral("TILESCOPE_CACHE_DIR"), m_root.filePath(QStringLiteral("cache")));
    m_env.remove(QStringLiteral("CI")); // the examples run as a reader runs them

    // The tables above name pages, files and examples that exist.
    const QStringList pages = manualPages();
    for (const StartsFrom& s : kStartsFrom)
        QVERIFY2(pages.contains(QLatin1String(s.page)) && pages.contains(QLatin1String(s.from)), s.page);
    for (const Fixture& f : kFixtures) {
        QVERIFY2(pages.contains(QLatin1String(f.page)), f.page);
        QVERIFY2(QFile::exists(kSource + QLatin1Char('/') + QLatin1String(f.from)), f.from);
    }
    for (const Slow& s : kSlow) {
        bool found = false;
        for (const Example& e : examplesOf(QLatin1String(s.page), readText(pagePath(QLatin1String(s.page)))))
            found = found || e.command.startsWith(QLatin1String(s.command));
        QVERIFY2(found, qPrintable(QStringLiteral("%1 has no example `%2...` (the slow list is stale)")
                                       .arg(QLatin1String(s.page), QLatin1String(s.command))));
    }
}

// The pages' blocks as examples: "$ " commands with the output shown under them, plain commands,
// continuation lines, a shell script whole; synopses and what needs a GPU, another machine, MPI
// or Slurm recognised.
void TestDocExamples::readingPages() {
    const QString page =
        QStringLiteral("Text.\n\n"
                       "```\n"
                       "tilescope-cli tune PROBLEM.json --backend cuda[:DEVICES] --db FILE\n"
                       "```\n\n"
                       "```\n"
                       "$ tilescope-cli tune a.json --backend replay:r.t4.json \\\n"
                       "      --db r.db    # a comment, M = 4\n"
                       "tuned 1/1  5.0/s\n"
                       "  ...\n"
                       "\n"
                       "$ tilescope-cli show r.db\n"
                       "Sessions (1)\n"
                       "```\n\n"
                       "```sh\n"
                       "build/release/app/tilescope-cli space k.json\n"
                       "tilescope-cli tune k.json --backend cuda --db gpu.db\n"
                       "tilescope-cli show gpu.db --top 3\n"
                       "```\n\n"
                       "```bash\n"
                       "#!/bin/bash\n"
                       "#SBATCH --array=1-4\n"
                       "tilescope-cli tune k.json --backend cuda --db results/part-${SLURM_ARRAY_TASK_ID}.db\n"
                       "```\n\n"
                       "```\n"
                       "tilescope-cli import results/part-*.db --db all.db\n"
                       "```\n\n"
                       "```json\n{\"not\": \"an example\"}\n```\n");
    const QList<Example> examples = examplesOf(QStringLiteral("x.md"), page);
    QCOMPARE(examples.size(), 8);
    QVERIFY(isSynopsis(examples[0].command));
    QCOMPARE(examples[1].line, 8);
    QCOMPARE(examples[1].command, QStringLiteral("tilescope-cli tune a.json --backend replay:r.t4.json \\\n"
                                                 "      --db r.db    # a comment, M = 4"));
    QVERIFY(!isSynopsis(examples[1].command)); // the comment's M is no placeholder
    QCOMPARE(examples[1].shown, QStringList({QStringLiteral("tuned 1/1  5.0/s"), QStringLiteral("  ...")}));
    QCOMPARE(examples[2].shown, QStringList{QStringLiteral("Sessions (1)")});
    QCOMPARE(examples[3].command, QStringLiteral("build/release/app/tilescope-cli space k.json"));
    QVERIFY(needs(examples[3].command).isEmpty());
    QCOMPARE(needs(examples[4].command), QStringLiteral("a GPU (--backend cuda)"));
    QCOMPARE(writtenBy(examples[4].command), QStringList{QStringLiteral("gpu.db")});
    QCOMPARE(usesOneOf(examples[5].command, {QStringLiteral("gpu.db")}), QStringLiteral("gpu.db"));
    QVERIFY(examples[6].command.startsWith(QLatin1String("#!/bin/bash")));
    QCOMPARE(needs(examples[6].command), QStringLiteral("a Slurm job"));
    QCOMPARE(writtenBy(examples[6].command), QStringList{QStringLiteral("results/part-*.db")});
    QCOMPARE(usesOneOf(examples[7].command, writtenBy(examples[6].command)), QStringLiteral("results/part-*.db"));

    QCOMPARE(needs(QStringLiteral("tilescope-cli tune k.json --backend ssh://me@host/0 --db a.db")),
             QStringLiteral("another machine (ssh://)"));
    QCOMPARE(needs(QStringLiteral("mpirun -n 4 tilescope-cli tune k.json --backend cuda --mpi --db a.db")),
             QStringLiteral("an MPI job (--mpi)"));
    QCOMPARE(needs(QStringLiteral("tilescope-cli check c.json --problem k.json --here")),
             QStringLiteral("a GPU (--here)"));
    QVERIFY(needs(QStringLiteral("tilescope-cli kt vector_add.py")).startsWith(QLatin1String("a GPU")));
    QVERIFY(needs(QStringLiteral("tilescope-cli kt --backend analysis:sm_90 vector_add.py")).isEmpty());
    QVERIFY(needs(QStringLiteral("tilescope-cli kt --backend analysis:sm_90 --open v.py")).startsWith("a display"));
    QVERIFY(isSynopsis(QStringLiteral("tilescope-cli compare A B [--top N]")));
    QVERIFY(!isSynopsis(QStringLiteral("tilescope-cli check c.json --device \"NVIDIA A100\" --arch sm_80")));
}

// What the page shows is found in the output: exactly, but for the numbers that vary, absolute
// paths, runs of spaces, lines cut with "..."; in stdout in the order shown, or in stderr.
void TestDocExamples::comparingOutput() {
    const auto matches = [](const QString& shown, const QString& printed) {
        return shownLinePattern(shown)->match(printed).hasMatch();
    };
    // Timings, rates, dates, versions, thread and byte counts vary; the data does not.
    QVERIFY(matches(QStringLiteral("tuned 2,761/2,761  43184.6/s  in 63.9 ms  best 0.3956 ms  43.43 TFLOP/s"),
                    QStringLiteral("tuned 2,761/2,761  101992.5/s  in 27.1 ms  best 0.3956 ms  43.43 TFLOP/s")));
    QVERIFY(!matches(QStringLiteral("tuned 2,761/2,761  43184.6/s  in 63.9 ms  best 0.3956 ms  43.43 TFLOP/s"),
                     QStringLiteral("tuned 2,760/2,761  43184.6/s  in 63.9 ms  best 0.3956 ms  43.43 TFLOP/s")));
    QVERIFY(!matches(QStringLiteral("best 0.3956 ms  43.43 TFLOP/s"), QStringLiteral("best 0.3956 ms  43.42 TFLOP/s")));
    QVERIFY(matches(QStringLiteral("compiled 80/80  0.6/s  in 2 min 15 s  0 errors"),
                    QStringLiteral("compiled 80/80  1.9/s  in 41.5 s  0 errors")));
    QVERIFY(matches(QStringLiteral("time        66.8 ms wall; recorded 32 min 39 s"),
                    QStringLiteral("time        586 us wall; recorded 32 min 39 s")));
    QVERIFY(matches(QStringLiteral("   1  sgemm  exhaustive     0  finished    2,761  2026-11-30 03:29"),
                    QStringLiteral("   1  sgemm  exhaustive     0  finished    2,761  2027-01-02 13:05")));
    QVERIFY(matches(QStringLiteral("\"recorded_at\": \"2026-11-30T03:29:58.427Z\""),
                    QStringLiteral("\"recorded_at\": \"2026-12-06T12:46:01.002Z\"")));
    QVERIFY(matches(QStringLiteral("provenance  driver 13.0, NVRTC 13.0, Tilescope 0.1.0; problem 9dd47271"),
                    QStringLiteral("provenance  driver 12.8, NVRTC 12.8, Tilescope 0.2.0; problem 9dd47271")));
    QVERIFY(!matches(QStringLiteral("problem 9dd47271"), QStringLiteral("problem 9dd47272")));
    QVERIFY(matches(QStringLiteral("wrote results.t4.json (t4, 5688444 bytes)"),
                    QStringLiteral("wrote results.t4.json (t4, 5688391 bytes)")));
    QVERIFY(
        matches(QStringLiteral("  backend     replay:/home/ana/tilescope/resources/demo/sgemm-h200-2048.t4.json.gz"),
                QStringLiteral("  backend     replay:/tmp/x/resources/demo/sgemm-h200-2048.t4.json.gz")));
    QVERIFY(!matches(QStringLiteral("  backend     replay:/home/ana/demo/sgemm-h200-2048.t4.json.gz"),
                     QStringLiteral("  backend     replay:/tmp/x/demo/other.t4.json.gz")));
    QVERIFY(matches(QStringLiteral("  rank A  rank B   B / A"), QStringLiteral("  rank A  rank B   B / A")));
    // Spaces, and a line cut short.
    QVERIFY(matches(QStringLiteral("  1   256  64"), QStringLiteral("1 256    64   ")));
    QVERIFY(
        matches(QStringLiteral("Analysing 40 of 2,761 valid configs: NVRTC 13.0, 2 threads, cache ..."),
                QStringLiteral("Analysing 40 of 2,761 valid configs: NVRTC 13.0, 16 threads, cache /x/y (3 hits)")));
    QVERIFY(!matches(QStringLiteral("  1   256  64"), QStringLiteral("  1   256  64  8")));
    QVERIFY(matches(QStringLiteral("wrote offline.json (json, ... bytes)"),
                    QStringLiteral("wrote offline.json (json, 914 bytes)")));
    QVERIFY(matches(QStringLiteral("  backend  replay:...200-2048.t4.json.gz  exhaustive"),
                    QStringLiteral("  backend  replay:...200-2048.t4.json.gz  exhaustive")));
    QVERIFY(matches(QStringLiteral("cache ..."), QStringLiteral("cache")));
    QVERIFY(
        !matches(QStringLiteral("wrote a.json (json, ... bytes)"), QStringLiteral("wrote b.json (json, 914 bytes)")));
    QVERIFY(!shownLinePattern(QStringLiteral("  ...")));
    QVERIFY(!shownLinePattern(QString()));

    const QStringList shown = {QStringLiteral("first"), QStringLiteral("..."), QStringLiteral("second"),
                               QStringLiteral("note: on stderr")};
    QVERIFY(
        missingShown(shown, QStringLiteral("first\nmore\nsecond\n"), QStringLiteral("note: on stderr\n")).isEmpty());
    QCOMPARE(missingShown(shown, QStringLiteral("second\nfirst\n"), QStringLiteral("note: on stderr\n")),
             QStringList{QStringLiteral("second")}); // out of order
    QCOMPARE(missingShown(shown, QStringLiteral("first\nsecond\n"), QString()),
             QStringList{QStringLiteral("note: on stderr")});
}

// A page whose examples drifted fails, each problem named: a command that fails, a line the
// output lacks, a failure shown that does not happen; `echo $?` shows a status, and a variable
// holds from one example to the next.
void TestDocExamples::aPageThatDrifted() {
    const QString page = QStringLiteral("```\n"
                                        "$ tilescope-cli space kernels/sgemm/sgemm.json --count\n"
                                        "2,761 valid of 7,200 raw configs (38.3 %)\n"
                                        "$ tilescope-cli space kernels/sgemm/sgemm.json --shape 1 --count\n"
                                        "2,762 valid of 7,200 raw configs (38.3 %)\n"
                                        "$ tilescope-cli space kernels/sgemm/nothing.json --count\n"
                                        "$ tilescope-cli space kernels/sgemm/sgemm.json --count\n"
                                        "error: no such thing\n"
                                        "$ tilescope-cli space kernels/sgemm/missing.json\n"
                                        "$ echo $?\n"
                                        "2\n"
                                        "$ dir=$(mktemp -d)\n"
                                        "$ tilescope-cli tune kernels/sgemm/sgemm.json --shape 1 --budget 3 --backend "
                                        "replay:resources/demo/sgemm-h200-2048.t4.json.gz --db \"$dir/r.db\"\n"
                                        "$ tilescope-cli show \"$dir/r.db\" --top 1\n"
                                        "Sessions (1)\n"
                                        "```\n");
    const QList<Outcome> outcomes = run(QStringLiteral("drifted.md"), page);
    QCOMPARE(outcomes.size(), 9);
    QVERIFY2(outcomes[0].problems.isEmpty(), qPrintable(report(outcomes[0])));
    QCOMPARE(outcomes[1].problems.size(), 1);
    QVERIFY(outcomes[1].problems[0].contains(QLatin1String("2,762 valid of 7,200")));
    QCOMPARE(outcomes[2].problems, QStringList{QStringLiteral("it failed with exit status 2")});
    QCOMPARE(outcomes[3].problems.size(), 2); // succeeded, and the error line is missing
    QVERIFY(outcomes[4].problems.isEmpty());  // its status is shown by the echo
    QVERIFY2(outcomes[5].problems.isEmpty(), qPrintable(report(outcomes[5])));
    QCOMPARE(outcomes[5].out.trimmed(), QStringLiteral("2"));
    for (int i : {6, 7, 8})
        QVERIFY2(outcomes[i].problems.isEmpty(), qPrintable(report(outcomes[i])));
}

void TestDocExamples::pages_data() {
    QTest::addColumn<QString>("page");
    for (const QString& page : manualPages())
        if (!examplesOf(page, readText(pagePath(page))).isEmpty())
            QTest::newRow(qPrintable(page)) << page;
}

// Every page's examples, in order, in a folder of their own.
void TestDocExamples::pages() {
    QFETCH(QString, page);
    const QList<Outcome> outcomes = run(page, readText(pagePath(page)));
    QStringList failures;
    QStringList failedLines;
    QStringList lines;
    int ran = 0;
    int skipped = 0;
    for (const Outcome& o : outcomes) {
        if (o.skip == QLatin1String("a synopsis")) {
            ++m_synopses;
            lines << QStringLiteral("  line %1: a synopsis, not run").arg(o.example.line);
        } else if (!o.skip.isEmpty()) {
            ++skipped;
            ++m_skipped[kindOf(o.skip)];
            lines << QStringLiteral("  line %1 skipped: %2").arg(o.example.line).arg(o.skip);
        } else {
            ++ran;
            m_ms += o.ms;
            lines << QStringLiteral("  line %1 ran in %2 s%3")
                         .arg(o.example.line)
                         .arg(double(o.ms) / 1000.0, 0, 'f', 1)
                         .arg(o.problems.isEmpty() ? QString() : QStringLiteral(": FAILED"));
        }
        if (!o.problems.isEmpty()) {
            failures << report(o);
            failedLines << QStringLiteral("line %1").arg(o.example.line);
        }
    }
    m_run += ran;
    qInfo().noquote()
        << QStringLiteral("%1: %2 run, %3 skipped\n%4").arg(page).arg(ran).arg(skipped).arg(lines.join('\n'));
    // Qt Test cuts a failure's message at 1,024 bytes, before the output that tells why: the
    // reports go out whole as a warning, and the failure names the examples.
    if (!failures.isEmpty())
        qWarning().noquote() << QStringLiteral("\n") + failures.join(QStringLiteral("\n\n"));
    QVERIFY2(failures.isEmpty(), qPrintable(QStringLiteral("%1 of the page's examples failed (above, whole): %2")
                                                .arg(failures.size())
                                                .arg(failedLines.join(QStringLiteral(", ")))));
}

void TestDocExamples::cleanupTestCase() {
    int skipped = 0;
    QStringList reasons;
    for (const auto& [reason, count] : m_skipped) {
        skipped += count;
        reasons << QStringLiteral("%1 %2").arg(count).arg(reason);
    }
    qInfo().noquote() << QStringLiteral("The manual's examples: %1 run (%2 s), %3 skipped (%4); %5 synopses not run")
                             .arg(m_run)
                             .arg(double(m_ms) / 1000.0, 0, 'f', 1)
                             .arg(skipped)
                             .arg(reasons.join(QStringLiteral(", ")))
                             .arg(m_synopses);
}

QList<Outcome> TestDocExamples::run(const QString& page, const QString& text) {
    QString slug = page;
    slug.replace(QLatin1Char('/'), QLatin1Char('_'));
    const QString folder = m_root.filePath(QStringLiteral("pages/") + slug);
    const QString logs = m_root.filePath(QStringLiteral("logs/") + slug);
    QDir(folder).removeRecursively();
    QDir(logs).removeRecursively();
    prepareFolder(folder);
    QDir().mkpath(logs);
    for (const StartsFrom& s : kStartsFrom)
        if (page == QLatin1String(s.page) && m_folders.count(QLatin1String(s.from)))
            copyLeft(m_folders[QLatin1String(s.from)], folder);
    for (const Fixture& f : kFixtures)
        if (page == QLatin1String(f.page))
            QFile::copy(kSource + QLatin1Char('/') + QLatin1String(f.from),
                        QDir(folder).filePath(QLatin1String(f.name)));
    QProcessEnvironment env = m_env;
    env.insert(QStringLiteral("TMPDIR"), QDir(folder).filePath(QStringLiteral("tmp")));
    const QList<Outcome> outcomes = runPage(examplesOf(page, text), folder, logs, env);
    m_folders[page] = folder;
    return outcomes;
}

QTEST_GUILESS_MAIN(TestDocExamples)
#include "tst_docexamples.moc"
