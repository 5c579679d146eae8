#include "session/runpanel.h"

#include "common/format.h"
#include "models/quantity.h"

#include "analysis/staticanalysis.h"
#include "base/error.h"
#include "base/textformat.h"
#include "measure/metricnames.h"
#include "search/strategy.h"
#include "tuner/objective.h"
#include "tuner/shapesetrun.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>
#include <cmath>

namespace tilescope::views {

namespace {

enum LogRole { DetailsRole = Qt::UserRole + 1, ConfigRole, KindRole };

enum BudgetKind { WholeSpace, Configs, Fraction, Seconds };

enum ShapeSetKind { OneShape, AllShapes, ListedShapes };

QString bestText(const ResultRecord& best, const std::string& objectiveName) {
    if (best.ranksStatically()) // analysed, never run: the best by what compiling told
        return QObject::tr("%1 (not timed)").arg(qs(describeStatic(best)));
    QString text = formatNumber(best.timeMs() * 1000) + QStringLiteral(" µs");
    if (best.objective)
        text += QStringLiteral("  %1 %2").arg(formatNumber(*best.objective), qs(objectiveName));
    return text;
}

} // namespace

std::vector<LocalGpu> probeLocalGpus(const QString& root) {
    std::vector<LocalGpu> gpus;
    const QDir dir(root);
    if (!dir.exists())
        return gpus;
    QStringList busIds = dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
    for (const QString& busId : busIds) {
        LocalGpu gpu;
        gpu.busId = busId;
        gpu.name = QStringLiteral("NVIDIA GPU");
        QFile info(dir.filePath(busId + QStringLiteral("/information")));
        if (info.open(QIODevice::ReadOnly | QIODevice::Text)) {
            for (const QString& line : QString::fromUtf8(info.readAll()).split(QLatin1Char('\n'))) {
                if (line.startsWith(QStringLiteral("Model:"))) {
                    gpu.name = line.mid(6).trimmed();
                    break;
                }
            }
        }
        gpu.ordinal = static_cast<int>(gpus.size());
        gpus.push_back(gpu);
    }
    return gpus;
}

RunPanel::RunPanel(SessionController* controller, QWidget* parent)
    : QWidget(parent)
    , m_controller(controller)
    , m_backendCombo(new QComboBox(this))
    , m_driverLabel(new QLabel(this))
    , m_replayRow(new QWidget(this))
    , m_recordingEdit(new QLineEdit(this))
    , m_remoteEdit(new QLineEdit(this))
    , m_analysisRow(new QWidget(this))
    , m_archCombo(new QComboBox(this))
    , m_strategyCombo(new QComboBox(this))
    , m_seedSpin(new QSpinBox(this))
    , m_budgetKind(new QComboBox(this))
    , m_budgetValue(new QDoubleSpinBox(this))
    , m_shapeCombo(new QComboBox(this))
    , m_shapeSetCombo(new QComboBox(this))
    , m_shapeListEdit(new QLineEdit(this))
    , m_crossEvalSpin(new QSpinBox(this))
    , m_metricsBox(new QCheckBox(tr("Collect CUPTI metrics (a separate profiling pass)"), this))
    , m_resumeBox(new QCheckBox(tr("Resume the matching session in the database"), this))
    , m_databaseLabel(new QLabel(this))
    , m_startButton(new QPushButton(tr("Start"), this))
    , m_cancelButton(new QPushButton(tr("Cancel"), this))
    , m_progressBar(new QProgressBar(this))
    , m_progressLabel(new QLabel(this))
    , m_log(new QListWidget(this)) {
    setUpBackendChoices();
    setUpSearchChoices();
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(makeForm());
    layout->addLayout(makeRunControls());
    layout->addWidget(m_progressBar);
    layout->addWidget(m_progressLabel);
    layout->addWidget(new QLabel(tr("Run log"), this));
    layout->addWidget(m_log, 1);
    connectController();
    setDatabasePath({});
    setLocalGpus(probeLocalGpus());
    updateBudgetEditor();
    updateEnabled();
}

// Where measurements come from: the backend's rows.
void RunPanel::setUpBackendChoices() {
    m_driverLabel->setWordWrap(true);
    // Two lines kept free: a wrapped note squeezed by a short dock would be cut through.
    m_driverLabel->setMinimumHeight(2 * m_driverLabel->fontMetrics().lineSpacing() + 2);
    m_recordingEdit->setPlaceholderText(tr("A T4 file, a Kernel Tuner cache or a Tilescope database"));
    auto* browse = new QPushButton(tr("Browse…"), m_replayRow);
    auto* replayLayout = new QHBoxLayout(m_replayRow);
    replayLayout->setContentsMargins(0, 0, 0, 0);
    replayLayout->addWidget(m_recordingEdit, 1);
    replayLayout->addWidget(browse);
    connect(browse, &QPushButton::clicked, this, &RunPanel::browseRecording);
    connect(m_recordingEdit, &QLineEdit::textChanged, this, &RunPanel::updateEnabled);
    m_remoteEdit->setPlaceholderText(tr("user@host/0,1"));
    m_remoteEdit->setToolTip(tr("GPUs of another machine, reached with your ssh (keys or an agent, no password "
                                "prompt): user@host[:port]/devices. tilescope-worker must be on the PATH there; "
                                "configs compile here."));
    connect(m_remoteEdit, &QLineEdit::textChanged, this, &RunPanel::updateEnabled);

    try {
        for (const std::string& arch : StaticAnalyzer::analysableArchs())
            m_archCombo->addItem(qs(arch), qs(arch));
    } catch (const std::exception&) {
        // NVRTC is missing: no arch to offer; the analysis choice stays empty.
    }
    const int sm90 = m_archCombo->findData(QStringLiteral("sm_90"));
    if (sm90 >= 0)
        m_archCombo->setCurrentIndex(sm90);
    auto* analysisLayout = new QHBoxLayout(m_analysisRow);
    analysisLayout->setContentsMargins(0, 0, 0, 0);
    analysisLayout->addWidget(m_archCombo, 1);
    m_archCombo->setToolTip(tr("Compile every config for this arch with NVRTC and record registers, spills and "
                               "occupancy; nothing is timed (the results are stored as analysed, the best by "
                               "occupancy, then spills and registers; the heatmap colours them by occupancy)"));
}

// How to search: the strategy, the seed, the budget, the shape set.
void RunPanel::setUpSearchChoices() {
    for (const std::string& name : strategyNames())
        m_strategyCombo->addItem(qs(name), qs(name));
    m_seedSpin->setRange(0, INT_MAX);
    m_budgetKind->addItem(tr("Whole space"), WholeSpace);
    m_budgetKind->addItem(tr("Configs"), Configs);
    m_budgetKind->addItem(tr("Fraction of the space (%)"), Fraction);
    m_budgetKind->addItem(tr("Time (s)"), Seconds);
    connect(m_budgetKind, &QComboBox::currentIndexChanged, this, &RunPanel::updateBudgetEditor);
    // A shape set: each shape tuned in turn into the one database, its search started from the
    // winners of the shapes tuned before (as `tilescope-cli tune --shapes`).
    m_shapeSetCombo->addItem(tr("This shape"), OneShape);
    m_shapeSetCombo->addItem(tr("All shapes"), AllShapes);
    m_shapeSetCombo->addItem(tr("These shapes:"), ListedShapes);
    m_shapeSetCombo->setToolTip(tr("A shape set tunes each shape in turn into the one database, each search started "
                                   "from the winners of the shapes tuned before; the Shapes panel then shows the "
                                   "dispatch table"));
    m_shapeListEdit->setPlaceholderText(tr("0,2,5"));
    m_crossEvalSpin->setRange(0, 1000);
    m_crossEvalSpin->setSpecialValueText(tr("no cross-evaluation"));
    m_crossEvalSpin->setPrefix(tr("cross-evaluate the best "));
    m_crossEvalSpin->setToolTip(tr("After the search, measure the best N configs of every shape on every other shape "
                                   "(where valid), filling the shape x config matrix a dispatch table is chosen from"));
    connect(m_shapeSetCombo, &QComboBox::currentIndexChanged, this, &RunPanel::updateEnabled);
    connect(m_shapeListEdit, &QLineEdit::textChanged, this, &RunPanel::updateEnabled);
}

// The choices, a row each.
QFormLayout* RunPanel::makeForm() {
    auto* shapeSetRow = new QHBoxLayout;
    shapeSetRow->addWidget(m_shapeSetCombo);
    shapeSetRow->addWidget(m_shapeListEdit, 1);
    auto* budgetRow = new QHBoxLayout;
    budgetRow->addWidget(m_budgetKind, 1);
    budgetRow->addWidget(m_budgetValue, 1);
    m_databaseLabel->setWordWrap(true);
    m_databaseLabel->setMinimumHeight(2 * m_databaseLabel->fontMetrics().lineSpacing() + 2);
    m_databaseLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* changeDb = new QPushButton(tr("Change…"), this);
    connect(changeDb, &QPushButton::clicked, this, &RunPanel::browseDatabase);
    auto* dbRow = new QHBoxLayout;
    dbRow->addWidget(m_databaseLabel, 1);
    dbRow->addWidget(changeDb);

    auto* form = new QFormLayout;
    form->addRow(tr("Backend"), m_backendCombo);
    form->addRow(QString(), m_driverLabel);
    form->addRow(tr("Recording"), m_replayRow);
    form->addRow(tr("Remote"), m_remoteEdit);
    form->addRow(tr("Arch"), m_analysisRow);
    form->addRow(QString(), m_metricsBox);
    form->addRow(tr("Shape"), m_shapeCombo);
    form->addRow(tr("Shape set"), shapeSetRow);
    form->addRow(QString(), m_crossEvalSpin);
    form->addRow(tr("Strategy"), m_strategyCombo);
    form->addRow(tr("Seed"), m_seedSpin);
    form->addRow(tr("Budget"), budgetRow);
    form->addRow(QString(), m_resumeBox);
    form->addRow(tr("Results"), dbRow);

    return form;
}

// Start, cancel; the progress and the log are below them.
QBoxLayout* RunPanel::makeRunControls() {
    m_startButton->setDefault(true);
    connect(m_startButton, &QPushButton::clicked, this, &RunPanel::startRun);
    connect(m_cancelButton, &QPushButton::clicked, this, &RunPanel::cancelRun);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_startButton);
    buttons->addWidget(m_cancelButton);
    buttons->addStretch(1);
    m_progressBar->setRange(0, 1);
    m_progressBar->setValue(0);
    m_progressBar->setFormat(QStringLiteral("%v / %m"));
    m_progressLabel->setWordWrap(true);
    m_progressLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_log->setUniformItemSizes(true);
    m_log->setWordWrap(false);
    m_log->setToolTip(tr("Double-click a compile error to read its NVRTC log"));
    connect(m_log, &QListWidget::itemDoubleClicked, this,
            [this](QListWidgetItem* item) { showLogDetails(m_log->row(item)); });
    return buttons;
}

