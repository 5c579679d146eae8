#include "exchange/csv.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace tilescope {

using Json = nlohmann::ordered_json;

std::string writeCsv(const std::vector<SessionData>& sessions) {
    auto field = [](const std::string& text) {
        if (text.find_first_of(",\"\n\r") == std::string::npos)
            return text;
        std::string out = "\"";
        for (const char c : text) {
            if (c == '"')
                out += '"';
            out += c;
        }
        return out + "\"";
    };
    auto num = [](double v) { return std::isfinite(v) ? Json(v).dump() : std::string(); };
    std::vector<std::string> params;
    for (const SessionData& s : sessions) {
        for (const std::string& p : s.info.parameters)
            if (std::find(params.begin(), params.end(), p) == params.end())
                params.push_back(p);
        for (const ResultRecord& r : s.results)
            for (const auto& [name, value] : r.config)
                if (std::find(params.begin(), params.end(), name) == params.end())
                    params.push_back(name);
    }
    std::string out = "session,kernel,shape,device";
    for (const std::string& p : params)
        out += "," + field(p);
    out += ",status,time_ms,time_min_ms,time_max_ms,time_stdev_ms,samples,objective,compile_s,benchmark_s,registers,"
           "spill_stores,spill_loads,stack_frame,shared_static,block_size,occupancy,verification_error,message\n";
    for (const SessionData& s : sessions) {
        const std::string prefix = std::to_string(s.info.id) + "," + field(s.info.kernel) + "," +
                                   field(s.info.shapeLabel()) + "," + field(s.info.deviceName);
        for (const ResultRecord& r : s.results) {
            const Measurement& m = r.measurement;
            std::string row = prefix;
            for (const std::string& p : params) {
                const ConfigValue* it = r.config.find(p);
                row += ",";
                if (it)
                    row += field(it->plain());
            }
            const bool timed = m.time.samples > 0 || m.time.medianMs > 0;
            row += "," + std::string(statusName(m.status));
            row += "," + (timed ? num(m.time.medianMs) : "") + "," + (timed ? num(m.time.minMs) : "") + "," +
                   (timed ? num(m.time.maxMs) : "") + "," + (timed ? num(m.time.stdevMs) : "");
            row += "," + std::to_string(m.time.samples);
            row += "," + (r.objective ? num(*r.objective) : "");
            row += "," + num(m.compileSeconds) + "," + num(m.benchmarkSeconds);
            if (m.staticInfo) {
                const StaticInfo& i = *m.staticInfo;
                row += "," + (i.registers >= 0 ? std::to_string(i.registers) : "") + "," +
                       std::to_string(i.spillStores) + "," + std::to_string(i.spillLoads) + "," +
                       std::to_string(i.stackFrame) + "," + std::to_string(i.sharedStatic);
            } else {
                row += ",,,,,";
            }
            row += "," + (r.blockSize ? std::to_string(*r.blockSize) : "");
            row += "," + (r.occupancy ? num(*r.occupancy) : "");
            row += "," + (m.verificationError ? num(*m.verificationError) : "");
            row += "," + field(m.message);
            out += row + "\n";
        }
    }
    return out;
}

} // namespace tilescope
