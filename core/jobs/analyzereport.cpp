// The analyse use case's records as files: the JSON list of the CLI's --json and the CSV of its
// --csv.

#include "jobs/analyze.h"

#include "base/filewrite.h"
#include "base/textformat.h"
#include "exchange/configcodec.h"
#include "expr/expr.h"
#include "model/configjson.h"
#include "space/configspace.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>

namespace tilescope {

namespace {

// The status as the records name it: "ok", "compile_error", "no_kernel", "cancelled".
std::string statusName(CompileStatus status) {
    switch (status) {
    case CompileStatus::Ok:
        return "ok";
    case CompileStatus::CompileError:
        return "compile_error";
    case CompileStatus::NoKernel:
        return "no_kernel";
    case CompileStatus::Cancelled:
        return "cancelled";
    }
    return "unknown";
}

nlohmann::ordered_json recordJson(const ConfigAnalysis& r, const ConfigSpace& space) {
    nlohmann::ordered_json record;
    record["index"] = r.index;
    nlohmann::ordered_json config = nlohmann::ordered_json::object();
    for (int p = 0; p < space.parameterCount(); ++p)
        config[space.parameterName(p)] = toJson(recordedValue(space.value(r.config, p)));
    record["config"] = config;
    record["arch"] = r.arch;
    record["status"] = statusName(r.status);
    const bool ok = r.compiled();
    const bool occ = ok && r.geometry.error.empty();
    auto orNull = [](bool have, auto value) { return have ? nlohmann::ordered_json(value) : nlohmann::ordered_json(); };
    record["registers"] = orNull(ok, r.info.registers);
    record["spill_stores"] = orNull(ok, r.info.spillStores);
    record["spill_loads"] = orNull(ok, r.info.spillLoads);
    record["stack_frame"] = orNull(ok, r.info.stackFrame);
    record["shared_bytes"] = orNull(ok, r.sharedBytes());
    record["shared_static"] = orNull(ok, r.info.sharedStatic);
    record["shared_dynamic"] = orNull(r.geometry.error.empty(), r.geometry.sharedDynamic);
    record["barriers"] = orNull(ok, r.info.barriers);
    record["block_size"] = orNull(r.geometry.error.empty(), r.geometry.threadsPerBlock());
    record["occupancy"] = orNull(occ, r.occupancy.percent());
    record["active_blocks"] = orNull(occ, r.occupancy.activeBlocks);
    record["active_warps"] = orNull(occ, r.occupancy.activeWarps);
    record["limiter"] = orNull(occ, std::string(limiterName(r.occupancy.limiter)));
    record["spill_class"] = orNull(ok, std::string(spillClassName(r.spill)));
    if (occ && !r.occupancy.launchable)
        record["launch_error"] = r.occupancy.reason;
    record["compile_seconds"] = r.compileSeconds;
    record["cached"] = r.cached;
    if (!r.message.empty())
        record["message"] = r.message;
    if (!ok)
        record["log"] = r.log;
    return record;
}

nlohmann::ordered_json linesJson(const LineReport& report) {
    nlohmann::ordered_json j;
    if (!report.error.empty()) {
        j["error"] = report.error;
        return j;
    }
    const LineCounts& c = report.counts;
    j["spills_marked"] = c.spillsMarked;
    j["instructions"] = c.instructions;
    j["spill_stores"] = c.spillStores;
    j["spill_loads"] = c.spillLoads;
    j["local_stores"] = c.localStores;
    j["local_loads"] = c.localLoads;
    auto executed = [](const auto& x) {
        return nlohmann::ordered_json{{"instructions", x.executedInstructions},
                                      {"spill_stores", x.executedSpillStores},
                                      {"spill_loads", x.executedSpillLoads},
                                      {"local_stores", x.executedLocalStores},
                                      {"local_loads", x.executedLocalLoads}};
    };
    if (c.hasExecuted)
        j["executed"] = executed(c);
    if (!report.executedError.empty())
        j["executed_error"] = report.executedError;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (std::size_t k = 0; k < report.local.size(); ++k) {
        const SourceLine& l = report.local[k];
        nlohmann::ordered_json e;
        e["file"] = std::filesystem::path(l.file).filename().string();
        e["line"] = l.line;
        e["text"] = k < report.localText.size() ? report.localText[k] : std::string();
        e["instructions"] = l.instructions;
        e["spill_stores"] = l.spillStores;
        e["spill_loads"] = l.spillLoads;
        e["local_stores"] = l.localStores;
        e["local_loads"] = l.localLoads;
        e["sass"] = l.localInstructions;
        if (c.hasExecuted)
            e["executed"] = executed(l);
        list.push_back(std::move(e));
    }
    j["local_lines"] = std::move(list);
    return j;
}

// A parameter value as the CLI writes it: a string without quotes, anything else as Python does.
std::string plainValue(const expr::Value& value) {
    return value.kind == expr::Kind::Str ? *value.s : expr::repr(value);
}

std::string csvField(const std::string& text) {
    if (text.find_first_of(",\"\n\r") == std::string::npos)
        return text;
    std::string out = "\"";
    for (char c : text) {
        if (c == '"')
            out += '"';
        out += c;
    }
    return out + "\"";
}

} // namespace

std::string analysisJson(const AnalyzeOutcome& outcome) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < outcome.results.size(); ++i) {
        nlohmann::ordered_json record = recordJson(outcome.results[i], *outcome.space);
        if (i < outcome.lines.size() && outcome.results[i].compiled() && outcome.lines[i].read)
            record["lines"] = linesJson(outcome.lines[i]);
        list.push_back(std::move(record));
    }
    return list.dump(2);
}

