#include "problem/compilecheck.h"

#include "base/error.h"
#include "common/format.h"
#include "exchange/configcodec.h"
#include "jobs/analyze.h"
#include "problem/problemdocument.h"
#include "problem/spacecontroller.h"
#include "spec/problemedit.h"
#include "spec/tuningproblem.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

namespace tilescope::views {

struct CompileCheckPanel::Outcome {
    std::shared_ptr<const TuningProblem> problem;
    std::string arch;
    std::vector<ConfigAnalysis> analyses;
    std::vector<QString> configs;       // "BLOCK_M=64 ..."
    std::vector<ResultRecord> compiled; // the analyses as results compiled and not run
    SpillRule rule;
    QString inert; // parameters that do not change the compiled kernel ("" = none found)
    QString error; // why the check could not run
};

namespace {

// What compiling told of a config, as a result that was never run.
ResultRecord compiledRecord(const ConfigAnalysis& a, ConfigValues values) {
    ResultRecord r;
    r.spaceIndex = a.index;
    r.config = std::move(values);
    Measurement& m = r.measurement;
    m.compileSeconds = a.compileSeconds;
    if (!a.compiled()) {
        m.status = ResultStatus::CompileError;
        m.message = a.message;
        r.log = a.log;
        return r;
    }
    m.staticInfo = a.info;
    if (a.geometry.error.empty()) {
        r.blockSize = a.geometry.threadsPerBlock();
        r.sharedDynamic = a.geometry.sharedDynamic;
        if (a.occupancy.maxWarps > 0)
            r.occupancy = a.occupancy.percent();
        m.status = ResultStatus::Skipped;
        m.message = "compiled for " + a.arch + ", not run";
    } else {
        m.status = ResultStatus::LaunchError;
        m.message = a.geometry.error;
    }
    return r;
}

} // namespace

CompileCheckPanel::CompileCheckPanel(ProblemDocument* document, SpaceController* space, QWidget* parent)
    : QWidget(parent)
    , m_document(document)
    , m_space(space) {
    m_arch = new QComboBox(this);
    m_arch->setObjectName(QStringLiteral("compileArch"));
    for (const std::string& arch : StaticAnalyzer::analysableArchs())
        m_arch->addItem(QString::fromStdString(arch));
    m_arch->setCurrentIndex(std::max(0, m_arch->findText(QStringLiteral("sm_90"))));
    m_arch->setToolTip(tr("The architecture NVRTC compiles for; no GPU of it is needed"));
    m_count = new QSpinBox(this);
    m_count->setRange(1, 200);
    m_count->setValue(12);
    m_count->setToolTip(tr("How many valid configs to compile, sampled uniformly from the space"));
    m_compile = new QPushButton(tr("Compile a Sample"), this);
    m_compile->setObjectName(QStringLiteral("compileSample"));
    m_status = new QLabel(this);
    m_status->setWordWrap(true); // a long status wraps rather than widening the panel
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Arch:"), this));
    top->addWidget(m_arch);
    top->addWidget(new QLabel(tr("Configs:"), this));
    top->addWidget(m_count);
    top->addWidget(m_compile);
    top->addWidget(m_status, 1);

    m_table = new QTableWidget(0, 7, this);
    m_table->setObjectName(QStringLiteral("compileTable"));
    // Short names, as the results table's, so that the columns fit the panel at 1366x768 beside
    // the configs; each header's tooltip says it whole.
    m_table->setHorizontalHeaderLabels({tr("Config"), tr("Status"), tr("Regs"), tr("Spills (B)"), tr("Shared (B)"),
                                        tr("Occupancy"), tr("Limited by")});
    const QStringList headerTips = {
        tr("The config compiled: its parameters"),
        tr("Compiled (ok), or why not"),
        tr("Registers per thread"),
        tr("Spill stores / spill loads, bytes per thread"),
        tr("Shared memory per block, static and dynamic, in bytes"),
        tr("Theoretical occupancy on the chosen arch: resident warps of the most an SM holds"),
        tr("What limits the occupancy: registers, shared memory, warps or blocks per SM"),
    };
    for (int c = 0; c < m_table->columnCount(); ++c)
        m_table->horizontalHeaderItem(c)->setToolTip(headerTips.value(c));
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);

