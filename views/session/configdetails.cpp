#include "session/configdetails.h"

#include "common/format.h"
#include "models/quantity.h"

#include "analysis/staticanalysis.h"
#include "exchange/configcodec.h"
#include "measure/metricnames.h"

#include <QTextBrowser>
#include <QTextDocument>
#include <QTimer>
#include <QVBoxLayout>

#include <climits>
#include <cmath>

namespace tilescope::views {

namespace {

// How long the results must stay unchanged before the rule is learnt again, and the longest a
// request waits while they keep changing.
constexpr std::chrono::milliseconds kRuleDebounce{300};
constexpr std::chrono::milliseconds kRuleMaxWait{2000};

QString esc(const QString& text) {
    return text.toHtmlEscaped();
}

QString bytes(std::int64_t n) {
    return QStringLiteral("%1 B").arg(formatCount(static_cast<double>(n)));
}

QString bigBytes(double n) {
    if (n >= 1024.0 * 1024 * 1024)
        return QStringLiteral("%1 GiB").arg(formatNumber(n / (1024.0 * 1024 * 1024)));
    if (n >= 1024.0 * 1024)
        return QStringLiteral("%1 MiB").arg(formatNumber(n / (1024.0 * 1024)));
    if (n >= 1024.0)
        return QStringLiteral("%1 KiB").arg(formatNumber(n / 1024.0));
    return QStringLiteral("%1 B").arg(formatNumber(n));
}

std::optional<double> metricOf(const ResultRecord& r, const char* name) {
    for (const Metric& m : r.measurement.metrics)
        if (m.name == name)
            return m.value;
    return std::nullopt;
}

QString limiterText(Limiter limiter) {
    switch (limiter) {
    case Limiter::None:
        return QStringLiteral("nothing known");
    case Limiter::Registers:
        return QStringLiteral("registers");
    case Limiter::SharedMemory:
        return QStringLiteral("shared memory");
    case Limiter::Warps:
        return QStringLiteral("warps per SM");
    case Limiter::Blocks:
        return QStringLiteral("blocks per SM");
    case Limiter::Barriers:
        return QStringLiteral("named barriers");
    }
    return {};
}

QString blocksText(int blocks) {
    return blocks == INT_MAX ? QStringLiteral("no limit") : QString::number(blocks);
}

// Why occupancy is what it is, in one sentence.
QString occupancyExplanation(const Occupancy& occ, const ArchLimits& limits, std::int64_t blockSize) {
    const int warpsPerBlock = static_cast<int>((blockSize + limits.warpSize - 1) / limits.warpSize);
    QString text = QStringLiteral("Theoretical occupancy on %1 is %2 % (%3 of %4 warps per SM, %5 block%6 of %7 "
                                  "threads)")
                       .arg(qs(limits.arch), formatNumber(occ.percent()))
                       .arg(occ.activeWarps)
                       .arg(occ.maxWarps)
                       .arg(occ.activeBlocks)
                       .arg(occ.activeBlocks == 1 ? QString() : QStringLiteral("s"))
                       .arg(formatCount(static_cast<double>(blockSize)));
    switch (occ.limiter) {
    case Limiter::Registers:
        text += QStringLiteral(", limited by registers: a block needs %1 registers (as allocated) and an SM has "
                               "%2, so %3 block%4 fit")
                    .arg(formatCount(static_cast<double>(occ.registersPerBlock)),
                         formatCount(static_cast<double>(limits.registersPerSm)))
                    .arg(occ.blocksByRegisters)
                    .arg(occ.blocksByRegisters == 1 ? QString() : QStringLiteral("s"));
        break;
    case Limiter::SharedMemory:
        text += QStringLiteral(", limited by shared memory: a block takes %1 (as allocated) of the SM's %2, so %3 "
                               "block%4 fit")
                    .arg(bigBytes(static_cast<double>(occ.sharedPerBlock)),
                         bigBytes(static_cast<double>(limits.sharedPerSm)))
                    .arg(occ.blocksBySharedMemory)
                    .arg(occ.blocksBySharedMemory == 1 ? QString() : QStringLiteral("s"));
        break;
    case Limiter::Warps:
        text += occ.activeWarps >= occ.maxWarps
                    ? QStringLiteral(": full, nothing to gain")
                    : QStringLiteral(", limited by warps: %1 warps per block, and an SM holds %2")
                          .arg(warpsPerBlock)
                          .arg(limits.maxWarpsPerSm);
        break;
    case Limiter::Blocks:
        text +=
            QStringLiteral(", limited by the %1 resident blocks an SM holds (small blocks)").arg(limits.maxBlocksPerSm);
        break;
    case Limiter::Barriers:
        text += QStringLiteral(", limited by named barriers");
        break;
    case Limiter::None:
        break;
    }
    return text + QLatin1Char('.');
}

QString row(const QString& label, const QString& value) {
    // The label on one line; the value wraps at spaces only (the browser never breaks a word).
    return QStringLiteral(
               "<tr><td style='padding-right:12px; color:palette(mid); white-space:nowrap'>%1</td><td>%2</td></tr>")
        .arg(esc(label), value);
}

// The rule learnt from the results with what ptxas reported (a config measured twice counts once),
// counted over the space when it has at most 5,000,000 configs. Slow for large result sets: off
// the GUI thread.
SpillRule learnRuleFromResults(const std::vector<ResultRecord>& results, const TuningProblem& problem,
                               std::size_t shapeIndex, const std::atomic<bool>* cancel) {
    std::vector<SpillSample> samples;
    for (const ResultRecord& r : results) {
        const auto& info = r.measurement.staticInfo;
        if (!info || info->registers < 0)
            continue;
        if (std::optional<Config> config = configFromValues(problem, r.config))
            samples.push_back({std::move(*config), *info});
    }
    SpillRuleOptions options;
    options.maxSpace = 5'000'000;
    options.cancel = cancel;
    return learnSpillRule(problem, shapeIndex, std::move(samples), options);
}

// What ptxas did with the registers: no spill (and the stack frame), or a light or heavy spill.
QString spillParagraph(const StaticInfo& info, const ArchLimits* limits) {
    const SpillClass spill = classifySpill(info);
    const bool atCap = limits && info.registers >= limits->maxRegistersPerThread;
    if (!info.spills()) {
        QString text = QStringLiteral("No register spilling: %1 registers per thread").arg(info.registers);
        if (info.stackFrame > 0)
            text += QStringLiteral(", but a %1 stack frame per thread: local arrays or call frames live in local "
                                   "memory.")
                        .arg(bytes(info.stackFrame));
        else
            text += QStringLiteral(", no local memory.");
        return esc(text);
    } else {
        QString text =
            QStringLiteral("Spills registers: ptxas gave each thread %1 registers%2 and moved the rest to local "
                           "memory: %3 of spill stores and %4 of spill loads per thread, in a %5 stack frame. ")
                .arg(info.registers)
                .arg(atCap ? QStringLiteral(" (the most a thread can have)") : QString())
                .arg(bytes(info.spillStores), bytes(info.spillLoads), bytes(info.stackFrame));
        if (spill == SpillClass::Heavy)
            text += QStringLiteral("A heavy spill (%1 or more per thread, stores and loads together): the working "
                                   "set lives in local memory; expect a large slowdown.")
                        .arg(bytes(kHeavySpillBytes));
        else
            text += QStringLiteral("A light spill (under %1 per thread): usually cheap, served by L1.")
                        .arg(bytes(kHeavySpillBytes));
        return esc(text);
    }
}

// What limits the occupancy, or why the config cannot launch ("" when nothing is known).
QString occupancyParagraph(const ResultRecord& r, const std::optional<Occupancy>& occupancy, std::int64_t blockSize,
                           const ArchLimits* limits) {
    if (occupancy && limits && occupancy->launchable) {
        return esc(occupancyExplanation(*occupancy, *limits, blockSize));
    } else if (occupancy && !occupancy->launchable) {
        return esc(QStringLiteral("It cannot launch on %1: %2.")
                       .arg(limits ? qs(limits->arch) : QStringLiteral("this arch"), qs(occupancy->reason)));
    } else if (r.occupancy) {
        return esc(QStringLiteral("Theoretical occupancy %1 % (what limits it is not known: no arch table or "
                                  "launch geometry).")
                       .arg(formatNumber(*r.occupancy)));
    }
    return {};
}

// The local-memory traffic CUPTI counted at run time ("" without metrics and spills).
QString trafficParagraph(const ResultRecord& r, const StaticInfo& info) {
    const auto loads = metricOf(r, kLocalLoadSectorsMetric);
    const auto stores = metricOf(r, kLocalStoreSectorsMetric);
    if (loads || stores) {
        const double total = loads.value_or(0) + stores.value_or(0);
        QString text;
        if (total == 0)
            text = QStringLiteral("At run time CUPTI counted no local-memory traffic%1.")
                       .arg(info.spills() ? QStringLiteral(": the spills sit on paths that did not run, or stay in L1")
                                          : QString());
        else
            text = QStringLiteral("At run time it moved %1 local-load and %2 local-store sectors (%3 of local-memory "
                                  "traffic at 32 bytes a sector)")
                       .arg(formatCount(loads.value_or(0)), formatCount(stores.value_or(0)), bigBytes(total * 32));
        const auto read = metricOf(r, "dram__bytes_read.sum");
        const auto written = metricOf(r, "dram__bytes_write.sum");
        if (total > 0 && (read || written))
            text += QStringLiteral("; DRAM moved %1 in all").arg(bigBytes(read.value_or(0) + written.value_or(0)));
        if (total > 0)
            text += QLatin1Char('.');
        if (const auto achieved = metricOf(r, kAchievedOccupancyMetric))
            text += QStringLiteral(" Achieved occupancy: %1 %.").arg(formatNumber(*achieved));
        return esc(text);
    } else if (info.spills()) {
        return esc(QStringLiteral("No CUPTI counters for this config: how much local-memory traffic the spills "
                                  "cause is not measured. With metrics on, counters go to the best five configs, "
                                  "and to the leaders of a search once 20 configs have a time; --metrics "
                                  "default,all-configs collects them for every config."));
    }
    return {};
}

// The register-pressure rule learnt from the results, for a spilling config ("" while none is
// known or learnt). Its HTML (the conditions in <code>) is escaped here.
QString ruleParagraph(const SpillRule* rule, std::optional<bool> rulePrunesThis, bool ruleInProgress) {
    if (rule && rule->found) {
        QString text =
            QStringLiteral("Register-pressure rule learnt from the %1 results with static info (%2 spill): keep "
                           "the configs where <code>%3</code>. Among them it prunes %4 of the %2 spilling configs "
                           "and %5 that do not spill")
                .arg(formatCount(std::uint64_t(rule->learntFrom)),
                     formatCount(std::uint64_t(rule->best.counts.positives)), esc(qs(rule->best.condition)),
                     formatCount(std::uint64_t(rule->best.counts.prunedPositives)),
                     formatCount(std::uint64_t(rule->best.counts.prunedNegatives)));
        if (rule->prunedInSpace)
            text +=
                QStringLiteral("; over the whole space it prunes %1 of %2 valid configs (%3)")
                    .arg(formatCount(*rule->prunedInSpace), formatCount(rule->spaceSize),
                         formatShare(static_cast<double>(*rule->prunedInSpace), static_cast<double>(rule->spaceSize)));
        text += QLatin1Char('.');
        if (rulePrunesThis)
            text += *rulePrunesThis ? QStringLiteral(" It prunes this config.")
                                    : QStringLiteral(" It keeps this config (a spill it misses).");
        if (rule->catchAll)
            text += QStringLiteral(" To prune every spilling config: <code>%1</code> (it also prunes %2 that do "
                                   "not spill).")
                        .arg(esc(qs(rule->catchAll->condition)),
                             formatCount(std::uint64_t(rule->catchAll->counts.prunedNegatives)));
        if (ruleInProgress)
            text += QStringLiteral(" <i>(updating for the newest results…)</i>");
        return text;
    } else if (rule) {
        return esc(QStringLiteral("No register-pressure rule: %1.").arg(qs(rule->reason)));
    } else if (ruleInProgress) {
        return esc(QStringLiteral("Learning a register-pressure rule from these results…"));
    }
    return {};
}

} // namespace

QString spillDiagnosisHtml(const ResultRecord& r, const std::optional<Occupancy>& occupancy, std::int64_t blockSize,
                           const ArchLimits* limits, const SpillRule* rule, std::optional<bool> rulePrunesThis,
                           bool ruleInProgress) {
    const auto& info = r.measurement.staticInfo;
    if (!info || info->registers < 0)
        return QStringLiteral("<p>Nothing to diagnose: no report from the compiler for this config (registers and "
                              "spills are unknown).</p>");
    QStringList paragraphs{spillParagraph(*info, limits), occupancyParagraph(r, occupancy, blockSize, limits),
                           trafficParagraph(r, *info)};
    if (info->spills())
        paragraphs << ruleParagraph(rule, rulePrunesThis, ruleInProgress);
    QString html;
    for (const QString& p : paragraphs) {
        if (!p.isEmpty())
            html += QStringLiteral("<p>") + p + QStringLiteral("</p>");
    }
    return html;
}

ConfigDetailsPanel::ConfigDetailsPanel(QWidget* parent)
    : QWidget(parent)
    , m_ruleTimer(new QTimer(this))
    , m_browser(new QTextBrowser(this)) {
    m_ruleTimer->setSingleShot(true);
    m_ruleTimer->setInterval(kRuleDebounce);
    connect(m_ruleTimer, &QTimer::timeout, this, &ConfigDetailsPanel::startRule);
    m_browser->setOpenLinks(false);
    m_browser->setReadOnly(true);
    // Words are never split across lines: a narrow panel scrolls sideways instead.
    m_browser->setWordWrapMode(QTextOption::WordWrap);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_browser);
    render();
}