// The run's course from the controller.
void RunPanel::connectController() {
    connect(m_backendCombo, &QComboBox::currentIndexChanged, this, &RunPanel::onBackendChanged);
    connect(m_controller, &SessionController::runningChanged, this, [this](bool running) {
        if (running)
            m_runActive = true;
        updateEnabled();
    });
    connect(m_controller, &SessionController::logEntry, this, &RunPanel::appendLog);
    connect(m_controller, &SessionController::progressed, this, &RunPanel::onProgress);
    connect(m_controller, &SessionController::finished, this, &RunPanel::onFinished);
    connect(m_controller, &SessionController::failed, this, &RunPanel::onFailed);
    connect(m_controller, &SessionController::started, this, [this]() {
        m_objectiveName = m_controller->objectiveName();
        m_progressLabel->setText(tr("Started"));
    });
}

RunPanel::~RunPanel() = default;

void RunPanel::setLocalGpus(std::vector<LocalGpu> gpus) {
    const bool hadGpus = !m_gpus.empty();
    m_gpus = std::move(gpus);
    rebuildBackendChoice();
    if (!hadGpus && !m_gpus.empty())
        m_backendCombo->setCurrentIndex(0); // GPUs appeared: measuring is what the panel is for
}

void RunPanel::rebuildBackendChoice() {
    const QString previous = m_backendCombo->currentData().toString();
    QSignalBlocker block(m_backendCombo);
    m_backendCombo->clear();
    for (const LocalGpu& gpu : m_gpus)
        m_backendCombo->addItem(tr("CUDA device %1 — %2").arg(gpu.ordinal).arg(gpu.name),
                                QStringLiteral("cuda:%1").arg(gpu.ordinal));
    if (m_gpus.size() > 1) {
        QStringList ordinals;
        for (const LocalGpu& gpu : m_gpus)
            ordinals << QString::number(gpu.ordinal);
        m_backendCombo->addItem(tr("All %1 CUDA devices").arg(m_gpus.size()),
                                QStringLiteral("cuda:") + ordinals.join(QLatin1Char(',')));
    }
    if (m_gpus.empty()) {
        m_backendCombo->addItem(tr("CUDA (no NVIDIA driver found)"), QStringLiteral("cuda"));
        // Disabled: the GUI would only learn at Start that no worker can run.
        if (auto* model = qobject_cast<QStandardItemModel*>(m_backendCombo->model()))
            model->item(m_backendCombo->count() - 1)->setEnabled(false);
    }
    m_backendCombo->addItem(tr("GPUs of another machine (ssh)"), QStringLiteral("ssh"));
    m_backendCombo->addItem(tr("Replay a recording"), QStringLiteral("replay"));
    m_backendCombo->addItem(tr("Static analysis only (no GPU)"), QStringLiteral("analysis"));
    int index = m_backendCombo->findData(previous);
    if (index < 0 || (m_gpus.empty() && previous == QLatin1String("cuda")))
        index = m_gpus.empty() ? m_backendCombo->findData(QStringLiteral("replay")) : 0;
    m_backendCombo->setCurrentIndex(index);
    m_driverLabel->setText(m_gpus.empty() ? tr("No NVIDIA driver found: replay a recording or analyse offline.")
                                          : tr("%n GPU(s) found by the NVIDIA driver (numbered in bus order).", nullptr,
                                               static_cast<int>(m_gpus.size())));
    onBackendChanged();
}

