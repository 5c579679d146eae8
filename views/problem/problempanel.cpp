#include "problem/problempanel.h"

#include "base/error.h"
#include "common/format.h"
#include "exchange/configcodec.h"
#include "model/configjson.h"
#include "models/conditionmodel.h"
#include "models/parametermodel.h"
#include "models/quantity.h"
#include "problem/expressionedit.h"
#include "problem/problemdocument.h"
#include "problem/spacecontroller.h"
#include "problem/valuebars.h"
#include "spec/launchgeometry.h"
#include "spec/problemedit.h"
#include "spec/tuningproblem.h"

#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace tilescope::views {

namespace {

QTableView* makeTable(QAbstractItemModel* model, int sortRole, QWidget* parent) {
    auto* proxy = new QSortFilterProxyModel(parent);
    proxy->setSourceModel(model);
    proxy->setSortRole(sortRole);
    auto* view = new QTableView(parent);
    view->setModel(proxy);
    view->setSortingEnabled(true);
    view->sortByColumn(-1, Qt::AscendingOrder); // file order until the user sorts
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setAlternatingRowColors(true);
    view->setWordWrap(false);
    view->setTextElideMode(Qt::ElideRight);
    view->verticalHeader()->hide();
    view->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->horizontalHeader()->setHighlightSections(false);
    view->horizontalHeader()->setStretchLastSection(false);
    return view;
}

// Typing settles this long before an edit is checked and the space counted again.
constexpr int kTypingSettleMs = 150;
// Undo merge keys: the keystrokes of one field are one step.
constexpr int kConditionMergeKey = 1 << 20;
constexpr int kParameterMergeKey = 2 << 20;

QToolButton* toolButton(const QString& text, const QString& tip, const QString& name, QWidget* parent) {
    auto* button = new QToolButton(parent);
    button->setText(text);
    button->setToolTip(tip);
    button->setObjectName(name);
    button->setAutoRaise(true);
    return button;
}

int sourceRow(const QTableView* view, const QModelIndex& index) {
    const auto* proxy = static_cast<const QSortFilterProxyModel*>(view->model());
    return index.isValid() ? proxy->mapToSource(index).row() : -1;
}

void selectSourceRow(QTableView* view, int row) {
    const auto* proxy = static_cast<const QSortFilterProxyModel*>(view->model());
    const QModelIndex source = proxy->sourceModel()->index(row, 0);
    const QModelIndex index = row >= 0 ? proxy->mapFromSource(source) : QModelIndex();
    if (!index.isValid()) {
        view->selectionModel()->clearSelection();
        view->selectionModel()->setCurrentIndex(QModelIndex(), QItemSelectionModel::NoUpdate);
        return;
    }
    view->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    view->scrollTo(index);
}

QLabel* sectionTitle(const QString& text, QWidget* parent) {
    auto* label = new QLabel(text, parent);
    QFont font = label->font();
    font.setBold(true);
    label->setFont(font);
    return label;
}

} // namespace

ProblemPanel::ProblemPanel(ProblemDocument* document, SpaceController* controller, QWidget* parent)
    : QWidget(parent)
    , m_document(document)
    , m_parameters(new ParameterModel(this))
    , m_conditions(new ConditionModel(this)) {
    QFormLayout* form = makeHeaderForm();
    const auto [parameterBox, conditionBox] = makeTableBoxes();
    makeEditors(parameterBox, conditionBox);
    QWidget* problemPage = makeProblemPage(form, parameterBox, conditionBox);
    makeRecordingPage();
    m_pages = new QStackedWidget(this);
    m_pages->addWidget(problemPage);
    m_pages->addWidget(m_recordingPage);
    auto* outer = new QVBoxLayout(this);
    outer->addWidget(m_pages);
    connectEditing(controller);
    onProblemChanged();
}

QFormLayout* ProblemPanel::makeHeaderForm() {
    m_kernelLabel = new QLabel(this);
    m_kernelLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_objectiveLabel = new QLabel(this);
    m_objectiveLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // A long line wraps at the panel's edge rather than widen the panel (or hide its end: the
    // objective's "(higher is better)" at 1366x768).
    for (QLabel* label : {m_kernelLabel, m_objectiveLabel}) {
        label->setWordWrap(true);
        label->setMinimumWidth(fontMetrics().averageCharWidth() * 8);
        QSizePolicy policy(QSizePolicy::Expanding, QSizePolicy::Preferred); // the form grows it to the edge
        policy.setHeightForWidth(true);
        label->setSizePolicy(policy);
    }
    m_shapeBox = new QComboBox(this);
    m_shapeBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_shapeBox->setToolTip(tr("The problem shape whose config space is shown"));

    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
    form->addRow(tr("Kernel:"), m_kernelLabel);
    form->addRow(tr("Objective:"), m_objectiveLabel);
    form->addRow(tr("Shape:"), m_shapeBox);
    return form;
}

