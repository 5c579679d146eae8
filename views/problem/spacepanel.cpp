#include "problem/spacepanel.h"

#include "common/errorbanner.h"
#include "common/format.h"
#include "models/samplemodel.h"
#include "problem/spacecontroller.h"
#include "spec/tuningproblem.h"

#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QRandomGenerator>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStyle>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include <limits>

namespace tilescope::views {

/// A key figure: a large value over a small caption, like the headline numbers of a profiler's
/// summary page.
class StatTile : public QFrame {
public:
    StatTile(const QString& caption, QWidget* parent)
        : QFrame(parent)
        , m_value(new QLabel(this))
        , m_caption(new QLabel(caption, this)) {
        QFont big = m_value->font();
        big.setPointSizeF(big.pointSizeF() * 1.6);
        big.setBold(true);
        m_value->setFont(big);
        m_value->setTextInteractionFlags(Qt::TextSelectableByMouse);
        m_caption->setForegroundRole(QPalette::PlaceholderText);
        auto* layout = new QVBoxLayout(this);
        layout->setContentsMargins(0, 0, 0, 0);
        layout->setSpacing(0);
        layout->addWidget(m_value);
        layout->addWidget(m_caption);
    }
    void setValue(const QString& value, const QString& toolTip = {}) {
        m_value->setText(value);
        setToolTip(toolTip);
    }
    QString value() const { return m_value->text(); }

private:
    QLabel* m_value;
    QLabel* m_caption;
};

namespace {

QLabel* sectionTitle(const QString& text, QWidget* parent) {
    auto* label = new QLabel(text, parent);
    QFont font = label->font();
    font.setBold(true);
    label->setFont(font);
    return label;
}

// A line of detail that may be cut at the right rather than force the dock wider (dock widgets
// do not honour height-for-width, so word wrap would cut lines at the bottom instead).
QLabel* detailLabel(QWidget* parent) {
    auto* label = new QLabel(parent);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setMinimumWidth(1);
    return label;
}

} // namespace

SpacePanel::SpacePanel(SpaceController* controller, QWidget* parent)
    : QWidget(parent)
    , m_controller(controller)
    , m_samples(new SampleModel(this)) {
    const int em = fontMetrics().averageCharWidth();
    m_error = new ErrorBanner(this);

    // The title row, with the busy indicator at its right.
    m_title = sectionTitle(tr("Space"), this);
    m_busyBar = new QProgressBar(this);
    m_busyBar->setRange(0, 0);
    m_busyBar->setTextVisible(false);
    m_busyBar->setMaximumHeight(fontMetrics().height() * 2 / 3);
    m_busyBar->setMaximumWidth(em * 14);
    m_busyLabel = new QLabel(tr("Building the config space…"), this);
    auto* titleRow = new QHBoxLayout;
    titleRow->addWidget(m_title);
    titleRow->addStretch(1);
    titleRow->addWidget(m_busyLabel);
    titleRow->addWidget(m_busyBar);

    // The key figures.
    m_valid = new StatTile(tr("valid configs"), this);
    m_raw = new StatTile(tr("raw combinations"), this);
    m_share = new StatTile(tr("of raw are valid"), this);
    m_time = new StatTile(tr("to enumerate"), this);
    m_errors = new StatTile(tr("condition errors"), this);
    auto* tiles = new QHBoxLayout;
    tiles->setSpacing(em);
    for (StatTile* tile : {m_valid, m_raw, m_share, m_time, m_errors}) {
        if (tiles->count() > 0) // gaps that give way when the dock is narrow
            tiles->addSpacerItem(new QSpacerItem(em * 4, 0, QSizePolicy::Preferred, QSizePolicy::Minimum));
        tiles->addWidget(tile);
    }
    tiles->addStretch(1);

    m_order = detailLabel(this);
    m_order->setToolTip(tr("Parameters are bound in this order; each condition is checked as soon as the parameters "
                           "it reads are bound"));
    m_details = detailLabel(this);

    // The samples.
    m_sampleTitle = sectionTitle(tr("Sampled configs"), this);
    m_countBox = new QSpinBox(this);
    m_countBox->setRange(1, 10000);
    m_countBox->setValue(controller->sampleCount());
    m_countBox->setToolTip(tr("How many distinct valid configs to draw, uniformly at random"));
    m_seedBox = new QSpinBox(this);
    m_seedBox->setRange(0, std::numeric_limits<int>::max());
    m_seedBox->setValue(static_cast<int>(controller->seed()));
    m_seedBox->setToolTip(tr("Seed of the random draw: the same seed gives the same configs"));
    m_reseed = new QToolButton(this);
    m_reseed->setText(tr("New Seed"));
    m_reseed->setIcon(style()->standardIcon(QStyle::SP_BrowserReload));
    m_reseed->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_reseed->setToolTip(tr("Draw another sample with a random seed"));
    auto* sampleBar = new QHBoxLayout;
    sampleBar->addWidget(m_sampleTitle);
    sampleBar->addStretch(1);
    sampleBar->addWidget(new QLabel(tr("Count:"), this));
    sampleBar->addWidget(m_countBox);
    sampleBar->addSpacing(em * 2);
    sampleBar->addWidget(new QLabel(tr("Seed:"), this));
    sampleBar->addWidget(m_seedBox);
    sampleBar->addWidget(m_reseed);

    auto* proxy = new QSortFilterProxyModel(this);
    proxy->setSourceModel(m_samples);
    proxy->setSortRole(SampleModel::SortRole);
    m_sampleView = new QTableView(this);
    m_sampleView->setObjectName(QStringLiteral("sampleView"));
    m_sampleView->setModel(proxy);
    m_sampleView->setSortingEnabled(true);
    m_sampleView->sortByColumn(-1, Qt::AscendingOrder);
    m_sampleView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_sampleView->setAlternatingRowColors(true);
    m_sampleView->verticalHeader()->hide();
    m_sampleView->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_sampleView->horizontalHeader()->setHighlightSections(false);
    m_sampleView->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_error);
    layout->addLayout(titleRow);
    layout->addLayout(tiles);
    layout->addSpacing(fontMetrics().height() / 3);
    layout->addWidget(m_order);
    layout->addWidget(m_details);
    layout->addSpacing(fontMetrics().height() / 2);
    layout->addLayout(sampleBar);
    layout->addWidget(m_sampleView, 1);