ConfigDetailsPanel::~ConfigDetailsPanel() {
    m_ruleTask.stop();
}

void ConfigDetailsPanel::setObjectiveName(std::string name) {
    if (name == m_objectiveName)
        return;
    m_objectiveName = std::move(name);
    render();
}

void ConfigDetailsPanel::setCompiledSample(ResultsSnapshot sample, std::string arch) {
    if (sample == m_sample && arch == m_sampleArch)
        return;
    m_sample = std::move(sample);
    m_sampleArch = std::move(arch);
    showConfig(m_configJson);
}

void ConfigDetailsPanel::setContext(ResultsSnapshot results, std::vector<std::string> parameterNames,
                                    std::shared_ptr<const TuningProblem> problem, std::string arch,
                                    std::size_t shapeIndex) {
    const bool problemChanged = problem != m_problem || shapeIndex != m_shapeIndex;
    if (results == m_results && !problemChanged && arch == m_arch && parameterNames == m_parameterNames)
        return;
    if (problemChanged || parameterNames != m_parameterNames) {
        // Another session: the rule learnt for the old one does not apply. The one being learnt
        // stops and delivers nothing: the new session's may start at once.
        m_ruleTask.supersede();
        m_ruleBusy = false;
        m_rule.reset();
        m_ruleResults.reset();
        m_ruleProblem.reset();
    }
    if (problemChanged) {
        m_analyzer.reset();
        if (problem) {
            try {
                m_analyzer = std::make_unique<StaticAnalyzer>(*problem, shapeIndex);
            } catch (const std::exception&) {
                // The geometry stays unknown; occupancy then comes from the results alone.
            }
        }
    }
    m_results = std::move(results);
    m_parameterNames = std::move(parameterNames);
    m_problem = std::move(problem);
    m_arch = std::move(arch);
    m_shapeIndex = shapeIndex;
    showConfig(m_configJson);
}