    m_errors = new QListWidget(this);
    m_errors->setObjectName(QStringLiteral("compileErrors"));
    m_errors->setToolTip(tr("Double-click an error to see its line in the Kernel Source panel"));
    m_errors->hide();
    m_inert = new QLabel(this);
    m_inert->setObjectName(QStringLiteral("compileInert"));
    m_inert->setWordWrap(true);
    m_inert->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_inert->setStyleSheet(QStringLiteral("color: #b26a00"));
    m_inert->hide();
    m_rule = new QLabel(this);
    m_rule->setWordWrap(true);
    m_rule->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_addRule = new QPushButton(tr("Add as a Condition"), this);
    m_addRule->setObjectName(QStringLiteral("addRule"));
    m_addRule->hide();
    auto* ruleRow = new QHBoxLayout;
    ruleRow->addWidget(m_rule, 1);
    ruleRow->addWidget(m_addRule);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_errors);
    layout->addWidget(m_inert);
    layout->addLayout(ruleRow);

    connect(m_compile, &QPushButton::clicked, this, &CompileCheckPanel::compileSample);
    connect(m_addRule, &QPushButton::clicked, this, &CompileCheckPanel::addRule);
    connect(m_errors, &QListWidget::itemDoubleClicked, this, [this](QListWidgetItem* item) {
        if (const int line = item->data(Qt::UserRole).toInt(); line > 0)
            emit showSourceLine(line);
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (m_selecting)
                    return;
                if (const QString config = configAt(current.row()); !config.isEmpty())
                    emit configSelected(config);
            });
    connect(m_document, &ProblemDocument::problemChanged, this, &CompileCheckPanel::clear);
    m_table->viewport()->installEventFilter(this);
}

void CompileCheckPanel::fitConfigColumn() {
    // The configs wrap between their parameters, never inside one ("block_size_x=1024"): the
    // column takes the room left, but no less than its longest parameter; the table scrolls then.
    QHeaderView* header = m_table->horizontalHeader();
    int widest = 0;
    const QFontMetrics metrics(m_table->font());
    for (int row = 0; row < m_table->rowCount(); ++row)
        if (const QTableWidgetItem* item = m_table->item(row, 0))
            for (const QString& word : item->text().split(QLatin1Char(' '), Qt::SkipEmptyParts))
                widest = std::max(widest, metrics.horizontalAdvance(word));
    widest += metrics.averageCharWidth() * 2; // the cell's margins
    int others = 0;
    for (int c = 1; c < m_table->columnCount(); ++c)
        others += header->sectionSize(c);
    // Sized here rather than by QHeaderView::Stretch, which kept the width of the configs on one
    // line and pushed the last columns out of sight.
    if (header->sectionResizeMode(0) != QHeaderView::Interactive)
        header->setSectionResizeMode(0, QHeaderView::Interactive);
    header->resizeSection(0, std::max(widest, m_table->viewport()->width() - others));
}

bool CompileCheckPanel::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_table->viewport() && event->type() == QEvent::Resize && m_table->rowCount() > 0)
        QTimer::singleShot(0, this, &CompileCheckPanel::fitConfigColumn);
    return QWidget::eventFilter(watched, event);
}

QString CompileCheckPanel::configAt(int row) const {
    const QTableWidgetItem* item = row >= 0 && row < m_table->rowCount() ? m_table->item(row, 0) : nullptr;
    return item ? item->data(Qt::UserRole).toString() : QString();
}

void CompileCheckPanel::selectConfig(const QString& configJson) {
    int found = -1;
    for (int row = 0; row < m_table->rowCount() && !configJson.isEmpty() && found < 0; ++row)
        if (configAt(row) == configJson)
            found = row;
    m_selecting = true;
    if (found >= 0) {
        m_table->selectRow(found);
        m_table->scrollToItem(m_table->item(found, 0));
    } else {
        m_table->clearSelection();
        m_table->selectionModel()->setCurrentIndex({}, QItemSelectionModel::NoUpdate);
    }
    m_selecting = false;
}

