#include "measure/clusterprotocol.h"

#include "compile/compilewire.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <stdexcept>

namespace tilescope::cluster {

namespace {
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

} // namespace

std::vector<char> pack(const worker::Frame& frame) {
    std::vector<char> bytes(4 + frame.header.size() + frame.blob.size());
    const auto n = static_cast<std::uint32_t>(frame.header.size());
    for (int i = 0; i < 4; ++i)
        bytes[std::size_t(i)] = char((n >> (8 * i)) & 0xff);
    std::memcpy(bytes.data() + 4, frame.header.data(), frame.header.size());
    if (!frame.blob.empty())
        std::memcpy(bytes.data() + 4 + frame.header.size(), frame.blob.data(), frame.blob.size());
    return bytes;
}

worker::Frame unpack(const std::vector<char>& bytes) {
    worker::Frame frame;
    if (bytes.size() < 4)
        return frame;
    std::uint32_t n = 0;
    for (int i = 0; i < 4; ++i)
        n |= std::uint32_t(static_cast<unsigned char>(bytes[std::size_t(i)])) << (8 * i);
    if (4 + std::size_t(n) > bytes.size())
        return frame;
    frame.header.assign(bytes.data() + 4, n);
    frame.blob.assign(bytes.begin() + 4 + n, bytes.end());
    return frame;
}

worker::Frame encodeJob(const SlotJob& job) {
    json compiles = json::array();
    std::vector<char> blob;
    for (const ArchCompile& c : job.item.compiles) {
        if (!c.result)
            continue;
        const CompileResult& r = *c.result;
        json entry = compileResultJson(r, false);
        entry["arch"] = c.arch;
        compiles.push_back(std::move(entry));
        blob.insert(blob.end(), r.cubin.begin(), r.cubin.end());
    }
    json control{{"per_config_s", job.perConfigSeconds},       {"slower_than_ms", job.slowerThanMs},
                 {"profile_under_ms", job.profileUnderMs},     {"keep_samples", job.keepSamples},
                 {"samples_per_config", job.samplesPerConfig}, {"counters_only", job.countersOnly}};
    if (job.deadline)
        control["deadline_s"] = std::chrono::duration<double>(*job.deadline - Clock::now()).count();
    return worker::Frame{json{{"type", "measure"},
                              {"id", job.id},
                              {"slot", job.slot},
                              {"index", job.item.index},
                              {"config", job.item.config},
                              {"compiles", std::move(compiles)},
                              {"control", std::move(control)}}
                             .dump(-1, ' ', false, json::error_handler_t::replace),
                         std::move(blob)};
}

SlotJob decodeJob(const worker::Frame& frame) try {
    const json j = json::parse(frame.header);
    const std::vector<char>& blob = frame.blob;
    SlotJob job;
    job.id = j.at("id").get<std::uint64_t>();
    job.slot = j.at("slot").get<int>();
    job.item.index = j.at("index").get<std::uint64_t>();
    job.item.config = j.at("config").get<Config>();
    std::size_t offset = 0;
    for (const json& c : j.at("compiles")) {
        auto r = std::make_shared<CompileResult>(compileResultOf(c, blob, offset));
        job.item.compiles.push_back(ArchCompile{c.at("arch").get<std::string>(), r.get()});
        job.compiles.push_back(std::move(r));
    }
    const json& control = j.at("control");
    job.perConfigSeconds = control.value("per_config_s", 0.0);
    job.slowerThanMs = control.value("slower_than_ms", 0.0);
    job.profileUnderMs = control.value("profile_under_ms", 0.0);
    job.keepSamples = control.value("keep_samples", false);
    job.samplesPerConfig = control.value("samples_per_config", 0);
    job.countersOnly = control.value("counters_only", false);
    if (control.contains("deadline_s"))
        job.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(control.at("deadline_s").get<double>()));
    return job;
} catch (const json::exception& e) {
    throw std::runtime_error(std::string("a config sent to a rank cannot be read: ") + e.what());
}

worker::Frame encodeCompile(std::uint64_t id, const CompileRequest& request) {
    json header = compileRequestJson(request);
    header["type"] = "compile";
    header["id"] = id;
    return worker::Frame{header.dump(-1, ' ', false, json::error_handler_t::replace),
                         std::vector<char>(request.source.begin(), request.source.end())};
}

CompileJob decodeCompile(const worker::Frame& frame) try {
    const json j = json::parse(frame.header);
    CompileJob job;
    job.id = j.at("id").get<std::uint64_t>();
    job.request = compileRequestOf(j, std::string(frame.blob.begin(), frame.blob.end()));
    return job;
} catch (const json::exception& e) {
    throw std::runtime_error(std::string("a compile sent to a rank cannot be read: ") + e.what());
}

worker::Frame encodeCompiled(std::uint64_t id, const CompileResult& result, bool fresh) {
    return worker::Frame{
        json{{"type", "compiled"}, {"id", id}, {"fresh", fresh}, {"compile", compileResultJson(result, true)}}.dump(
            -1, ' ', false, json::error_handler_t::replace), // a log may quote a source's bytes
        result.cubin};
}

Compiled decodeCompiled(const worker::Frame& frame) try {
    const json j = json::parse(frame.header);
    Compiled c;
    c.id = j.at("id").get<std::uint64_t>();
    c.fresh = j.value("fresh", false);
    std::size_t offset = 0;
    c.result = compileResultOf(j.at("compile"), frame.blob, offset);
    return c;
} catch (const json::exception& e) {
    throw std::runtime_error(std::string("a rank's compile cannot be read: ") + e.what());
}

std::string backendInfoJson(const BackendInfo& info) {
    return json{{"kind", info.kind},
                {"description", info.description},
                {"device_name", info.deviceName},
                {"arch", info.arch},
                {"archs", info.archs},
                {"has_limits", info.limits.has_value()},
                {"provenance", info.provenanceJson},
                {"needs_cubins", info.needsCubins},
                {"simulated", info.simulated},
                {"preferred_batch", info.preferredBatch}}
        .dump();
}

BackendInfo backendInfoOf(std::string_view text) {
    const json j = json::parse(text, nullptr, false);
    if (!j.is_object())
        throw std::runtime_error("a rank's backend info is not a JSON object");
    BackendInfo info;
    info.kind = j.value("kind", std::string());
    info.description = j.value("description", std::string());
    info.deviceName = j.value("device_name", std::string());
    info.arch = j.value("arch", std::string());
    info.archs = j.value("archs", std::vector<std::string>());
    if (j.value("has_limits", false))
        if (const ArchLimits* limits = findArch(info.arch))
            info.limits = *limits;
    info.provenanceJson = j.value("provenance", std::string("{}"));
    info.needsCubins = j.value("needs_cubins", false);
    info.simulated = j.value("simulated", false);
    info.preferredBatch = j.value("preferred_batch", std::size_t{1});
    return info;
}

} // namespace tilescope::cluster