RunPanel::BackendKind RunPanel::backendKind() const {
    const QString choice = m_backendCombo->currentData().toString();
    if (choice == QLatin1String("replay"))
        return BackendKind::Replay;
    if (choice == QLatin1String("analysis"))
        return BackendKind::Analysis;
    if (choice == QLatin1String("ssh"))
        return BackendKind::Remote;
    return BackendKind::Cuda;
}

void RunPanel::onBackendChanged() {
    const BackendKind kind = backendKind();
    m_replayRow->setEnabled(kind == BackendKind::Replay);
    m_remoteEdit->setEnabled(kind == BackendKind::Remote);
    m_analysisRow->setEnabled(kind == BackendKind::Analysis);
    m_metricsBox->setEnabled((kind == BackendKind::Cuda && cudaAvailable()) || kind == BackendKind::Remote);
    updateEnabled();
}

void RunPanel::setReplayRecording(const QString& path) {
    m_recordingEdit->setText(path);
    m_backendCombo->setCurrentIndex(m_backendCombo->findData(QStringLiteral("replay")));
}

bool RunPanel::setAnalysisArch(const QString& arch) {
    const int index = m_archCombo->findData(arch);
    if (index < 0)
        return false;
    m_archCombo->setCurrentIndex(index);
    m_backendCombo->setCurrentIndex(m_backendCombo->findData(QStringLiteral("analysis")));
    return true;
}