std::pair<QWidget*, QWidget*> ProblemPanel::makeTableBoxes() {
    m_parameterView = makeTable(m_parameters, ParameterModel::SortRole, this);
    m_parameterView->setObjectName(QStringLiteral("parameterView"));
    m_parameterView->setItemDelegateForColumn(ParameterModel::KeptColumn, new ValueBarsDelegate(m_parameterView));
    m_parameterView->setWordWrap(true); // a long value list wraps between values, never hides its last ones
    m_conditionView = makeTable(m_conditions, ConditionModel::SortRole, this);
    m_conditionView->setObjectName(QStringLiteral("conditionView"));
    m_conditionView->setWordWrap(true); // long conditions wrap rather than hide behind an ellipsis

    auto* parameterBox = new QWidget(this);
    auto* parameterLayout = new QVBoxLayout(parameterBox);
    parameterLayout->setContentsMargins(0, 0, 0, 0);
    parameterLayout->addWidget(sectionTitle(tr("Parameters"), parameterBox));
    parameterLayout->addWidget(m_parameterView);
    auto* conditionBox = new QWidget(this);
    auto* conditionLayout = new QVBoxLayout(conditionBox);
    conditionLayout->setContentsMargins(0, 0, 0, 0);
    conditionLayout->addWidget(sectionTitle(tr("Conditions"), conditionBox));
    conditionLayout->addWidget(m_conditionView);
    return {parameterBox, conditionBox};
}

void ProblemPanel::makeEditors(QWidget* parameterBox, QWidget* conditionBox) {
    // The editors: the selected row, typed into; checked and counted as the typing settles.
    auto* parameterLayout = static_cast<QVBoxLayout*>(parameterBox->layout());
    auto* conditionLayout = static_cast<QVBoxLayout*>(conditionBox->layout());
    m_parameterName = new QLineEdit(parameterBox);
    m_parameterName->setObjectName(QStringLiteral("parameterNameEditor"));
    m_parameterName->setPlaceholderText(tr("name"));
    m_parameterName->setToolTip(tr("The selected parameter's name (taken when you press Enter or leave the field)"));
    m_parameterName->setMaximumWidth(fontMetrics().averageCharWidth() * 18);
    m_parameterValues = new QLineEdit(parameterBox);
    m_parameterValues->setObjectName(QStringLiteral("parameterValuesEditor"));
    m_parameterValues->setPlaceholderText(tr("values: [16, 32, 64] or range(1, 9)"));
    m_parameterValues->setToolTip(tr("The selected parameter's values: a list or a list expression, as Python "
                                     "writes it; the space is counted again as you type"));
    m_addParameter =
        toolButton(QStringLiteral("+"), tr("Add a parameter"), QStringLiteral("addParameter"), parameterBox);
    m_removeParameter = toolButton(QStringLiteral("−"), tr("Remove the selected parameter"),
                                   QStringLiteral("removeParameter"), parameterBox);
    m_parameterUp = toolButton(QStringLiteral("↑"), tr("Move the selected parameter up"), QStringLiteral("parameterUp"),
                               parameterBox);
    m_parameterDown = toolButton(QStringLiteral("↓"), tr("Move the selected parameter down"),
                                 QStringLiteral("parameterDown"), parameterBox);
    auto* parameterEditRow = new QHBoxLayout;
    parameterEditRow->addWidget(m_parameterName);
    parameterEditRow->addWidget(m_parameterValues, 1);
    for (QToolButton* b : {m_addParameter, m_removeParameter, m_parameterUp, m_parameterDown})
        parameterEditRow->addWidget(b);
    parameterLayout->addLayout(parameterEditRow);

    m_conditionEdit = new ExpressionEdit(conditionBox);
    m_conditionEdit->setObjectName(QStringLiteral("conditionEditor"));
    m_conditionEdit->setPlaceholderText(tr("select a condition to edit it, or add one"));
    m_conditionEdit->setToolTip(
        tr("The selected condition, as Python writes it; the space is counted again as you type"));
    m_addCondition =
        toolButton(QStringLiteral("+"), tr("Add a condition"), QStringLiteral("addCondition"), conditionBox);
    m_removeCondition = toolButton(QStringLiteral("−"), tr("Remove the selected condition"),
                                   QStringLiteral("removeCondition"), conditionBox);
    auto* conditionEditRow = new QHBoxLayout;
    conditionEditRow->addWidget(m_conditionEdit, 1);
    conditionEditRow->addWidget(m_addCondition);
    conditionEditRow->addWidget(m_removeCondition);
    conditionLayout->addLayout(conditionEditRow);

    m_conditionTimer = new QTimer(this);
    m_conditionTimer->setSingleShot(true);
    m_conditionTimer->setInterval(kTypingSettleMs);
    m_parameterTimer = new QTimer(this);
    m_parameterTimer->setSingleShot(true);
    m_parameterTimer->setInterval(kTypingSettleMs);
}