void CompileCheckPanel::clear() {
    m_task.supersede(); // a check of the problem before delivers nothing
    m_busy = false;
    m_compile->setEnabled(true);
    m_status->clear();
    m_table->setRowCount(0);
    m_errors->clear();
    m_errors->hide();
    m_inert->clear();
    m_inert->hide();
    m_rule->clear();
    m_addRule->hide();
    m_suggested.clear();
    const bool had = m_sample != nullptr;
    m_sample.reset();
    m_sampleArch.clear();
    if (had)
        emit sampleChanged();
}

CompileCheckPanel::~CompileCheckPanel() {
    m_task.stop();
}

void CompileCheckPanel::compileSample() {
    const auto spaceResult = m_space->currentSpace();
    const auto problem = m_document->problem();
    if (!problem || !spaceResult || !spaceResult->ok() || spaceResult->problem != problem) {
        m_status->setText(tr("The space is not counted yet: wait for its count, then compile"));
        emit finished();
        return;
    }
    m_busy = true;
    m_compile->setEnabled(false);
    m_status->setText(tr("Compiling %1 configs for %2…").arg(m_count->value()).arg(m_arch->currentText()));
    const std::string arch = m_arch->currentText().toStdString();
    const auto count = static_cast<std::uint64_t>(m_count->value());
    m_task.start(
        [problem, space = spaceResult->space, shape = spaceResult->shapeIndex, arch, count](const BackgroundJob& job) {
            auto out = std::make_shared<Outcome>();
            out->problem = problem;
            out->arch = arch;
            try {
                // The CLI's analyze, for one arch and a sample, with no count of the rule over the space.
                AnalyzeRequest request;
                request.problemPath = problem->fileName;
                request.problem = problem;
                request.space = space;
                request.shape = shape;
                request.archs = {arch};
                request.sample = count;
                request.seed = 1;
                request.ruleSpaceLimit = 0;
                request.cancel = job.cancelFlag();
                AnalyzeEvents events;
                // Configs whose parameter values never reach the code, from the sample's neighbours.
                events.warning = [&out](const LaunchWarning& w) { out->inert = QString::fromStdString(w.message); };
                AnalyzeOutcome analysis = runAnalysis(request, events);
                out->analyses = std::move(analysis.results);
                out->rule = std::move(analysis.rules.front());
                const ConfigCodec codec(*space);
                for (const ConfigAnalysis& a : out->analyses) {
                    out->configs.push_back(QString::fromStdString(space->describe(a.config)));
                    out->compiled.push_back(compiledRecord(a, codec.toValues(a.config)));
                }
            } catch (const InputError& e) {
                out->error = QString::fromStdString(e.message());
            } catch (const std::exception& e) {
                out->error = QString::fromStdString(e.what());
            }
            return std::shared_ptr<const Outcome>(std::move(out));
        },
        [this](std::shared_ptr<const Outcome> outcome) { show(outcome); });
}

