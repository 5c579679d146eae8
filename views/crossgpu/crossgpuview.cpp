#include "crossgpu/crossgpuview.h"

#include "model/configjson.h"

#include "base/error.h"
#include "common/format.h"
#include "compile/compilecache.h"
#include "exchange/configcodec.h"
#include "problem/spacecontroller.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTableView>
#include <QTextDocumentFragment>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <exception>
#include <utility>

namespace tilescope::views {

namespace {

const std::vector<std::string> kDefaultArchs = {"sm_80", "sm_86", "sm_89", "sm_90"};

std::vector<std::string> supportedArchs() {
    try {
        return StaticAnalyzer::analysableArchs();
    } catch (const std::exception&) {
        std::vector<std::string> archs;
        for (const ArchLimits& limits : knownArchs())
            archs.push_back(limits.arch);
        return archs;
    }
}

// The rows of a batch of configs analysed for every arch (`results`: the archs of each config in
// turn); a config cancelled before every arch compiled is left out.
std::vector<CrossGpuRow> rowsOf(const ConfigSpace& space, const ConfigCodec& codec,
                                std::span<const std::uint64_t> batch, const std::vector<ConfigAnalysis>& results,
                                const std::vector<std::string>& archs) {
    std::vector<CrossGpuRow> rows;
    for (std::size_t c = 0; c < batch.size(); ++c) {
        CrossGpuRow row;
        row.index = batch[c];
        const Config config = space.at(row.index);
        for (int p = 0; p < space.parameterCount(); ++p)
            row.values << formatValue(space.value(config, p));
        row.configJson = configJson(codec.toValues(config));
        bool complete = true;
        for (std::size_t a = 0; a < archs.size(); ++a) {
            const ConfigAnalysis& r = results[c * archs.size() + a];
            complete = complete && r.status != CompileStatus::Cancelled;
            row.perArch.push_back(r);
        }
        if (!complete)
            continue;
        describeDifferences(row, archs);
        rows.push_back(std::move(row));
    }
    return rows;
}

} // namespace

CrossGpuView::CrossGpuView(QWidget* parent)
    : QWidget(parent) {
    m_sourceCombo = new QComboBox(this);
    m_sourceCombo->addItem(tr("Random sample"), static_cast<int>(Source::Sample));
    m_sourceCombo->addItem(tr("Best results"), static_cast<int>(Source::BestResults));
    m_sourceCombo->addItem(tr("Selected config"), static_cast<int>(Source::Selected));
    m_sourceCombo->setToolTip(tr("Which configs to compile for every arch: a random sample of the valid configs, the "
                                 "best results of the session, or the config selected in the window"));
    m_sourceCombo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_sourceCombo->setMinimumContentsLength(8);
    m_countSpin = new QSpinBox(this);
    m_countSpin->setRange(1, 100'000);
    m_countSpin->setValue(200);
    m_countSpin->setGroupSeparatorShown(true);
    m_countSpin->setToolTip(tr("How many configs: each costs about a second of NVRTC per arch the first time; "
                               "the compile cache makes repeats instant"));
    m_archMenu = new QMenu(this);
    m_archButton = new QToolButton(this);
    m_archButton->setPopupMode(QToolButton::InstantPopup);
    m_archButton->setMenu(m_archMenu);
    m_archButton->setToolTip(tr("The GPU architectures to compile for (NVRTC; no GPU needed)"));
    m_archButton->setToolButtonStyle(Qt::ToolButtonTextOnly);
    buildArchMenu();
    m_runButton = new QPushButton(tr("Analyse"), this);
    m_runButton->setDefault(false);

    // Two rows, so that the panel fits a narrow dock.
    auto* controls = new QGridLayout;
    controls->addWidget(new QLabel(tr("Configs:"), this), 0, 0);
    auto* configRow = new QHBoxLayout;
    configRow->addWidget(m_sourceCombo, 1);
    configRow->addWidget(m_countSpin);
    controls->addLayout(configRow, 0, 1);
    controls->addWidget(new QLabel(tr("Archs:"), this), 1, 0);
    auto* archRow = new QHBoxLayout;
    archRow->addWidget(m_archButton);
    archRow->addStretch(1);
    archRow->addWidget(m_runButton);
    controls->addLayout(archRow, 1, 1);
    controls->setColumnStretch(1, 1);

    m_progress = new QProgressBar(this);
    m_progress->setTextVisible(true);
    m_progress->setFormat(QStringLiteral("%v / %m"));
    m_progress->setMaximumHeight(fontMetrics().height() + 4);
    m_progress->hide();
    m_status = new QLabel(this);
    m_status->setForegroundRole(QPalette::PlaceholderText);
    m_status->setWordWrap(true);
    m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_onlyDifferences = new QCheckBox(tr("Only differences"), this);
    m_onlyDifferences->setToolTip(tr("Hide the configs that spill alike and have the same occupancy on every arch"));
    auto* statusRow = new QHBoxLayout;
    statusRow->addWidget(m_progress);
    statusRow->addWidget(m_status, 1);
    statusRow->addWidget(m_onlyDifferences);

    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("crossGpuSummary"));
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setWordWrap(true);

    m_model = new CrossGpuModel(this);
    auto* proxy = new CrossGpuProxy(this);
    m_proxy = proxy;
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(CrossGpuModel::SortRole);
    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("crossGpuTable"));
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(-1, Qt::AscendingOrder); // arrival order until the user sorts
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setDefaultAlignment(Qt::AlignCenter);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(controls);
    layout->addLayout(statusRow);
    layout->addWidget(m_summary);
    layout->addWidget(m_table, 1);