QWidget* ProblemPanel::makeProblemPage(QFormLayout* form, QWidget* parameterBox, QWidget* conditionBox) {
    m_editError = new QLabel(this);
    m_editError->setObjectName(QStringLiteral("editError"));
    m_editError->setWordWrap(true);
    m_editError->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_editError->setStyleSheet(QStringLiteral("color: #c62828;"));
    m_editError->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);
    m_editError->hide();
    m_countLabel = new QLabel(this);
    m_countLabel->setObjectName(QStringLiteral("countLabel"));
    m_countLabel->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);

    m_splitter = new QSplitter(Qt::Vertical, this);
    m_splitter->setChildrenCollapsible(false);
    m_splitter->addWidget(parameterBox);
    m_splitter->addWidget(conditionBox);
    m_splitter->setStretchFactor(0, 0);
    m_splitter->setStretchFactor(1, 1);
    // The parameters get the height of their rows, as the rows change (a value list typed longer
    // wraps onto another line, a narrower panel wraps more), until the user moves the split.
    m_fitTimer = new QTimer(this);
    m_fitTimer->setSingleShot(true);
    m_fitTimer->setInterval(0);
    connect(m_fitTimer, &QTimer::timeout, this, [this]() { fitSplitter(m_splitMoved); });
    connect(m_splitter, &QSplitter::splitterMoved, this, [this]() { m_splitMoved = true; });
    connect(m_parameterView->verticalHeader(), &QHeaderView::sectionResized, m_fitTimer, qOverload<>(&QTimer::start));

    auto* problemPage = new QWidget(this);
    auto* layout = new QVBoxLayout(problemPage);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(form);
    // The count and an edit's error above the tables: they stay in sight in a short dock.
    layout->addWidget(m_countLabel);
    m_launchLabel = new QLabel(problemPage);
    m_launchLabel->setObjectName(QStringLiteral("launchLabel"));
    m_launchLabel->setWordWrap(true);
    m_launchLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_launchLabel->hide();
    layout->addWidget(m_launchLabel);
    layout->addWidget(m_editError);
    layout->addWidget(m_splitter, 1);
    return problemPage;
}

void ProblemPanel::makeRecordingPage() {
    m_recordingPage = new QWidget(this);
    m_recordingPage->setObjectName(QStringLiteral("recordingPage"));
    m_recordingHeader = new QLabel(m_recordingPage);
    m_recordingHeader->setObjectName(QStringLiteral("recordingHeader"));
    m_recordingHeader->setTextFormat(Qt::RichText);
    m_recordingHeader->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_recordingHeader->setWordWrap(true);
    m_recordedParameters = new QTableWidget(0, 3, m_recordingPage);
    m_recordedParameters->setObjectName(QStringLiteral("recordedParameters"));
    m_recordedParameters->setHorizontalHeaderLabels({tr("Parameter"), tr("Values found"), tr("Count")});
    m_recordedParameters->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_recordedParameters->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_recordedParameters->verticalHeader()->hide();
    m_recordedParameters->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    auto* noConditions = new QLabel(
        tr("<b>No conditions are known.</b> A recording holds results, not the problem's conditions: the space "
           "cannot be counted, and the run cannot replay it. Open the T1 problem that goes with it to see its "
           "conditions, the Config Space tab and replay."),
        m_recordingPage);
    noConditions->setObjectName(QStringLiteral("noConditionsNote"));
    noConditions->setWordWrap(true);
    m_openProblem = new QPushButton(tr("Open Its T1 Problem…"), m_recordingPage);
    m_openProblem->setObjectName(QStringLiteral("openProblemForRecording"));
    connect(m_openProblem, &QPushButton::clicked, this, &ProblemPanel::openProblemRequested);
    auto* recordingLayout = new QVBoxLayout(m_recordingPage);
    recordingLayout->setContentsMargins(0, 0, 0, 0);
    recordingLayout->addWidget(m_recordingHeader);
    recordingLayout->addWidget(sectionTitle(tr("Parameters found in the recording"), m_recordingPage));
    recordingLayout->addWidget(m_recordedParameters, 1);
    recordingLayout->addWidget(sectionTitle(tr("Conditions"), m_recordingPage));
    recordingLayout->addWidget(noConditions);
    recordingLayout->addWidget(m_openProblem, 0, Qt::AlignLeft);
}

