#include "compile/sass.h"

#include "base/cudatools.h"
#include "compile/triton.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <regex>

namespace tilescope {

namespace fs = std::filesystem;

bool SassInstruction::localStore() const {
    return opcode.rfind("STL", 0) == 0;
}

bool SassInstruction::localLoad() const {
    return opcode.rfind("LDL", 0) == 0;
}

std::vector<SassFunction> parseNvdisasm(std::string_view text) {
    static const std::regex section(R"re(^//-+ \.text\.(\S+)\s+-+\s*$)re");
    static const std::regex lineMark(R"re(^\s*//## File "(.*)", line (\d+))re");
    static const std::regex instruction(R"re(^\s*/\*([0-9a-fA-F]+)\*/\s+(.*?)\s*;\s*(?:/\*.*\*/)?\s*$)re");
    static const std::regex annotation(R"re(\s*\(\*"([^"]*)"\*\))re");
    std::vector<SassFunction> functions;
    std::string file;
    int line = 0;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos)
            end = text.size();
        const std::string row(text.substr(start, end - start));
        start = end + 1;
        std::smatch m;
        if (std::regex_match(row, m, section)) {
            functions.push_back(SassFunction{m[1].str(), {}, false, false});
            file.clear();
            line = 0;
        } else if (std::regex_search(row, m, lineMark)) {
            file = m[1].str();
            line = std::atoi(m[2].str().c_str());
        } else if (!functions.empty() && std::regex_match(row, m, instruction)) {
            SassInstruction ins;
            ins.file = file;
            ins.line = line;
            ins.offset = static_cast<std::uint32_t>(std::stoul(m[1].str(), nullptr, 16));
            std::string body = m[2].str();
            std::smatch a;
            while (std::regex_search(body, a, annotation)) {
                if (a[1].str() == "SpillRefill")
                    ins.spill = true;
                body = a.prefix().str() + a.suffix().str();
            }
            ins.text = body;
            std::size_t at = 0;
            if (!body.empty() && body[0] == '@')
                at = body.find(' ') == std::string::npos ? body.size() : body.find(' ') + 1;
            const std::size_t stop = body.find(' ', at);
            ins.opcode = body.substr(at, stop == std::string::npos ? std::string::npos : stop - at);
            SassFunction& f = functions.back();
            f.hasLineInfo = f.hasLineInfo || line > 0;
            f.spillsMarked = f.spillsMarked || ins.spill;
            f.instructions.push_back(std::move(ins));
        }
        if (end == text.size())
            break;
    }
    return functions;
}

fs::path findNvdisasm(std::string* error, bool triton) {
    std::string searched;
    fs::path found = findCudaTool("nvdisasm", "TILESCOPE_NVDISASM", &searched);
    const bool named = std::getenv("TILESCOPE_NVDISASM") && *std::getenv("TILESCOPE_NVDISASM");
    // Triton's wheel ships one (triton/backends/nvidia/bin): where Triton compiles a kernel, no
    // toolkit is needed to read its binaries by source line. (Only for those: it does not mark
    // spills, which a CUDA kernel's report is read for where the toolkit's does.)
    if (found.empty() && !named && triton) {
        if (const TritonSetup& setup = tritonSetup(); setup.ok && !setup.nvdisasm.empty())
            found = setup.nvdisasm;
    }
    if (found.empty() && error)
        *error = named ? searched
                       : "reading the machine code by source line needs the CUDA toolkit's nvdisasm: " + searched +
                             (triton ? ", and no Triton with one of its own" : "") +
                             ". Install the toolkit's (cuda-nvdisasm-13-0 from NVIDIA's package repository) or "
                             "NVIDIA's packaged one (python3 -m pip install nvidia-cuda-nvdisasm; it lands in "
                             "site-packages/nvidia/cu13/bin), and put it on PATH or set TILESCOPE_NVDISASM to its path";
    return found;
}

Disassembly disassemble(const std::vector<char>& cubin, fs::path nvdisasm) {
    Disassembly d;
    if (nvdisasm.empty()) {
        nvdisasm = findNvdisasm(&d.error);
        if (nvdisasm.empty())
            return d;
    }
    static std::atomic<unsigned> counter{0};
    std::error_code ec;
    const fs::path file = fs::temp_directory_path(ec) /
                          ("tilescope-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".cubin");
    {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
        if (!out.flush()) {
            d.error = "cannot write the cubin to " + file.string() + " for nvdisasm";
            fs::remove(file, ec);
            return d;
        }
    }
    const ProcessOutput run = runTool({nvdisasm.string(), "-g", "-c", file.string()});
    fs::remove(file, ec);
    if (!run.started) {
        d.error = run.error;
        return d;
    }
    if (run.status != 0) {
        std::string why = run.err.substr(0, run.err.find('\n'));
        d.error = nvdisasm.string() +
                  (run.timedOut ? " ran past its time" : " failed (exit status " + std::to_string(run.status) + ")") +
                  (why.empty() ? "" : ": " + why);
        return d;
    }
    d.functions = parseNvdisasm(run.out);
    d.ok = true;
    return d;
}

} // namespace tilescope
