#include "resultsfanout.h"

#include "common/emptystate.h"
#include "compare/compareview.h"
#include "crossgpu/crossgpuview.h"
#include "plots/heatmapwidget.h"
#include "plots/scatterwidget.h"
#include "problem/problemdocument.h"
#include "session/configdetails.h"
#include "session/resultsheadline.h"
#include "session/resultsview.h"
#include "session/sessioncontroller.h"
#include "session/sessionproblem.h"

#include <QAction>
#include <QFileInfo>
#include <QLabel>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

namespace tilescope::views {

ResultsFanOut::ResultsFanOut(SessionController* session, ProblemDocument* document, Views views,
                             std::function<Origin()> origin, const QAction* runAction, QWidget* parent)
    : QObject(parent)
    , m_session(session)
    , m_document(document)
    , m_views(views)
    , m_origin(std::move(origin))
    , m_runAction(runAction)
    , m_header(new QLabel(parent))
    , m_verdict(new QLabel(parent))
    , m_heatmapEmpty(emptyStateLabel(QString(), parent))
    , m_heatmapStack(new QStackedWidget(parent))
    , m_scatterStack(new QStackedWidget(parent))
    , m_status(new QLabel(parent))
    , m_results(std::make_shared<const std::vector<ResultRecord>>()) {
    m_header->setObjectName(QStringLiteral("resultsHeader"));
    m_header->setTextFormat(Qt::RichText);
    m_header->setWordWrap(true);
    m_header->setContentsMargins(8, 4, 8, 2);
    auto* heatmapPage = new QWidget(parent);
    auto* heatmapLayout = new QVBoxLayout(heatmapPage);
    heatmapLayout->setContentsMargins(0, 0, 0, 0);
    heatmapLayout->setSpacing(0);
    heatmapLayout->addWidget(m_header);
    // The session's verdict (a failure, wrong results and why) above the picture it qualifies.
    m_verdict->setObjectName(QStringLiteral("verdictBanner"));
    m_verdict->setWordWrap(true);
    m_verdict->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_verdict->setContentsMargins(8, 4, 8, 4);
    m_verdict->setStyleSheet(QStringLiteral("QLabel#verdictBanner { background: #fff4e5; color: #7a3e00; "
                                            "border: 1px solid #f0b46a; border-radius: 3px; }"));
    m_verdict->hide();
    heatmapLayout->addWidget(m_verdict);
    heatmapLayout->addWidget(m_views.heatmap, 1);
    m_heatmapStack->addWidget(m_heatmapEmpty);
    m_heatmapStack->addWidget(heatmapPage);
    m_scatterStack->addWidget(
        emptyStateLabel(tr("<h3>No results yet</h3><p>The scatter plot shows the results of a run "
                           "or a recording: any quantity against any other.</p>"),
                        parent));
    m_scatterStack->addWidget(m_views.scatter);
}

QWidget* ResultsFanOut::heatmapPane() const {
    return m_heatmapStack;
}

QWidget* ResultsFanOut::scatterPane() const {
    return m_scatterStack;
}

void ResultsFanOut::show(ResultsSnapshot results) {
    m_results = results ? std::move(results) : std::make_shared<const std::vector<ResultRecord>>();
    const std::vector<std::string> names = m_session->parameterNames();
    const std::string objective = m_session->objectiveName();
    const bool newKind = names != m_parameters;
    m_parameters = names;

    m_views.heatmap->setResults(m_results, names, objective);
    // Results analysed, never timed (the analysis backend's), show what compiling told: occupancy
    // colours the heatmap and orders the table. A run's first results arrive after its views were
    // set up for a new session, so this is looked at again as they do.
    bool turnedUntimed = false;
    if (newKind && names.size() >= 2) {
        m_views.heatmap->setSpec(sessionHeatmapSpec(m_views.heatmap->spec(), names, objective, *m_results));
    } else if (const HeatmapSpec untimed = untimedHeatmapSpec(m_views.heatmap->spec(), *m_results);
               !(untimed == m_views.heatmap->spec())) {
        m_views.heatmap->setSpec(untimed);
        turnedUntimed = true;
    }
    m_views.scatter->setResults(m_results, names, objective);
    showTable();
    const bool untimed =
        std::none_of(m_results->begin(), m_results->end(), [](const ResultRecord& r) { return r.ok(); }) &&
        std::any_of(m_results->begin(), m_results->end(), [](const ResultRecord& r) { return r.ranksStatically(); });
    if (newKind || turnedUntimed)
        m_views.table->sortWinnersFirst(objective, untimed);
    m_views.table->showTimeColumns(!untimed);
    m_views.crossGpu->setResults(m_results);
    m_views.compare->setCurrent(m_session->session(), m_results, compareLabel());
    updateDetailsContext();
    const bool any = !m_results->empty();
    m_scatterStack->setCurrentIndex(any ? 1 : 0);
    if (any)
        m_heatmapStack->setCurrentIndex(1);
    updateHeader();
}

void ResultsFanOut::showTable() {
    // Before any session the table's columns are the open problem's parameters and objective, so that
    // a TFLOP/s problem's table does not say it ranks by time before its first run.
    std::vector<std::string> names = m_session->parameterNames();
    std::string objective = m_session->objectiveName();
    if (m_results->empty() && names.empty()) {
        if (const auto problem = m_document->problem()) {
            for (const TuningParameter& p : problem->parameters)
                names.push_back(p.name);
            if (problem->objective)
                objective = problem->objective->name;
        }
    }
    m_views.table->setResults(m_results, names, objective);
}

QString ResultsFanOut::compareLabel() const {
    const SessionInfo info = m_session->session();
    const QString device = info.deviceName.empty() ? tr("unknown device") : QString::fromStdString(info.deviceName);
    const Origin origin = m_origin();
    const QString source = origin.demo                      ? tr("the demo")
                           : origin.recordingPath.isEmpty() ? tr("session %1").arg(info.id)
                                                            : QFileInfo(origin.recordingPath).fileName();
    return QStringLiteral("%1 (%2)").arg(device, source);
}

void ResultsFanOut::compareWith(const QString& path) {
    m_views.compare->setCurrent(m_session->session(), m_results, compareLabel());
    m_views.compare->compareWith(path);
}

void ResultsFanOut::updateDetailsContext() {
    const ProblemAtShape context =
        detailsContext(m_document->problem(), m_document->shapeIndex(), m_session->session());
    m_views.details->setContext(m_results, m_parameters, context.problem, m_session->arch(), context.shape);
    m_views.details->setObjectiveName(m_session->objectiveName());
}

void ResultsFanOut::updateHeader() {
    QLabel* status = m_status;
    if (m_results->empty()) {
        m_heatmapEmpty->setText(noResultsNote(m_session->isLoading(), m_runAction->shortcut()));
        m_heatmapStack->setCurrentIndex(0);
        m_header->clear();
        m_verdict->hide();
        status->setText(m_session->isLoading() ? tr("Reading the recording…") : QString());
        status->setMinimumWidth(0);
        return;
    }
    const Origin origin = m_origin();
    const ResultsHeadline headline =
        describeResults(m_session->session(), *m_results, {origin.demo, m_session->isRunning(), origin.recordingPath});
    m_header->setToolTip(headline.tooltip);
    m_header->setText(headline.header);
    m_verdict->setText(headline.verdict);
    m_verdict->setVisible(!headline.verdict.isEmpty());
    status->setText(headline.status);
    // The status bar's messages must not squeeze it out.
    status->setMinimumWidth(status->fontMetrics().horizontalAdvance(headline.status) + 8);
}

} // namespace tilescope::views