void ProblemPanel::connectEditing(SpaceController* controller) {
    connect(m_shapeBox, &QComboBox::currentIndexChanged, m_document, &ProblemDocument::setShapeIndex);
    connect(m_document, &ProblemDocument::shapeChanged, this, [this](int index) {
        showLaunchOf(m_launchConfig);
        const QSignalBlocker block(m_shapeBox);
        m_shapeBox->setCurrentIndex(index);
    });
    connect(m_document, &ProblemDocument::problemChanged, this, &ProblemPanel::onProblemChanged);
    connect(m_document, &ProblemDocument::problemEdited, this, &ProblemPanel::onProblemEdited);
    connect(m_conditionView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                m_conditionRow = sourceRow(m_conditionView, current);
                showSelectedCondition();
            });
    connect(m_parameterView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                m_parameterRow = sourceRow(m_parameterView, current);
                showSelectedParameter();
            });
    connect(m_conditionEdit, &QLineEdit::textEdited, m_conditionTimer, qOverload<>(&QTimer::start));
    connect(m_conditionTimer, &QTimer::timeout, this, &ProblemPanel::applyConditionText);
    connect(m_conditionEdit, &QLineEdit::editingFinished, this, [this] {
        if (m_conditionTimer->isActive()) {
            m_conditionTimer->stop();
            applyConditionText();
        }
    });
    connect(m_parameterValues, &QLineEdit::textEdited, m_parameterTimer, qOverload<>(&QTimer::start));
    connect(m_parameterTimer, &QTimer::timeout, this, &ProblemPanel::applyParameterText);
    connect(m_parameterValues, &QLineEdit::editingFinished, this, [this] {
        if (m_parameterTimer->isActive()) {
            m_parameterTimer->stop();
            applyParameterText();
        }
    });
    connect(m_parameterName, &QLineEdit::editingFinished, this, &ProblemPanel::applyParameterText);
    connect(m_addCondition, &QToolButton::clicked, this, &ProblemPanel::addCondition);
    connect(m_removeCondition, &QToolButton::clicked, this, &ProblemPanel::removeSelectedCondition);
    connect(m_addParameter, &QToolButton::clicked, this, &ProblemPanel::addParameter);
    connect(m_removeParameter, &QToolButton::clicked, this, &ProblemPanel::removeSelectedParameter);
    connect(m_parameterUp, &QToolButton::clicked, this, [this] { moveSelectedParameter(-1); });
    connect(m_parameterDown, &QToolButton::clicked, this, [this] { moveSelectedParameter(1); });
    connect(controller, &SpaceController::spaceRequested, this, &ProblemPanel::onSpaceRequested);
    connect(controller, &SpaceController::spaceReady, this, &ProblemPanel::onSpaceReady);
    connect(controller, &SpaceController::impactReady, this, &ProblemPanel::onImpactReady);
}

ProblemPanel::~ProblemPanel() = default;

void ProblemPanel::showProblem(const std::shared_ptr<const TuningProblem>& problem) {
    m_parameters->setProblem(problem);
    m_conditions->setProblem(problem);
    QStringList names;
    for (std::size_t i = 0; problem && i < problem->parameters.size(); ++i)
        names << QString::fromStdString(problem->parameters[i].name);
    m_conditionEdit->setParameterNames(names);
}

void ProblemPanel::showRecording(const SessionInfo& session, const std::vector<ResultRecord>& results,
                                 const QString& fileName) {
    m_hasRecording = !session.parameters.empty();
    const ResultSummary summary = summarize(results, session.parameters);
    m_recordedParameters->setRowCount(static_cast<int>(session.parameters.size()));
    for (std::size_t p = 0; p < session.parameters.size(); ++p) {
        const QStringList& values = summary.parameterValues[p];
        const int row = static_cast<int>(p);
        m_recordedParameters->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(session.parameters[p])));
        auto* list = new QTableWidgetItem(values.join(QStringLiteral(", ")));
        list->setToolTip(values.join(QStringLiteral(", ")));
        m_recordedParameters->setItem(row, 1, list);
        auto* count = new QTableWidgetItem(QString::number(values.size()));
        count->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_recordedParameters->setItem(row, 2, count);
    }
    m_recordedParameters->resizeColumnToContents(0);
    m_recordedParameters->resizeColumnToContents(2);

    const auto line = [](const QString& label, const QString& value) {
        return QStringLiteral("<tr><td style='padding-right:10px; white-space:nowrap'>%1</td><td>%2</td></tr>")
            .arg(label.toHtmlEscaped(), value.toHtmlEscaped());
    };
    const QString unknown = tr("not recorded");
    QString size;
    for (const std::int64_t d : session.problemSize)
        size += (size.isEmpty() ? QString() : QStringLiteral(" × ")) + QString::number(d);
    const QString shape = QString::fromStdString(session.shapeLabel());
    QString rows;
    rows += line(tr("Kernel:"), session.kernel.empty() ? unknown : QString::fromStdString(session.kernel));
    rows += line(tr("Problem size:"), !size.isEmpty() ? size : !shape.isEmpty() ? shape : unknown);
    rows += line(tr("Device:"), session.deviceName.empty() ? unknown : QString::fromStdString(session.deviceName));
    rows +=
        line(tr("Objective:"), session.objectiveName.empty()
                                   ? tr("time  (lower is better)")
                                   : tr("%1  (higher is better)").arg(QString::fromStdString(session.objectiveName)));
    rows +=
        line(tr("Results:"), summary.analysedCount > 0 && summary.okCount == 0
                                 ? tr("%1, %2 analysed (not timed)").arg(summary.resultCount).arg(summary.analysedCount)
                                 : tr("%1, %2 ok").arg(summary.resultCount).arg(summary.okCount));
    m_recordingHeader->setText(tr("<p>From the recording <b>%1</b>; no problem is open.</p><table>%2</table>")
                                   .arg(fileName.toHtmlEscaped(), rows));
    updatePage();
}