QString RunPanel::backendSpec() const {
    switch (backendKind()) {
    case BackendKind::Replay: {
        const QString path = m_recordingEdit->text().trimmed();
        return path.isEmpty() ? QString() : QStringLiteral("replay:") + path;
    }
    case BackendKind::Analysis:
        return m_archCombo->count() == 0 ? QString()
                                         : QStringLiteral("analysis:") + m_archCombo->currentData().toString();
    case BackendKind::Cuda:
        return cudaAvailable() ? m_backendCombo->currentData().toString() : QString();
    case BackendKind::Remote: {
        const QString where = m_remoteEdit->text().trimmed();
        return where.isEmpty() ? QString() : QStringLiteral("ssh://") + where;
    }
    }
    return {};
}

void RunPanel::setEditedProblem(std::shared_ptr<const TuningProblem> problem) {
    const bool sameShapes = m_problem && problem && m_problem->shapes == problem->shapes;
    m_problem = std::move(problem);
    if (!sameShapes && m_problem) {
        const int current = m_shapeCombo->currentIndex();
        const QSignalBlocker block(m_shapeCombo);
        fillShapes();
        m_shapeCombo->setCurrentIndex(std::clamp(current, 0, m_shapeCombo->count() - 1));
    }
    updateEnabled();
}

void RunPanel::fillShapes() {
    m_shapeCombo->clear();
    for (std::size_t i = 0; i < m_problem->shapes.size(); ++i)
        m_shapeCombo->addItem(QStringLiteral("%1: %2").arg(QString::number(i), shapeText(*m_problem, i)));
}