const ResultRecord* ConfigDetailsPanel::shownRecord() const {
    return m_record;
}

void ConfigDetailsPanel::showConfig(const QString& configJsonText) {
    m_configJson = configJsonText;
    m_record = nullptr;
    m_fromSample = false;
    if (!configJsonText.isEmpty() && m_results) {
        const std::vector<ResultRecord>& rs = *m_results;
        const std::string wanted = configJsonText.toStdString();
        if (m_row < rs.size() && configJson(rs[m_row].config) == wanted) {
            m_record = &rs[m_row];
        } else {
            // The newest result of the config (a resumed session may hold an older placeholder).
            for (std::size_t i = rs.size(); i-- > 0;) {
                if (configJson(rs[i].config) == wanted) {
                    m_record = &rs[i];
                    m_row = i;
                    break;
                }
            }
        }
    }
    if (!m_record && !configJsonText.isEmpty() && m_sample) {
        // Not among the results: what compiling it told, when it was compiled.
        const std::string wanted = configJsonText.toStdString();
        for (const ResultRecord& r : *m_sample)
            if (configJson(r.config) == wanted) {
                m_record = &r;
                m_fromSample = true;
                break;
            }
    }
    if (m_record && !m_fromSample && m_record->measurement.staticInfo && m_record->measurement.staticInfo->spills())
        requestRule();
    render();
}

