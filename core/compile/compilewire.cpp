#include "compile/compilewire.h"

#include <stdexcept>

namespace tilescope {

using json = nlohmann::json;

json compileRequestJson(const CompileRequest& request) {
    json defines = json::array();
    for (const auto& [name, value] : request.defines)
        defines.push_back(json::array({name, value}));
    return json{{"source_bytes", request.source.size()},
                {"source_name", request.sourceName},
                {"kernel", request.kernelName},
                {"defines", std::move(defines)},
                {"options", request.options},
                {"arch", request.arch},
                {"include_dirs", request.includeDirs},
                {"language", request.language == SourceLanguage::Triton ? "triton" : "cuda"},
                {"arguments", request.arguments},
                {"compiler", request.compiler == CudaCompiler::Nvcc ? "nvcc" : "nvrtc"}};
}

CompileRequest compileRequestOf(const json& j, std::string source) {
    if (j.at("source_bytes").get<std::size_t>() != source.size())
        throw std::runtime_error("a compile's source is not the size it says");
    CompileRequest r;
    r.source = std::move(source);
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
    return r;
}

json compileResultJson(const CompileResult& r, bool withLog) {
    json j{{"status", int(r.status)},
           {"message", r.message},
           {"entry", r.entryName},
           {"seconds", r.seconds},
           {"nvrtc", r.nvrtcVersion},
           {"cached", r.cached},
           {"key", r.key},
           {"static", staticInfoJson(r.info)},
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

CompileResult compileResultOf(const json& c, const std::vector<char>& blob, std::size_t& offset) {
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
    r.info = staticInfoOf(c.at("static"));
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

json staticInfoJson(const StaticInfo& s) {
    return json{{"registers", s.registers},         {"barriers", s.barriers},      {"stack_frame", s.stackFrame},
                {"spill_stores", s.spillStores},    {"spill_loads", s.spillLoads}, {"shared_static", s.sharedStatic},
                {"constant_bytes", s.constantBytes}};
}

StaticInfo staticInfoOf(const json& j) {
    StaticInfo s;
    s.registers = j.value("registers", -1);
    s.barriers = j.value("barriers", 0);
    s.stackFrame = j.value("stack_frame", std::int64_t{0});
    s.spillStores = j.value("spill_stores", std::int64_t{0});
    s.spillLoads = j.value("spill_loads", std::int64_t{0});
    s.sharedStatic = j.value("shared_static", std::int64_t{0});
    s.constantBytes = j.value("constant_bytes", std::int64_t{0});
    return s;
}

} // namespace tilescope