    connect(m_runButton, &QPushButton::clicked, this, [this]() {
        if (m_running)
            cancel();
        else
            start();
    });
    connect(m_sourceCombo, &QComboBox::currentIndexChanged, this, &CrossGpuView::updateControls);
    connect(m_onlyDifferences, &QCheckBox::toggled, this, [proxy](bool on) { proxy->setOnlyDifferences(on); });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &CrossGpuView::onCurrentRowChanged);

    m_model->reset({}, archs());
    updateControls();
    updateSummary();
}

CrossGpuView::~CrossGpuView() {
    m_analysis.stop();
}

void CrossGpuView::buildArchMenu() {
    for (const std::string& arch : supportedArchs()) {
        QAction* action = m_archMenu->addAction(QString::fromStdString(arch));
        action->setCheckable(true);
        action->setChecked(std::find(kDefaultArchs.begin(), kDefaultArchs.end(), arch) != kDefaultArchs.end());
        if (const ArchLimits* limits = findArch(arch); limits && !limits->examples.empty())
            action->setText(
                QStringLiteral("%1  (%2)").arg(QString::fromStdString(arch), QString::fromStdString(limits->examples)));
        action->setData(QString::fromStdString(arch));
        connect(action, &QAction::toggled, this, &CrossGpuView::updateArchButton);
    }
    updateArchButton();
}

void CrossGpuView::updateArchButton() {
    QStringList names;
    for (const std::string& arch : archs())
        names << QString::fromStdString(arch);
    m_archButton->setText(names.isEmpty() ? tr("No arch") : names.join(QStringLiteral(", ")));
    if (m_model) // built
        updateControls();
}

void CrossGpuView::setArchs(const std::vector<std::string>& archs) {
    for (QAction* action : m_archMenu->actions()) {
        const QSignalBlocker blocker(action);
        action->setChecked(std::find(archs.begin(), archs.end(), action->data().toString().toStdString()) !=
                           archs.end());
    }
    updateArchButton();
}

std::vector<std::string> CrossGpuView::archs() const {
    std::vector<std::string> out;
    for (const QAction* action : m_archMenu->actions())
        if (action->isChecked())
            out.push_back(action->data().toString().toStdString());
    return out;
}

void CrossGpuView::setSource(Source source) {
    m_sourceCombo->setCurrentIndex(m_sourceCombo->findData(static_cast<int>(source)));
}