void RunPanel::setProblem(std::shared_ptr<const TuningProblem> problem, QString problemPath) {
    m_problem = std::move(problem);
    m_problemPath = std::move(problemPath);
    m_shapeCombo->clear();
    if (m_problem) {
        fillShapes();
        // The problem's own budget and strategy, as the CLI takes them.
        Budget budget;
        try {
            budget = Budget::fromProblem(*m_problem);
        } catch (const std::exception&) {
        }
        const std::string strategy = canonicalStrategyName(defaultStrategy(m_problem->searchName, budget));
        if (const int s = m_strategyCombo->findData(qs(strategy)); s >= 0)
            m_strategyCombo->setCurrentIndex(s);
        if (budget.configs) {
            m_budgetKind->setCurrentIndex(m_budgetKind->findData(Configs));
            updateBudgetEditor();
            m_budgetValue->setValue(static_cast<double>(*budget.configs));
        } else if (budget.fraction) {
            m_budgetKind->setCurrentIndex(m_budgetKind->findData(Fraction));
            updateBudgetEditor();
            m_budgetValue->setValue(*budget.fraction * 100);
        } else if (budget.seconds) {
            m_budgetKind->setCurrentIndex(m_budgetKind->findData(Seconds));
            updateBudgetEditor();
            m_budgetValue->setValue(*budget.seconds);
        } else {
            m_budgetKind->setCurrentIndex(m_budgetKind->findData(WholeSpace));
        }
        const std::vector<std::string> metrics =
            expandMetricNames(m_problem->metrics.empty() ? std::vector<std::string>{"default"} : m_problem->metrics);
        m_metricsBox->setToolTip(
            wantsEveryConfigProfiled(m_problem->metrics)
                ? tr("CUPTI metrics: %1; for every config (all-configs)").arg(qs(joined(metrics)))
                : tr("CUPTI metrics: %1; for the best five configs, and the leaders of a search once 20 configs have "
                     "a time (all-configs in the problem's Tilescope.Metrics: for every config)")
                      .arg(qs(joined(metrics))));
        m_metricsBox->setChecked(!m_problem->metrics.empty());
    }
    updateEnabled();
}

void RunPanel::setDatabasePath(QString path) {
    if (path.isEmpty()) {
        // The data folder named once: AppDataLocation names the organisation and the application,
        // both "Tilescope" (Tilescope/Tilescope/).
        const QString dataFolder = QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation);
        const QString name = QCoreApplication::applicationName().isEmpty() ? QStringLiteral("Tilescope")
                                                                           : QCoreApplication::applicationName();
        path = QDir(dataFolder.isEmpty() ? QDir::homePath() : dataFolder + QLatin1Char('/') + name)
                   .filePath(QStringLiteral("results.db"));
    }
    m_databasePath = path;
    m_databaseLabel->setText(QDir::toNativeSeparators(path));
}

QString RunPanel::databasePath() const {
    return m_databasePath;
}

void RunPanel::updateBudgetEditor() {
    const int kind = m_budgetKind->currentData().toInt();
    m_budgetValue->setEnabled(kind != WholeSpace);
    switch (kind) {
    case Configs:
        m_budgetValue->setDecimals(0);
        m_budgetValue->setRange(1, 1e12);
        m_budgetValue->setSuffix(tr(" configs"));
        if (m_budgetValue->value() < 1)
            m_budgetValue->setValue(100);
        break;
    case Fraction:
        m_budgetValue->setDecimals(2);
        m_budgetValue->setRange(0.01, 100);
        m_budgetValue->setSuffix(QStringLiteral(" %"));
        break;
    case Seconds:
        m_budgetValue->setDecimals(0);
        m_budgetValue->setRange(1, 1e7);
        m_budgetValue->setSuffix(QStringLiteral(" s"));
        break;
    default:
        m_budgetValue->setSuffix(QString());
        break;
    }
}