void ProblemPanel::showLaunchOf(const QString& configJson) {
    m_launchConfig = configJson;
    const auto problem = m_document->problem();
    QString text;
    if (problem && !configJson.isEmpty()) {
        try {
            const std::optional<ConfigValues> values = parseConfigJson(configJson.toStdString());
            const std::size_t shape = static_cast<std::size_t>(std::max(0, m_document->shapeIndex()));
            if (const std::optional<Config> config = values ? configFromValues(*problem, *values) : std::nullopt) {
                const GeometryPlanner planner(*problem, shape);
                const LaunchGeometry g = planner.plan(*config);
                const auto dims = [](const std::array<std::int64_t, 3>& d) {
                    return QStringLiteral("%1 x %2 x %3").arg(d[0]).arg(d[1]).arg(d[2]);
                };
                if (!g.ok()) {
                    text =
                        tr("Launch of the selected config: cannot be planned: %1").arg(QString::fromStdString(g.error));
                } else {
                    const double threads = static_cast<double>(g.grid[0]) * static_cast<double>(g.grid[1]) *
                                           static_cast<double>(g.grid[2]) * static_cast<double>(g.threadsPerBlock());
                    text = tr("Launch of the selected config: a grid of %1 blocks of %2 threads (%3 threads)")
                               .arg(dims(g.grid), dims(g.block), formatCount(threads));
                    expr::ValueList storage;
                    problem->shapeSlots(shape, storage);
                    double elements = 1;
                    for (const expr::Value& v : storage.items())
                        elements *= static_cast<double>(v.i);
                    if (!problem->problemSize.empty() && elements > 0)
                        text += tr(", %1 per ProblemSize element").arg(formatNumber(threads / elements));
                    text += tr("; %1").arg(QString::fromUtf8(gridRuleName(planner.gridRule()).data()));
                }
            }
        } catch (const std::exception& e) {
            text = tr("Launch of the selected config: cannot be planned: %1").arg(QString::fromUtf8(e.what()));
        }
    }
    m_launchLabel->setText(text);
    m_launchLabel->setVisible(!text.isEmpty());
}

QString ProblemPanel::launchText() const {
    return m_launchLabel->text();
}

bool ProblemPanel::showsRecording() const {
    return m_pages->currentWidget() == m_recordingPage;
}

void ProblemPanel::updatePage() {
    m_pages->setCurrentWidget(m_hasRecording && !m_document->problem() ? m_recordingPage : m_pages->widget(0));
}

void ProblemPanel::onProblemChanged() {
    const auto problem = m_document->problem();
    updatePage();
    showProblem(problem);
    m_conditionRow = -1;
    m_parameterRow = -1;
    m_lastSpace.reset();
    showEditError({});
    showSelectedCondition();
    showSelectedParameter();
    refreshHeader();
    fitColumns();
    // Once the tables have laid out their rows, give the parameters the height they need.
    m_splitMoved = false;
    m_fitTimer->start();
}

QSize ProblemPanel::sizeHint() const {
    // Wide enough for the value lists and most conditions on one or two lines.
    const int em = fontMetrics().averageCharWidth();
    return {em * 88, em * 100};
}

void ProblemPanel::fitSplitter(bool growOnly) {
    if (m_parameters->rowCount() == 0)
        return;
    const int frame = 2 * m_parameterView->frameWidth();
    int rows = m_parameterView->horizontalHeader()->height() + frame;
    for (int r = 0; r < m_parameterView->model()->rowCount(); ++r)
        rows += m_parameterView->rowHeight(r);
    if (m_parameterView->horizontalScrollBar()->isVisible())
        rows += m_parameterView->horizontalScrollBar()->height();
    const int title = m_parameterView->parentWidget()->height() - m_parameterView->height();
    const int total = m_splitter->height();
    // The parameters get what they need, up to half the panel; the conditions the rest.
    const int wanted = std::min(rows + title, total / 2);
    if (growOnly && m_splitter->sizes().value(0) >= wanted)
        return; // the user's split stays while it holds the rows
    if (m_splitter->sizes().value(0) == wanted)
        return;
    m_splitter->setSizes({wanted, std::max(0, total - wanted - m_splitter->handleWidth())});
}