CrossGpuView::Source CrossGpuView::source() const {
    return static_cast<Source>(m_sourceCombo->currentData().toInt());
}

void CrossGpuView::setConfigCount(int count) {
    m_countSpin->setValue(count);
}

int CrossGpuView::configCount() const {
    return m_countSpin->value();
}

void CrossGpuView::setSeed(std::uint64_t seed) {
    m_seed = seed;
}

void CrossGpuView::setSpace(std::shared_ptr<const SpaceResult> space) {
    if (space == m_space)
        return;
    if (m_running)
        cancel();
    m_space = std::move(space);
    updateControls();
}

void CrossGpuView::setResults(std::shared_ptr<const std::vector<ResultRecord>> results) {
    m_results = std::move(results);
    updateControls();
}

void CrossGpuView::setSelectedConfig(const QString& configJson) {
    m_selectedConfig = configJson;
    selectConfig(configJson);
    updateControls();
}

void CrossGpuView::updateControls() {
    const Source s = source();
    m_countSpin->setEnabled(s != Source::Selected);
    const bool haveSpace = m_space && m_space->ok();
    bool haveConfigs = haveSpace;
    QString why;
    if (!haveSpace)
        why = tr("Open a tuning problem whose config space builds.");
    else if (s == Source::BestResults && (!m_results || m_results->empty()))
        why = tr("The session has no results yet.");
    else if (s == Source::Selected && m_selectedConfig.isEmpty())
        why = tr("Select a config in the results, the heatmap or the scatter plot.");
    else if (archs().empty())
        why = tr("Choose at least one arch.");
    haveConfigs = haveConfigs && why.isEmpty();
    m_runButton->setText(m_running ? tr("Cancel") : tr("Analyse"));
    m_runButton->setEnabled(m_running || haveConfigs);
    m_runButton->setToolTip(m_running ? tr("Stop after the compiles in flight") : why);
    if (!m_running && m_model->rowCount() == 0)
        m_status->setText(why.isEmpty() ? tr("Compiles each config for every arch with NVRTC: no GPU needed.") : why);
}

struct CrossGpuView::Job {
    std::shared_ptr<const SpaceResult> space;
    std::shared_ptr<const std::vector<ResultRecord>> results;
    std::string selectedJson;
    Source source = Source::Sample;
    std::size_t count = 0;
    std::uint64_t seed = 0;
    std::vector<std::string> archs;
    std::string cacheDirectory;
};

void CrossGpuView::start() {
    if (!m_space || !m_space->ok() || archs().empty())
        return;
    if (m_running)
        cancel();
    Job job;
    job.space = m_space;
    job.results = m_results;
    job.selectedJson = m_selectedConfig.toStdString();
    job.source = source();
    job.count = static_cast<std::size_t>(configCount());
    job.seed = m_seed;
    job.archs = archs();
    job.cacheDirectory = m_cacheDirectory.toStdString();

    std::vector<std::string> names;
    for (int p = 0; p < m_space->space->parameterCount(); ++p)
        names.push_back(m_space->space->parameterName(p));
    m_model->reset(std::move(names), job.archs);
    m_table->resizeColumnsToContents();
    m_running = true;
    m_progress->setRange(0, 0);
    m_progress->show();
    m_status->setText(tr("Choosing configs…"));
    updateControls();
    updateSummary();

    // Rows, progress and the end are posted as they come; those of a superseded analysis are dropped.
    m_analysis.start([this, job](const BackgroundJob& task) { analyse(job, task, this); });
    emit started(0);
}