void CompileCheckPanel::show(const std::shared_ptr<const Outcome>& outcome) {
    m_busy = false;
    m_compile->setEnabled(true);
    m_selecting = true; // the rows go: no config is picked by that
    m_table->setRowCount(0);
    m_selecting = false;
    m_sample = std::make_shared<const std::vector<ResultRecord>>(outcome->compiled);
    m_sampleArch = outcome->arch;
    m_errors->clear();
    m_errors->hide();
    m_rule->clear();
    m_addRule->hide();
    m_inert->setText(outcome->inert);
    m_inert->setVisible(!outcome->inert.isEmpty());
    if (!outcome->error.isEmpty()) {
        m_status->setText(outcome->error);
        emit sampleChanged();
        emit finished();
        return;
    }
    int failed = 0;
    int spilling = 0;
    static const QRegularExpression errorLine(QStringLiteral(R"(^(.*?)\((\d+)\): (error|warning).*$)"),
                                              QRegularExpression::MultilineOption);
    for (std::size_t i = 0; i < outcome->analyses.size(); ++i) {
        const ConfigAnalysis& a = outcome->analyses[i];
        const int row = m_table->rowCount();
        m_table->insertRow(row);
        auto put = [&](int column, const QString& text) {
            auto* item = new QTableWidgetItem(text);
            if (column >= 2)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(row, column, item);
        };
        put(0, outcome->configs[i]);
        if (i < outcome->compiled.size())
            m_table->item(row, 0)->setData(Qt::UserRole,
                                           QString::fromStdString(configJson(outcome->compiled[i].config)));
        if (!a.compiled()) {
            ++failed;
            put(1, tr("compile error"));
            m_table->item(row, 1)->setToolTip(QString::fromStdString(a.message));
            auto matches = errorLine.globalMatch(QString::fromStdString(a.log));
            while (matches.hasNext()) {
                const auto m = matches.next();
                const QString text = QStringLiteral("%1:%2: %3")
                                         .arg(m.captured(1), m.captured(2),
                                              m.captured(0).mid(m.capturedLength(1) + m.captured(2).size() + 4));
                if (m_errors->findItems(text, Qt::MatchExactly).isEmpty()) {
                    auto* item = new QListWidgetItem(text, m_errors);
                    item->setData(Qt::UserRole, m.captured(2).toInt());
                }
            }
            continue;
        }
        spilling += a.spills() ? 1 : 0;
        put(1, a.message.empty() ? tr("ok") : QString::fromStdString(a.message));
        put(2, QString::number(a.info.registers));
        put(3, QStringLiteral("%1 / %2").arg(a.info.spillStores).arg(a.info.spillLoads));
        put(4, formatCount(static_cast<double>(a.sharedBytes())));
        put(5, a.occupancy.launchable ? QStringLiteral("%1 %").arg(a.occupancy.percent(), 0, 'f', 1)
                                      : tr("cannot launch"));
        put(6, QString::fromStdString(std::string(limiterName(a.occupancy.limiter))));
        if (a.spills())
            for (int c = 0; c < m_table->columnCount(); ++c)
                m_table->item(row, c)->setForeground(QColor(0xc6, 0x28, 0x28));
    }
    m_table->resizeColumnsToContents();
    fitConfigColumn();
    m_errors->setVisible(m_errors->count() > 0);
    m_status->setText(tr("%1 compiled for %2: %3 failed, %4 spill")
                          .arg(outcome->analyses.size())
                          .arg(m_arch->currentText())
                          .arg(failed)
                          .arg(spilling));
    if (outcome->rule.found && spilling > 0) {
        const SuggestedRule& r = outcome->rule.best;
        m_suggested = r.condition;
        m_rule->setText(tr("Register-pressure rule: <code>%1</code> prunes %2 of the %3 spilling configs sampled "
                           "and %4 of the others")
                            .arg(QString::fromStdString(r.condition).toHtmlEscaped())
                            .arg(r.counts.prunedPositives)
                            .arg(r.counts.positives)
                            .arg(r.counts.prunedNegatives));
        m_addRule->show();
    } else if (spilling == 0 && failed < static_cast<int>(outcome->analyses.size())) {
        m_rule->setText(tr("No config of the sample spills."));
    }
    emit sampleChanged();
    emit finished();
}

void CompileCheckPanel::addRule() {
    const auto problem = m_document->problem();
    if (!problem || m_suggested.empty())
        return;
    try {
        m_document->applyEdit(std::make_shared<const TuningProblem>(
                                  edit::setCondition(*problem, problem->conditions.size(), m_suggested)),
                              tr("Add the register-pressure rule"));
        m_addRule->hide();
        m_rule->setText(tr("Added as condition %1.").arg(problem->conditions.size() + 1));
    } catch (const InputError& e) {
        m_rule->setText(QString::fromStdString(e.message()));
    }
}

} // namespace tilescope::views