void ProblemPanel::onSpaceRequested() {
    m_validPerShape.clear();
    m_conditions->setStats(nullptr);
    m_conditions->setImpact(nullptr);
    m_conditions->setImpactPending(true);
    m_counting = true;
    updateCountLabel();
}

void ProblemPanel::onSpaceReady(const std::shared_ptr<const SpaceResult>& result) {
    m_conditions->setStats(result->ok() ? &result->stats : nullptr);
    if (!result->ok())
        m_conditions->setImpactPending(false);
    m_counting = false;
    if (result->ok() || result->problem == m_document->problem())
        m_lastSpace = result;
    updateCountLabel();
}

// ---- editing

void ProblemPanel::onProblemEdited() {
    refreshModels();
    refreshHeader();
    updateEditButtons();
}

void ProblemPanel::refreshHeader() {
    const auto problem = m_document->problem();
    showLaunchOf(m_launchConfig); // the problem or its shape changed: the same config launches anew
    {
        const QSignalBlocker block(m_shapeBox);
        m_shapeBox->clear();
        if (problem) {
            for (std::size_t i = 0; i < problem->shapes.size(); ++i)
                m_shapeBox->addItem(shapeText(*problem, i));
            m_shapeBox->setCurrentIndex(m_document->shapeIndex());
        }
        m_shapeBox->setEnabled(m_shapeBox->count() > 1);
    }
    if (problem) {
        const QString kernel = QString::fromStdString(problem->kernelName);
        const QString file = QFileInfo(m_document->kernelPath()).fileName();
        m_kernelLabel->setText(tr("%1  ·  %2  ·  %3").arg(kernel, QString::fromStdString(problem->language), file));
        m_kernelLabel->setToolTip(m_document->kernelPath());
        if (problem->objective) {
            const Objective& o = *problem->objective;
            QString scale = QString::number(o.scale, 'g', 6).replace(QLatin1String("e+"), QLatin1String("e"));
            m_objectiveLabel->setText(tr("%1 = %2 / time / %3  (higher is better)")
                                          .arg(QString::fromStdString(o.name), QString::fromStdString(o.count), scale));
            m_objectiveLabel->setToolTip(m_objectiveLabel->text());
        } else {
            m_objectiveLabel->setText(tr("time  (lower is better)"));
        }
    } else {
        m_kernelLabel->clear();
        m_objectiveLabel->clear();
    }
}

void ProblemPanel::refreshModels() {
    const auto problem = m_document->problem();
    const int condition = m_conditionRow;
    const int parameter = m_parameterRow;
    {
        // The selection follows the rows; the editors keep what is being typed.
        const QSignalBlocker conditionSignals(m_conditionView->selectionModel());
        const QSignalBlocker parameterSignals(m_parameterView->selectionModel());
        showProblem(problem);
        const int conditions = problem ? static_cast<int>(problem->conditions.size()) : 0;
        const int parameters = problem ? static_cast<int>(problem->parameters.size()) : 0;
        m_conditionRow = std::min(condition, conditions - 1);
        m_parameterRow = std::min(parameter, parameters - 1);
        selectSourceRow(m_conditionView, m_conditionRow);
        selectSourceRow(m_parameterView, m_parameterRow);
    }
    // An undo or redo (not the field's own typing) shows the row as it now is.
    if (!m_conditionEdit->hasFocus() || m_conditionRow != condition)
        showSelectedCondition();
    if ((!m_parameterValues->hasFocus() && !m_parameterName->hasFocus()) || m_parameterRow != parameter)
        showSelectedParameter();
}

int ProblemPanel::selectedCondition() const {
    return m_conditionRow;
}

int ProblemPanel::selectedParameter() const {
    return m_parameterRow;
}

void ProblemPanel::selectCondition(int row) {
    selectSourceRow(m_conditionView, row);
    m_conditionRow = row;
    showSelectedCondition();
}

void ProblemPanel::selectParameter(int row) {
    selectSourceRow(m_parameterView, row);
    m_parameterRow = row;
    showSelectedParameter();
}

void ProblemPanel::showSelectedCondition() {
    const auto problem = m_document->problem();
    const bool ok = problem && m_conditionRow >= 0 && m_conditionRow < static_cast<int>(problem->conditions.size());
    m_conditionTimer->stop();
    m_conditionEdit->setErrorColumn(0);
    m_conditionEdit->setText(
        ok ? QString::fromStdString(problem->conditions[static_cast<std::size_t>(m_conditionRow)].expression)
           : QString());
    m_conditionEdit->setEnabled(ok);
    updateEditButtons();
}