std::vector<std::uint64_t> CrossGpuView::chooseConfigs(const Job& job, const ConfigCodec& codec, int& skipped) {
    std::vector<std::uint64_t> indices;
    switch (job.source) {
    case Source::Sample:
        indices = job.space->space->sample(job.count, job.seed);
        break;
    case Source::BestResults:
        if (job.results) {
            for (const ResultRecord& r : ranked(*job.results)) {
                if (!r.mayWin() || indices.size() >= job.count)
                    break;
                if (const auto index = codec.indexOf(r.config);
                    index && std::find(indices.begin(), indices.end(), *index) == indices.end())
                    indices.push_back(*index);
                else if (!index)
                    ++skipped;
            }
        }
        break;
    case Source::Selected: {
        const std::optional<ConfigValues> values = parseConfigJson(job.selectedJson);
        if (const auto index = values ? codec.indexOf(*values) : std::nullopt)
            indices.push_back(*index);
        else
            ++skipped;
        break;
    }
    }
    return indices;
}

void CrossGpuView::analyse(const Job& job, const BackgroundJob& task, CrossGpuView* target) {
    auto post = [target, &task](auto function) { task.post([target, function]() { function(*target); }); };
    int skipped = 0;
    try {
        const ConfigSpace& space = *job.space->space;
        const ConfigCodec codec(space);
        const std::vector<std::uint64_t> indices = chooseConfigs(job, codec, skipped);
        const StaticAnalyzer analyzer(*job.space->problem, job.space->shapeIndex);
        CompileCacheOptions cacheOptions;
        cacheOptions.directory = job.cacheDirectory;
        CompileService service({0, std::make_shared<CompileCache>(cacheOptions)});

        const int total = static_cast<int>(indices.size() * job.archs.size());
        post([total](CrossGpuView& view) { view.onProgress(0, total); });
        int base = 0;
        for (std::size_t first = 0; first < indices.size() && !task.isCancelled(); first += kBatchConfigs) {
            const std::size_t n = std::min<std::size_t>(kBatchConfigs, indices.size() - first);
            const std::span<const std::uint64_t> batch(indices.data() + first, n);
            const auto results = analyzer.run(
                space, batch, job.archs, service,
                [post, base, total](std::size_t done, std::size_t) {
                    const int now = base + static_cast<int>(done);
                    post([now, total](CrossGpuView& view) { view.onProgress(now, total); });
                },
                task.cancelFlag());
            base += static_cast<int>(results.size());
            auto rows = std::make_shared<std::vector<CrossGpuRow>>(rowsOf(space, codec, batch, results, job.archs));
            post([rows](CrossGpuView& view) { view.onRows(std::move(*rows)); });
        }
        const bool cancelled = task.isCancelled();
        post([cancelled, skipped](CrossGpuView& view) { view.onFinished(cancelled, {}, skipped); });
    } catch (const InputError& e) {
        const QString message = QString::fromStdString(e.what());
        post([message](CrossGpuView& view) { view.onFinished(false, message, 0); });
    } catch (const std::exception& e) {
        const QString message = QString::fromStdString(e.what());
        post([message](CrossGpuView& view) { view.onFinished(false, message, 0); });
    }
}

void CrossGpuView::cancel() {
    if (!m_running)
        return;
    m_analysis.cancel();
    m_status->setText(tr("Cancelling after the compiles in flight…"));
    m_runButton->setEnabled(false);
}

void CrossGpuView::onProgress(int done, int total) {
    if (m_progress->maximum() != total)
        m_progress->setRange(0, std::max(total, 1));
    m_progress->setValue(done);
    if (!m_analysis.isCancelled())
        m_status->setText(
            tr("Compiling %1 configs for %2 archs…")
                .arg(formatCount(std::uint64_t(total / std::max<std::size_t>(m_model->archs().size(), 1))))
                .arg(m_model->archs().size()));
    emit progressed(done, total);
}

void CrossGpuView::onRows(std::vector<CrossGpuRow> rows) {
    const bool first = m_model->rowCount() == 0;
    m_model->appendRows(std::move(rows));
    if (first)
        m_table->resizeColumnsToContents();
    if (!m_selectedConfig.isEmpty() && !m_table->currentIndex().isValid())
        selectConfig(m_selectedConfig);
    updateSummary();
}