    connect(m_countBox, &QSpinBox::valueChanged, this, &SpacePanel::applySampling);
    connect(m_seedBox, &QSpinBox::valueChanged, this, &SpacePanel::applySampling);
    connect(m_reseed, &QToolButton::clicked, this,
            [this]() { m_seedBox->setValue(static_cast<int>(QRandomGenerator::global()->bounded(1, 1'000'000))); });
    connect(controller, &SpaceController::spaceRequested, this, &SpacePanel::onSpaceRequested);
    connect(controller, &SpaceController::spaceReady, this, &SpacePanel::onSpaceReady);
    connect(controller, &SpaceController::samplesReady, this, &SpacePanel::onSamplesReady);
    connect(controller, &SpaceController::busyChanged, this, &SpacePanel::onBusyChanged);
    onBusyChanged(controller->isBusy());
    clearStats(tr("—"));
}

SpacePanel::~SpacePanel() = default;

QString SpacePanel::statText(const QString& name) const {
    const StatTile* tile = name == QLatin1String("valid")    ? m_valid
                           : name == QLatin1String("raw")    ? m_raw
                           : name == QLatin1String("share")  ? m_share
                           : name == QLatin1String("time")   ? m_time
                           : name == QLatin1String("errors") ? m_errors
                                                             : nullptr;
    if (tile)
        return tile->value();
    if (name == QLatin1String("order"))
        return m_order->text();
    if (name == QLatin1String("details"))
        return m_details->text();
    return {};
}