std::optional<Occupancy> ConfigDetailsPanel::occupancyOf(const ResultRecord& r, std::int64_t* blockSizeOut) const {
    const std::string& arch = shownArch();
    const ArchLimits* limits = arch.empty() ? nullptr : findArch(arch);
    const auto& info = r.measurement.staticInfo;
    if (!limits || !info || info->registers < 0)
        return std::nullopt;
    std::optional<std::int64_t> blockSize = r.blockSize;
    std::optional<std::int64_t> sharedDynamic = r.sharedDynamic;
    if ((!blockSize || !sharedDynamic) && m_analyzer && m_problem) {
        if (const std::optional<Config> config = configFromValues(*m_problem, r.config)) {
            const LaunchGeometry g = m_analyzer->geometry(*config);
            if (g.error.empty()) {
                blockSize = blockSize.value_or(g.threadsPerBlock());
                sharedDynamic = sharedDynamic.value_or(g.sharedDynamic);
            }
        }
    }
    if (!blockSize || *blockSize <= 0)
        return std::nullopt;
    if (blockSizeOut)
        *blockSizeOut = *blockSize;
    return theoreticalOccupancy(*limits, KernelResources::of(*info, *blockSize, sharedDynamic.value_or(0)));
}

void ConfigDetailsPanel::requestRule() {
    if (!m_problem || !m_results || (m_ruleResults == m_results && m_ruleProblem == m_problem))
        return;
    const auto now = std::chrono::steady_clock::now();
    if (!m_rulePending) {
        m_rulePending = true;
        m_ruleRequestedAt = now;
    }
    if (m_ruleBusy)
        return; // started again when the running one is done
    if (now - m_ruleRequestedAt >= kRuleMaxWait)
        startRule();
    else
        m_ruleTimer->start();
}