void CrossGpuView::onFinished(bool cancelled, const QString& error, int skipped) {
    m_running = false;
    m_progress->hide();
    const int rows = m_model->rowCount();
    QString text;
    if (!error.isEmpty())
        text = tr("The analysis failed: %1").arg(error);
    else if (cancelled)
        text = tr("Cancelled: %1 configs analysed.").arg(formatCount(std::uint64_t(rows)));
    else
        text =
            tr("%1 configs analysed on %2 archs.").arg(formatCount(std::uint64_t(rows))).arg(m_model->archs().size());
    if (skipped > 0)
        text += QLatin1Char(' ') + tr("%1 results are not configs of this space and were left out.").arg(skipped);
    m_status->setText(text);
    m_table->resizeColumnsToContents();
    updateControls();
    updateSummary();
    emit finished(cancelled || !error.isEmpty());
}

void CrossGpuView::updateSummary() {
    if (m_model->rowCount() == 0) {
        m_summary->clear();
        m_summary->hide();
        return;
    }
    std::vector<ConfigAnalysis> all;
    all.reserve(static_cast<std::size_t>(m_model->rowCount()) * m_model->archs().size());
    for (const CrossGpuRow& row : m_model->rows())
        all.insert(all.end(), row.perArch.begin(), row.perArch.end());
    const auto summaries = summarizeByArch(all, m_model->archs());
    QStringList lines;
    for (const ArchSummary& s : summaries) {
        QString line = tr("<b>%1</b>: %2 of %3 compiled, <b>%4 spill</b> (%5 light, %6 heavy)")
                           .arg(QString::fromStdString(s.arch))
                           .arg(s.compiled)
                           .arg(s.configs)
                           .arg(s.spilling)
                           .arg(s.lightSpills)
                           .arg(s.heavySpills);
        if (s.compiled > s.unlaunchable)
            line += tr(", occupancy %1–%2 % (median %3 %)")
                        .arg(QLocale().toString(s.minOccupancy, 'f', 1), QLocale().toString(s.maxOccupancy, 'f', 1),
                             QLocale().toString(s.medianOccupancy, 'f', 1));
        if (s.failed > 0)
            line += tr(", %1 compile errors").arg(s.failed);
        lines << line;
    }
    int differing = 0;
    for (const CrossGpuRow& row : m_model->rows())
        differing += row.spillDiffers || row.occupancyDiffers ? 1 : 0;
    if (m_model->archs().size() > 1)
        lines << tr("%1 of %2 configs differ across archs (tinted: <span style='background:rgba(230,60,60,80)'>"
                    "&nbsp;spills here&nbsp;</span> <span style='background:rgba(60,170,90,70)'>&nbsp;not "
                    "here&nbsp;</span> <span style='background:rgba(240,170,0,90)'>&nbsp;occupancy "
                    "changes&nbsp;</span>)")
                     .arg(differing)
                     .arg(m_model->rowCount());
    m_summary->setText(lines.join(QStringLiteral("<br>")));
    m_summary->show();
}

QString CrossGpuView::summaryText() const {
    return QTextDocumentFragment::fromHtml(m_summary->text()).toPlainText();
}

QString CrossGpuView::statusText() const {
    return m_status->text();
}

bool CrossGpuView::selectConfig(const QString& configJson) {
    const int row = configJson.isEmpty() ? -1 : m_model->rowOf(configJson);
    const QSignalBlocker blocker(m_table->selectionModel());
    if (row < 0) {
        m_table->selectionModel()->clear();
        return false;
    }
    const QModelIndex index = m_proxy->mapFromSource(m_model->index(row, 0));
    if (!index.isValid())
        return false; // filtered out
    m_table->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_table->scrollTo(index);
    m_table->viewport()->update();
    return true;
}

void CrossGpuView::onCurrentRowChanged() {
    const QModelIndex current = m_table->currentIndex();
    if (!current.isValid())
        return;
    const QString json = current.data(CrossGpuModel::ConfigJsonRole).toString();
    if (!json.isEmpty())
        emit configSelected(json);
}

} // namespace tilescope::views