void SpacePanel::clearStats(const QString& placeholder) {
    for (StatTile* tile : {m_valid, m_raw, m_share, m_time, m_errors})
        tile->setValue(placeholder);
    m_order->setText(tr("Search order: %1").arg(placeholder));
    m_details->clear();
}

void SpacePanel::applySampling() {
    m_controller->setSampling(m_countBox->value(), static_cast<std::uint64_t>(m_seedBox->value()));
}

void SpacePanel::onSpaceRequested() {
    m_error->hide();
    clearStats(QStringLiteral("…"));
    m_samples->setSamples(nullptr);
    m_sampleTitle->setText(tr("Sampled configs"));
}

void SpacePanel::onSpaceReady(const std::shared_ptr<const SpaceResult>& result) {
    const QString shape = result->problem && result->shapeIndex < result->problem->shapes.size()
                              ? QString::fromStdString(result->problem->shapes[result->shapeIndex].label())
                              : QString();
    m_title->setText(shape.isEmpty() ? tr("Space") : tr("Space of shape %1").arg(shape));
    if (!result->ok()) {
        clearStats(tr("—"));
        m_error->showMessage(ErrorBanner::Level::Error, tr("The config space cannot be built"),
                             result->errorLocation.isEmpty()
                                 ? result->errorMessage
                                 : tr("At %1: %2").arg(result->errorLocation, result->errorMessage));
        return;
    }
    m_error->hide();
    const SpaceStats& stats = result->stats;
    const ConfigSpace& space = *result->space;

    QStringList counts;
    for (int p = 0; p < space.parameterCount(); ++p)
        counts << QString::number(space.parameterValues(p).size());
    m_valid->setValue(formatCount(stats.validSize));
    m_raw->setValue(formatCount(stats.rawSize), tr("The product of the value counts: %1").arg(counts.join(" × ")));
    m_share->setValue(formatShare(static_cast<double>(stats.validSize), stats.rawSize));
    m_time->setValue(formatDuration(stats.enumerationSeconds),
                     tr("%1 condition evaluations").arg(formatCount(stats.conditionEvaluations)));

    std::uint64_t failures = 0;
    QStringList lines;
    for (const ConditionFailure& f : stats.failures) {
        failures += f.count;
        lines << tr("Condition %1 raised %2 times; first: %3")
                     .arg(f.condition + 1)
                     .arg(formatCount(f.count), QString::fromStdString(f.firstError));
    }
    m_errors->setValue(formatCount(failures), lines.isEmpty()
                                                  ? tr("No condition raised while enumerating")
                                                  : lines.join(QLatin1Char('\n')) +
                                                        tr("\nConfigs for which a condition raises count as invalid."));

    QStringList order;
    for (int p : stats.searchOrder)
        order << QString::fromStdString(space.parameterName(p));
    m_order->setText(tr("Search order: %1").arg(order.isEmpty() ? tr("—") : order.join(QStringLiteral(" → "))));
    m_details->setText(tr("%1 condition evaluations  ·  %2")
                           .arg(formatCount(stats.conditionEvaluations),
                                stats.materialized ? tr("all valid configs held in memory")
                                                   : tr("counted and indexed lazily (too many to hold)")));
}

void SpacePanel::onSamplesReady(const std::shared_ptr<const SampleSet>& samples) {
    m_samples->setSamples(samples);
    // Parameters share the width; the index (up to 20 digits) takes what it needs.
    m_sampleView->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    if (m_samples->columnCount() > 0)
        m_sampleView->horizontalHeader()->setSectionResizeMode(SampleModel::IndexColumn, QHeaderView::ResizeToContents);
    const std::uint64_t total = samples->space ? samples->space->size() : 0;
    m_sampleTitle->setText(
        tr("Sampled configs: %1 of %2")
            .arg(formatCount(static_cast<std::uint64_t>(samples->indices.size())), formatCount(total)));
}

void SpacePanel::onBusyChanged(bool busy) {
    m_busyBar->setVisible(busy);
    m_busyLabel->setVisible(busy);
}

} // namespace tilescope::views