void ProblemPanel::showSelectedParameter() {
    const auto problem = m_document->problem();
    const bool ok = problem && m_parameterRow >= 0 && m_parameterRow < static_cast<int>(problem->parameters.size());
    m_parameterTimer->stop();
    const TuningParameter* p = ok ? &problem->parameters[static_cast<std::size_t>(m_parameterRow)] : nullptr;
    m_parameterName->setText(p ? QString::fromStdString(p->name) : QString());
    m_parameterValues->setText(p ? QString::fromStdString(p->valuesText) : QString());
    m_parameterName->setEnabled(ok);
    m_parameterValues->setEnabled(ok);
    updateEditButtons();
}

void ProblemPanel::updateEditButtons() {
    const auto problem = m_document->problem();
    const int parameters = problem ? static_cast<int>(problem->parameters.size()) : 0;
    m_addCondition->setEnabled(problem != nullptr);
    m_addParameter->setEnabled(problem != nullptr);
    m_removeCondition->setEnabled(problem && m_conditionRow >= 0);
    m_removeParameter->setEnabled(problem && m_parameterRow >= 0);
    m_parameterUp->setEnabled(problem && m_parameterRow > 0);
    m_parameterDown->setEnabled(problem && m_parameterRow >= 0 && m_parameterRow + 1 < parameters);
}

void ProblemPanel::applyConditionText() {
    const auto problem = m_document->problem();
    if (!problem || m_conditionRow < 0 || m_conditionRow >= static_cast<int>(problem->conditions.size()))
        return;
    const auto row = static_cast<std::size_t>(m_conditionRow);
    const std::string text = m_conditionEdit->text().trimmed().toStdString();
    if (text == problem->conditions[row].expression) {
        showEditError({});
        return;
    }
    try {
        auto edited = std::make_shared<const TuningProblem>(edit::setCondition(*problem, row, text));
        showEditError({});
        m_document->applyEdit(std::move(edited), tr("Edit condition %1").arg(row + 1),
                              kConditionMergeKey + static_cast<int>(row));
    } catch (const InputError& e) {
        const QString message = QString::fromStdString(e.message());
        showEditError(tr("Condition %1: %2").arg(row + 1).arg(message));
        m_conditionEdit->setErrorColumn(ExpressionEdit::columnIn(message));
    }
}

void ProblemPanel::applyParameterText() {
    const auto problem = m_document->problem();
    if (!problem || m_parameterRow < 0 || m_parameterRow >= static_cast<int>(problem->parameters.size()))
        return;
    const auto row = static_cast<std::size_t>(m_parameterRow);
    const TuningParameter& p = problem->parameters[row];
    const std::string name = m_parameterName->text().trimmed().toStdString();
    const std::string values = m_parameterValues->text().trimmed().toStdString();
    if (name == p.name && values == p.valuesText) {
        showEditError({});
        return;
    }
    try {
        auto edited = std::make_shared<const TuningProblem>(edit::setParameter(*problem, row, name, values));
        showEditError({});
        m_document->applyEdit(
            std::move(edited),
            name == p.name ? tr("Edit the values of %1").arg(QString::fromStdString(name))
                           : tr("Rename %1 to %2").arg(QString::fromStdString(p.name), QString::fromStdString(name)),
            kParameterMergeKey + static_cast<int>(row));
    } catch (const InputError& e) {
        showEditError(tr("Parameter %1: %2").arg(QString::fromStdString(name), QString::fromStdString(e.message())));
    }
}

void ProblemPanel::addCondition() {
    const auto problem = m_document->problem();
    if (!problem)
        return;
    const std::size_t row = problem->conditions.size();
    try {
        m_document->applyEdit(std::make_shared<const TuningProblem>(edit::setCondition(*problem, row, "True")),
                              tr("Add condition %1").arg(row + 1));
    } catch (const InputError& e) {
        showEditError(QString::fromStdString(e.message()));
        return;
    }
    selectCondition(static_cast<int>(row));
    m_conditionEdit->setFocus();
    m_conditionEdit->selectAll();
}

void ProblemPanel::removeSelectedCondition() {
    const auto problem = m_document->problem();
    if (!problem || m_conditionRow < 0)
        return;
    const auto row = static_cast<std::size_t>(m_conditionRow);
    try {
        m_document->applyEdit(std::make_shared<const TuningProblem>(edit::removeCondition(*problem, row)),
                              tr("Remove condition %1").arg(row + 1));
        showEditError({});
    } catch (const InputError& e) {
        showEditError(QString::fromStdString(e.message()));
    }
    showSelectedCondition();
}

void ProblemPanel::addParameter() {
    const auto problem = m_document->problem();
    if (!problem)
        return;
    const std::size_t row = problem->parameters.size();
    std::string name;
    for (std::size_t n = row + 1; name.empty() || problem->parameterIndex(name) >= 0; ++n)
        name = "param_" + std::to_string(n);
    try {
        m_document->applyEdit(std::make_shared<const TuningProblem>(edit::setParameter(*problem, row, name, "[1, 2]")),
                              tr("Add parameter %1").arg(QString::fromStdString(name)));
    } catch (const InputError& e) {
        showEditError(QString::fromStdString(e.message()));
        return;
    }
    selectParameter(static_cast<int>(row));
    m_parameterName->setFocus();
    m_parameterName->selectAll();
}

