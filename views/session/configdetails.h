#pragma once

// Everything known about one config of a session: its status and message, timing statistics,
// the objective, the verification error, what ptxas reported (registers, spills, stack, shared
// memory, barriers), the theoretical occupancy and what limits it (computed for the session's
// arch when the problem is known), the CUPTI metrics with their labels, the compile log, and a
// spill diagnosis in plain language: registers per thread, spill bytes, what limits occupancy,
// the local-memory traffic the metrics saw, and the register-pressure rule learnt from the
// spill data of all the results (learnSpillRule, core/jobs/spillrule.h) with what it would prune.
//
// The rule is learnt on a helper thread, once the results stop changing for a moment (at most
// every 2 s during a live run); only the newest request is applied.

#include "common/backgroundtask.h"
#include "session/sessiontypes.h"

#include "analysis/occupancy.h"
#include "jobs/spillrule.h"
#include "spec/tuningproblem.h"

#include <QString>
#include <QWidget>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

class QTextBrowser;
class QTimer;

namespace tilescope {
class StaticAnalyzer;
}

namespace tilescope::views {

/// The spill diagnosis of one result, in plain language (HTML paragraphs): registers and spill
/// bytes, what limits occupancy (`occupancy` of blocks of `blockSize` threads and `limits`, when
/// known), the local-memory traffic
/// in the metrics, and the rule (`rule` when learnt; `rulePrunesThis` says whether it prunes
/// this config).
QString spillDiagnosisHtml(const ResultRecord& result, const std::optional<Occupancy>& occupancy,
                           std::int64_t blockSize, const ArchLimits* limits, const SpillRule* rule,
                           std::optional<bool> rulePrunesThis, bool ruleInProgress);

class ConfigDetailsPanel : public QWidget {
    Q_OBJECT
public:
    explicit ConfigDetailsPanel(QWidget* parent = nullptr);
    /// Waits for a rule being learnt (it is told to stop).
    ~ConfigDetailsPanel() override;

    /// The results the configs come from, their parameter names, the problem (null when not
    /// known: occupancy then comes from the results alone, and no rule is learnt), the arch the
    /// static info is for ("sm_90"; "" unknown), and the problem's shape.
    void setContext(ResultsSnapshot results, std::vector<std::string> parameterNames,
                    std::shared_ptr<const TuningProblem> problem, std::string arch, std::size_t shapeIndex = 0);
    /// The session's objective ("TFLOP/s"), to name the objective's value; "" = "objective".
    void setObjectiveName(std::string name);
    /// Configs compiled for `arch` and not run (the Compile Check's sample): a config the results
    /// do not hold is shown from these, as compiled for that arch. Null or empty: none.
    void setCompiledSample(ResultsSnapshot sample, std::string arch);
    /// Shows the config (compact JSON, as the results view and the plots give it); "" clears.
    void showConfig(const QString& configJson);

    QString shownConfig() const { return m_configJson; }
    /// The result shown (null when none).
    const ResultRecord* shownRecord() const;
    /// The result shown is one of the compiled sample's (setCompiledSample), not of the results.
    bool showsCompiledSample() const { return m_record && m_fromSample; }
    /// The panel's text without markup (for tests and copying).
    QString plainText() const;
    /// The spill diagnosis of the shown config, without markup ("" when none is shown).
    QString spillDiagnosisText() const;
    /// The rule learnt from the current results (null until one is ready).
    const SpillRule* rule() const { return m_rule.get(); }
    /// True while a rule is being learnt or waits to be.
    bool isRuleBusy() const { return m_ruleBusy || m_rulePending; }
    QTextBrowser* browser() const { return m_browser; }

signals:
    /// A rule for the current results is on screen.
    void ruleReady();

private:
    void render();
    void requestRule();
    void startRule();
    std::optional<Occupancy> occupancyOf(const ResultRecord& record, std::int64_t* blockSize = nullptr) const;
    // The arch the shown record was compiled for: the sample's, or the session's.
    const std::string& shownArch() const { return m_fromSample ? m_sampleArch : m_arch; }

    ResultsSnapshot m_results;
    std::vector<std::string> m_parameterNames;
    std::shared_ptr<const TuningProblem> m_problem;
    std::string m_arch;
    std::string m_objectiveName;
    std::size_t m_shapeIndex = 0;
    std::unique_ptr<StaticAnalyzer> m_analyzer; // launch geometry of configs (null without a problem)

    ResultsSnapshot m_sample; // compiled, not run (the Compile Check's)
    std::string m_sampleArch;

    QString m_configJson;
    std::size_t m_row = 0; // where the shown config was found: checked first in the next snapshot
    const ResultRecord* m_record = nullptr;
    bool m_fromSample = false; // m_record is one of m_sample's
    QString m_diagnosis;       // HTML

    // What is on screen, to skip redrawing the same
    struct RenderKey {
        std::int64_t id = -2;
        std::int64_t sessionId = -2;
        QString config;
        const SpillRule* rule = nullptr;
        bool ruleBusy = false;
        std::string arch;
        std::string objectiveName;
        const TuningProblem* problem = nullptr;
        bool fromSample = false;
        bool operator==(const RenderKey&) const = default;
    };
    RenderKey m_rendered;

    // The rule
    std::shared_ptr<const SpillRule> m_rule;
    ResultsSnapshot m_ruleResults;                      // the results m_rule was learnt from
    std::shared_ptr<const TuningProblem> m_ruleProblem; // and the problem
    QTimer* m_ruleTimer;
    std::chrono::steady_clock::time_point m_ruleRequestedAt;
    bool m_ruleBusy = false;
    bool m_rulePending = false;

    QTextBrowser* m_browser;
    BackgroundTask m_ruleTask{this};
};

} // namespace tilescope::views