std::optional<SessionController::Request> RunPanel::request(QString* why) const {
    auto fail = [why](const QString& text) -> std::optional<SessionController::Request> {
        if (why)
            *why = text;
        return std::nullopt;
    };
    if (!m_problem)
        return fail(tr("Open a problem first"));
    const QString backend = backendSpec();
    if (backend.isEmpty()) {
        if (backendKind() == BackendKind::Replay)
            return fail(tr("Choose a recording to replay"));
        if (backendKind() == BackendKind::Cuda)
            return fail(tr("No NVIDIA driver found: replay a recording or analyse offline"));
        if (backendKind() == BackendKind::Remote)
            return fail(tr("Name the machine: user@host/0,1"));
        return fail(tr("No arch to analyse for"));
    }
    SessionController::Request r;
    r.problem = m_problem;
    r.backend = backend;
    r.databasePath = m_databasePath;
    r.options.shapeIndex = static_cast<std::size_t>(std::max(0, m_shapeCombo->currentIndex()));
    if (const int set = m_shapeSetCombo->currentData().toInt(); set != OneShape) {
        try {
            r.shapeSet.shapes = parseShapeList(set == AllShapes ? "all" : m_shapeListEdit->text().toStdString(),
                                               m_problem->shapes.size(), tr("Shape set").toStdString());
        } catch (const InputError& e) {
            return fail(tr("Shape set: %1").arg(qs(e.message())));
        }
        r.shapeSet.crossEval = static_cast<std::size_t>(m_crossEvalSpin->value());
        r.shapeSet.database = QDir::toNativeSeparators(m_databasePath).toStdString();
    }
    r.options.strategy = m_strategyCombo->currentData().toString().toStdString();
    r.options.seed = static_cast<std::uint64_t>(m_seedSpin->value());
    r.options.confirmTop = 3; // the best three measured again at the end (not with replay)
    r.options.resume = m_resumeBox->isChecked();
    switch (m_budgetKind->currentData().toInt()) {
    case Configs:
        r.options.budget.configs = static_cast<std::uint64_t>(std::llround(m_budgetValue->value()));
        break;
    case Fraction:
        r.options.budget.fraction = m_budgetValue->value() / 100.0;
        break;
    case Seconds:
        r.options.budget.seconds = m_budgetValue->value();
        break;
    default:
        break;
    }
    if ((backendKind() == BackendKind::Cuda || backendKind() == BackendKind::Remote) && m_metricsBox->isChecked()) {
        r.metrics =
            expandMetricNames(m_problem->metrics.empty() ? std::vector<std::string>{"default"} : m_problem->metrics);
        if (wantsEveryConfigProfiled(m_problem->metrics))
            r.metrics.push_back(kEveryConfigMetricsWord); // the use case reads it; the backend drops it
    }
    // An objective of energy is measured whether or not counters are asked for.
    if ((backendKind() == BackendKind::Cuda || backendKind() == BackendKind::Remote) &&
        objectivesNeedEnergy(*m_problem) && !wantsEnergy(r.metrics))
        r.metrics.push_back(std::string(kEnergyMetric));
    return r;
}

void RunPanel::startRun() {
    QString why;
    std::optional<SessionController::Request> r = request(&why);
    if (!r) {
        appendLog({RunLogEntry::Kind::Error, why, {}, {}});
        return;
    }
    m_progressBar->setRange(0, 1);
    m_progressBar->setValue(0);
    m_progressLabel->setText(tr("Starting…"));
    m_controller->start(std::move(*r));
}

void RunPanel::cancelRun() {
    m_controller->cancel();
    m_progressLabel->setText(tr("Cancelling: the results in hand are kept…"));
}

void RunPanel::updateEnabled() {
    const bool running = m_controller->isRunning();
    m_startButton->setEnabled(!running && m_problem && !backendSpec().isEmpty());
    m_cancelButton->setEnabled(running);
    for (QWidget* w : std::initializer_list<QWidget*>{m_backendCombo, m_shapeCombo, m_shapeSetCombo, m_strategyCombo,
                                                      m_seedSpin, m_budgetKind, m_resumeBox})
        w->setEnabled(!running);
    const int shapeSet = m_shapeSetCombo->currentData().toInt();
    m_shapeListEdit->setEnabled(!running && shapeSet == ListedShapes);
    m_crossEvalSpin->setEnabled(!running && shapeSet != OneShape);
    m_replayRow->setEnabled(!running && backendKind() == BackendKind::Replay);
    m_remoteEdit->setEnabled(!running && backendKind() == BackendKind::Remote);
    m_analysisRow->setEnabled(!running && backendKind() == BackendKind::Analysis);
    m_metricsBox->setEnabled(
        !running && ((backendKind() == BackendKind::Cuda && cudaAvailable()) || backendKind() == BackendKind::Remote));
    m_budgetValue->setEnabled(!running && m_budgetKind->currentData().toInt() != WholeSpace);
}

