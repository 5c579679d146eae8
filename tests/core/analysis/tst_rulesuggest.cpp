// core/analysis's register-pressure rule search (rulesuggest.h) on synthetic labels, noisy and
// degenerate ones, and on recorded sgemm results (tests/data/analysis/sgemm_static.csv), which
// a check keeps current with what NVRTC compiles today.

#include "analysis/rulesuggest.h"
#include "analysis/staticanalysis.h"
#include "base/error.h"
#include "compile/compileservice.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <QElapsedTimer>
#include <QtTest>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace tilescope;

namespace {

const char* const kSgemmProblem = TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.json";
const char* const kSgemmRecord = TILESCOPE_TEST_DATA "/analysis/sgemm_static.csv";

struct Param {
    std::string name;
    std::vector<std::int64_t> values;
};


TuningProblem makeProblem(const std::vector<Param>& params, const std::string& localSize) {
    TuningProblem problem;
    problem.fileName = "synthetic.json";
    problem.kernelName = "k";
    for (const Param& p : params) {
        TuningParameter tp;
        tp.name = p.name;
        tp.type = "int";
        for (std::int64_t v : p.values)
            tp.values.push_back(expr::Value::ofInt(v));
        tp.valuesText = expr::repr(expr::ValueList(tp.values).value());
        problem.parameters.push_back(std::move(tp));
    }
    problem.localSize.x = localSize;
    problem.shapes = {Shape{}};
    return problem;
}


// Every config of the raw space (mixed radix, first parameter slowest) with its label.
std::vector<RuleSample> label(const TuningProblem& problem,
                              const std::function<bool(const std::vector<std::int64_t>&)>& positive) {
    std::vector<RuleSample> samples;
    const std::size_t n = problem.parameters.size();
    Config config(n, 0);
    for (;;) {
        std::vector<std::int64_t> values(n);
        for (std::size_t p = 0; p < n; ++p)
            values[p] = problem.parameters[p].values[config[p]].i;
        samples.push_back({config, positive(values)});
        std::size_t p = n;
        while (p > 0) {
            --p;
            if (++config[p] < problem.parameters[p].values.size())
                break;
            config[p] = 0;
            if (p == 0)
                return samples;
        }
    }
}

// One row of tests/data/analysis/sgemm_static.csv: the 7 sgemm parameters and, for sm_90 and
// sm_80, registers, spill stores and spill loads.
struct SgemmRow {
    std::vector<std::int64_t> params;
    std::map<std::string, StaticInfo> byArch;
};

std::vector<SgemmRow> readSgemmRecord() {
    std::ifstream in(kSgemmRecord);
    std::vector<SgemmRow> rows;
    std::string line;
    std::getline(in, line); // header
    while (std::getline(in, line)) {
        std::vector<std::int64_t> v;
        std::stringstream fields(line);
        std::string field;
        while (std::getline(fields, field, ','))
            v.push_back(std::stoll(field));
        if (v.size() != 13)
            continue;
        SgemmRow row;
        row.params.assign(v.begin(), v.begin() + 7);
        for (int a = 0; a < 2; ++a) {
            StaticInfo info;
            info.registers = static_cast<int>(v[7 + 3 * a]);
            info.spillStores = v[8 + 3 * a];
            info.spillLoads = v[9 + 3 * a];
            row.byArch[a == 0 ? "sm_90" : "sm_80"] = info;
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

Config configOf(const TuningProblem& problem, const std::vector<std::int64_t>& values) {
    Config config;
    for (std::size_t p = 0; p < problem.parameters.size(); ++p) {
        const auto& list = problem.parameters[p].values;
        const auto it = std::find_if(list.begin(), list.end(), [&](const expr::Value& v) { return v.i == values[p]; });
        config.push_back(static_cast<std::uint16_t>(it - list.begin()));
    }
    return config;
}

} // namespace

class TestRuleSuggest : public QObject {
    Q_OBJECT

private slots:
    void ruleSynthetic_data();
    void ruleSynthetic();
    void ruleNoisy();
    void ruleDegenerate();
    void ruleOnSgemmRecord_data();
    void ruleOnSgemmRecord();
    void sgemmRecordIsCurrent();
};

void TestRuleSuggest::ruleSynthetic_data() {
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("expected");
    QTest::newRow("per-thread product") << 0 << "A * B <= 32";
    QTest::newRow("union of two regions") << 1 << "A <= 4 and C <= 64";
    QTest::newRow("block size") << 2 << "C <= 64";
    QTest::newRow("lower bound") << 3 << "B >= 2";
}

void TestRuleSuggest::ruleSynthetic() {
    QFETCH(int, kind);
    QFETCH(QString, expected);
    const TuningProblem problem =
        makeProblem({{"A", {1, 2, 4, 8, 16}}, {"B", {1, 2, 4, 8, 16}}, {"C", {32, 64, 128}}, {"D", {0, 1}}}, "C * 2");
    const std::vector<RuleSample> samples = label(problem, [&](const std::vector<std::int64_t>& v) {
        switch (kind) {
        case 0:
            return v[0] * v[1] > 32;
        case 1:
            return v[0] >= 8 || v[2] == 128;
        case 2:
            return v[2] * 2 > 128;
        default:
            return v[1] < 2;
        }
    });
    const RuleSuggestion s = suggestRule(problem, 0, samples);
    QVERIFY2(s.found, s.reason.c_str());
    QCOMPARE(QString::fromStdString(s.best.condition), expected);
    QCOMPARE(s.best.counts.errors(), std::size_t(0));
    QCOMPARE(s.best.counts.total, samples.size());
    QVERIFY(!s.catchAll); // best already catches everything
    QCOMPARE(evaluateRule(problem, 0, s.best.condition, samples), s.best.counts);
    for (const SuggestedRule& alternative : s.alternatives) {
        QVERIFY(alternative.condition != s.best.condition);
        QCOMPARE(evaluateRule(problem, 0, alternative.condition, samples), alternative.counts);
    }
}

void TestRuleSuggest::ruleNoisy() {
    // One config spills against the trend: the best rule gives it up; the catch-all rule takes it
    // at the price of removing clean ones, and says how many.
    const TuningProblem problem =
        makeProblem({{"A", {1, 2, 4, 8, 16}}, {"B", {1, 2, 4, 8, 16}}, {"C", {32, 64, 128}}}, "C");
    const std::vector<RuleSample> samples = label(problem, [](const std::vector<std::int64_t>& v) {
        return v[0] * v[1] > 32 || (v[0] == 2 && v[1] == 1 && v[2] == 64);
    });
    const RuleSuggestion s = suggestRule(problem, 0, samples);
    QVERIFY2(s.found, s.reason.c_str());
    QCOMPARE(s.best.condition, std::string("A * B <= 32"));
    QCOMPARE(s.best.counts.missed(), std::size_t(1));
    QCOMPARE(s.best.counts.prunedNegatives, std::size_t(0));
    QVERIFY(s.catchAll);
    QCOMPARE(s.catchAll->counts.missed(), std::size_t(0));
    QVERIFY(s.catchAll->counts.prunedNegatives > 0);
    QCOMPARE(evaluateRule(problem, 0, s.catchAll->condition, samples), s.catchAll->counts);
}

void TestRuleSuggest::ruleDegenerate() {
    const TuningProblem problem = makeProblem({{"A", {1, 2, 4}}, {"B", {1, 2}}}, "32");
    RuleSuggestion s = suggestRule(problem, 0, label(problem, [](const auto&) { return false; }));
    QVERIFY(!s.found);
    QVERIFY2(s.reason.find("no config spills") != std::string::npos, s.reason.c_str());
    s = suggestRule(problem, 0, label(problem, [](const auto&) { return true; }));
    QVERIFY(!s.found);
    QVERIFY2(s.reason.find("every config spills") != std::string::npos, s.reason.c_str());
    s = suggestRule(problem, 0, {});
    QVERIFY(!s.found);
    QVERIFY_THROWS_EXCEPTION(InputError, evaluateRule(problem, 0, "A <=", {}));
}

void TestRuleSuggest::ruleOnSgemmRecord_data() {
    QTest::addColumn<QString>("arch");
    QTest::newRow("sm_90") << "sm_90";
    QTest::newRow("sm_80") << "sm_80";
}

void TestRuleSuggest::ruleOnSgemmRecord() {
    // Every valid sgemm config as compiled by NVRTC 13.0 (tests/data/analysis/README.md says how
    // the record was made). Spilling in sgemm follows ptxas' heuristics under __launch_bounds__ as
    // much as the tile sizes: no simple bound separates it exactly. The rule must still catch most
    // spilling configs and most heavy ones while removing few clean ones, reproduce its
    // counts, and the catch-all rule must catch every spilling config (whatever it costs; it is
    // reported).
    QFETCH(QString, arch);
    const TuningProblem problem = TuningProblem::load(kSgemmProblem);
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    const std::vector<SgemmRow> rows = readSgemmRecord();
    QCOMPARE(rows.size(), std::size_t(space.size()));

    std::vector<RuleSample> any;
    std::vector<RuleSample> heavy;
    for (const SgemmRow& row : rows) {
        const Config config = configOf(problem, row.params);
        QVERIFY(space.isValid(config));
        const StaticInfo& info = row.byArch.at(arch.toStdString());
        any.push_back({config, info.spills()});
        heavy.push_back({config, classifySpill(info) == SpillClass::Heavy});
    }
    QElapsedTimer timer;
    timer.start();
    const RuleSuggestion s = suggestRule(problem, 0, any);
    const qint64 ms = timer.elapsed();
    QVERIFY2(s.found, s.reason.c_str());
    QVERIFY(s.catchAll);
    const RuleCounts heavyCounts = evaluateRule(problem, 0, s.best.condition, heavy);
    auto report = [](const char* what, const SuggestedRule& r) {
        qInfo("%s: %s\n    prunes %zu of %zu: caught %zu of %zu spilling, kept %zu, wrongly removed %zu", what,
              r.condition.c_str(), r.counts.pruned, r.counts.total, r.counts.prunedPositives, r.counts.positives,
              r.counts.missed(), r.counts.prunedNegatives);
    };
    report("best", s.best);
    qInfo("    of the %zu heavy spills it catches %zu", heavyCounts.positives, heavyCounts.prunedPositives);
    report("catch-all", *s.catchAll);
    qInfo("searched in %lld ms", static_cast<long long>(ms));

    for (const SuggestedRule* rule : {&s.best, &*s.catchAll})
        QCOMPARE(evaluateRule(problem, 0, rule->condition, any), rule->counts);
    QCOMPARE(countPrunedInSpace(problem, space, 0, s.best.condition), std::uint64_t(s.best.counts.pruned));

    const RuleCounts& c = s.best.counts;
    QVERIFY2(c.prunedPositives * 10 >= c.positives * 6, "the rule catches less than 60 % of the spilling configs");
    QVERIFY2(heavyCounts.prunedPositives * 100 >= heavyCounts.positives * 85,
             "the rule catches less than 85 % of the heavy spills");
    QVERIFY2(c.prunedNegatives * 100 <= (c.total - c.positives) * 7, "the rule removes more than 7 % of the clean");
    QCOMPARE(s.catchAll->counts.missed(), std::size_t(0));
    QVERIFY2(ms < 20000, "the rule search is slow");
}

void TestRuleSuggest::sgemmRecordIsCurrent() {
    // The record must match what this NVRTC and sgemm.cu give: a few configs, recompiled for both
    // of its archs, every recorded field compared.
    const TuningProblem problem = TuningProblem::load(kSgemmProblem);
    const RequestBuilder builder(problem);
    const std::vector<SgemmRow> rows = readSgemmRecord();
    QCOMPARE(rows.size(), std::size_t(2761));
    const auto sm90 = [](const SgemmRow& r) -> const StaticInfo& { return r.byArch.at("sm_90"); };
    // The first spilling and the first clean one on sm_90, and the one with most registers without
    // spilling (the heaviest spills take ten times as long to compile).
    const auto spilling = std::find_if(rows.begin(), rows.end(), [&](const SgemmRow& r) { return sm90(r).spills(); });
    const auto clean = std::find_if(rows.begin(), rows.end(), [&](const SgemmRow& r) { return !sm90(r).spills(); });
    QVERIFY(spilling != rows.end() && clean != rows.end());
    auto mostRegisters = clean;
    for (auto it = rows.begin(); it != rows.end(); ++it)
        if (!sm90(*it).spills() && sm90(*it).registers > sm90(*mostRegisters).registers)
            mostRegisters = it;
    QVERIFY(sm90(*mostRegisters).registers > sm90(*clean).registers);
    std::vector<std::size_t> picks;
    for (auto it : {spilling, clean, mostRegisters})
        picks.push_back(static_cast<std::size_t>(it - rows.begin()));

    CompileService service({0, nullptr});
    std::vector<CompileRequest> requests;
    std::vector<std::pair<std::size_t, std::string>> what; // (row, arch) of each request
    for (std::size_t i : picks) {
        for (const char* arch : {"sm_90", "sm_80"}) {
            requests.push_back(builder.request(configOf(problem, rows[i].params), arch));
            what.emplace_back(i, arch);
        }
    }
    const std::vector<CompileResult> results = service.compileAll(requests);
    QCOMPARE(results.size(), requests.size());
    for (std::size_t k = 0; k < results.size(); ++k) {
        QVERIFY2(results[k].ok(), results[k].message.c_str());
        const StaticInfo& recorded = rows[what[k].first].byArch.at(what[k].second);
        const StaticInfo& now = results[k].info;
        const std::string where =
            "tests/data/analysis/sgemm_static.csv row " + std::to_string(what[k].first + 2) + ", " + what[k].second +
            ": recorded " + std::to_string(recorded.registers) + " registers, spills " +
            std::to_string(recorded.spillStores) + "/" + std::to_string(recorded.spillLoads) + " B; compiled " +
            std::to_string(now.registers) + ", " + std::to_string(now.spillStores) + "/" +
            std::to_string(now.spillLoads) + " B. The record is stale: regenerate it (tests/data/analysis/README.md)";
        QVERIFY2(now.registers == recorded.registers && now.spillStores == recorded.spillStores &&
                     now.spillLoads == recorded.spillLoads,
                 where.c_str());
    }
}

QTEST_GUILESS_MAIN(TestRuleSuggest)
#include "tst_rulesuggest.moc"
