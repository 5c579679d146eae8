#include "problem/kernelsourcepanel.h"

#include "common/emptystate.h"
#include "problem/problemdocument.h"
#include "problem/sourceview.h"

#include "analysis/sourcelines.h"
#include "compile/compilecache.h"
#include "compile/compiler.h"
#include "compile/compileservice.h"
#include "compile/requestbuilder.h"
#include "compile/sass.h"
#include "exchange/configcodec.h"
#include "model/configjson.h"
#include "spec/tuningproblem.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QTextBlock>
#include <QTextCursor>
#include <QToolButton>
#include <QVBoxLayout>

#include <filesystem>
#include <unordered_map>

namespace tilescope::views {

/// One config's lines, as the background job read them.
struct KernelSourcePanel::Lines {
    QString config; ///< its JSON
    QString label;  ///< "BLOCK_M=64 ..." for people
    LineCounts counts;
    QString error; ///< why there are no counts
};

namespace {

std::shared_ptr<const KernelSourcePanel::Lines> readLines(std::shared_ptr<const TuningProblem> problem,
                                                          std::size_t shape, QString configJson, std::string arch) {
    auto lines = std::make_shared<KernelSourcePanel::Lines>();
    lines->config = configJson;
    const std::optional<ConfigValues> values = parseConfigJson(configJson.toStdString());
    std::string why;
    const std::optional<Config> config = values ? configFromValues(*problem, *values, &why) : std::nullopt;
    if (!config) {
        lines->error = QObject::tr("The config is not one of this problem's: %1").arg(QString::fromStdString(why));
        return lines;
    }
    for (const auto& [name, value] : *values)
        lines->label += (lines->label.isEmpty() ? "" : " ") +
                        QString::fromStdString(name + "=" + (value.isText() ? value.text() : toJson(value).dump()));
    std::string missing;
    const std::filesystem::path nvdisasm = findNvdisasm(&missing, problem->isTriton());
    if (nvdisasm.empty()) {
        lines->error = QString::fromStdString(missing);
        return lines;
    }
    try {
        const RequestBuilder builder(*problem, shape);
        // The compile cache holds what a session compiled (with line information, as every compile).
        const CompileService service({1, std::make_shared<CompileCache>()});
        const CompileResult compiled = service.compile(builder.request(*config, arch));
        if (!compiled.ok()) {
            lines->error = QObject::tr("It does not compile: %1").arg(QString::fromStdString(compiled.message));
            return lines;
        }
        const Disassembly d = disassemble(compiled.cubin, nvdisasm);
        const SassFunction* f = d.ok ? findFunction(d, compiled.entryName) : nullptr;
        if (!f) {
            lines->error = QString::fromStdString(d.ok ? "nvdisasm's output has no " + compiled.entryName : d.error);
            return lines;
        }
        lines->counts = countByLine(*f);
        if (!lines->counts.hasLineInfo)
            lines->error = QObject::tr("The binary has no line information.");
    } catch (const std::exception& e) {
        lines->error = QString::fromUtf8(e.what());
    }
    return lines;
}

QString totals(const LineCounts& c) {
    return QObject::tr("%1 spill stores, %2 spill loads, %3 local stores, %4 local loads")
        .arg(c.spillStores)
        .arg(c.spillLoads)
        .arg(c.localStores)
        .arg(c.localLoads);
}

} // namespace

KernelSourcePanel::KernelSourcePanel(ProblemDocument* document, QWidget* parent)
    : QStackedWidget(parent)
    , m_document(document) {
    m_sourceView = new SourceView(this);
    m_sourceView->setObjectName(QStringLiteral("kernelSource"));
    m_header = new QLabel(this);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_header->setTextFormat(Qt::RichText);
    m_header->setContentsMargins(6, 4, 6, 4);
    m_lines = new QLabel(this);
    m_lines->setObjectName(QStringLiteral("sourceLines"));
    m_lines->setWordWrap(true);
    m_lines->setTextFormat(Qt::RichText);
    m_lines->setContentsMargins(6, 0, 6, 4);
    m_lines->setText(tr("Select a result to see which of its lines spill."));
    m_pin = new QToolButton(this);
    m_pin->setCheckable(true);
    m_pin->setText(tr("Pin for comparison"));
    m_pin->setToolTip(tr("Keep this config's lines; the next config selected is compared with it line by line"));
    m_pin->setEnabled(false);
    connect(m_pin, &QToolButton::clicked, this, &KernelSourcePanel::togglePin);
    m_byLine = new QToolButton(this);
    m_byLine->setText(tr("Heatmap by this line"));
    m_byLine->setToolTip(tr("Colour the heatmap by the spill instructions at the line under the cursor, for every "
                            "config of the results"));
    connect(m_byLine, &QToolButton::clicked, this,
            [this]() { emit lineCountsRequested(m_sourceView->textCursor().blockNumber() + 1); });
    auto* kernelPage = new QWidget(this);
    auto* kernelLayout = new QVBoxLayout(kernelPage);
    kernelLayout->setContentsMargins(0, 0, 0, 0);
    kernelLayout->setSpacing(0);
    kernelLayout->addWidget(m_header);
    auto* linesRow = new QHBoxLayout;
    linesRow->setContentsMargins(0, 0, 6, 0);
    linesRow->addWidget(m_lines, 1);
    linesRow->addWidget(m_pin, 0, Qt::AlignTop);
    linesRow->addWidget(m_byLine, 0, Qt::AlignTop);
    kernelLayout->addLayout(linesRow);
    kernelLayout->addWidget(m_sourceView, 1);
    addWidget(emptyStateLabel(
        tr("<h3>No tuning problem open</h3>"
           "<p>Open a T1 problem file with <b>File ▸ Open…</b> (%1), or drop a <tt>.json</tt> file here.</p>")
            .arg(shortcutText(QKeySequence(QKeySequence::Open))),
        this));
    addWidget(kernelPage);
    connect(m_document, &ProblemDocument::problemChanged, this, &KernelSourcePanel::onProblemChanged);
}

KernelSourcePanel::~KernelSourcePanel() = default;

void KernelSourcePanel::onProblemChanged() {
    const auto problem = m_document->problem();
    setCurrentIndex(problem ? 1 : 0);
    m_shown.reset();
    m_pinned.reset();
    m_pin->setChecked(false);
    m_pin->setText(tr("Pin for comparison"));
    m_task.stop();
    m_busy = false;
    if (!problem)
        return;
    if (m_document->kernelError().isEmpty()) {
        m_sourceView->setSource(m_document->kernelSource(), problem->isCuda() || problem->language == "C++");
    } else {
        m_sourceView->setSource(m_document->kernelError(), false);
    }
    const QFileInfo kernel(m_document->kernelPath());
    const QString folder = QDir::toNativeSeparators(kernel.absolutePath());
    const QString where = m_document->origin() == ProblemDocument::Origin::Example
                              ? tr("embedded example, extracted to %1").arg(folder)
                          : m_document->origin() == ProblemDocument::Origin::Stored
                              ? tr("%1, written to %2").arg(m_document->displayName(), folder)
                              : folder;
    m_header->setText(tr("<b>%1</b>&nbsp;&nbsp;<span style='color:%2'>%3</span>")
                          .arg(kernel.fileName().toHtmlEscaped(), palette().color(QPalette::PlaceholderText).name(),
                               where.toHtmlEscaped()));
    if (!m_config.isEmpty())
        showConfig(m_config);
    else
        render();
}

void KernelSourcePanel::setArch(const QString& arch) {
    if (arch.isEmpty() || arch == m_arch)
        return;
    m_arch = arch;
    m_pinned.reset();
    m_pin->setChecked(false);
    m_pin->setText(tr("Pin for comparison"));
    if (!m_config.isEmpty())
        showConfig(m_config);
}

void KernelSourcePanel::showConfig(const QString& configJson) {
    m_config = configJson;
    const auto problem = m_document->problem();
    if (configJson.isEmpty() || !problem || !m_document->kernelError().isEmpty() ||
        !(problem->isCuda() || problem->isTriton())) {
        m_task.stop();
        m_busy = false;
        m_shown.reset();
        render();
        return;
    }
    m_busy = true;
    m_lines->setText(tr("Reading the lines of the selected config for %1…").arg(m_arch));
    const std::size_t shape = static_cast<std::size_t>(std::max(0, m_document->shapeIndex()));
    m_task.start([problem, shape, configJson,
                  arch = m_arch.toStdString()]() { return readLines(problem, shape, configJson, arch); },
                 [this](std::shared_ptr<const Lines> lines) { showLines(lines); });
}

void KernelSourcePanel::showLines(const std::shared_ptr<const Lines>& lines) {
    m_busy = false;
    m_shown = lines;
    render();
    // The line with the most spill and local-memory instructions, in sight (and the line that
    // "Heatmap by this line" takes).
    int hottest = 0;
    int most = 0;
    for (const auto& [line, mark] : m_sourceView->lineMarks()) {
        if (mark.spills() + mark.local() > most) {
            most = mark.spills() + mark.local();
            hottest = line;
        }
    }
    if (const QTextBlock block = m_sourceView->document()->findBlockByNumber(hottest - 1); block.isValid()) {
        m_sourceView->setTextCursor(QTextCursor(block)); // at the line's start: no sideways scroll
        m_sourceView->centerCursor();
    }
    emit linesShown();
}

void KernelSourcePanel::countLine(int line, std::vector<QString> configs) {
    const auto problem = m_document->problem();
    if (!problem || configs.empty() || !m_document->kernelError().isEmpty()) {
        m_lines->setText(tr("There are no results to colour by line %1.").arg(line));
        return;
    }
    m_counting = true;
    const QString kernelName = QFileInfo(m_document->kernelPath()).fileName();
    m_lines->setText(tr("Counting the spills at line %1 in %2 configs…").arg(line).arg(configs.size()));
    const std::size_t shape = static_cast<std::size_t>(std::max(0, m_document->shapeIndex()));
    struct Counted {
        Quantity quantity;
        QString error;
        std::size_t failed = 0;
    };
    m_lineTask.start(
        [problem, shape, line, configs = std::move(configs), kernelName, arch = m_arch.toStdString()]() {
            Counted out;
            std::string missing;
            const std::filesystem::path nvdisasm = findNvdisasm(&missing, problem->isTriton());
            if (nvdisasm.empty()) {
                out.error = QString::fromStdString(missing);
                return out;
            }
            try {
                const RequestBuilder builder(*problem, shape);
                std::vector<CompileRequest> requests;
                std::vector<std::string> keys;
                for (const QString& json : configs) {
                    const std::optional<ConfigValues> values = parseConfigJson(json.toStdString());
                    const std::optional<Config> config = values ? configFromValues(*problem, *values) : std::nullopt;
                    if (!config)
                        continue;
                    requests.push_back(builder.request(*config, arch));
                    keys.push_back(configJson(*values));
                }
                CompileService service({0, std::make_shared<CompileCache>()});
                const std::vector<CompileResult> compiled = service.compileAll(requests);
                auto counts = std::make_shared<std::unordered_map<std::string, double>>();
                for (std::size_t i = 0; i < compiled.size(); ++i) {
                    const Disassembly d = compiled[i].ok() ? disassemble(compiled[i].cubin, nvdisasm) : Disassembly{};
                    const SassFunction* f = d.ok ? findFunction(d, compiled[i].entryName) : nullptr;
                    if (!f) {
                        ++out.failed;
                        continue;
                    }
                    double spills = 0;
                    for (const SassInstruction& ins : f->instructions)
                        if (ins.line == line && ins.spill &&
                            QFileInfo(QString::fromStdString(ins.file)).fileName() == kernelName)
                            spills += 1;
                    (*counts)[keys[i]] = spills;
                }
                out.quantity.kind = QuantityKind::LineSpills;
                out.quantity.line = kernelName.toStdString() + ":" + std::to_string(line);
                out.quantity.byConfig = std::move(counts);
            } catch (const std::exception& e) {
                out.error = QString::fromUtf8(e.what());
            }
            return out;
        },
        [this, line](Counted counted) {
            m_counting = false;
            if (!counted.error.isEmpty()) {
                m_lines->setText(counted.error.toHtmlEscaped());
                return;
            }
            m_lines->setText(tr("The heatmap shows the spill instructions at line %1 (%2 configs%3).")
                                 .arg(line)
                                 .arg(counted.quantity.byConfig->size())
                                 .arg(counted.failed ? tr("; %1 did not compile").arg(counted.failed) : QString()));
            emit lineQuantity(counted.quantity);
        });
}

void KernelSourcePanel::togglePin() {
    m_pinned = m_pin->isChecked() ? m_shown : nullptr;
    m_pin->setText(m_pinned ? tr("Pinned: %1").arg(m_pinned->label) : tr("Pin for comparison"));
    render();
}

void KernelSourcePanel::render() {
    m_pin->setEnabled(m_shown && m_shown->error.isEmpty());
    m_byLine->setEnabled(m_document->problem() != nullptr);
    if (!m_shown) {
        m_sourceView->setLineMarks({});
        if (!m_busy)
            m_lines->setText(tr("Select a result to see which of its lines spill."));
        return;
    }
    if (!m_shown->error.isEmpty()) {
        // Which config it is about, where the config was read.
        m_sourceView->setLineMarks({});
        m_lines->setText(m_shown->label.isEmpty() ? m_shown->error.toHtmlEscaped()
                                                  : tr("<b>%1</b> on %2: %3")
                                                        .arg(m_shown->label.toHtmlEscaped(), m_arch.toHtmlEscaped(),
                                                             m_shown->error.toHtmlEscaped()));
        return;
    }
    // Only the kernel file's lines can be marked here; other files' are counted in the text.
    const QString kernelName = QFileInfo(m_document->kernelPath()).fileName();
    const bool comparing = m_pinned && m_pinned != m_shown && m_pinned->config != m_shown->config;
    std::map<int, LineMark> marks;
    int elsewhere = 0;
    for (const SourceLine& l : m_shown->counts.lines) {
        if (l.localTraffic() == 0 && !comparing)
            continue;
        if (QFileInfo(QString::fromStdString(l.file)).fileName() != kernelName) {
            elsewhere += l.localTraffic();
            continue;
        }
        LineMark m;
        m.spillStores = l.spillStores;
        m.spillLoads = l.spillLoads;
        m.localStores = l.localStores;
        m.localLoads = l.localLoads;
        QStringList sass;
        for (const std::string& i : l.localInstructions)
            sass << QString::fromStdString(i).toHtmlEscaped();
        m.tooltip = tr("<b>Line %1</b>: %2 instructions, %3 spill stores, %4 spill loads, %5 local stores, %6 local "
                       "loads<br><tt>%7</tt>")
                        .arg(l.line)
                        .arg(l.instructions)
                        .arg(l.spillStores)
                        .arg(l.spillLoads)
                        .arg(l.localStores)
                        .arg(l.localLoads)
                        .arg(sass.join(QStringLiteral("<br>")));
        if (comparing)
            m.otherSpills = 0;
        if (m.spills() + m.local() > 0 || comparing)
            marks[l.line] = m;
    }
    QString text;
    if (comparing) {
        const std::vector<LineDifference> diff = lineDifferences(m_shown->counts, m_pinned->counts);
        for (const LineDifference& d : diff) {
            if (QFileInfo(QString::fromStdString(d.file)).fileName() != kernelName)
                continue;
            LineMark& m = marks[d.line];
            m.otherSpills = d.spillsB;
            m.tooltip +=
                tr("<br>The pinned config: %1 spill instructions here (this one: %2)").arg(d.spillsB).arg(d.spillsA);
        }
        // Lines where neither spills and nothing differs need no mark.
        for (auto it = marks.begin(); it != marks.end();) {
            const LineMark& m = it->second;
            if (m.spills() + m.local() == 0 && m.otherSpills <= 0)
                it = marks.erase(it);
            else
                ++it;
        }
        QStringList only;
        QStringList onlyPinned;
        for (const LineDifference& d : diff) {
            if (d.spillsA > 0 && d.spillsB == 0)
                only << QString::number(d.line);
            if (d.spillsB > 0 && d.spillsA == 0)
                onlyPinned << QString::number(d.line);
        }
        text = tr("<b>%1</b> against the pinned <b>%2</b>: %3 lines differ (blue; the gutter: spill "
                  "instructions here | there).")
                   .arg(m_shown->label.toHtmlEscaped(), m_pinned->label.toHtmlEscaped())
                   .arg(diff.size());
        text += only.isEmpty() ? tr(" No line spills here that does not spill there.")
                               : tr(" Spill here only: line %1.").arg(only.join(QStringLiteral(", ")));
        text += onlyPinned.isEmpty()
                    ? QString()
                    : tr(" Spill in the pinned config only: line %1.").arg(onlyPinned.join(QStringLiteral(", ")));
    } else if (m_shown->counts.spillStores + m_shown->counts.spillLoads + m_shown->counts.localStores +
                   m_shown->counts.localLoads ==
               0) {
        text = tr("<b>%1</b> on %2: no spills and no local memory.").arg(m_shown->label.toHtmlEscaped(), m_arch);
    } else {
        text = tr("<b>%1</b> on %2: %3 on %4 lines (the gutter: stores/loads; hover for the SASS).")
                   .arg(m_shown->label.toHtmlEscaped(), m_arch, totals(m_shown->counts))
                   .arg(localLines(m_shown->counts).size());
        if (!m_shown->counts.spillsMarked && m_shown->counts.localStores + m_shown->counts.localLoads > 0)
            text +=
                tr(" This nvdisasm does not mark spills: local stores and loads are spills and local arrays together.");
    }
    if (elsewhere > 0)
        text += tr(" %1 more in included files.").arg(elsewhere);
    m_lines->setText(text);
    m_sourceView->setLineMarks(std::move(marks));
}

} // namespace tilescope::views