void RunPanel::browseRecording() {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Replay a recording"), m_recordingEdit->text(),
                                     tr("Recordings (*.json *.json.gz *.gz *.db *.sqlite);;All files (*)"));
    if (!path.isEmpty())
        m_recordingEdit->setText(path);
}

void RunPanel::browseDatabase() {
    const QString path = QFileDialog::getSaveFileName(this, tr("Results database"), m_databasePath,
                                                      tr("Tilescope databases (*.db);;All files (*)"), nullptr,
                                                      QFileDialog::DontConfirmOverwrite);
    if (!path.isEmpty())
        setDatabasePath(path);
}

void RunPanel::appendLog(const RunLogEntry& entry) {
    auto* item = new QListWidgetItem(entry.text);
    item->setData(DetailsRole, entry.details);
    item->setData(ConfigRole, entry.configJson);
    item->setData(KindRole, static_cast<int>(entry.kind));
    switch (entry.kind) {
    case RunLogEntry::Kind::CompileError:
        item->setForeground(QColor(0xd3, 0x2f, 0x2f));
        item->setToolTip(tr("Double-click to read the NVRTC log"));
        break;
    case RunLogEntry::Kind::Error:
    case RunLogEntry::Kind::ConfigFailure:
        item->setForeground(QColor(0xd3, 0x2f, 0x2f));
        item->setToolTip(entry.details.isEmpty() ? entry.text : entry.details);
        break;
    case RunLogEntry::Kind::Note:
        item->setToolTip(entry.text);
        break;
    }
    m_log->addItem(item);
    while (m_log->count() > kMaxLogEntries)
        delete m_log->takeItem(0);
    m_log->scrollToBottom();
}

QDialog* RunPanel::showLogDetails(int row) {
    QListWidgetItem* item = m_log->item(row);
    if (!item)
        return nullptr;
    const QString details = item->data(DetailsRole).toString();
    if (details.isEmpty())
        return nullptr;
    const auto kind = static_cast<RunLogEntry::Kind>(item->data(KindRole).toInt());
    auto* dialog = new QDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(kind == RunLogEntry::Kind::CompileError ? tr("NVRTC log") : tr("Details"));
    auto* label = new QLabel(item->text(), dialog);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* text = new QPlainTextEdit(dialog);
    text->setObjectName(QStringLiteral("logText"));
    text->setReadOnly(true);
    text->setLineWrapMode(QPlainTextEdit::NoWrap);
    text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    text->setPlainText(details);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::close);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(label);
    layout->addWidget(text, 1);
    layout->addWidget(buttons);
    dialog->resize(760, 480);
    dialog->show();
    return dialog;
}

void RunPanel::onProgress(const SessionProgress& p) {
    const int total = static_cast<int>(std::min<std::uint64_t>(p.total, INT_MAX));
    m_progressBar->setRange(0, std::max(1, total));
    m_progressBar->setValue(static_cast<int>(std::min<std::uint64_t>(p.done, INT_MAX)));
    QStringList parts;
    parts << tr("%1 of %2 configs").arg(formatCount(p.done), formatCount(p.total));
    if (p.rate > 0)
        parts << tr("%1 / s").arg(formatNumber(p.rate));
    if (p.etaSeconds >= 0 && m_controller->isRunning())
        parts << tr("ETA %1").arg(formatDuration(p.etaSeconds));
    if (p.best)
        parts << tr("best %1 (%2)").arg(bestText(*p.best, m_objectiveName), qs(describeConfig(p.best->config)));
    m_progressLabel->setText(parts.join(QStringLiteral(" · ")));
}

void RunPanel::onFinished(const SessionSummary& summary) {
    m_runActive = false;
    onProgress(summary.progress);
    m_progressLabel->setText(
        tr("Session %1 %2: %3")
            .arg(summary.session.id)
            .arg(qs(std::string(sessionStateName(summary.session.state))),
                 qs(summary.confirmation.empty() ? summary.stopReason
                                                 : summary.stopReason + "; " + summary.confirmation)) +
        QStringLiteral("\n") + m_progressLabel->text());
    updateEnabled();
}

void RunPanel::onFailed(const QString& message) {
    if (!m_runActive)
        return; // a recording that did not open: not this panel's run
    m_runActive = false;
    m_progressLabel->setText(tr("Stopped: %1").arg(message));
    updateEnabled();
}

} // namespace tilescope::views