void ConfigDetailsPanel::startRule() {
    if (m_ruleBusy || !m_problem || !m_results)
        return;
    m_ruleTimer->stop();
    m_rulePending = false;
    m_ruleBusy = true;
    m_ruleTask.start(
        [results = m_results, problem = m_problem, shape = m_shapeIndex](const BackgroundJob& job) {
            return std::make_shared<const SpillRule>(learnRuleFromResults(*results, *problem, shape, job.cancelFlag()));
        },
        [this, results = m_results, problem = m_problem](std::shared_ptr<const SpillRule> finding) {
            m_ruleBusy = false;
            m_rule = finding;
            m_ruleResults = results;
            m_ruleProblem = problem;
            render();
            emit ruleReady();
            if (m_record && m_record->measurement.staticInfo && m_record->measurement.staticInfo->spills())
                requestRule();
        });
    render();
}

namespace {

// The run's timing and outcome, as a table under "Run" ("" when there is nothing to say).
QString runHtml(const ResultRecord& r, const std::string& objectiveName, bool fromSample) {
    const Measurement& m = r.measurement;
    QString table;
    if (m.time.samples > 0 || r.timeMs() > 0) {
        table +=
            row(ConfigDetailsPanel::tr("median time"), formatNumber(m.time.medianMs * 1000) + QStringLiteral(" µs"));
        if (m.time.hasInterval())
            table += row(ConfigDetailsPanel::tr("95 % interval"),
                         QStringLiteral("%1 – %2 µs (the median's, ±%3 %)")
                             .arg(formatNumber(m.time.ciLowMs * 1000), formatNumber(m.time.ciHighMs * 1000))
                             .arg(50 * (m.time.ciHighMs - m.time.ciLowMs) / m.time.medianMs, 0, 'f', 2));
        table +=
            row(ConfigDetailsPanel::tr("min / max"),
                QStringLiteral("%1 / %2 µs").arg(formatNumber(m.time.minMs * 1000), formatNumber(m.time.maxMs * 1000)));
        table += row(ConfigDetailsPanel::tr("stdev"),
                     QStringLiteral("%1 µs (%2 samples)").arg(formatNumber(m.time.stdevMs * 1000)).arg(m.time.samples));
    }
    if (r.objective)
        table += row(objectiveName.empty() ? ConfigDetailsPanel::tr("objective") : qs(objectiveName),
                     formatNumber(*r.objective));
    if (m.verificationError)
        table += row(ConfigDetailsPanel::tr("verification error"), QString::number(*m.verificationError, 'g', 4));
    if (!fromSample && m.benchmarkSeconds > 0)
        table +=
            row(ConfigDetailsPanel::tr("compile / benchmark"),
                QStringLiteral("%1 / %2").arg(formatDuration(m.compileSeconds), formatDuration(m.benchmarkSeconds)));
    else if (!fromSample && m.compileSeconds > 0) // never benchmarked (a compile error, a pruned config)
        table += row(ConfigDetailsPanel::tr("compile"), formatDuration(m.compileSeconds));
    if (m.device >= 0)
        table += row(ConfigDetailsPanel::tr("device"), QString::number(m.device));
    return table.isEmpty() ? QString() : QStringLiteral("<h4>Run</h4><table>%1</table>").arg(table);
}

// What the compiler reported and the occupancy on `arch`, under "Compiled" ("" when nothing is known).
QString compiledHtml(const ResultRecord& r, const std::optional<Occupancy>& occ, std::int64_t blockSize,
                     const std::string& arch, bool fromSample) {
    const Measurement& m = r.measurement;
    QString table;
    if (m.staticInfo && m.staticInfo->registers >= 0) {
        const StaticInfo& s = *m.staticInfo;
        table += row(ConfigDetailsPanel::tr("registers / thread"), QString::number(s.registers));
        table += row(ConfigDetailsPanel::tr("spill stores / loads"),
                     QStringLiteral("%1 / %2 per thread").arg(bytes(s.spillStores), bytes(s.spillLoads)));
        table +=
            row(ConfigDetailsPanel::tr("stack frame"), bytes(s.stackFrame) + ConfigDetailsPanel::tr(" per thread"));
        table +=
            row(ConfigDetailsPanel::tr("shared memory"),
                QStringLiteral("%1 static%2")
                    .arg(bytes(s.sharedStatic))
                    .arg(r.sharedDynamic ? QStringLiteral(" + %1 dynamic").arg(bytes(*r.sharedDynamic)) : QString()));
        table += row(ConfigDetailsPanel::tr("barriers"), QString::number(s.barriers));
        if (s.constantBytes > 0)
            table += row(ConfigDetailsPanel::tr("constant memory"), bytes(s.constantBytes));
    }
    if (fromSample && m.compileSeconds > 0) // it never ran: how long compiling took is all there is of a run
        table += row(ConfigDetailsPanel::tr("compile time"), formatDuration(m.compileSeconds));
    if (blockSize > 0)
        table += row(ConfigDetailsPanel::tr("block size"),
                     formatCount(static_cast<double>(blockSize)) + ConfigDetailsPanel::tr(" threads"));
    if (occ && occ->launchable) {
        table += row(ConfigDetailsPanel::tr("theoretical occupancy"),
                     QStringLiteral("%1 % (%2 of %3 warps, %4 blocks per SM on %5)")
                         .arg(formatNumber(occ->percent()))
                         .arg(occ->activeWarps)
                         .arg(occ->maxWarps)
                         .arg(occ->activeBlocks)
                         .arg(esc(qs(arch))));
        table += row(ConfigDetailsPanel::tr("limited by"), esc(limiterText(occ->limiter)));
        table += row(ConfigDetailsPanel::tr("blocks per SM allowed by"),
                     esc(QStringLiteral("registers %1, shared memory %2, warps %3, blocks %4, barriers %5")
                             .arg(blocksText(occ->blocksByRegisters), blocksText(occ->blocksBySharedMemory),
                                  blocksText(occ->blocksByWarps), blocksText(occ->blocksByBlocks),
                                  blocksText(occ->blocksByBarriers))));
    } else if (occ) {
        table += row(ConfigDetailsPanel::tr("theoretical occupancy"),
                     esc(ConfigDetailsPanel::tr("cannot launch: ") + qs(occ->reason)));
    } else if (r.occupancy) {
        table +=
            row(ConfigDetailsPanel::tr("theoretical occupancy"), formatNumber(*r.occupancy) + QStringLiteral(" %"));
    }
    if (table.isEmpty())
        return {};
    return QStringLiteral("<h4>Compiled%1</h4><table>%2</table>")
        .arg(arch.empty() ? QString() : QStringLiteral(" for ") + esc(qs(arch)), table);
}

// The hardware counters, under "Metrics" ("" without any).
QString metricsHtml(const Measurement& m) {
    if (m.metrics.empty())
        return {};
    QString table;
    for (const Metric& metric : m.metrics)
        table += QStringLiteral("<tr><td style='padding-right:12px' title='%1'>%2</td><td align='right'>%3</td></tr>")
                     .arg(esc(qs(metric.name)), esc(qs(metricLabel(metric.name))), formatNumber(metric.value));
    return QStringLiteral("<h4>Metrics</h4><table>%1</table>").arg(table);
}

} // namespace