void ProblemPanel::removeSelectedParameter() {
    const auto problem = m_document->problem();
    if (!problem || m_parameterRow < 0)
        return;
    const auto row = static_cast<std::size_t>(m_parameterRow);
    const QString name = QString::fromStdString(problem->parameters[row].name);
    try {
        m_document->applyEdit(std::make_shared<const TuningProblem>(edit::removeParameter(*problem, row)),
                              tr("Remove parameter %1").arg(name));
        showEditError({});
    } catch (const InputError& e) {
        // Conditions that use it would fail: say which, and keep it.
        showEditError(tr("%1 cannot be removed: %2").arg(name, QString::fromStdString(e.message())));
    }
    showSelectedParameter();
}

void ProblemPanel::moveSelectedParameter(int step) {
    const auto problem = m_document->problem();
    if (!problem || m_parameterRow < 0)
        return;
    const int to = m_parameterRow + step;
    if (to < 0 || to >= static_cast<int>(problem->parameters.size()))
        return;
    try {
        m_document->applyEdit(
            std::make_shared<const TuningProblem>(
                edit::moveParameter(*problem, static_cast<std::size_t>(m_parameterRow), static_cast<std::size_t>(to))),
            tr("Move parameter %1")
                .arg(QString::fromStdString(problem->parameters[static_cast<std::size_t>(m_parameterRow)].name)));
    } catch (const InputError& e) {
        showEditError(QString::fromStdString(e.message()));
        return;
    }
    selectParameter(to);
}

void ProblemPanel::showEditError(const QString& error) {
    m_error = error;
    if (error.isEmpty())
        m_conditionEdit->setErrorColumn(0);
    m_editError->setText(error);
    m_editError->setVisible(!error.isEmpty());
    updateCountLabel();
    emit editChecked(error);
}

void ProblemPanel::updateCountLabel() {
    if (!m_lastSpace || !m_lastSpace->ok()) {
        m_countLabel->setText(m_counting ? tr("Counting the valid configs…") : QString());
        return;
    }
    const SpaceStats& stats = m_lastSpace->stats;
    QString text = tr("%1 valid of %2 raw configs (%3)")
                       .arg(formatCount(stats.validSize), formatCount(stats.rawSize),
                            formatShare(static_cast<double>(stats.validSize), stats.rawSize));
    const bool stale = !m_error.isEmpty();
    if (stale)
        text += tr("  ·  stale");
    else if (m_counting)
        text += tr("  ·  counting again…");
    // Every shape's count, in the shape list.
    const auto problem = m_document->problem();
    if (problem && m_validPerShape.size() == problem->shapes.size()) {
        for (int i = 0; i < m_shapeBox->count() && i < static_cast<int>(m_validPerShape.size()); ++i) {
            const auto& n = m_validPerShape[static_cast<std::size_t>(i)];
            const QString label = shapeText(*problem, static_cast<std::size_t>(i));
            m_shapeBox->setItemText(i, n ? tr("%1  (%2 valid)").arg(label, formatCount(static_cast<double>(*n)))
                                         : tr("%1  (not counted)").arg(label));
        }
    }

    m_countLabel->setText(text);
    m_countLabel->setToolTip(stale ? tr("The count before the edit that has an error (below): it is not taken until "
                                        "it is fixed")
                                   : tr("Valid configs at the shown shape, of all combinations of the values"));
    m_countLabel->setProperty("stale", stale);
    m_countLabel->setStyleSheet(stale ? QStringLiteral("color: palette(mid); font-style: italic;") : QString());
}

void ProblemPanel::onImpactReady(const std::shared_ptr<const ConditionImpactSet>& impact) {
    m_conditions->setImpact(impact);
    m_parameters->setValueCounts(impact->valueCounts, impact->valueCountsEstimated);
    m_validPerShape = impact->validPerShape;
    updateCountLabel();
    m_parameterView->resizeColumnToContents(ParameterModel::KeptColumn);
    m_conditionView->resizeColumnToContents(ConditionModel::RejectsColumn);
    m_conditionView->resizeColumnToContents(ConditionModel::RemovesColumn);
}

void ProblemPanel::fitColumns() {
    m_parameterView->resizeColumnsToContents();
    m_parameterView->horizontalHeader()->setSectionResizeMode(ParameterModel::ValuesColumn, QHeaderView::Stretch);
    m_conditionView->resizeColumnsToContents();
    m_conditionView->horizontalHeader()->setSectionResizeMode(ConditionModel::ExpressionColumn, QHeaderView::Stretch);
}

} // namespace tilescope::views
