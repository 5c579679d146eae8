#include "problem/problempanel.h"

#include "common/format.h"
#include "problem/conditionmodel.h"
#include "problem/parametermodel.h"
#include "problem/problemdocument.h"
#include "problem/spacecontroller.h"
#include "spec/tuningproblem.h"

#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
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
    m_kernelLabel = new QLabel(this);
    m_kernelLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_objectiveLabel = new QLabel(this);
    m_objectiveLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_shapeBox = new QComboBox(this);
    m_shapeBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_shapeBox->setToolTip(tr("The problem shape whose config space is shown"));

    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
    form->addRow(tr("Kernel:"), m_kernelLabel);
    form->addRow(tr("Objective:"), m_objectiveLabel);
    form->addRow(tr("Shape:"), m_shapeBox);

    m_parameterView = makeTable(m_parameters, ParameterModel::SortRole, this);
    m_parameterView->setObjectName(QStringLiteral("parameterView"));
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

    m_splitter = new QSplitter(Qt::Vertical, this);
    m_splitter->setChildrenCollapsible(false);
    m_splitter->addWidget(parameterBox);
    m_splitter->addWidget(conditionBox);
    m_splitter->setStretchFactor(0, 0);
    m_splitter->setStretchFactor(1, 1);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_splitter, 1);

    connect(m_shapeBox, &QComboBox::currentIndexChanged, m_document, &ProblemDocument::setShapeIndex);
    connect(m_document, &ProblemDocument::shapeChanged, this, [this](int index) {
        const QSignalBlocker block(m_shapeBox);
        m_shapeBox->setCurrentIndex(index);
    });
    connect(m_document, &ProblemDocument::problemChanged, this, &ProblemPanel::onProblemChanged);
    connect(controller, &SpaceController::spaceRequested, this, &ProblemPanel::onSpaceRequested);
    connect(controller, &SpaceController::spaceReady, this, &ProblemPanel::onSpaceReady);
    connect(controller, &SpaceController::impactReady, this, &ProblemPanel::onImpactReady);
    onProblemChanged();
}

ProblemPanel::~ProblemPanel() = default;

void ProblemPanel::onProblemChanged() {
    const auto problem = m_document->problem();
    m_parameters->setProblem(problem);
    m_conditions->setProblem(problem);
    {
        const QSignalBlocker block(m_shapeBox);
        m_shapeBox->clear();
        if (problem) {
            for (const Shape& shape : problem->shapes) {
                const QString label = QString::fromStdString(shape.label());
                m_shapeBox->addItem(label.isEmpty() ? tr("(no shape)") : label);
            }
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
        } else {
            m_objectiveLabel->setText(tr("time  (lower is better)"));
        }
    } else {
        m_kernelLabel->clear();
        m_objectiveLabel->clear();
    }
    fitColumns();
    // Once the tables have laid out their rows, give the parameters the height they need.
    QTimer::singleShot(0, this, &ProblemPanel::fitSplitter);
}

QSize ProblemPanel::sizeHint() const {
    // Wide enough for the value lists and most conditions on one or two lines.
    const int em = fontMetrics().averageCharWidth();
    return {em * 88, em * 100};
}

void ProblemPanel::fitSplitter() {
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
    m_splitter->setSizes({wanted, std::max(0, total - wanted - m_splitter->handleWidth())});
}

void ProblemPanel::onSpaceRequested() {
    m_conditions->setStats(nullptr);
    m_conditions->setImpact(nullptr);
    m_conditions->setImpactPending(true);
}

void ProblemPanel::onSpaceReady(const std::shared_ptr<const SpaceResult>& result) {
    m_conditions->setStats(result->ok() ? &result->stats : nullptr);
    if (!result->ok())
        m_conditions->setImpactPending(false);
}

void ProblemPanel::onImpactReady(const std::shared_ptr<const ConditionImpactSet>& impact) {
    m_conditions->setImpact(impact);
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