void ConfigDetailsPanel::render() {
    // A live run brings a new snapshot ten times a second: redraw only when what is shown changed.
    const bool ruleBusy = isRuleBusy() && m_ruleResults != m_results;
    RenderKey key{m_record ? m_record->id : -1,
                  m_record ? m_record->sessionId : -1,
                  m_configJson,
                  m_rule.get(),
                  ruleBusy,
                  shownArch(),
                  m_objectiveName,
                  m_problem.get(),
                  m_fromSample};
    if (m_record && m_record->id != 0 && key == m_rendered)
        return;
    m_rendered = std::move(key);
    if (!m_record) {
        m_diagnosis.clear();
        m_browser->setHtml(
            m_configJson.isEmpty()
                ? tr("<p>Select a config in the results table, a plot or the Compile Check to see everything "
                     "known about it.</p>")
                : tr("<p>No result for this config yet.</p>"));
        return;
    }
    const ResultRecord& r = *m_record;
    const Measurement& m = r.measurement;
    QString html;
    // The config as a form, a parameter a row: "BLOCK_M=256 BLOCK_N=64 ..." wraps badly when narrow.
    QString configRows;
    for (const auto& [name, value] : r.config)
        configRows +=
            QStringLiteral("<tr><td style='padding-right:12px; white-space:nowrap'>%1</td><td><b>%2</b></td></tr>")
                .arg(esc(qs(name)), esc(qs(value.plain())));
    html += QStringLiteral("<h4>Config</h4><table>%1</table>").arg(configRows);
    if (m_fromSample) {
        // Never run: what it is, and where it comes from, in place of a result's status.
        const QString what = r.status() == ResultStatus::Skipped ? tr("compiled, not run")
                                                                 : esc(qs(std::string(statusName(r.status()))));
        const QString why = r.status() == ResultStatus::Skipped || m.message.empty()
                                ? QString()
                                : QStringLiteral(" — ") + esc(qs(m.message).section(QLatin1Char('\n'), 0, 0));
        html += tr("<p><b>%1</b>%2</p><p>From the Compile Check's sample for %3: not among the results.</p>")
                    .arg(what, why, esc(qs(m_sampleArch)));
    } else {
        html +=
            QStringLiteral("<p><b>%1</b>%2</p>")
                .arg(esc(qs(std::string(statusName(r.status())))),
                     m.message.empty() ? QString()
                                       : QStringLiteral(" — ") + esc(qs(m.message).section(QLatin1Char('\n'), 0, 0)));
    }

    html += runHtml(r, m_objectiveName, m_fromSample);

    std::int64_t blockSize = r.blockSize.value_or(0);
    const std::optional<Occupancy> occ = occupancyOf(r, &blockSize);
    const std::string& arch = shownArch();
    const ArchLimits* limits = arch.empty() ? nullptr : findArch(arch);
    html += compiledHtml(r, occ, blockSize, arch, m_fromSample);
    html += metricsHtml(m);

    // The spill diagnosis
    std::optional<bool> prunesThis;
    if (m_rule && m_rule->found && m_problem && m.staticInfo) {
        if (std::optional<Config> config = configFromValues(*m_problem, r.config)) {
            try {
                prunesThis = rulePrunes(*m_problem, m_shapeIndex, m_rule->best.condition, *config);
            } catch (const std::exception&) {
            }
        }
    }
    m_diagnosis = spillDiagnosisHtml(r, occ, blockSize, limits, m_rule.get(), prunesThis, ruleBusy);
    html += QStringLiteral("<h4>Spill diagnosis</h4>") + m_diagnosis;

    // The compiler's words
    if (!r.log.empty())
        html += QStringLiteral("<h4>Compile log</h4><pre>%1</pre>").arg(esc(qs(r.log)));
    else if (m.message.find('\n') != std::string::npos)
        html += QStringLiteral("<h4>Message</h4><pre>%1</pre>").arg(esc(qs(m.message)));

    m_browser->setHtml(html);
}

QString ConfigDetailsPanel::plainText() const {
    return m_browser->toPlainText();
}

QString ConfigDetailsPanel::spillDiagnosisText() const {
    if (m_diagnosis.isEmpty())
        return {};
    QTextDocument doc;
    doc.setHtml(m_diagnosis);
    return doc.toPlainText();
}

} // namespace tilescope::views
