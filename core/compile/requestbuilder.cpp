#include "compile/requestbuilder.h"

#include "base/error.h"
#include "spec/tuningproblem.h"

#include <cctype>
#include <fstream>
#include <sstream>

namespace tilescope {

std::string defineValue(const expr::Value& value) {
    switch (value.kind) {
    case expr::Kind::Int:
        return std::to_string(value.i);
    case expr::Kind::Bool:
        return value.i ? "1" : "0";
    case expr::Kind::Str:
        return *value.s;
    case expr::Kind::Float:
    case expr::Kind::List:
        break;
    }
    return expr::repr(value);
}

RequestBuilder::RequestBuilder(const TuningProblem& problem) {
    const std::filesystem::path path = problem.kernelPath();
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(problem.fileName, "/KernelSpecification/KernelFile",
                         "cannot read the kernel file '" + path.string() + "'");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad())
        throw InputError(problem.fileName, "/KernelSpecification/KernelFile",
                         "cannot read the kernel file '" + path.string() + "'");

    m_base.source = text.str();
    // The file name alone: diagnostics read "sgemm.cu(12): error ...", and the cache key (which
    // covers the name) stays the same wherever the checkout lives.
    m_base.sourceName = path.filename().string();
    m_base.kernelName = problem.kernelName;
    m_base.options = problem.compilerOptions;
    std::error_code ec;
    const std::filesystem::path dir = std::filesystem::absolute(path, ec).parent_path();
    if (!ec && !dir.empty())
        m_base.includeDirs.push_back(dir.string());

    for (const TuningParameter& parameter : problem.parameters) {
        m_names.push_back(parameter.name);
        std::vector<std::string> texts;
        texts.reserve(parameter.values.size());
        for (const expr::Value& value : parameter.values)
            texts.push_back(defineValue(value));
        m_texts.push_back(std::move(texts));
    }
    // Kernel Tuner defines block_size_x/y/z for every kernel, with its defaults where they are
    // not tuned; kernels written for it use them. Defined only where the source names them, so
    // that other kernels' compiles (and cache keys) stay as they were.
    for (const auto& [name, value] : problem.implicitBlockSizes()) {
        if (mentions(m_base.source, name))
            m_implicit.emplace_back(name, std::to_string(value));
    }
}

bool RequestBuilder::mentions(std::string_view source, std::string_view identifier) {
    auto isWord = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (std::size_t at = source.find(identifier); at != std::string_view::npos;
         at = source.find(identifier, at + 1)) {
        const std::size_t end = at + identifier.size();
        if ((at == 0 || !isWord(source[at - 1])) && (end >= source.size() || !isWord(source[end])))
            return true;
    }
    return false;
}

std::vector<std::pair<std::string, std::string>> RequestBuilder::defines(const Config& config) const {
    std::vector<std::pair<std::string, std::string>> result;
    result.reserve(m_names.size());
    for (std::size_t p = 0; p < m_names.size() && p < config.size(); ++p)
        result.emplace_back(m_names[p], m_texts[p].at(config[p]));
    result.insert(result.end(), m_implicit.begin(), m_implicit.end());
    return result;
}

CompileRequest RequestBuilder::request(const Config& config, const std::string& arch) const {
    CompileRequest request = m_base;
    request.defines = defines(config);
    request.arch = arch;
    return request;
}

} // namespace tilescope
