#include "measure/clusterprotocol.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <stdexcept>

namespace tilescope::cluster {

namespace {
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// A compile's result as JSON, its cubin's size in place of the cubin (which goes in the blob).
json compileJson(const CompileResult& r, bool withLog) {
    json j{{"status", int(r.status)},
           {"message", r.message},
           {"entry", r.entryName},
           {"seconds", r.seconds},
           {"nvrtc", r.nvrtcVersion},
           {"cached", r.cached},
           {"key", r.key},
           {"static", json::parse(worker::staticInfoJson(r.info))},
           {"cubin_bytes", r.cubin.size()}};
    if (r.launch) {
        json scratch = json::array();
        for (const LaunchMetadata::Scratch& s : r.launch->scratch)
            scratch.push_back(json::array({s.bytesPerBlock, s.align}));
        j["launch"] = json{{"threads", r.launch->threadsPerBlock},
                           {"shared", r.launch->sharedBytes},
                           {"cluster", r.launch->clusterSize},
                           {"scratch", std::move(scratch)},
                           {"argument_types", r.launch->argumentTypes}};
    }
    if (withLog) {
        j["log"] = r.log;
        j["transient"] = r.transient;
    }
    return j;
}

// The result compileJson() describes, its cubin read from `blob` at `offset` (moved past it).
CompileResult compileOf(const json& c, const std::vector<char>& blob, std::size_t& offset) {
    CompileResult r;
    r.status = CompileStatus(c.at("status").get<int>());
    r.message = c.value("message", std::string());
    r.entryName = c.value("entry", std::string());
    r.seconds = c.value("seconds", 0.0);
    r.nvrtcVersion = c.value("nvrtc", std::string());
    r.cached = c.value("cached", false);
    r.key = c.value("key", std::string());
    r.log = c.value("log", std::string());
    r.transient = c.value("transient", false);
    r.info = worker::staticInfoOf(c.at("static").dump());
    if (const auto launch = c.find("launch"); launch != c.end()) {
        LaunchMetadata m;
        m.threadsPerBlock = launch->at("threads").get<int>();
        m.sharedBytes = launch->at("shared").get<std::int64_t>();
        m.clusterSize = launch->value("cluster", 1);
        for (const json& s : launch->value("scratch", json::array()))
            m.scratch.push_back({s.at(0).get<std::int64_t>(), s.at(1).get<std::int64_t>()});
        m.argumentTypes = launch->value("argument_types", std::vector<std::string>());
        r.launch = std::move(m);
    }
    const std::size_t bytes = c.at("cubin_bytes").get<std::size_t>();
    if (offset + bytes > blob.size())
        throw std::runtime_error("a cubin is shorter than its size says");
    r.cubin.assign(blob.begin() + std::ptrdiff_t(offset), blob.begin() + std::ptrdiff_t(offset + bytes));
    offset += bytes;
    return r;
}
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
        json entry = compileJson(r, false);
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
        auto r = std::make_shared<CompileResult>(compileOf(c, blob, offset));
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
    json defines = json::array();
    for (const auto& [name, value] : request.defines)
        defines.push_back(json::array({name, value}));
    // The source goes in the blob as it is: JSON text holds UTF-8 only, and a source's bytes are
    // part of its binary's key.
    return worker::Frame{json{{"type", "compile"},
                              {"id", id},
                              {"source_bytes", request.source.size()},
                              {"source_name", request.sourceName},
                              {"kernel", request.kernelName},
                              {"defines", std::move(defines)},
                              {"options", request.options},
                              {"arch", request.arch},
                              {"include_dirs", request.includeDirs},
                              {"language", request.language == SourceLanguage::Triton ? "triton" : "cuda"},
                              {"arguments", request.arguments},
                              {"compiler", request.compiler == CudaCompiler::Nvcc ? "nvcc" : "nvrtc"}}
                             .dump(-1, ' ', false, json::error_handler_t::replace),
                         std::vector<char>(request.source.begin(), request.source.end())};
}

CompileJob decodeCompile(const worker::Frame& frame) try {
    const json j = json::parse(frame.header);
    CompileJob job;
    job.id = j.at("id").get<std::uint64_t>();
    CompileRequest& r = job.request;
    if (j.at("source_bytes").get<std::size_t>() != frame.blob.size())
        throw std::runtime_error("a compile's source is not the size it says");
    r.source.assign(frame.blob.begin(), frame.blob.end());
    r.sourceName = j.value("source_name", std::string());
    r.kernelName = j.at("kernel").get<std::string>();
    for (const json& d : j.at("defines"))
        r.defines.emplace_back(d.at(0).get<std::string>(), d.at(1).get<std::string>());
    r.options = j.value("options", std::vector<std::string>());
    r.arch = j.at("arch").get<std::string>();
    r.includeDirs = j.value("include_dirs", std::vector<std::string>());
    r.language = j.value("language", std::string("cuda")) == "triton" ? SourceLanguage::Triton : SourceLanguage::Cuda;
    r.arguments = j.value("arguments", std::vector<std::string>());
    r.compiler = j.value("compiler", std::string("nvrtc")) == "nvcc" ? CudaCompiler::Nvcc : CudaCompiler::Nvrtc;
    return job;
} catch (const json::exception& e) {
    throw std::runtime_error(std::string("a compile sent to a rank cannot be read: ") + e.what());
}

worker::Frame encodeCompiled(std::uint64_t id, const CompileResult& result, bool fresh) {
    return worker::Frame{
        json{{"type", "compiled"}, {"id", id}, {"fresh", fresh}, {"compile", compileJson(result, true)}}.dump(
            -1, ' ', false, json::error_handler_t::replace), // a log may quote a source's bytes
        result.cubin};
}

Compiled decodeCompiled(const worker::Frame& frame) try {
    const json j = json::parse(frame.header);
    Compiled c;
    c.id = j.at("id").get<std::uint64_t>();
    c.fresh = j.value("fresh", false);
    std::size_t offset = 0;
    c.result = compileOf(j.at("compile"), frame.blob, offset);
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