void writeAnalysisCsv(const std::string& path, const std::vector<ConfigAnalysis>& results, const ConfigSpace& space) {
    std::ostringstream out;
    out << "index";
    for (int p = 0; p < space.parameterCount(); ++p)
        out << ',' << csvField(space.parameterName(p));
    out << ",arch,status,registers,spill_stores,spill_loads,stack_frame,shared_bytes,shared_static,shared_dynamic,"
           "barriers,block_size,occupancy,active_blocks,limiter,spill_class,compile_seconds,cached,message\n";
    for (const ConfigAnalysis& r : results) {
        const bool ok = r.compiled();
        const bool occ = ok && r.geometry.error.empty();
        auto num = [](bool have, auto v) { return have ? std::to_string(v) : std::string(); };
        out << r.index;
        for (int p = 0; p < space.parameterCount(); ++p)
            out << ',' << csvField(plainValue(space.value(r.config, p)));
        out << ',' << r.arch << ',' << statusName(r.status) << ',' << num(ok, r.info.registers) << ','
            << num(ok, r.info.spillStores) << ',' << num(ok, r.info.spillLoads) << ',' << num(ok, r.info.stackFrame)
            << ',' << num(ok, r.sharedBytes()) << ',' << num(ok, r.info.sharedStatic) << ','
            << num(r.geometry.error.empty(), r.geometry.sharedDynamic) << ',' << num(ok, r.info.barriers) << ','
            << num(r.geometry.error.empty(), r.geometry.threadsPerBlock()) << ','
            << (occ ? formatDouble("%.1f", r.occupancy.percent()) : std::string()) << ','
            << num(occ, r.occupancy.activeBlocks) << ','
            << (occ ? std::string(limiterName(r.occupancy.limiter)) : std::string()) << ','
            << (ok ? std::string(spillClassName(r.spill)) : std::string()) << ',' << r.compileSeconds << ','
            << (r.cached ? 1 : 0) << ',' << csvField(r.message.empty() ? r.occupancy.reason : r.message) << '\n';
    }
    writeFileAtomically(path, out.str(), "--csv");
}

} // namespace tilescope
